// Azure Blob Storage for the real-Pulp tests: Azurite, the Azure Storage emulator (testbed/azure), on the
// real node's bridge address, where pods reach the host and the host's clients follow the content app's
// redirects. Its one account is the emulator's published devstoreaccount1 and key. Telemetry off: no
// test traffic leaves the machine. Started and stopped by the test that needs it.
import { execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { NODE_ADDRESS as HOST, REPO } from "../local/environment";
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

export async function startBlobStorage(): Promise<BlobStorage> {
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
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout!.on("data", (c) => (output = (output + c).slice(-4000)));
  child.stderr!.on("data", (c) => (output = (output + c).slice(-4000)));
  await listening("azurite-blob", port, child, () => output);
  const endpointUrl = `http://${HOST}:${port}/${AZURITE_ACCOUNT}`;
  const connection =
    `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};` +
    `BlobEndpoint=${endpointUrl}`;
  const containerPy = (...args: string[]) =>
    execFileSync(path.join(venvBin, "python3"), [path.join(REPO, "testbed/azure/container.py"), ...args], {
      encoding: "utf8",
      env: { ...process.env, AZURE_CONNECTION_STRING: connection },
    }).trim();
  return {
    endpointUrl,
    accountName: AZURITE_ACCOUNT,
    accountKey: AZURITE_KEY,
    createContainer: (container) => void containerPy("create", container),
    list: (container, prefix) => JSON.parse(containerPy("list", container, prefix)),
    stop: () => {
      child.kill();
      fs.rmSync(workspace, { recursive: true, force: true });
    },
  };
}
