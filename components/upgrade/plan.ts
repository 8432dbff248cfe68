// How to get from the deployed Pulp release to the configured one. Pure: the version sources, the
// migration table (migrations.ts) and the orchestration are elsewhere.
import { compareVersions, parseImage, parseVersion, Version } from "../config/formats";
import { setCommand } from "../config/problems";
import { UPGRADE_REFUSED_MARKER, UpgradeKind } from "../contract";
import {
  APPSTATUS_CLEANUP,
  AppLabel,
  DATA_CHECKS,
  Migration,
  MIGRATIONS,
  PACKAGE_OF,
  Waypoint,
  WAYPOINTS,
  YANKED,
} from "./migrations";

/** pulpcore's default heartbeat TTLs (settings.py, unchanged 3.33-3.123); `extraSettings` may override them. */
export const HEARTBEAT_TTL_SECONDS = { api: 120, content: 30, worker: 30 };

/** The setting behind each TTL, as `extraSettings` would name it. */
const TTL_SETTINGS = { api: "API_APP_TTL", content: "CONTENT_APP_TTL", worker: "WORKER_TTL" } as const;

/**
 * How long heartbeats of stopped processes count: the longest TTL in the settings `migrate` runs with
 * (RequireVersion reads the Job's own settings, not the old processes'). Non-numbers keep the default;
 * the config rules reject them.
 */
export function heartbeatTtlSeconds(extraSettings: Record<string, unknown> = {}): number {
  return Math.max(
    ...(Object.keys(TTL_SETTINGS) as (keyof typeof TTL_SETTINGS)[]).map((process) => {
      const value = extraSettings[TTL_SETTINGS[process]];
      return typeof value === "number" && value > 0 ? value : HEARTBEAT_TTL_SECONDS[process];
    }),
  );
}

/**
 * Whether `migrate` of this pulpcore needs the Job to delete AppStatus rows past their TTL first: the
 * release has the table but not pulpcore's own pre-migrate cleanup (APPSTATUS_CLEANUP).
 */
export function needsAppStatusCleanup(target: string): boolean {
  if (!parseVersion(target)) return false;
  const { tableSince, hookSince, backports } = APPSTATUS_CLEANUP;
  if (below(target, tableSince) || !below(target, hookSince)) return false;
  return !backports.some((b) => !below(target, b.from) && below(target, b.before));
}

/** A migration of the upgrade that needs every older process stopped, and why. */
export interface Crossing {
  migration: Migration;
  /** "guard": RequireVersion would refuse; "breaks": older code fails once it ran. */
  reason: "guard" | "breaks";
  /** The release of the app every running process must have. */
  needs: string;
  /** The deployed release of the app. */
  deployed: string;
}

export type UpgradePlan =
  | { kind: "install"; to: string; summary: string }
  | { kind: "none"; to: string; summary: string }
  | { kind: "rolling"; from: string; to: string; summary: string }
  /** Nothing runs before or after (idle): migrations meet no old process, whatever guards lie between. */
  | { kind: "offline"; from: string; to: string; summary: string }
  | {
      kind: "stop-the-world";
      from: string;
      to: string;
      /** What every running process must have: "core 3.87.0" or "core 3.89.2, ansible 0.26.0". */
      floor: string;
      /** The migrations that need the stop, with the release that ships each. */
      migrations: string;
      crossings: Crossing[];
      /** The part of the window known in advance: the heartbeat TTL; migration and start-up come on top. */
      minimumDowntimeSeconds: number;
      summary: string;
    };

// Every kind the plan can take is one the contract names (a compile error otherwise).
const _kindsInContract: UpgradeKind = "" as UpgradePlan["kind"];
void _kindsInContract;

/**
 * An upgrade Pulp does not support; raised before anything is touched. Tools find it by the marker. A
 * RunError by Pulumi's own marker, as ConfigError is: printed without a stack trace, and no SDK loaded here.
 */
