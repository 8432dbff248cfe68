// Real Pulp on the real node: artifacts in Google Cloud Storage (storage.gcs) with a service account's key.
// fake-gcs-server (testbed/gcs) stands in for the JSON API at an endpoint of its own (storage.gcs.endpointUrl,
// as a Private Service Connect endpoint would be), and a token endpoint on the host stands in for Google's
// OAuth: the key the test makes names it, so google-auth in the pods trades the key for tokens there. The key
// is secret config only: it reaches the pods as a file from the Secret pulp-gcs, never settings.py or env. A
// file uploaded with pulp-cli lands in the bucket under the configured folder; the content app answers with
// a redirect signed with the key (V4, 60 s, the signature verified with the key's public half), which downloads the same bytes; a restore's check lists the
// bucket with Pulp's own client; a backup names the bucket; a second `up` changes nothing. Not proven here:
// signing without a key (IAM signBlob is at iamcredentials.googleapis.com, which no test traffic reaches).
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { dropStack, freshStack, getJson, mustPulumi, setSecrets } from "../../../testbed/harness";
import { REPO } from "../../../testbed/local/environment";
import { GcsEmulator, SERVICE_ACCOUNT, signedWith, startGcs } from "../../../testbed/real/gcs";
import { distributeFile, get, Pulp, pulpCli, pulpThroughWeb, sha256 } from "../../../testbed/real/clients";
import { apiFile, backupTool, lastJsonLine, restoreCheckInApi } from "../../../testbed/real/operate";
import { DATABASE_PASSWORD, dropDatabase, emptyDatabase } from "../../../testbed/real/database";
import { importImages, localImages, releaseConfig } from "../../../testbed/real/stack";

jest.setTimeout(20 * 60 * 1000);

const STACK = "real-gcs";
const NS = "pulp-gcs";
const DATABASE = "pulp_gcs";
const BUCKET = "pulp-artifacts";
const LOCATION = "pulp/gcs";
const ADMIN_PASSWORD = "gcs-admin-password-Kq7";
let gcs: GcsEmulator;
let pulp: Pulp;
/** The uploaded file's artifact, as Pulp names it (artifact/<2 hex>/<62 hex>). */
let artifact: string;

beforeAll(
  async () => {
    importImages();
    gcs = await startGcs();
    await gcs.createBucket(BUCKET);
    const postgresql = localImages().postgresql;
    emptyDatabase(postgresql, DATABASE);
    freshStack(
      STACK,
      {
        ...releaseConfig(NS, DATABASE, "3.123.1"),
        storage: { gcs: { bucket: BUCKET, location: LOCATION, endpointUrl: gcs.endpointUrl } },
        backup: { enabled: true, image: postgresql, volume: { size: "1Gi" } },
      },
      path.join(REPO, "Pulumi.dev.yaml"),
    );
    setSecrets(STACK, {
      "pulp:adminPassword": ADMIN_PASSWORD,
      "pulp:databasePassword": DATABASE_PASSWORD,
      "pulp:gcsCredentials": gcs.key,
    });
  },
  10 * 60 * 1000,
);

afterAll(() => {
  gcs?.stop();
  if (!process.env.PULP_KEEP_STACK) {
    dropStack(STACK, NS);
    dropDatabase(DATABASE);
  }
});

test("`pulumi up` with storage.gcs: settings.py names the bucket and folder, the key is a file from pulp-gcs", () => {
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  pulp = pulpThroughWeb(NS, ADMIN_PASSWORD);
  expect(pulpCli(pulp, ["status"]).database_connection.connected).toBe(true);
  const privateKey = JSON.parse(gcs.key).private_key as string;
  for (const deployment of ["pulp-api", "pulp-content", "pulp-worker"]) {
    const spec = getJson(["deployment", deployment, "-n", NS]).spec.template.spec;
    expect({
      deployment,
      volume: spec.volumes.find((v: { name: string }) => v.name === "gcs-key")?.secret?.secretName,
      env: spec.containers[0].env.find((e: { name: string }) => e.name === "GOOGLE_APPLICATION_CREDENTIALS")
        ?.value,
    }).toEqual({ deployment, volume: "pulp-gcs", env: "/etc/pulp/gcs/credentials.json" });
    expect(JSON.stringify(spec)).not.toContain(privateKey.split("\n")[1]);
  }
  const settings = apiFile(NS, "/etc/pulp/settings.py");
  expect(settings).toContain('"BACKEND": "storages.backends.gcloud.GoogleCloudStorage"');
  expect(settings).toContain(`"bucket_name": "${BUCKET}"`);
  expect(settings).toContain(`"location": "${LOCATION}"`);
  expect(settings).not.toContain("iam_sign_blob");
  expect(settings).not.toContain(privateKey.split("\n")[1]);
});

