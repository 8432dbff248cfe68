// Real node: real nginx (the pulp-web image) with the nginx.conf the program renders, on a machine
// without IPv6. The Localhost seccomp profile testbed/node/seccomp/no-ipv6.json fails socket(AF_INET6)
// with EAFNOSUPPORT, as a kernel booted with ipv6.disable=1 does; `pulp:web.listenIPv6: false` is the
// switch for such clusters. Plain pods, not an install: the switch is in the conf, which unit tests tie
// to the config (test/unit/components/pulpRuntime.test.ts).
import { renderNginxConf, WEB_PORT } from "../../../components/web/nginx";
import { restricted } from "../../../components/workload/podSecurity";
import { getJson, kubectl, kubectlTry, waitUntil } from "../../../testbed/harness";
import { importImages, localImages } from "../../../testbed/real/stack";

jest.setTimeout(5 * 60 * 1000);

const NS = `pulp-ipv6-${process.pid}`;
const NO_IPV6 = { type: "Localhost", localhostProfile: "no-ipv6.json" };

const conf = (listenIPv6: boolean) =>
  renderNginxConf({
    apiHost: "127.0.0.1",
    apiPort: 24817,
    contentHost: "127.0.0.1",
    contentPort: 24816,
    contentPathPrefix: "/pulp/content/",
    clientMaxBodySize: "10m",
    listenIPv6,
  });

function webPod(name: string, config: "dual-stack" | "ipv4-only", seccompProfile?: object) {
  const spec = restricted({
    nodeSelector: { "pulp-testbed/node-kind": "real" },
    containers: [
      {
        name: "web",
        image: localImages().web,
        imagePullPolicy: "Never",
        readinessProbe: { httpGet: { path: "/healthz", port: WEB_PORT }, periodSeconds: 1 },
        volumeMounts: [
          { name: "conf", mountPath: "/etc/nginx/nginx.conf", subPath: config, readOnly: true },
          { name: "tmp", mountPath: "/tmp" },
          { name: "cache", mountPath: "/var/cache/nginx" },
        ],
      },
    ],
    volumes: [
      { name: "conf", configMap: { name: "nginx" } },
      { name: "tmp", emptyDir: {} },
      { name: "cache", emptyDir: {} },
    ],
  });
  const securityContext = {
    ...(spec.securityContext as object),
    ...(seccompProfile ? { seccompProfile } : {}),
  };
  return { apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { ...spec, securityContext } };
}

/** Waits until `done` holds for the pod, or fails with the pod's status and log. */
async function until(pod: string, what: string, done: (p: any) => boolean): Promise<any> {
  let p = getJson(["pod", "-n", NS, pod]);
  await waitUntil(`${pod}: ${what}`, 120, () => done((p = getJson(["pod", "-n", NS, pod]))), {
    detail: () => `${JSON.stringify(p.status)}\n${kubectlTry(["logs", "-n", NS, pod]).output}`,
  });
  return p;
}

const ready = (p: any) => p.status.containerStatuses?.[0]?.ready === true;
const crashed = (p: any) => {
  const s = p.status.containerStatuses?.[0];
  return Boolean(s?.state?.terminated ?? s?.lastState?.terminated);
};

beforeAll(() => {
  importImages();
  kubectl(["create", "namespace", NS]);
  kubectl(["label", "namespace", NS, "pod-security.kubernetes.io/enforce=restricted"]);
  kubectl(
    ["apply", "-n", NS, "-f", "-"],
    JSON.stringify({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "nginx" },
      data: { "dual-stack": conf(true), "ipv4-only": conf(false) },
    }),
  );
  const pods = [
    webPod("dual-stack-on-ipv6", "dual-stack"),
    webPod("dual-stack-no-ipv6", "dual-stack", NO_IPV6),
    webPod("ipv4-only-no-ipv6", "ipv4-only", NO_IPV6),
  ];
  kubectl(["apply", "-n", NS, "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items: pods }));
});

afterAll(() => {
  kubectlTry(["delete", "namespace", NS, "--ignore-not-found", "--wait=false"]);
});

test("without IPv6, nginx with `listen [::]` does not start: 'Address family not supported by protocol'", async () => {
  await until("dual-stack-no-ipv6", "crashed", crashed);
  const log = kubectlTry(["logs", "-n", NS, "dual-stack-no-ipv6"]).output;
  const previous = kubectlTry(["logs", "-n", NS, "dual-stack-no-ipv6", "--previous"]).output;
  expect(`${log}\n${previous}`).toMatch(
    /\[::\]:8080 failed \(97: Address family not supported by protocol\)/,
  );
  expect(ready(getJson(["pod", "-n", NS, "dual-stack-no-ipv6"]))).toBe(false);
});

test("without IPv6, listenIPv6: false serves; with IPv6, the dual-stack conf serves (the profile is the cause)", async () => {
  await until("ipv4-only-no-ipv6", "Ready", ready);
  await until("dual-stack-on-ipv6", "Ready", ready);
  const restarts = (pod: string) => getJson(["pod", "-n", NS, pod]).status.containerStatuses[0].restartCount;
  expect({ ipv4Only: restarts("ipv4-only-no-ipv6"), dualStack: restarts("dual-stack-on-ipv6") }).toEqual({
    ipv4Only: 0,
    dualStack: 0,
  });
});
