// Real Pulp on the real node: artifacts in Azure Blob Storage with no key at all (storage.azure without
// pulp:azureAccountKey), the pods signed in as a workload identity. Azurite checks every request's bearer
// token as Azure would (Entra ID's issuer, the storage audience; over https only), at the name an account
// has in Azure (https://devstoreaccount1.blob.<suffix>), and the test bed's Entra ID token endpoint gives
// a storage token only for a ServiceAccount token the cluster's TokenReview vouches for
// (testbed/azure/entra.js). pulp:serviceAccount.azureWorkloadIdentity does what AKS's webhook would. A file
// uploaded with pulp-cli lands in the container; the content app's redirect carries a user delegation SAS
// (signed with a key Azure derives for the identity, never the account's) that downloads the same bytes.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { dropStack, freshStack, getJson, mustPulumi, setSecrets } from "../../../testbed/harness";
import { REPO } from "../../../testbed/local/environment";
import {
  ACCOUNT_HOST,
  AZURITE_KEY,
  IdentityBlobStorage,
  startBlobStorageForIdentity,
} from "../../../testbed/real/azure";
import { distributeFile, get, Pulp, pulpCli, pulpThroughWeb, sha256 } from "../../../testbed/real/clients";
import { apiFile } from "../../../testbed/real/operate";
import { DATABASE_PASSWORD, dropDatabase, emptyDatabase } from "../../../testbed/real/database";
import { importImages, localImages, releaseConfig } from "../../../testbed/real/stack";

jest.setTimeout(20 * 60 * 1000);

const STACK = "real-azure-identity";
const NS = "pulp-azure-identity";
const DATABASE = "pulp_azure_identity";
const CONTAINER = "pulp-artifacts";
const ADMIN_PASSWORD = "azure-identity-admin-Kq8";
let storage: IdentityBlobStorage;
let pulp: Pulp;

beforeAll(
  async () => {
    importImages();
    storage = await startBlobStorageForIdentity();
    storage.createContainer(CONTAINER);
    emptyDatabase(localImages().postgresql, DATABASE);
    freshStack(
      STACK,
      {
        ...releaseConfig(NS, DATABASE, "3.123.1"),
        storage: {
          azure: { accountName: storage.accountName, container: CONTAINER, endpointUrl: storage.endpointUrl },
        },
        serviceAccount: { azureWorkloadIdentity: storage.identity },
        trustedCa: { certificates: storage.caPem },
      },
      path.join(REPO, "Pulumi.dev.yaml"),
    );
    setSecrets(STACK, {
      "pulp:adminPassword": ADMIN_PASSWORD,
      "pulp:databasePassword": DATABASE_PASSWORD,
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

test("`pulumi up` with storage.azure and no key: the pods carry the identity, and no key is in any Secret or settings", () => {
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  pulp = pulpThroughWeb(NS, ADMIN_PASSWORD);
  expect(pulpCli(pulp, ["status"]).database_connection.connected).toBe(true);
  for (const deployment of ["pulp-api", "pulp-content", "pulp-worker"]) {
    const template = getJson(["deployment", deployment, "-n", NS]).spec.template;
    expect({ deployment, label: template.metadata.labels["azure.workload.identity/use"] }).toEqual({
      deployment,
      label: "true",
    });
    const env = template.spec.containers[0].env as { name: string; value?: string }[];
    expect(env).toContainEqual({ name: "AZURE_CLIENT_ID", value: storage.identity.clientId });
    expect(JSON.stringify(env)).not.toContain("connection_string");
  }
  // No key in any Secret of the namespace, whatever its name.
  const secrets = getJson(["secret", "-n", NS]).items as { metadata: { name: string }; data?: object }[];
  const decoded = secrets.flatMap((s) =>
    Object.values(s.data ?? {}).map((v) => Buffer.from(String(v), "base64").toString("utf8")),
  );
  expect(decoded.filter((text) => text.includes(AZURITE_KEY) || text.includes("AccountKey="))).toEqual([]);
  expect(secrets.map((s) => s.metadata.name)).not.toContain("pulp-azure");
  const settings = apiFile(NS, "/etc/pulp/settings.py");
  expect(settings).toContain('"token_credential": _PulpAzureWorkloadIdentity()');
  expect(settings).toContain(
    `"endpoint_suffix": "${storage.endpointUrl.replace(/^https:\/\/[^.]+\.blob\./, "")}"`,
  );
});

test("a file uploaded lands in the container, with tokens Entra ID gave the pods' ServiceAccount only", async () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pulp-azure-identity-")), "identity.bin");
  const data = Buffer.concat([Buffer.from("signed in as a workload\n"), Buffer.alloc(128 * 1024, 5)]);
  fs.writeFileSync(file, data);
  distributeFile(pulp, "identity", file, "identity.bin");

  const uploaded = storage.list(CONTAINER, "").filter((b) => b.bytes === data.length);
  expect(uploaded).toHaveLength(1);
  expect(uploaded[0].name).toMatch(/^artifact\/[0-9a-f]{2}\/[0-9a-f]{62}$/);
  // The worker that stored it signed in (the api and content apps may have before), and only as the pods'
  // ServiceAccount: nothing refused.
  const tokens = await storage.tokens();
  expect(tokens.length).toBeGreaterThan(0);
  expect(tokens.filter((t) => !t.startsWith(`TOKEN ok system:serviceaccount:${NS}:pulp-pulp`))).toEqual([]);
});

test("the content app's redirect carries a user delegation SAS for the identity, and downloads the same bytes", async () => {
  const data = Buffer.concat([Buffer.from("signed in as a workload\n"), Buffer.alloc(128 * 1024, 5)]);
  const redirect = await get(`${pulp.baseUrl}/pulp/content/identity/identity.bin`);
  expect(redirect.status).toBe(302);
  const location = new URL(String(redirect.headers.location));
  expect(location.host).toBe(new URL(storage.endpointUrl).host);
  expect(location.hostname).toBe(ACCOUNT_HOST);
  // A user delegation SAS names the identity (skoid, sktid) instead of being signed by the account's key.
  expect(location.searchParams.get("skoid")).toBeTruthy();
  expect(location.searchParams.get("sktid")).toBe(storage.identity.tenantId);
  expect(location.searchParams.get("sp")).toBe("r");
  expect(Date.parse(location.searchParams.get("se")!) - Date.now()).toBeLessThanOrEqual(60_000);
  const download = await storage.get(location.toString());
  expect(download.status).toBe(200);
  expect(sha256(download.body)).toBe(sha256(data));
  expect((await storage.get(`${location.origin}${location.pathname}`)).status).not.toBe(200);
});

test("a second `up` changes nothing", () => {
  expect(mustPulumi(STACK, ["preview", "--expect-no-changes"]).code).toBe(0);
});