export class UpgradeRefused extends Error {
  readonly __pulumiRunError = true;
  constructor(message: string) {
    super(`${UPGRADE_REFUSED_MARKER} ${message}`);
    this.name = "UpgradeRefused";
  }
}

/** Plugin versions by app label (`{ansible: "0.30.3"}`); undefined when nobody said. */
export type PluginVersions = Record<AppLabel, string>;

export interface PlanInputs {
  /** Both sides idle (every Deployment at zero): nothing runs while migrations do. */
  idle?: { deployed: boolean; target: boolean };
  plugins?: { deployed?: PluginVersions; target?: PluginVersions };
  /** The heartbeat wait (heartbeatTtlSeconds of the Job's settings). */
  ttlSeconds?: number;
  /** pulp:image as configured: a refusal names the same repository at a release it accepts. */
  image?: string;
}

/**
 * The command that sets pulp:image to `version` of the configured repository (upstream tags each image
 * with its pulpcore release), or, without a usable repository, the upstream pulp-minimal image.
 */
export function imageAtCommand(image: string | undefined, version: string): string {
  const repository = (image && parseImage(image)?.repository) ?? "quay.io/pulp/pulp-minimal";
  return setCommand("pulp:image", `${repository}:${version}`);
}

const show = (v: Version) => v.join(".");
const at = (value: string) => parseVersion(value)!;
const below = (a: string, b: string) => compareVersions(at(a), at(b)) < 0;
const label = (m: Pick<Migration, "app" | "name">) => `${m.app} ${m.name}`;

/**
 * The plan from `deployed` (undefined on a first install) to `target`:
 * - refused: a downgrade to an older minor release (migrations do not run backwards), a jump over a
 *   squash purge (WAYPOINTS): the database must first be migrated by a release between, which it names,
 *   and a move to a yanked release (YANKED);
 * - stop-the-world: some migration shipped in (deployed, target] has a RequireVersion guard the deployed
 *   release does not meet, or breaks the deployed release's code (MIGRATIONS). One stop covers any number
 *   of them: with every old process gone, every guard is met;
 * - offline when both sides are idle, rolling otherwise, none when nothing changes.
 * Plugin rows count when both plugin versions are known, or when the deployed pulpcore proves the
 * deployed plugin new enough (metByCore); the others are named in the summary as not checked.
 */
/**
 * Which Pulp processes roll first in a rolling upgrade. A pulpcore worker runs only tasks whose
 * dispatching process (api or content) is not newer than itself (tasking/worker.py `is_compatible`): a
 * task from a new api pod waits while only old workers run. Measured on real Pulp before this order
 * existed: an upload task waited over 120 s in a roll from 3.122.2 to 3.123.1. So an upgrade rolls the workers
 * first and a patch downgrade last; any other update rolls everything at once.
 */
export function rollOrder(plan: UpgradePlan): "workers-first" | "workers-last" | "together" {
  if (plan.kind !== "rolling") return "together";
  return below(plan.to, plan.from) ? "workers-last" : "workers-first";
}

