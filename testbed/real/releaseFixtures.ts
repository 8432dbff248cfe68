// The installs the upgrade suites upgrade (rollingUpgrade.test.ts, guardedUpgrade.test.ts). Installing one is
// minutes of its suite and none of its measurement, so CI makes them ahead in a lane's room (beside both
// lanes they oversubscribed the node), and each suite, which runs alone, takes its own over. Without one,
// a suite installs its own. An install made ahead is used once: the upgrade changes it.
//
//   ts-node -T testbed/real/releaseFixtures.ts rolling guarded    installs them and records each for its suite
import * as fs from "fs";
import * as path from "path";
import { kubectlTry } from "../harness";
import { STATE } from "../local/environment";
import { dropKey, newSigningKey, TestKey } from "./gpg";
import type { LoadTarget } from "./load";
import { localImages, releaseConfig } from "./stack";
import { dropRelease, installRelease, ReleaseStack } from "./upgradeStack";

interface FixtureSpec {
  stack: ReleaseStack;
  release: string;
  /** A signing service registered at the install (pulp:signing), with a key of its own. */
  signing?: { service: string; uid: string };
}

export const RELEASE_FIXTURES = {
  // 3.121.3 -> 3.123.1: core 0161 on the way, no guard.
  rolling: {
    stack: {
      stack: "real-rolling",
      namespace: "pulp-rolling",
      database: "pulp_rolling",
      password: "real-rolling-Zq8",
    },
    release: "3.121.3",
    signing: { service: "rpm-metadata", uid: "Pulp Rolling Upgrade <rolling@example.com>" },
  },
  // 3.85.34 -> 3.89.2: across core 0143's guard.
  guarded: {
    stack: {
      stack: "real-guard",
      namespace: "pulp-guard",
      database: "pulp_guard",
      password: "real-guard-Zq8",
    },
    release: "3.85.34",
  },
} satisfies Record<string, FixtureSpec>;
export type FixtureName = keyof typeof RELEASE_FIXTURES;

export interface ReleaseFixture {
  target: LoadTarget;
  /** The install's `up`, wherever it ran. */
  seconds: number;
  signingKey?: TestKey;
}

interface MadeAhead extends ReleaseFixture {
  release: string;
  namespaceUid: string;
}

const record = (name: FixtureName) => path.join(STATE, "release-fixtures", `${name}.json`);

const namespaceUid = (namespace: string) => {
  const got = kubectlTry(["get", "namespace", namespace, "-o", "jsonpath={.metadata.uid}"]);
  return got.ok ? got.output.trim() : "";
};

/**
 * releaseConfig's pods with CPU requests of 10m (its own are 50m). Made ahead, these installs wait beside
 * lane b's restore suite: at 50m the two held 800m of the node's 2 cores, and a CDI importer pod (100m) of
 * the restore could not be scheduled (a rehearsal, 2026-11-29). Requests only place pods; the CPU is
 * shared as before.
 */
function lightRequests(spec: FixtureSpec): Record<string, unknown> {
  const base = releaseConfig(spec.stack.namespace, spec.stack.database, spec.release);
  const pod = { requests: { cpu: "10m", memory: "256Mi" }, limits: { memory: "1Gi" } };
  const small = { requests: { cpu: "10m", memory: "64Mi" }, limits: { memory: "512Mi" } };
  const light = (key: string, resources: object) => ({ ...(base[key] as object), resources });
  return {
    api: light("api", pod),
    content: light("content", pod),
    worker: light("worker", pod),
    web: light("web", small),
    redis: { enabled: true, image: localImages().redis, resources: small },
  };
}

async function install(name: FixtureName): Promise<ReleaseFixture> {
  const spec: FixtureSpec = RELEASE_FIXTURES[name];
  const signingKey = spec.signing && newSigningKey(spec.signing.uid);
  try {
    const { target, seconds } = await installRelease(spec.stack, spec.release, {
      signing: signingKey && spec.signing && { key: signingKey.secretKey, service: spec.signing.service },
      config: lightRequests(spec),
    });
    return { target, seconds, signingKey };
  } catch (e) {
    if (signingKey) dropKey(signingKey);
    throw e;
  }
}

/** The install made ahead, if its namespace is still the one recorded, else undefined. */
function installedAhead(name: FixtureName): ReleaseFixture | undefined {
  const file = record(name);
  if (!fs.existsSync(file)) return undefined;
  const ahead = JSON.parse(fs.readFileSync(file, "utf8")) as MadeAhead;
  fs.rmSync(file); // used once, whatever follows
  const spec = RELEASE_FIXTURES[name];
  const same = ahead.release === spec.release && ahead.namespaceUid === namespaceUid(spec.stack.namespace);
  if (same) return ahead;
  if (ahead.signingKey) dropKey(ahead.signingKey);
  return undefined;
}

/** The install a suite upgrades: the one made ahead when there is one, else a new one. */
export async function releaseFixture(name: FixtureName): Promise<ReleaseFixture> {
  const ahead = installedAhead(name);
  if (ahead)
    process.stdout.write(`${name}: the install made ahead in ${RELEASE_FIXTURES[name].stack.namespace}\n`);
  return ahead ?? install(name);
}

async function main(names: string[]): Promise<void> {
  let failed = 0;
  for (const name of names) {
    if (!(name in RELEASE_FIXTURES))
      throw new Error(`no release fixture ${name}; there are: ${Object.keys(RELEASE_FIXTURES).join(", ")}`);
    const spec = RELEASE_FIXTURES[name as FixtureName];
    const started = Date.now();
    try {
      const fixture = await install(name as FixtureName);
      const made: MadeAhead = {
        ...fixture,
        release: spec.release,
        namespaceUid: namespaceUid(spec.stack.namespace),
      };
      fs.mkdirSync(path.dirname(record(name as FixtureName)), { recursive: true });
      fs.writeFileSync(record(name as FixtureName), JSON.stringify(made));
      process.stdout.write(
        `${name}: ${spec.release} installed ahead in ${spec.stack.namespace} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
      );
    } catch (e) {
      // What came up stays idle no longer than this: the suite installs its own.
      process.stderr.write(`${name}: not installed ahead: ${e instanceof Error ? e.stack : e}\n`);
      dropRelease(spec.stack);
      failed++;
    }
  }
  if (failed) process.exit(1);
}

if (require.main === module)
  main(process.argv.slice(2)).catch((e) => {
    process.stderr.write(`${e instanceof Error ? e.stack : e}\n`);
    process.exit(1);
  });
