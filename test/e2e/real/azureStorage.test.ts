// Real Pulp on the real node: artifacts in Azure Blob Storage (storage.azure). Azurite, the Azure Storage
// emulator (testbed/azure), stands in for a storage account, at a blob endpoint of its own as a sovereign
// cloud's or a private endpoint's would be. The account's key is secret config only: it reaches the pods
// in a connection string from the Secret pulp-azure, never settings.py. A file uploaded with pulp-cli lands
// in the container under the configured folder; the content app answers with a redirect signed by the key
// (a SAS), which downloads the same bytes; a backup names the container as the artifacts' storage; a
// second `up` changes nothing.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { dropStack, freshStack, getJson, mustPulumi, setSecrets } from "../../../testbed/harness";
import { REPO } from "../../../testbed/local/environment";
import { BlobStorage, startBlobStorage } from "../../../testbed/real/azure";
import { distributeFile, get, Pulp, pulpCli, pulpThroughWeb, sha256 } from "../../../testbed/real/clients";
import { apiFile, backupTool, lastJsonLine, restoreCheckInApi } from "../../../testbed/real/operate";
import { DATABASE_PASSWORD, dropDatabase, emptyDatabase } from "../../../testbed/real/database";
import { importImages, localImages, releaseConfig } from "../../../testbed/real/stack";

jest.setTimeout(20 * 60 * 1000);

const STACK = "real-azure";
const NS = "pulp-azure";
const DATABASE = "pulp_azure";
const CONTAINER = "pulp-artifacts";
const LOCATION = "pulp/azure";
const ADMIN_PASSWORD = "azure-admin-password-Kq7";
let storage: BlobStorage;
let pulp: Pulp;
/** The uploaded file's artifact, as Pulp names it (artifact/<2 hex>/<62 hex>). */
let artifact: string;

beforeAll(
  async () => {
    importImages();
    storage = await startBlobStorage();
    storage.createContainer(CONTAINER);
    const postgresql = localImages().postgresql;
    emptyDatabase(postgresql, DATABASE);
    freshStack(
      STACK,
      {
        ...releaseConfig(NS, DATABASE, "3.123.1"),
        storage: {
          azure: {
            accountName: storage.accountName,
            container: CONTAINER,
            location: LOCATION,
            endpointUrl: storage.endpointUrl,
          },
        },
        backup: { enabled: true, image: postgresql, volume: { size: "1Gi" } },
      },
      path.join(REPO, "Pulumi.dev.yaml"),
    );
    setSecrets(STACK, {
      "pulp:adminPassword": ADMIN_PASSWORD,
      "pulp:databasePassword": DATABASE_PASSWORD,
      "pulp:azureAccountKey": storage.accountKey,
    });
  },
  10 * 60 * 1000,
);

afterAll(() => {
  storage?.stop();
  if (!process.env.PULP_KEEP_STACK) {
    dropStack(STACK, NS);
    dropDatabase(DATABASE);
  }
});

test("`pulumi up` with storage.azure: settings.py names the account and container, the key reaches the pods only from pulp-azure", () => {
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  pulp = pulpThroughWeb(NS, ADMIN_PASSWORD);
  expect(pulpCli(pulp, ["status"]).database_connection.connected).toBe(true);
  for (const deployment of ["pulp-api", "pulp-content", "pulp-worker"]) {
    const env = getJson(["deployment", deployment, "-n", NS]).spec.template.spec.containers[0].env as {
      name: string;
      valueFrom?: { secretKeyRef?: { name: string } };
    }[];
    const fromSecret = env.find((e) => e.name === "SECRET_STORAGES__default__OPTIONS__connection_string");
    expect({ deployment, secret: fromSecret?.valueFrom?.secretKeyRef?.name }).toEqual({
      deployment,
      secret: "pulp-azure",
    });
    expect(JSON.stringify(env)).not.toContain(storage.accountKey);
  }
  const settings = apiFile(NS, "/etc/pulp/settings.py");
  expect(settings).toContain('"BACKEND": "storages.backends.azure_storage.AzureStorage"');
  expect(settings).toContain(`"azure_container": "${CONTAINER}"`);
  expect(settings).toContain(`"location": "${LOCATION}"`);
  expect(settings).not.toContain(storage.accountKey);
});