export function planUpgrade(
  deployed: string | undefined,
  target: string,
  idle: { deployed: boolean; target: boolean } = { deployed: false, target: false },
  inputs: Omit<PlanInputs, "idle"> = {},
): UpgradePlan {
  const to = parseVersion(target);
  if (!to) throw new UpgradeRefused(`the target pulpcore version "${target}" is not a version (x.y.z)`);
  const yanked = YANKED.find((y) => {
    const inCore = PACKAGE_OF[y.app] === "pulpcore";
    const [d, t] = inCore
      ? [deployed, target]
      : [inputs.plugins?.deployed?.[y.app], inputs.plugins?.target?.[y.app]];
    return t === y.version && d !== y.version;
  });
  if (yanked) {
    const pkg = PACKAGE_OF[yanked.app];
    throw new UpgradeRefused(
      `${pkg} ${yanked.version} was yanked from PyPI by its maintainers, and its migrations are not those ` +
        `of the releases after it: ${yanked.why}. Use ${pkg} ${yanked.use} or later` +
        (pkg === "pulpcore"
          ? `: ${setCommand("pulp:image", `quay.io/pulp/pulp-minimal:${yanked.use}`)}`
          : ` (an image with it)`) +
        ".",
    );
  }
  if (deployed === undefined) return { kind: "install", to: target, summary: `install pulpcore ${target}` };
  const from = parseVersion(deployed);
  if (!from)
    throw new UpgradeRefused(
      `the deployed pulpcore version "${deployed}" (from the stack outputs) is not a version`,
    );
  // pulp_file and certguard ship inside pulpcore: their version is pulpcore's.
  const inCore = (v: string) =>
    Object.fromEntries(
      Object.keys(PACKAGE_OF)
        .filter((a) => PACKAGE_OF[a] === "pulpcore")
        .map((a) => [a, v]),
    );
  const versions = {
    deployed: { ...inputs.plugins?.deployed, ...inCore(deployed) } as PluginVersions,
    target: { ...inputs.plugins?.target, ...inCore(target) } as PluginVersions,
  };
  // Changes only where both sides are known; a plugin new to a known set is a change too.
  const pluginChanges = Object.keys(versions.target).filter(
    (app) =>
      PACKAGE_OF[app] !== "pulpcore" &&
      versions.deployed[app] !== versions.target[app] &&
      (versions.deployed[app] !== undefined || inputs.plugins?.deployed !== undefined),
  );

  const order = compareVersions(to, from);
  if (order < 0 && !(to[0] === from[0] && to[1] === from[1])) {
    throw new UpgradeRefused(
      `pulpcore ${deployed} is deployed and the config asks for ${target}: Pulp's database migrations do not ` +
        `run backwards, so a downgrade to an older minor release is refused. Stay on ${show(from)} ` +
        `(${imageAtCommand(inputs.image, deployed)}), or restore the database and /var/lib/pulp ` +
        `from a backup taken before the upgrade into a new stack.`,
    );
  }
  for (const app of pluginChanges.filter((a) => versions.deployed[a] !== undefined)) {
    const [a, b] = [at(versions.deployed[app]), at(versions.target[app])];
    if (compareVersions(b, a) < 0 && !(a[0] === b[0] && a[1] === b[1])) {
      throw new UpgradeRefused(
        `${app} ${versions.deployed[app]} is deployed and the config asks for ${versions.target[app]}: ` +
          `plugin migrations do not run backwards either. Use an image with ${app} ${show(a)} or later.`,
      );
    }
  }
  if (order === 0 && pluginChanges.length === 0) {
    return { kind: "none", to: target, summary: `pulpcore ${target} stays; no upgrade` };
  }
  const what =
    `${deployed} -> ${target}` +
    (pluginChanges.length > 0
      ? ` (${pluginChanges.map((a) => `${a} ${versions.deployed[a] ?? "new"} -> ${versions.target[a]}`).join(", ")})`
      : "");
  if (order < 0)
    return { kind: "rolling", from: deployed, to: target, summary: `patch downgrade ${what}, rolling` };

  const unchecked: string[] = [];
  /** The deployed release of `app` is below `version`: true, false, or undefined when nobody knows. */
  const deployedBelow = (app: AppLabel, version: string, metByCore?: string): boolean | undefined => {
    const v = versions.deployed[app];
    if (v !== undefined) return below(v, version);
    // Known plugin set without the app: it arrives now, no older process of it exists.
    if (inputs.plugins?.deployed !== undefined) return false;
    if (metByCore !== undefined && !below(deployed, metByCore)) return false;
    return undefined;
  };
  /** The migration is new to the database: the target ships it, the deployed release does not. */
  const arrives = (app: AppLabel, shipsIn: string, metByCore?: string): boolean => {
    const t = versions.target[app];
    if (t === undefined || below(t, shipsIn)) return false;
    const isNew = deployedBelow(app, shipsIn, metByCore);
    if (isNew === undefined) unchecked.push(`${app} (deployed version unknown)`);
    return isNew === true;
  };

  const waypoint = WAYPOINTS.find(
    (w: Waypoint) =>
      versions.target[w.app] !== undefined &&
      !below(versions.target[w.app], w.purgedIn) &&
      deployedBelow(w.app, w.squashedIn, w.metByCore) === true,
  );
  if (waypoint) {
    const { app, squash, squashedIn, purgedIn, stopAt } = waypoint;
    throw new UpgradeRefused(
      `upgrading ${what} jumps over ${app}'s squash purge: ${app} ${purgedIn} deleted the migrations that ` +
        `${squash} replaced, so a database not yet migrated by ${app} ${squashedIn}-${stopAt} cannot migrate ` +
        `(InconsistentMigrationHistory). Stop at ${app} ${stopAt} first: a \`pulumi up\` with the image of ` +
        `that release, then this one` +
        (PACKAGE_OF[app] === "pulpcore" ? ` (${imageAtCommand(inputs.image, stopAt)}; pulumi up).` : "."),
    );
  }

  // Named whatever the plan: such rows fail `migrate` rolling, stopped or idle alike.
  const checks = DATA_CHECKS.filter((c) => arrives(c.app, c.shipsIn))
    .map(
      (c) =>
        ` Before the upgrade: ${label(c)} (${c.shipsIn}) fails \`migrate\` unless ${c.requires}; ` +
        `the rows to fix first (psql on Pulp's database): ${c.query}`,
    )
    .join("");

  if (idle.deployed && idle.target) {
    return {
      kind: "offline",
      from: deployed,
      to: target,
      summary: `upgrade ${what} while idle: migrations run with no Pulp process running.${checks}`,
    };
  }

  const crossings: Crossing[] = [];
  for (const m of MIGRATIONS) {
    if (!arrives(m.app, m.shipsIn, m.metByCore)) continue;
    const v = versions.deployed[m.app];
    if (m.guard && deployedBelow(m.app, m.guard, m.metByCore) === true) {
      crossings.push({ migration: m, reason: "guard", needs: m.guard, deployed: v });
    } else if (m.breaksOlderThan && v !== undefined && below(v, m.breaksOlderThan)) {
      crossings.push({ migration: m, reason: "breaks", needs: m.breaksOlderThan, deployed: v });
    }
  }
  const notChecked =
    unchecked.length > 0 ? ` Not checked: the migrations of ${[...new Set(unchecked)].join(", ")}.` : "";
  if (crossings.length === 0) {
    return {
      kind: "rolling",
      from: deployed,
      to: target,
      summary: `upgrade ${what}: migrate while ${deployed} serves, then roll (no downtime).${notChecked}${checks}`,
    };
  }

  const needs = new Map<AppLabel, string>();
  for (const c of crossings) {
    const current = needs.get(c.migration.app);
    if (!current || below(current, c.needs)) needs.set(c.migration.app, c.needs);
  }
  const floor = [...needs].map(([app, v]) => `${app} ${v}`).join(", ");
  const migrations = crossings.map((c) => `${label(c.migration)} (${c.migration.shipsIn})`).join(", ");
  const reasons = crossings
    .map((c) =>
      c.reason === "guard"
        ? `${label(c.migration)} (in ${c.migration.shipsIn}) refuses to run while a process older than ` +
          `${c.migration.app} ${c.needs} heartbeats`
        : `${label(c.migration)} (in ${c.migration.shipsIn}) breaks ${c.migration.app} ${c.deployed}: ${c.migration.why}`,
    )
    .join("; ");
  const ttl = inputs.ttlSeconds ?? heartbeatTtlSeconds();
  return {
    kind: "stop-the-world",
    from: deployed,
    to: target,
    floor,
    migrations,
    crossings,
    minimumDowntimeSeconds: ttl,
    summary:
      `upgrade ${what} NEEDS DOWNTIME: ${reasons}. One stop for all: api, content and workers stop, ` +
      `${ttl} s of heartbeat TTL pass, migrations run, then ${target} starts: about ${ttl} s plus the ` +
      `migration and start-up time.${notChecked}${checks}`,
  };
}
