// Real Pulp on the real node: artifacts in object storage reached without a static key. moto's S3 and
// STS server (testbed/s3) stands in for AWS; pulp:serviceAccount.awsWebIdentity gives the api, content,
// worker and migration pods a projected ServiceAccount token, which boto3 exchanges for short-lived keys
// (AssumeRoleWithWebIdentity) as it would with IAM on EKS. No key is in the stack config, a Secret, an env
// var or settings.py; a file uploaded with pulp-cli lands in the bucket, and the content app's redirect
// to it is signed with a session token (the web identity's) and downloads with the same sha256. Backups
// go to a second bucket the same way: `npm run backup -- now` puts the archive there, and `list` reads it.
// All of it through pulp:proxy (proxy.py on the host): what reaches moto goes through the proxy, and
// Pulp's in-cluster names, short and long, bypass it.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import {
  dropStack,
  freshStack,
  getJson,
  items,
  kubectl,
  mustPulumi,
  setSecrets,
} from "../../../testbed/harness";
import { REPO } from "../../../testbed/local/environment";
import { distributeFile, get, Pulp, pulpCli, pulpThroughWeb, sha256 } from "../../../testbed/real/clients";
import { backupTool, lastJsonLine, pulpShell } from "../../../testbed/real/operate";
import { HttpProxy, startProxy } from "../../../testbed/real/proxy";
import { DATABASE_PASSWORD, dropDatabase, emptyDatabase } from "../../../testbed/real/database";
import { ObjectStorage, startObjectStorage } from "../../../testbed/real/s3";
import { importImages, localImages, releaseConfig } from "../../../testbed/real/stack";

jest.setTimeout(20 * 60 * 1000);

const STACK = "real-keyless";
const NS = "pulp-keyless";
const DATABASE = "pulp_keyless";
const BUCKET = "pulp-keyless-artifacts";
const BACKUPS = "pulp-keyless-backups";
const ROLE = "arn:aws:iam::123456789012:role/pulp-artifacts";
const ADMIN_PASSWORD = "keyless-admin-password-Wd3";
let storage: ObjectStorage;
let proxy: HttpProxy;
let pulp: Pulp;

beforeAll(
  async () => {
    importImages();
    storage = await startObjectStorage();
    proxy = await startProxy();
    storage.createBucket(BUCKET);
    storage.createBucket(BACKUPS);
    const postgresql = localImages().postgresql;
    emptyDatabase(postgresql, DATABASE);
    freshStack(
      STACK,
      {
        ...releaseConfig(NS, DATABASE, "3.123.1"),
        storage: { s3: { bucket: BUCKET, endpointUrl: storage.endpointUrl, region: "us-east-1" } },
        serviceAccount: { awsWebIdentity: { roleArn: ROLE, stsEndpointUrl: storage.endpointUrl } },
        proxy: { httpProxy: proxy.url, httpsProxy: proxy.url },
        backup: {
          enabled: true,
          image: postgresql,
          volume: { size: "1Gi" },
          s3: { bucket: BACKUPS, endpointUrl: storage.endpointUrl, region: "us-east-1" },
        },
      },
      path.join(REPO, "Pulumi.dev.yaml"),
    );
    setSecrets(STACK, { "pulp:adminPassword": ADMIN_PASSWORD, "pulp:databasePassword": DATABASE_PASSWORD });
  },
  10 * 60 * 1000,
);

afterAll(() => {
  storage?.stop();
  proxy?.stop();
  if (!process.env.PULP_KEEP_STACK) {
    dropStack(STACK, NS);
    dropDatabase(DATABASE);
  }
});

test("`pulumi up` with no S3 key: the pods run as pulp-pulp with the web identity's token, and no key is anywhere", () => {
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  pulp = pulpThroughWeb(NS, ADMIN_PASSWORD);
  expect(pulpCli(pulp, ["status"]).database_connection.connected).toBe(true);

  for (const deployment of ["pulp-api", "pulp-content", "pulp-worker"]) {
    const spec = getJson(["deployment", deployment, "-n", NS]).spec.template.spec;
    const env = Object.fromEntries(
      (spec.containers[0].env as { name: string; value?: string }[]).map((e) => [e.name, e.value]),
    );
    expect({ deployment, account: spec.serviceAccountName, role: env.AWS_ROLE_ARN }).toEqual({
      deployment,
      account: "pulp-pulp",
      role: ROLE,
    });
    expect(Object.keys(env).filter((k) => /AWS_ACCESS_KEY|AWS_SECRET|STORAGES__/.test(k))).toEqual([]);
  }
  // The kubelet projected a token for the audience AWS trusts.
  const api = items("pods", NS).find(
    (p) => p.metadata.name.startsWith("pulp-api-") && p.status.phase === "Running",
  );
  const inApi = (file: string) =>
    kubectl(["exec", "-n", NS, api.metadata.name, "-c", "api", "--", "cat", file]);
  const token = inApi("/var/run/secrets/eks.amazonaws.com/serviceaccount/token");
  const claims = JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString());
  expect({ aud: claims.aud, sub: claims.sub }).toEqual({
    aud: ["sts.amazonaws.com"],
    sub: `system:serviceaccount:${NS}:pulp-pulp`,
  });
  // No Secret holds a key for the bucket, and settings.py names none.
  const secrets = items("secrets", NS).map((s) => s.metadata.name);
  expect(secrets).not.toContain("pulp-s3");
  const settings = inApi("/etc/pulp/settings.py");
  expect(settings).toContain(`"bucket_name": "${BUCKET}"`);
  expect(settings).not.toMatch(/access_key|secret_key"/);
});