test("a file uploaded lands in the bucket's folder, with tokens traded for the key; the redirect is signed with the key and downloads the same bytes", async () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pulp-gcs-")), "gcs.bin");
  const data = Buffer.concat([Buffer.from("in a bucket\n"), Buffer.alloc(256 * 1024, 9)]);
  fs.writeFileSync(file, data);
  const { contentPath } = distributeFile(pulp, "gcs", file, "gcs.bin");

  const uploaded = (await gcs.list(BUCKET, "")).filter((o) => o.bytes === data.length);
  expect(uploaded).toHaveLength(1);
  expect(uploaded[0].name).toMatch(new RegExp(`^${LOCATION}/artifact/[0-9a-f]{2}/[0-9a-f]{62}$`));
  expect(uploaded[0].name.replace(/^.*artifact\/(..)\//, "$1")).toBe(sha256(data));
  artifact = uploaded[0].name.slice(LOCATION.length + 1);
  // The worker signed in with the key: google-auth traded its JWT for a token at the key's token_uri.
  expect(gcs.tokens()).toBeGreaterThan(0);

  const redirect = await get(`${pulp.baseUrl}${contentPath}`);
  expect(redirect.status).toBe(302);
  const location = new URL(String(redirect.headers.location));
  expect(`${location.origin}${location.pathname}`).toBe(`${gcs.endpointUrl}/${BUCKET}/${uploaded[0].name}`);
  // A V4 signed URL: the key's account, valid 60 s, its signature the key's (checked here: the emulator
  // checks none, Google does).
  expect(location.searchParams.get("X-Goog-Algorithm")).toBe("GOOG4-RSA-SHA256");
  expect(location.searchParams.get("X-Goog-Credential")).toMatch(new RegExp(`^${SERVICE_ACCOUNT}/`));
  expect(location.searchParams.get("X-Goog-Expires")).toBe("60");
  expect(signedWith(location, gcs.key)).toBe(true);
  const download = await get(location.toString());
  expect(download.status).toBe(200);
  expect(sha256(download.body)).toBe(sha256(data));
});

/** restoreCheck.py in an api pod over a backup that references `names` (operate.ts restoreCheckInApi). */
const restoreCheck = (names: string[]) =>
  restoreCheckInApi(NS, "gcs-check", `gs://${BUCKET}/${LOCATION}`, names);

test("a restore's check lists the bucket with Pulp's own client: the artifact is found, a missing one refused", () => {
  const found = restoreCheck([artifact]);
  expect(found.refusal).toBe("");
  expect(found.out).toContain(
    `all 1 artifacts backup gcs-check references are in gs://${BUCKET}/${LOCATION}`,
  );
  const missing = `artifact/00/${"0".repeat(62)}`;
  const refused = restoreCheck([missing, artifact].sort());
  expect(refused.refusal).toContain(`1 of the 2 artifacts backup gcs-check references are not in gs://`);
  expect(refused.refusal).toContain(`(first: ${missing})`);
});

test("a backup names the bucket as the artifacts' storage and holds none of them; a second `up` changes nothing", () => {
  const cronJob = getJson(["cronjob", "pulp-backup", "-n", NS]);
  const env = cronJob.spec.jobTemplate.spec.template.spec.initContainers
    .concat(cronJob.spec.jobTemplate.spec.template.spec.containers)
    .flatMap((c: { env?: { name: string; value?: string }[] }) => c.env ?? []);
  expect(env).toContainEqual({ name: "STORAGE", value: `gs://${BUCKET}/${LOCATION}` });
  const run = backupTool(NS, "now");
  expect({ ok: run.ok, stderr: run.stderr }).toEqual({ ok: true, stderr: expect.any(String) });
  expect(lastJsonLine(run)).toMatchObject({ artifactFiles: 0 });

  const again = mustPulumi(STACK, ["preview", "--expect-no-changes"]);
  expect(again.code).toBe(0);
});
