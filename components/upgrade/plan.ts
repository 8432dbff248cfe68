// How to get from the deployed Pulp release to the configured one. Pure: the version source and the
// orchestration are elsewhere.
import * as pulumi from "@pulumi/pulumi";
import { compareVersions, parseVersion, Version } from "../config/formats";
import { UPGRADE_REFUSED_MARKER, UpgradeKind } from "../contract";

/**
 * pulpcore migrations that refuse to run while an api, content or worker process older than `floor` has
 * sent a heartbeat within its TTL (pulpcore's RequireVersion; ../shared/docs/pulp-on-kubernetes-facts.md).
 */
export const REQUIRE_VERSION_FLOORS: readonly { migrations: string; floor: string }[] = [
  { migrations: "core 0114", floor: "3.34.0" },
  { migrations: "core 0120", floor: "3.50.0" },
  { migrations: "core 0134", floor: "3.82.1" },
  { migrations: "core 0140", floor: "3.85.0" },
  { migrations: "core 0143, 0144", floor: "3.87.0" },
];

/** Heartbeat TTLs: after every old process stops, the longest must pass before `migrate` may run. */
export const HEARTBEAT_TTL_SECONDS = { api: 120, content: 30, worker: 30 };

export type UpgradePlan =
  | { kind: "install"; to: string; summary: string }
  | { kind: "none"; to: string; summary: string }
  | { kind: "rolling"; from: string; to: string; summary: string }
  /** Nothing runs before or after (idle): migrations meet no old process, whatever floors lie between. */
  | { kind: "offline"; from: string; to: string; summary: string }
  | {
      kind: "stop-the-world";
      from: string;
      to: string;
      floor: string;
      migrations: string;
      /** The part of the window known in advance: the heartbeat TTL; migration and start-up come on top. */
      minimumDowntimeSeconds: number;
      summary: string;
    };

// Every kind the plan can take is one the contract names (a compile error otherwise).
const _kindsInContract: UpgradeKind = "" as UpgradePlan["kind"];
void _kindsInContract;

/** An upgrade Pulp does not support; raised before anything is touched. Tools find it by the marker. */
export class UpgradeRefused extends pulumi.RunError {
  constructor(message: string) {
    super(`${UPGRADE_REFUSED_MARKER} ${message}`);
    this.name = "UpgradeRefused";
  }
}

const show = (v: Version) => v.join(".");

/**
 * The plan from `deployed` (undefined on a first install) to `target`:
 * - same version: nothing to migrate; a newer one: migrate while the old pods serve, then roll;
 * - across a RequireVersion floor (deployed below it, target at or above it): every old process must be
 *   stopped and the heartbeat TTL passed before `migrate`, so the upgrade needs downtime. Deciding on the
 *   floor rather than on the release that ships the migration is conservative: it may ask for downtime
 *   one release early, never too late;
 * - refused: a downgrade to an older minor release (Pulp's migrations do not run backwards), and a jump
 *   across two or more floors (each is a stop-the-world of its own: the path names the releases to stop at).
 */
export function planUpgrade(
  deployed: string | undefined,
  target: string,
  idle: { deployed: boolean; target: boolean } = { deployed: false, target: false },
): UpgradePlan {
  const to = parseVersion(target);
  if (!to) throw new UpgradeRefused(`the target pulpcore version "${target}" is not a version (x.y.z)`);
  if (deployed === undefined) return { kind: "install", to: target, summary: `install pulpcore ${target}` };
  const from = parseVersion(deployed);
  if (!from)
    throw new UpgradeRefused(
      `the deployed pulpcore version "${deployed}" (from the stack outputs) is not a version`,
    );

  const order = compareVersions(to, from);
  if (order === 0) return { kind: "none", to: target, summary: `pulpcore ${target} stays; no upgrade` };
  if (order < 0) {
    if (to[0] === from[0] && to[1] === from[1]) {
      return {
        kind: "rolling",
        from: deployed,
        to: target,
        summary: `patch downgrade ${deployed} -> ${target}, rolling`,
      };
    }
    throw new UpgradeRefused(
      `pulpcore ${deployed} is deployed and the config asks for ${target}: Pulp's database migrations do not ` +
        `run backwards, so a downgrade to an older minor release is refused. Stay on ${show(from)} ` +
        `(pulumi config set pulp:image <image of ${deployed}>), or restore the database and /var/lib/pulp ` +
        `from a backup taken before the upgrade into a new stack.`,
    );
  }

  if (idle.deployed && idle.target) {
    return {
      kind: "offline",
      from: deployed,
      to: target,
      summary: `upgrade ${deployed} -> ${target} while idle: migrations run with no Pulp process running`,
    };
  }
  const crossed = REQUIRE_VERSION_FLOORS.filter(({ floor }) => {
    const f = parseVersion(floor)!;
    return compareVersions(from, f) < 0 && compareVersions(to, f) >= 0;
  });
  if (crossed.length === 0) {
    return {
      kind: "rolling",
      from: deployed,
      to: target,
      summary: `upgrade ${deployed} -> ${target}: migrate while ${deployed} serves, then roll (no downtime)`,
    };
  }
  if (crossed.length > 1) {
    const path = [...crossed.map((c) => c.floor), target].join(" -> ");
    throw new UpgradeRefused(
      `upgrading pulpcore ${deployed} -> ${target} crosses ${crossed.length} RequireVersion floors ` +
        `(${crossed.map((c) => `${c.floor} for ${c.migrations}`).join("; ")}), each needing every older ` +
        `process stopped. Upgrade one floor at a time: ${deployed} -> ${path}, with a \`pulumi up\` for each.`,
    );
  }
  const [{ floor, migrations }] = crossed;
  const ttl = Math.max(...Object.values(HEARTBEAT_TTL_SECONDS));
  return {
    kind: "stop-the-world",
    from: deployed,
    to: target,
    floor,
    migrations,
    minimumDowntimeSeconds: ttl,
    summary:
      `upgrade ${deployed} -> ${target} NEEDS DOWNTIME: migrations ${migrations} refuse to run while any ` +
      `process older than ${floor} has a heartbeat younger than its TTL. api, content and workers stop, ` +
      `${ttl} s of heartbeat TTL pass, migrations run, then ${target} starts: about ${ttl} s plus the ` +
      `migration and start-up time.`,
  };
}