test("a file uploaded lands in the bucket; the content app's redirect carries a session token and downloads the same bytes", async () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pulp-keyless-")), "keyless.bin");
  const data = Buffer.concat([Buffer.from("no static key\n"), Buffer.alloc(128 * 1024, 3)]);
  fs.writeFileSync(file, data);
  const { contentPath } = distributeFile(pulp, "keyless", file, "keyless.bin");

  const objects = storage.list(BUCKET, "");
  expect(objects.some((o) => o.bytes === data.length)).toBe(true);

  const redirect = await get(`${pulp.baseUrl}${contentPath}`);
  expect(redirect.status).toBe(302);
  const location = new URL(String(redirect.headers.location));
  expect(location.origin).toBe(storage.endpointUrl);
  // Signed with temporary credentials: only the web identity exchange hands those out here.
  expect(location.searchParams.get("X-Amz-Security-Token")).toBeTruthy();
  expect(location.searchParams.get("X-Amz-Credential")).toMatch(/^ASIA/);
  const download = await get(location.toString());
  expect(download.status).toBe(200);
  expect(sha256(download.body)).toBe(sha256(data));
});

test("a backup goes to its bucket with the same identity: `now` uploads the archive, `list` finds it there", () => {
  const run = backupTool(NS, "now");
  expect({ ok: run.ok, stderr: run.stderr }).toEqual({ ok: true, stderr: expect.any(String) });
  const taken = lastJsonLine(run);
  expect(taken.s3).toMatchObject({ url: `s3://${BACKUPS}/${NS}/pulp/${taken.id}.tar` });
  expect(storage.list(BACKUPS, `${NS}/pulp/`).map((o) => o.key)).toEqual([
    `${NS}/pulp/${taken.id}.json`,
    `${NS}/pulp/${taken.id}.keys.tar`,
    `${NS}/pulp/${taken.id}.tar`,
  ]);
  expect(items("secrets", NS).map((s) => s.metadata.name)).not.toContain("pulp-backup-s3");
  const listed = backupTool(NS, "list");
  expect({ ok: listed.ok, stderr: listed.stderr }).toEqual({ ok: true, stderr: expect.any(String) });
  const row = listed.stdout
    .trim()
    .split("\n")
    .find((line) => line.startsWith(taken.id));
  expect(row?.split("\t")[5]).toBe("volume, s3");
});

// In the api pod, with the variables the program set: urllib (as boto3 and requests do) decides per host.
const PROXY_CHECK = (urls: string[]) => `
import json, urllib.request, urllib.error
seen = {}
for url in ${JSON.stringify(urls)}:
    try:
        seen[url] = urllib.request.urlopen(url, timeout=10).status
    except urllib.error.HTTPError as e:
        seen[url] = e.code
print(json.dumps(seen))
`;

test("through pulp:proxy: the bucket and STS were reached through it; Pulp's in-cluster names, short and long, bypass it", () => {
  const moto = new URL(storage.endpointUrl).host;
  // The upload, the web identity exchange and the backup's upload above went to moto through the proxy.
  expect(proxy.forwarded()).toContain(moto);
  const before = proxy.forwarded().length;
  const inCluster = [
    "http://pulp-content:24816/pulp/content/",
    `http://pulp-api.${NS}:24817/pulp/api/v3/status/`,
    `http://pulp-web.${NS}.svc.cluster.local:8080/pulp/api/v3/status/`,
  ];
  const seen = JSON.parse(
    pulpShell(NS, "pulp", PROXY_CHECK([...inCluster, storage.endpointUrl]))
      .split("\n")
      .at(-1)!,
  );
  for (const url of inCluster)
    expect({ url, status: seen[url] }).toEqual({ url, status: expect.any(Number) });
  // The proxy logs a request once its connection closes: moto's from this check is there, and no
  // in-cluster name ever reached it.
  expect(proxy.forwarded().slice(before)).toContain(moto);
  expect(proxy.forwarded().filter((host) => /pulp-|\.svc|cluster\.local/.test(host))).toEqual([]);
});
