// Azure Blob Storage for the real-Pulp tests: Azurite, the Azure Storage emulator (testbed/azure), on the
// real node's bridge address, where pods reach the host and the host's clients follow the content app's
// redirects. Its one account is the emulator's published devstoreaccount1 and key. Telemetry off: no
// test traffic leaves the machine. Started and stopped by the test that needs it.
//
// Two ways: with the account's key over http at a path-style endpoint (startBlobStorage), or for a
// workload identity (startBlobStorageForIdentity): over https with Azurite's OAuth check, at the name an
// account has in Azure (https://devstoreaccount1.blob.<suffix>), which a headless Service in the namespace
// `blob` gives it in the cluster, beside an Entra ID token endpoint (testbed/azure/entra.js).
import { execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as https from "https";
import * as os from "os";
import * as path from "path";
import { azureConnectionString } from "../../components/storage/artifactStorage";
import { kubectl } from "../harness";
import { NODE_ADDRESS as HOST, KUBECONFIG, REPO, toolchainBin } from "../local/environment";
import { ensureTls } from "../tls/selfSigned";
import { freePort, listening } from "./hostServer";

/** Azurite's published account and key (not a secret: every emulator has them). */
export const AZURITE_ACCOUNT = "devstoreaccount1";
export const AZURITE_KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

export interface BlobStorage {
  /** The account's blob endpoint, path-style: http://<bridge>:<port>/devstoreaccount1. */
  endpointUrl: string;
  accountName: string;
  accountKey: string;
  createContainer(container: string): void;
  list(container: string, prefix: string): { name: string; bytes: number }[];
  stop(): void;
}

/** Azurite on the bridge address with `args`, and the helper that reaches it with azure-storage-blob. */
async function startAzurite(
  args: string[],
  endpoint: (port: number) => string,
  env: NodeJS.ProcessEnv = {},
): Promise<{
  port: number;
  containerPy: (...args: string[]) => string;
  stop: () => void;
}> {
  const [azuriteBin, venvBin] = execFileSync("bash", [path.join(REPO, "testbed/azure/install.sh")], {
    encoding: "utf8",
  })
    .trim()
    .split("\n");
  const port = await freePort();
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "azurite-"));
  const child = spawn(
    path.join(azuriteBin, "azurite-blob"),
    [
      ...["--blobHost", HOST, "--blobPort", String(port), "--location", workspace],
      // The newest azure-storage-blob may speak an API version this Azurite predates.
      ...["--skipApiVersionCheck", "--disableTelemetry", "--silent"],
      ...args,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout!.on("data", (c) => (output = (output + c).slice(-4000)));
  child.stderr!.on("data", (c) => (output = (output + c).slice(-4000)));
  await listening("azurite-blob", port, child, () => output);
  // The string the program gives Pulp's pods with a key.
  const connection = azureConnectionString(
    { accountName: AZURITE_ACCOUNT, endpointUrl: endpoint(port) },
    AZURITE_KEY,
  );
  const containerPy = (...argv: string[]) =>
    execFileSync(path.join(venvBin, "python3"), [path.join(REPO, "testbed/azure/container.py"), ...argv], {
      encoding: "utf8",
      env: { ...process.env, ...env, AZURE_CONNECTION_STRING: connection },
    }).trim();
  return {
    port,
    containerPy,
    stop: () => {
      child.kill();
      fs.rmSync(workspace, { recursive: true, force: true });
    },
  };
}

export async function startBlobStorage(): Promise<BlobStorage> {
  const endpoint = (port: number) => `http://${HOST}:${port}/${AZURITE_ACCOUNT}`;
  const azurite = await startAzurite([], endpoint);
  return {
    endpointUrl: endpoint(azurite.port),
    accountName: AZURITE_ACCOUNT,
    accountKey: AZURITE_KEY,
    createContainer: (container) => void azurite.containerPy("create", container),
    list: (container, prefix) => JSON.parse(azurite.containerPy("list", container, prefix)),
    stop: azurite.stop,
  };
}

/** The namespace and Service that give the account Azure's kind of name in the cluster. */
const BLOB_NAMESPACE = "blob";
export const ACCOUNT_HOST = `${AZURITE_ACCOUNT}.${BLOB_NAMESPACE}.svc.cluster.local`;

export interface IdentityBlobStorage extends Omit<BlobStorage, "accountKey"> {
  /** The CA Azurite's certificate is signed by: the pods trust it through pulp:trustedCa. */
  caPem: string;
  /** For pulp:serviceAccount.azureWorkloadIdentity: who signs in, and where. */
  identity: { clientId: string; tenantId: string; authorityHost: string };
  /**
   * The token endpoint's lines: "TOKEN ok <ServiceAccount user>" or "TOKEN refused <why>". Asynchronous: they
   * arrive through this process's event loop, which a blocking call (pulp-cli's spawnSync) holds up.
   */
  tokens(): Promise<string[]>;
  /** GET a URL of the account's endpoint from the host (which does not resolve the cluster's names). */
  get(url: string): Promise<{ status: number; body: Buffer }>;
}

/**
 * Azurite over https with its OAuth check (a bearer token needs Entra ID's issuer and the storage audience),
 * named https://devstoreaccount1.blob.svc.cluster.local:<port> in the cluster, and the Entra ID token
 * endpoint that gives such tokens only for a ServiceAccount token the cluster vouches for.
 */
export async function startBlobStorageForIdentity(): Promise<IdentityBlobStorage> {
  const tls = ensureTls(
    fs.mkdtempSync(path.join(os.tmpdir(), "azurite-tls-")),
    `DNS:${ACCOUNT_HOST},IP:${HOST}`,
  );
  const azurite = await startAzurite(
    ["--oauth", "basic", "--cert", tls.cert, "--key", tls.key],
    (port) => `https://${HOST}:${port}/${AZURITE_ACCOUNT}`,
    { REQUESTS_CA_BUNDLE: tls.ca },
  );
  kubectl(
    ["apply", "-f", "-"],
    `
apiVersion: v1
kind: Namespace
metadata: {name: ${BLOB_NAMESPACE}}
---
apiVersion: v1
kind: Service
metadata: {name: ${AZURITE_ACCOUNT}, namespace: ${BLOB_NAMESPACE}}
spec:
  clusterIP: None
  ports: [{name: https, port: ${azurite.port}, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: ${AZURITE_ACCOUNT}
  namespace: ${BLOB_NAMESPACE}
  labels: {kubernetes.io/service-name: ${AZURITE_ACCOUNT}, endpointslice.kubernetes.io/managed-by: pulp-testbed}
addressType: IPv4
ports: [{name: https, port: ${azurite.port}, protocol: TCP}]
endpoints: [{addresses: ["${HOST}"]}]
`,
  );

  const identity = {
    clientId: "5f0c9a2e-0000-4000-8000-0000000000c1",
    tenantId: "7d2b4c6e-0000-4000-8000-0000000000d1",
    authorityHost: "",
  };
  const tokenPort = await freePort();
  const lines: string[] = [];
  let output = "";
  const entra = spawn(
    process.execPath,
    [
      path.join(REPO, "testbed/azure/entra.js"),
      HOST,
      String(tokenPort),
      identity.clientId,
      identity.tenantId,
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, KUBECTL: path.join(toolchainBin(), "kubectl"), KUBECONFIG },
    },
  );
  entra.stdout!.on("data", (c) => {
    output = (output + c).slice(-4000);
    lines.push(
      ...String(c)
        .split("\n")
        .filter((l) => l.startsWith("TOKEN ")),
    );
  });
  entra.stderr!.on("data", (c) => (output = (output + c).slice(-4000)));
  await listening("Entra ID token endpoint", tokenPort, entra, () => output);
  identity.authorityHost = `http://${HOST}:${tokenPort}/`;

  const ca = fs.readFileSync(tls.ca);
  return {
    endpointUrl: `https://${ACCOUNT_HOST}:${azurite.port}`,
    accountName: AZURITE_ACCOUNT,
    caPem: ca.toString("utf8"),
    identity,
    createContainer: (container) => void azurite.containerPy("create", container),
    list: (container, prefix) => JSON.parse(azurite.containerPy("list", container, prefix)),
    tokens: async () => {
      await new Promise((r) => setTimeout(r, 500));
      return [...lines];
    },
    get: (url) =>
      new Promise((resolve, reject) => {
        const u = new URL(url);
        const req = https.get(
          {
            host: HOST,
            port: u.port,
            path: `${u.pathname}${u.search}`,
            servername: u.hostname,
            headers: { host: u.host },
            ca,
            timeout: 10_000,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
            res.on("error", reject);
          },
        );
        req.on("timeout", () => req.destroy(new Error(`GET ${url}: no answer in 10 s`)));
        req.on("error", reject);
      }),
    stop: () => {
      entra.kill();
      azurite.stop();
      kubectl(["delete", "namespace", BLOB_NAMESPACE, "--ignore-not-found", "--wait=false"]);
    },
  };
}
