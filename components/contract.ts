// Every name and marker a program other than the Pulp program reads: the PR plan summary (tools/plan),
// the stack CLI (tools/stack) and the next update of this very stack (upgrade/deployed.ts). The readers
// import them from here, so a rename reaches them at compile time. The values are stored in clusters
// and stack states that already exist: change a value only with a migration for what is deployed.

/** Pod-template annotation: a hash of what the pods read (settings.py and the supplied secret values). */
export const CONFIG_HASH_ANNOTATION = "pulp.pulpproject.org/config-hash";

/**
 * Annotation on every object that holds data a replacement or deletion would lose. The value is one of
 * the keys of HOLDINGS; the plan summary reads it instead of guessing from names and kinds.
 */
export const HOLDS_ANNOTATION = "pulp.pulpproject.org/holds";

/**
 * On the Secret `<instance>-secret-key`: `stash` where the generated keys are kept by Stash resources
 * (secrets/pulpSecrets.ts). That Secret without it was made by a version that kept them in GeneratedSecrets.
 */
export const KEYS_KEPT_IN_ANNOTATION = "pulp.pulpproject.org/keys-kept-in";

/** What a data-holding object holds, and what losing it means (the plan summary prints the words). */
export const HOLDINGS = {
  database: "the PostgreSQL database (CloudNativePG): every byte of Pulp's metadata",
  artifacts: "a volume: its files are lost with it",
  import: "an imported volume (CDI)",
  backups: "the backups volume: every backup in it is lost with it",
  namespace: "the namespace: deleting it deletes everything in it",
  "secret-key": "Django's SECRET_KEY: a new one logs everyone out and voids signed data",
  "db-fields-key": "the key that encrypts database fields: with a new one they cannot be read",
  "admin-password": "the admin password",
  "token-keys": "the token-signing key pair: issued tokens stop working",
} as const;
export type Holding = keyof typeof HOLDINGS;

/** The annotation to merge into a data-holding object's metadata.annotations. */
export function holds(what: Holding): Record<string, string> {
  return { [HOLDS_ANNOTATION]: what };
}

/** Reads the holds annotation back; undefined when absent or not a known holding. */
export function holdingOf(annotations: unknown): Holding | undefined {
  if (!annotations || typeof annotations !== "object") return undefined;
  const value = (annotations as Record<string, unknown>)[HOLDS_ANNOTATION];
  return typeof value === "string" && value in HOLDINGS ? (value as Holding) : undefined;
}

/** Stack outputs the next update reads back (upgrade/deployed.ts). Renaming one loses the deployed release. */
export const DEPLOYED_OUTPUTS = {
  pulpcoreVersion: "pulpcoreVersion",
  idle: "idle",
  pluginVersions: "pluginVersions",
  restoredBackup: "restoredBackup",
} as const;

/** Component type tokens the tools recognise in a preview's URNs. */
export const TYPES = {
  pulp: "pulp:index:Pulp",
  migrationJob: "pulp:migration:MigrationJob",
  pulpSecrets: "pulp:secrets:PulpSecrets",
  stopTheWorld: "pulp:upgrade:StopTheWorld",
  /** The stop-the-world dynamic resource: `pulumi-nodejs:dynamic/<module>:<type>`. */
  stopTheWorldStep: "pulumi-nodejs:dynamic/pulp:StopTheWorldStep",
} as const;
/** The module and type the stop-the-world dynamic resource registers under (TYPES.stopTheWorldStep). */
export const STOP_THE_WORLD_STEP = { module: "pulp", type: "StopTheWorldStep" } as const;

/** The stop-the-world step's inputs, as the plan summary reads them from a preview. */
export interface StopTheWorldContract {
  namespace: string;
  /** The Deployments whose processes heartbeat: api, content, worker. */
  deployments: string[];
  from: string;
  to: string;
  /** What every running process must have, per app: "core 3.87.0" or "core 3.89.2, ansible 0.26.0". */
  floor: string;
  /** The migrations that need the stop, each with the release that ships it. */
  migrations: string;
  /** The longest heartbeat TTL of the migration Job's settings. */
  heartbeatTtlSeconds: number;
  /** How long old pods may take to go: their longest terminationGracePeriodSeconds plus a margin. */
  podsGoneTimeoutSeconds: number;
  /** Set when the stop is for a restore over the live install (backup/restorePlan.ts): the backup id. */
  restoring?: string;
  /**
   * KEDA ScaledObjects that scale those Deployments (pulp:worker.autoscaling): paused before the scale-down,
   * or KEDA would start workers of the old release again while the migration runs.
   */
  scaledObjects?: string[];
}

/** The kinds of upgrade the program decides between (upgrade/plan.ts). */
export const UPGRADE_KINDS = ["install", "none", "rolling", "offline", "stop-the-world"] as const;
export type UpgradeKind = (typeof UPGRADE_KINDS)[number];

/**
 * The upgrade plan travels as a diagnostic (every preview and update shows it, and outputs would turn a
 * no-op into a change): `Upgrade plan [<kind>]: <summary>`. The kind in brackets is the machine part.
 */
export function upgradePlanMessage(kind: UpgradeKind, summary: string): string {
  return `Upgrade plan [${kind}]: ${summary}`;
}

/** The kind and summary of an upgrade-plan diagnostic; undefined for any other message. */
export function readUpgradePlan(message: string): { kind: UpgradeKind; summary: string } | undefined {
  const m = /^(?:(?:warning|info): )?Upgrade plan \[([a-z-]+)\]: ([\s\S]*)$/.exec(message.trim());
  if (!m || !(UPGRADE_KINDS as readonly string[]).includes(m[1])) return undefined;
  return { kind: m[1] as UpgradeKind, summary: m[2].trim() };
}

/** Marks the program's refusal of an upgrade path; the error message starts with it. */
export const UPGRADE_REFUSED_MARKER = "[pulp:upgrade-refused]";

/** The refusal text after the marker, when `message` (a program error, however wrapped) carries it. */
export function readUpgradeRefusal(message: string): string | undefined {
  const at = message.indexOf(UPGRADE_REFUSED_MARKER);
  return at < 0 ? undefined : message.slice(at + UPGRADE_REFUSED_MARKER.length).trim();
}

/**
 * What a generated key's Stash (secrets/pulpSecrets.ts; the engine's own resource, which takes no other
 * input) holds: its name ends with `-<holding>`.
 */
export function stashHolding(name: string): Holding | undefined {
  return Object.values(GENERATED_SECRET_HOLDS).find((h) => name.endsWith(`-${h}`));
}

/** What a GeneratedSecret (a dynamic resource of versions before 0.2.0) holds, by its `kind` input. */
export const GENERATED_SECRET_HOLDS: Record<string, Holding> = {
  "django-secret-key": "secret-key",
  "fernet-key": "db-fields-key",
  password: "admin-password",
  "ec-p256-keypair": "token-keys",
};
