// Real Pulp on the real node: pulp-web's content copy (`pulp:web.contentCache`, on by default) with a current
// pulpcore. From 3.122 on, the content app marks every answer `Cache-Control: public, max-age=0,
// must-revalidate`; nginx obeying it kept no copy at all, so with no content app running every download was a
// 503 (found on 3.123.1; guardedUpgrade.test.ts, on 3.85 -> 3.89, could not see it). Here: the content app's
// own answer carries that header; downloads through pulp-web are kept; with the content Deployment at zero,
// pulp-web answers them from its copy with the same bytes, and a file it never served is a 503 with
// Retry-After; with the content app back, answers come from it again.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CACHE_HEADER } from "../../../components/web/nginx";
import { getJson, kubectl, waitUntil } from "../../../testbed/harness";
import { distributeFile, get, sha256 } from "../../../testbed/real/clients";
import type { LoadTarget } from "../../../testbed/real/load";
import { ONE_POD_EACH } from "../../../testbed/real/stack";
import { dropRelease, installRelease, ReleaseStack } from "../../../testbed/real/upgradeStack";

jest.setTimeout(20 * 60 * 1000);

const RELEASE = "3.123.1";
const STACK: ReleaseStack = {
  stack: "real-web-copy",
  namespace: "pulp-web-copy",
  database: "pulp_web_copy",
  password: "web-copy-admin-Zq8",
};
const NS = STACK.namespace;
const OUT = fs.mkdtempSync(path.join(os.tmpdir(), "web-copy-"));
let target: LoadTarget;
const files: Record<string, { contentPath: string; sha256: string }> = {};

/** Content pods, terminating ones too (one still answers until its process ends), and the Service's endpoints. */
const contentLeft = () => ({
  pods: getJson<{ items: unknown[] }>(["pods", "-n", NS, "-l", "app.kubernetes.io/component=content"]).items
    .length,
  endpoints: getJson<{ items: { endpoints?: unknown[] }[] }>([
    "endpointslices",
    "-n",
    NS,
    "-l",
    "kubernetes.io/service-name=pulp-content",
  ]).items.reduce((n, slice) => n + (slice.endpoints?.length ?? 0), 0),
});

beforeAll(
  async () => {
    ({ target } = await installRelease(STACK, RELEASE, { config: ONE_POD_EACH }));
    const pulp = { baseUrl: target.baseUrl, password: STACK.password, namespace: NS };
    for (const [name, fill] of [
      ["fetched", 1],
      ["never-fetched", 2],
    ] as const) {
      const file = path.join(OUT, `${name}.bin`);
      fs.writeFileSync(file, Buffer.alloc(128 * 1024, fill));
      const { contentPath } = distributeFile(pulp, name, file, `${name}.bin`);
      files[name] = { contentPath, sha256: sha256(fs.readFileSync(file)) };
    }
  },
  25 * 60 * 1000, // an install and two uploads: beside another lane they took over 15 min
);

afterAll(() => {
  if (!process.env.PULP_KEEP_STACK) dropRelease(STACK);
});

test("the content app marks its answers max-age=0, must-revalidate, and pulp-web keeps a copy of them all the same", async () => {
  const contentPod = getJson<{ items: any[] }>([
    "pods",
    "-n",
    NS,
    "-l",
    "app.kubernetes.io/component=content",
  ]).items[0];
  const url = `http://${contentPod.status.podIP}:24816${files.fetched.contentPath}`;
  const direct = await get(url);
  expect({ status: direct.status, cacheControl: direct.headers["cache-control"] }).toEqual({
    status: 200,
    cacheControl: "public, max-age=0, must-revalidate",
  });
  // Through the Service, so that each pulp-web pod serves (and keeps) it at least once.
  for (let i = 0; i < 12; i++) {
    const answer = await get(`${target.baseUrl}${files.fetched.contentPath}`);
    expect({ status: answer.status, fromCopy: answer.headers[CACHE_HEADER.toLowerCase()] }).toEqual({
      status: 200,
      fromCopy: undefined, // while a content app answers, it does
    });
  }
  const webPods = getJson<{ items: any[] }>([
    "pods",
    "-n",
    NS,
    "-l",
    "app.kubernetes.io/component=web",
  ]).items;
  for (const pod of webPods) {
    const kept = kubectl([
      "exec",
      "-n",
      NS,
      pod.metadata.name,
      "--",
      "sh",
      "-c",
      "find /var/cache/pulp-content -type f | wc -l",
    ]).trim();
    expect({ pod: pod.metadata.name, kept: Number(kept) > 0 }).toEqual({
      pod: pod.metadata.name,
      kept: true,
    });
  }
});

test("with no content app running, pulp-web answers what it kept from its copy, and 503 with Retry-After for the rest", async () => {
  kubectl(["scale", "deployment", "pulp-content", "-n", NS, "--replicas=0"]);
  try {
    await waitUntil(
      `${NS}: no content pod or endpoint left`,
      180,
      () => {
        const left = contentLeft();
        return left.pods === 0 && left.endpoints === 0;
      },
      { detail: () => JSON.stringify(contentLeft()) },
    );
    for (let i = 0; i < 6; i++) {
      const answer = await get(`${target.baseUrl}${files.fetched.contentPath}`);
      expect({
        status: answer.status,
        sha256: sha256(answer.body),
        fromCopy: answer.headers[CACHE_HEADER.toLowerCase()],
      }).toEqual({
        status: 200,
        sha256: files.fetched.sha256,
        fromCopy: expect.stringMatching(/^(HIT|STALE)$/),
      });
    }
    const never = await get(`${target.baseUrl}${files["never-fetched"].contentPath}`);
    expect({ status: never.status, retryAfter: never.headers["retry-after"] }).toEqual({
      status: 503,
      retryAfter: "30",
    });
  } finally {
    kubectl(["scale", "deployment", "pulp-content", "-n", NS, "--replicas=1"]);
  }
  await waitUntil(`${NS}: the content app serves again`, 300, async () => {
    const answer = await get(`${target.baseUrl}${files["never-fetched"].contentPath}`);
    return answer.status === 200;
  });
  const again = await get(`${target.baseUrl}${files.fetched.contentPath}`);
  expect({ status: again.status, fromCopy: again.headers[CACHE_HEADER.toLowerCase()] }).toEqual({
    status: 200,
    fromCopy: undefined,
  });
});
