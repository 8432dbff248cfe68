// What goes wrong with a Stack, from the Pulumi Kubernetes Operator's troubleshooting guide and the
// PKO v2 controller's own condition reasons and event reasons, as a table: how to recognise it in a
// snapshot, the likely cause, and the fix. test/unit/stack/failures.test.ts has a case per entry.
import { condition, currentEvents, isHistory, messages, specChangedAt, StackSnapshot } from "./snapshot";
import { UPGRADE_REFUSED_MARKER } from "../../components/contract";

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export interface KnownFailure {
  id: string;
  /** What the person sees, in a few words. */
  title: string;
  /** Evidence from the snapshot when it matches, else undefined. */
  detect: (s: StackSnapshot) => string | undefined;
  cause: string;
  fix: (s: StackSnapshot) => string;
}

const name = (s: StackSnapshot) => s.stack.metadata.name;
const ns = (s: StackSnapshot) => s.stack.metadata.namespace;
const pod = (s: StackSnapshot) => s.pods[0]?.name ?? `${name(s)}-workspace-0`;
const retry = (s: StackSnapshot) => `npm run stack -- retry ${name(s)} -n ${ns(s)}`;
// Only events from after the last spec change or success (snapshot.ts diagnosisSince): an old
// StackConfigInvalid is no diagnosis of a Stack that has been Ready since.
const event = (s: StackSnapshot, reason: string) => currentEvents(s).find((e) => e.reason === reason);
const firstLine = (text: string) =>
  text
    .split("\n")
    .find((l) => l.trim())
    ?.trim()
    .slice(0, 200) ?? "";

function grep(s: StackSnapshot, pattern: RegExp): string | undefined {
  const line = messages(s)
    .split("\n")
    .find((l) => pattern.test(l));
  return line === undefined ? undefined : firstLine(line);
}

function stalled(s: StackSnapshot, reason: string): string | undefined {
  const c = condition(s, "Stalled");
  return c?.status === "True" && c.reason === reason
    ? `Stalled/${reason}: ${firstLine(c.message ?? "")}`
    : undefined;
}

