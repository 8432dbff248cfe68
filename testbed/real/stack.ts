// What a stack on the real node needs from the test bed: the locally built images (testbed/images) and
// a small OCI archive to push through the registry (the node's busybox test image).
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { NODE_CONTAINERD, REPO, STATE, toolchainBin } from "../local/environment";
import { DATABASE_HOST } from "./database";

const CACHE = process.env.PULP_IMAGE_CACHE ?? path.join(os.homedir(), ".cache", "pulp-pulumi-images");

function builtNames(): { index: string; names: string[] } {
  const index = path.join(CACHE, "index.json");
  return {
    index,
    names: fs.existsSync(index) ? Object.keys(JSON.parse(fs.readFileSync(index, "utf8"))) : [],
  };
}

/** Tags compared as versions (3.123.1 after 3.85.34), so the newest build is the one a name-less caller gets. */
const byVersion = (a: string, b: string) => a.localeCompare(b, "en", { numeric: true });

/** The PostgreSQL major of the test bed's databases and CloudNativePG clusters (Debian bookworm's). */
export const TEST_BED_POSTGRES_MAJOR = 15;

/** The image names testbed/images built, by kind (the newest of each); fails naming the build command when one is missing. */
export function localImages(): {
  pulp: string;
  web: string;
  redis: string;
  postgresql: string;
  pgbouncer: string;
} {
  const { index, names } = builtNames();
  const find = (repo: string) => {
    const name = names
      .filter((n) => n.startsWith(`localhost/${repo}:`))
      .sort(byVersion)
      .pop();
    if (!name) throw new Error(`no local image localhost/${repo}:* in ${index}; build it: npm run images`);
    return name;
  };
  return {
    pulp: find("pulp-minimal"),
    web: find("pulp-web"),
    redis: find("redis"),
    // Bookworm's 15, named: the newest would be 17, which is built on request as the major-upgrade
    // test's target (testbed/images/recipes/postgresql-17.sh).
    postgresql: requireLocalImage(`localhost/postgresql:${TEST_BED_POSTGRES_MAJOR}`),
    pgbouncer: find("pgbouncer"),
  };
}

/** `name` if testbed/images built it; otherwise fails naming the command that builds it. */
export function requireLocalImage(name: string): string {
  const { index, names } = builtNames();
  if (!names.includes(name)) {
    throw new Error(
      `no local image ${name} in ${index}; build it: npm run images (package.json lists the releases)`,
    );
  }
  return name;
}

/** Requests small enough for several installs on one 2-core node, with a rollout's surge. */
export const SMALL_PODS = { requests: { cpu: "50m", memory: "256Mi" }, limits: { memory: "1Gi" } };

/** One api, one content and one worker pod (stack config): a 2-core machine starts them faster. */
export const ONE_POD_EACH = {
  api: { replicas: 1, resources: SMALL_PODS },
  content: { replicas: 1, resources: SMALL_PODS },
  worker: { replicas: 1, terminationGracePeriodSeconds: 60, resources: SMALL_PODS },
};

/**
 * Stack config for a real-node install of one pulpcore release (the images testbed/images built for it) on
 * the test bed's PostgreSQL: two api, two content and two pulp-web pods, so one can go while the other
 * serves, and one worker. Small requests: everything fits one 2-core node with a rollout's surge.
 */
export function releaseConfig(namespace: string, database: string, release: string): Record<string, unknown> {
  return {
    namespace,
    contentOrigin: `http://pulp-web.${namespace}.svc.cluster.local:8080`,
    image: requireLocalImage(`localhost/pulp-minimal:${release}`),
    web: { enabled: true, replicas: 2, image: requireLocalImage(`localhost/pulp-web:${release}`) },
    api: { replicas: 2, resources: SMALL_PODS },
    content: { replicas: 2, resources: SMALL_PODS },
    worker: { replicas: 1, terminationGracePeriodSeconds: 60, resources: SMALL_PODS },
    database: { external: { host: DATABASE_HOST, name: database, sslmode: "disable" } },
    // The dev stack's backups take their image from the CloudNativePG config this replaces; the upgrade
    // tests take no backups.
    backup: { enabled: false },
  };
}

/** The busybox test image as an OCI archive (built by the real node from Debian's busybox-static). */
export function busyboxArchive(): string {
  execFileSync(
    "bash",
    [
      path.join(REPO, "testbed/node/node.sh"),
      path.join(STATE, "cluster"),
      toolchainBin(),
      "image",
      "busybox",
    ],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  return path.join(STATE, "cluster", "node", "images", "busybox.tar");
}

/** Imports every image testbed/images built into the real node's containerd (a no-op for ones it has). */
export function importImages(): void {
  execFileSync(
    "python3",
    [path.join(REPO, "testbed/images/build.py"), "import", "--address", NODE_CONTAINERD],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
}

/**
 * An image testbed/images builds only when named (build.py's ON_REQUEST, e.g. `postgresql-17`), built if it
 * is not cached yet and imported into the real node; returns its name (`localhost/postgresql:17`).
 */
export function onRequestImage(recipe: string): string {
  const build = path.join(REPO, "testbed/images/build.py");
  const name = execFileSync("python3", [build, "build", recipe], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  execFileSync("python3", [build, "import", "--address", NODE_CONTAINERD, name], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return name;
}
