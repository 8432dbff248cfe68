// The real CDI on the real node (testbed/cdi/install.sh: built from its Go module, idempotent), and a
// file served over http inside the cluster, for the DataVolumes that import from a URL.
import { execFileSync } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { kubectl } from "../harness";
import { KUBECONFIG, NODE_CONTAINERD, REPO, STATE, toolchainBin } from "../local/environment";

/** Installs CDI if it is not there and waits until its DataVolume webhooks answer. */
export function ensureCdi(): void {
  execFileSync("bash", [path.join(REPO, "testbed/cdi/install.sh")], {
    env: { ...process.env, KUBECONFIG, CONTAINERD_ADDRESS: NODE_CONTAINERD },
    stdio: ["ignore", "inherit", "inherit"],
  });
}

/**
 * Serves `file` as http://<name>.<namespace>.svc/<basename> from a restricted busybox pod on the real
 * node (the file is streamed into its emptyDir). Returns the URL; the pod and Service go with the namespace.
 */
export function serveFile(namespace: string, name: string, file: string): string {
  const image = execFileSync(
    "bash",
    [
      path.join(REPO, "testbed/node/node.sh"),
      path.join(STATE, "cluster"),
      toolchainBin(),
      "image",
      "busybox",
    ],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  ).trim();
  const base = path.basename(file);
  kubectl(
    ["apply", "-n", namespace, "-f", "-"],
    JSON.stringify({
      apiVersion: "v1",
      kind: "List",
      items: [
        {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name, labels: { app: name } },
          spec: {
            nodeSelector: { "pulp-testbed/node-kind": "real" },
            terminationGracePeriodSeconds: 2,
            securityContext: {
              runAsNonRoot: true,
              runAsUser: 700,
              runAsGroup: 700,
              seccompProfile: { type: "RuntimeDefault" },
            },
            containers: [
              {
                name: "httpd",
                image,
                imagePullPolicy: "Never",
                command: ["httpd", "-f", "-p", "8080", "-h", "/www"],
                ports: [{ containerPort: 8080, name: "http" }],
                securityContext: {
                  allowPrivilegeEscalation: false,
                  capabilities: { drop: ["ALL"] },
                  readOnlyRootFilesystem: true,
                },
                volumeMounts: [{ name: "www", mountPath: "/www" }],
              },
            ],
            volumes: [{ name: "www", emptyDir: {} }],
          },
        },
        {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name },
          spec: { selector: { app: name }, ports: [{ port: 80, targetPort: "http" }] },
        },
      ],
    }),
  );
  kubectl(["wait", "-n", namespace, `pod/${name}`, "--for=condition=Ready", "--timeout=120s"]);
  // kubectl cp, then the pod's own sha256 against the file's: a short copy would look like a bad archive.
  kubectl(["cp", file, `${namespace}/${name}:/www/${base}`, "-c", "httpd"]);
  const want = crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
  const got = kubectl(["exec", "-n", namespace, name, "--", "sha256sum", `/www/${base}`]).split(" ")[0];
  if (got !== want)
    throw new Error(`${name} serves ${base} with sha256 ${got}, not ${want}: the copy is damaged`);
  return `http://${name}.${namespace}.svc/${base}`;
}