test("a file uploaded lands in the container's folder; the content app's redirect is signed by the key and downloads the same bytes", async () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pulp-azure-")), "azure.bin");
  const data = Buffer.concat([Buffer.from("in a blob container\n"), Buffer.alloc(256 * 1024, 7)]);
  fs.writeFileSync(file, data);
  const { contentPath } = distributeFile(pulp, "azure", file, "azure.bin");

  const blobs = storage.list(CONTAINER, "");
  const uploaded = blobs.filter((b) => b.bytes === data.length);
  expect(uploaded).toHaveLength(1);
  expect(uploaded[0].name).toMatch(new RegExp(`^${LOCATION}/artifact/[0-9a-f]{2}/[0-9a-f]{62}$`));
  expect(uploaded[0].name.replace(/^.*artifact\/(..)\//, "$1")).toBe(sha256(data));
  artifact = uploaded[0].name.slice(LOCATION.length + 1);

  const redirect = await get(`${pulp.baseUrl}${contentPath}`);
  expect(redirect.status).toBe(302);
  const location = new URL(String(redirect.headers.location));
  expect(`${location.origin}${location.pathname}`).toBe(
    `${storage.endpointUrl}/${CONTAINER}/${uploaded[0].name}`,
  );
  // A service SAS: signed with the account key, read-only, and expiring (expiration_secs).
  expect(location.searchParams.get("sig")).toBeTruthy();
  expect(location.searchParams.get("sp")).toBe("r");
  expect(Date.parse(location.searchParams.get("se")!) - Date.now()).toBeLessThanOrEqual(60_000);
  const download = await get(location.toString());
  expect(download.status).toBe(200);
  expect(sha256(download.body)).toBe(sha256(data));
  // Without the signature the emulator, as Azure, refuses: the container is private.
  expect((await get(`${location.origin}${location.pathname}`)).status).not.toBe(200);
});

/** restoreCheck.py in an api pod over a backup that references `names` (operate.ts restoreCheckInApi). */
const restoreCheck = (names: string[]) =>
  restoreCheckInApi(
    NS,
    "azure-check",
    `azure://${storage.accountName}/${CONTAINER}/${LOCATION}`,
    names,
    'AZURE_CONNECTION_STRING="$SECRET_STORAGES__default__OPTIONS__connection_string"',
  );

test("a restore's check lists the container with Pulp's own client: the artifact is found, a missing one refused", () => {
  const found = restoreCheck([artifact]);
  expect(found.refusal).toBe("");
  expect(found.out).toContain(
    `all 1 artifacts backup azure-check references are in azure://${storage.accountName}/${CONTAINER}/${LOCATION}`,
  );
  const missing = `artifact/00/${"0".repeat(62)}`;
  const refused = restoreCheck([missing, artifact].sort());
  expect(refused.refusal).toContain(`1 of the 2 artifacts backup azure-check references are not in azure://`);
  expect(refused.refusal).toContain(`(first: ${missing})`);
});

test("a backup names the container as the artifacts' storage and holds none of them; a second `up` changes nothing", () => {
  const cronJob = getJson(["cronjob", "pulp-backup", "-n", NS]);
  const env = cronJob.spec.jobTemplate.spec.template.spec.initContainers
    .concat(cronJob.spec.jobTemplate.spec.template.spec.containers)
    .flatMap((c: { env?: { name: string; value?: string }[] }) => c.env ?? []);
  expect(env).toContainEqual({
    name: "STORAGE",
    value: `azure://${storage.accountName}/${CONTAINER}/${LOCATION}`,
  });
  const run = backupTool(NS, "now");
  expect({ ok: run.ok, stderr: run.stderr }).toEqual({ ok: true, stderr: expect.any(String) });
  expect(lastJsonLine(run)).toMatchObject({ artifactFiles: 0 });

  const again = mustPulumi(STACK, ["preview", "--expect-no-changes"]);
  expect(again.code).toBe(0);
});
