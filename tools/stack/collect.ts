// Reads one Stack and what surrounds it from the API server into a snapshot.
import { getJson, Kube, run, ToolError } from "../kube";
import { namespaceEvents } from "../events";
import { podSummary, SecretRefCheck, secretRefsOf, StackObject, StackSnapshot } from "./snapshot";

/** The Stack, or a one-line error naming what is missing and how to go on. */
export function readStack(kube: Kube, name: string, namespace: string): StackObject {
  const stack = getJson(kube, ["stacks.pulumi.com", name, "-n", namespace]);
  if (stack) return stack as StackObject;
  const all = getJson(kube, ["stacks.pulumi.com", "--all-namespaces"]) as { items: StackObject[] };
  const known = all.items.map((s) => `${s.metadata.namespace}/${s.metadata.name}`);
  const elsewhere = all.items.filter((s) => s.metadata.name === name).map((s) => s.metadata.namespace);
  throw new ToolError(
    `no Stack "${name}" in namespace "${namespace}"` +
      (elsewhere.length
        ? `: it is in ${elsewhere.join(", ")}; pass -n ${elsewhere[0]}`
        : known.length
          ? `; Stacks in this cluster: ${known.join(", ")}`
          : "; this cluster has no Stacks: create them with pulumi up in stacks/"),
  );
}

/** Whether each referenced Secret exists and has the key; the values are never read into this process. */
function checkSecrets(kube: Kube, stack: StackObject): SecretRefCheck[] {
  return secretRefsOf(stack).map((ref) => {
    const r = run(kube, [
      "get",
      "secret",
      ref.secret,
      "-n",
      stack.metadata.namespace,
      "-o",
      "go-template={{range $k, $v := .data}}{{$k}}\n{{end}}",
    ]);
    if (!r.ok) {
      return {
        ...ref,
        found: /NotFound|not found/.test(r.stderr) ? "missing secret" : "unreadable",
      } as SecretRefCheck;
    }
    return { ...ref, found: r.stdout.split("\n").includes(ref.key) ? "ok" : "missing key" } as SecretRefCheck;
  });
}

export function collect(kube: Kube, name: string, namespace: string): StackSnapshot {
  const stack = readStack(kube, name, namespace);
  // PKO v2 names the Workspace after the Stack; its StatefulSet's pod is <name>-workspace-0.
  const workspace = getJson(kube, ["workspaces.auto.pulumi.com", name, "-n", namespace]);
  const labelled = (
    getJson(kube, ["pods", "-n", namespace, "-l", `auto.pulumi.com/workspace-name=${name}`]) as {
      items: any[];
    }
  ).items;
  const byName = labelled.length ? undefined : getJson(kube, ["pod", `${name}-workspace-0`, "-n", namespace]);
  const pods = [...labelled, ...(byName ? [byName] : [])].map(podSummary);
  const updateNames = [stack.status?.currentUpdate?.name, stack.status?.lastUpdate?.name].filter(
    (n, i, all): n is string => !!n && all.indexOf(n) === i,
  );
  const updates = updateNames
    .map((n) => getJson(kube, ["updates.auto.pulumi.com", n, "-n", namespace]))
    .filter(Boolean)
    .map((u: any) => ({
      name: u.metadata.name,
      message: u.status?.message,
      conditions: u.status?.conditions ?? [],
    }));
  const involved = new Set([name, ...pods.map((p) => p.name), `${name}-workspace`, ...updateNames]);
  return {
    stack,
    events: namespaceEvents(kube, namespace, involved),
    workspace: workspace
      ? {
          name: workspace.metadata.name,
          conditions: workspace.status?.conditions ?? [],
          address: workspace.status?.address,
        }
      : undefined,
    pods,
    updates,
    secretRefs: checkSecrets(kube, stack),
    now: new Date(),
  };
}