export const KNOWN_FAILURES: readonly KnownFailure[] = [
  {
    id: "not-reconciled",
    title: "the operator has not processed this Stack",
    detect: (s) => {
      const st = s.stack.status;
      const gen = s.stack.metadata.generation ?? 0;
      if (!st || (st.observedGeneration === undefined && !st.conditions?.length)) return "no status at all";
      if ((st.observedGeneration ?? 0) >= gen) return undefined;
      // observedGeneration is not enough: PKO 2.9.0 left it at 0 on a Stack it had stalled
      // (Stalled/SpecInvalid). A condition set since the spec last changed is the operator's answer.
      const changed = specChangedAt(s.stack);
      const conditions = st.conditions ?? [];
      const answered = changed
        ? conditions.some((c) => Date.parse(c.lastTransitionTime ?? "") >= Date.parse(changed))
        : conditions.some((c) => c.type === "Stalled" && c.status === "True");
      return answered
        ? undefined
        : `observedGeneration ${st.observedGeneration ?? 0} < generation ${gen}${changed ? `, no condition since the spec changed ${changed}` : ""}`;
    },
    cause:
      "No Pulumi Kubernetes Operator is running (or it cannot watch this namespace), or it is still busy with an earlier change.",
    fix: () =>
      "kubectl get pods -A -l app.kubernetes.io/name=pulumi-kubernetes-operator  (install PKO v2 if none; read its logs if one runs)",
  },
  {
    id: "workspace-oom",
    title: "the workspace ran out of memory (OOMKilled)",
    detect: (s) => {
      for (const p of s.pods)
        for (const c of p.containers)
          // Still crashing is current; a container running again since a success is history.
          if (
            c.reasons.includes("OOMKilled") &&
            (!c.state.startsWith("running") || !isHistory(s, c.finishedAt))
          )
            return `pod ${p.name} container ${c.name}: OOMKilled, ${c.restartCount} restart(s)`;
      return undefined;
    },
    cause:
      "npm install of a TypeScript program (and its type check) needs more memory than the workspace limit (PKO #255, #549).",
    fix: () =>
      "raise the workspace memory: pulumi config set --path 'delivery:workspace.memoryLimit' 4Gi (keep delivery:workspace.nodeMaxOldSpaceMb below it), then pulumi up in stacks/",
  },
  {
    id: "installation-failure",
    title: "`pulumi install` (npm install) fails in the workspace",
    detect: (s) => {
      const e = event(s, "InstallationFailure");
      return e
        ? `event InstallationFailure: ${firstLine(e.message)}`
        : grep(s, /npm (ERR!|error)|pulumi install/i);
    },
    cause:
      "npm cannot install the program's dependencies: no access to the npm registry from the pod, a lockfile out of step with package.json, or too little memory.",
    fix: (s) =>
      `kubectl logs -n ${ns(s)} ${pod(s)} -c pulumi  (the npm error); fix package-lock.json or registry access (e.g. an NPM_CONFIG_REGISTRY env from delivery:env), then ${retry(s)}`,
  },
  {
    id: "connection-failure",
    title: "the operator cannot reach the workspace pod",
    detect: (s) => {
      const e = event(s, "ConnectionFailure");
      return e ? `event ConnectionFailure: ${firstLine(e.message)}` : undefined;
    },
    cause:
      "The operator talks to the workspace's agent over gRPC (port 50051): a NetworkPolicy blocks it, or the pod is not ready.",
    fix: (s) =>
      `kubectl get networkpolicy -n ${ns(s)}; allow ingress to the workspace pods from the operator's namespace on TCP 50051, then ${retry(s)}`,
  },
  {
    id: "secret-ref-missing",
    title: "a Secret the Stack references is missing",
    detect: (s) => {
      const bad = s.secretRefs.filter((r) => r.found === "missing secret" || r.found === "missing key");
      return bad.length
        ? bad.map((r) => `${r.use} -> Secret ${r.secret} key ${r.key}: ${r.found}`).join("; ")
        : undefined;
    },
    cause:
      "The state backend URL, the secrets passphrase or the git token come from Secrets in the Stack's namespace; without them the workspace cannot log in or decrypt.",
    fix: (s) => {
      const r = s.secretRefs.find((x) => x.found === "missing secret" || x.found === "missing key");
      const secret = r?.secret ?? "<secret>";
      const key = r?.key ?? "<key>";
      const command =
        r?.found === "missing key"
          ? `kubectl -n ${ns(s)} patch secret ${secret} --type merge -p '{"stringData":{"${key}":"<value>"}}'`
          : `kubectl -n ${ns(s)} create secret generic ${secret} --from-literal=${key}=<value>`;
      return `${command}  (then ${retry(s)})`;
    },
  },
  {
    id: "backend-login",
    title: "the workspace cannot reach the state backend",
    detect: (s) =>
      grep(
        s,
        /PULUMI_ACCESS_TOKEN|pulumi login|failed to (log ?in|create a backend)|could not (log ?in|reach the backend)|NoCredentialProviders|AccessDenied.*(bucket|s3)|blob \(code=/i,
      ),
    cause:
      "PULUMI_BACKEND_URL is missing or wrong, or the credentials for it (cloud keys, PULUMI_ACCESS_TOKEN) are not in the workspace's environment.",
    fix: (s) =>
      `check the Secret behind envRefs.PULUMI_BACKEND_URL (kubectl -n ${ns(s)} get secret ... ) and add backend credentials with delivery:env, then pulumi up in stacks/ and ${retry(s)}`,
  },
  {
    id: "passphrase",
    title: "the stack's secrets cannot be decrypted",
    detect: (s) =>
      grep(
        s,
        /passphrase must be set|incorrect passphrase|PULUMI_CONFIG_PASSPHRASE|failed to decrypt|secrets manager/i,
      ),
    cause:
      "PULUMI_CONFIG_PASSPHRASE is not set, or is not the passphrase the stack was created with (or the KMS key in secretsProvider is not usable from the pod).",
    fix: (s) =>
      `put the stack's passphrase in the Secret named by envRefs.PULUMI_CONFIG_PASSPHRASE (kubectl -n ${ns(s)} create secret generic ... --from-literal=passphrase=... --dry-run=client -o yaml | kubectl apply -f -), then ${retry(s)}`,
  },
  {
    id: "git-auth",
    title: "the repository cannot be fetched (authentication)",
    detect: (s) => {
      const e = event(s, "StackGitAuthenticationFailure");
      if (e) return `event StackGitAuthenticationFailure: ${firstLine(e.message)}`;
      return grep(
        s,
        /authentication required|could not read Username|Permission denied \(publickey\)|invalid credentials|401 Unauthorized|403 Forbidden.*git/i,
      );
    },
    cause: "The repository is private and the Stack has no (or a wrong) git credential.",
    fix: () =>
      'store a read-only token: kubectl create secret generic pulp-git --from-literal=accessToken=<token>; pulumi config set --path \'delivery:gitAuth.accessToken\' \'{"secretName":"pulp-git","key":"accessToken"}\'; pulumi up in stacks/',
  },
  {
    id: "source-unavailable",
    title: "the source revision cannot be resolved",
    detect: (s) => stalled(s, "SourceUnavailable"),
    cause: "projectRepo is unreachable, or the branch or commit does not exist there (`no commits found`).",
    fix: () =>
      "check delivery:projectRepo and delivery:branch / delivery:commit (git ls-remote <repo> <branch>), then pulumi up in stacks/",
  },
  {
    id: "spec-invalid",
    title: "the Stack's spec is invalid (stalled until it changes)",
    detect: (s) => {
      const st = stalled(s, "SpecInvalid");
      if (st) return st;
      const e = event(s, "StackConfigInvalid");
      return e ? `event StackConfigInvalid: ${firstLine(e.message)}` : undefined;
    },
    cause:
      "The operator cannot act on the spec as written (e.g. no source, both branch and commit missing, an unreadable gitAuth); it will not retry until the spec changes.",
    fix: (s) =>
      `kubectl describe stack ${name(s)} -n ${ns(s)}; correct the delivery config (its validator names the key) and pulumi up in stacks/ (a new generation is retried at once)`,
  },
  {
    id: "lock-held",
    title: "the Pulumi stack is locked by another update",
    detect: (s) =>
      stalled(s, "UpdateConflict") ??
      (event(s, "StackUpdateConflictDetected") ? "event StackUpdateConflictDetected" : undefined) ??
      grep(s, /currently locked|conflict with (another|concurrent) update|409 Conflict/i),
    cause:
      "An earlier update was interrupted (pod evicted, OOMKilled) and left the stack's lock in the backend, or someone runs `pulumi up` on the same stack elsewhere.",
    fix: (s) =>
      `make sure no other update runs, then: kubectl exec -n ${ns(s)} ${pod(s)} -c pulumi -- pulumi cancel --yes --stack ${s.stack.spec.stack ?? "<stack>"}; ${retry(s)}`,
  },
  {
    id: "workspace-forbidden",
    title: "the workspace is not allowed to do something the program does",
    detect: (s) => grep(s, /is forbidden: User "system:serviceaccount:/),
    cause:
      "The program manages a kind (or uses a verb) that the workspace's Role does not grant: stacks/kinds.ts is behind the program, or the program writes outside its namespace.",
    fix: () =>
      'add the kind to stacks/kinds.ts (the drift test shows which), pulumi up in stacks/; for "storageclasses" set delivery:readStorageClasses true',
  },
  {
    id: "pulp-config",
    title: "the Pulp program refused its config or the upgrade",
    // The refusal's marker from the product contract; the stop-the-world plan is a warning of a
    // successful update and must not count.
    detect: (s) => grep(s, new RegExp(`Invalid Pulp stack config|${escapeRegExp(UPGRADE_REFUSED_MARKER)}`)),
    cause:
      "The Pulp program validates its config and the upgrade path before creating anything; nothing was changed.",
    fix: (s) =>
      `read the whole message (kubectl get stack ${name(s)} -n ${ns(s)} -o jsonpath='{.status.lastUpdate.message}'); change delivery:pulpConfig as it says, then pulumi up in stacks/`,
  },
  {
    id: "image-pull",
    title: "the workspace image cannot be pulled",
    detect: (s) => {
      for (const p of s.pods)
        for (const c of p.containers)
          if (c.reasons.some((r) => /ErrImagePull|ImagePullBackOff|InvalidImageName/.test(r)))
            return `pod ${p.name} container ${c.name}: ${c.state}`;
      return undefined;
    },
    cause: "delivery:workspace.image names a tag that does not exist or a registry the nodes cannot reach.",
    fix: () =>
      "pulumi config set --path 'delivery:workspace.image' pulumi/pulumi:<cli version>-nonroot (a tag that exists), then pulumi up in stacks/",
  },
  {
    id: "pod-security",
    title: "the workspace pod was refused by Pod Security admission",
    detect: (s) => grep(s, /violates PodSecurity/),
    cause:
      "The delivery namespace enforces `restricted` and the workspace pod template is not (securityProfile or a podTemplate override).",
    fix: () =>
      "keep workspaceTemplate.spec.securityProfile: restricted (the delivery program sets it) and remove podTemplate overrides that add privileges",
  },
  {
    id: "update-failed",
    title: "the last update failed",
    detect: (s) => {
      const lu = s.stack.status?.lastUpdate;
      if (lu?.state === "failed")
        return `lastUpdate failed (${lu.failures ?? 0} failure(s)): ${firstLine(lu.message ?? "")}`;
      const e = event(s, "UpdateFailed") ?? event(s, "StackUpdateFailure");
      return e ? `event ${e.reason}: ${firstLine(e.message)}` : undefined;
    },
    cause:
      "`pulumi up` in the workspace failed; the message above and the workspace log say why. Failed updates are retried with a growing back-off (an hour or more after a few tries).",
    fix: (s) =>
      `kubectl logs -n ${ns(s)} ${pod(s)} -c pulumi --tail=100; fix the cause, then ${retry(s)} instead of waiting for the back-off`,
  },
];

export interface Diagnosis {
  failure: KnownFailure;
  evidence: string;
}

/** Every known failure the snapshot shows, most specific first (the table's order). */
export function diagnose(s: StackSnapshot): Diagnosis[] {
  const found: Diagnosis[] = [];
  for (const failure of KNOWN_FAILURES) {
    const evidence = failure.detect(s);
    if (evidence !== undefined) found.push({ failure, evidence });
  }
  // "update-failed" is the generic one: only worth a line when nothing more specific explains it.
  return found.length > 1 ? found.filter((d) => d.failure.id !== "update-failed") : found;
}
