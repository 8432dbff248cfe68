// What the upgrade planner knows about pulpcore's and its plugins' migrations, as data. Each row was read
// from the releases on PyPI and pulpcore's git tags; `npm run upgrades:check-table` checks the rows
// against the published wheels and sdists and fails when a newer release brings migrations nobody has
// reviewed yet. test/unit/components/upgrade/migrations.test.ts says why each row is here.

/** Django app labels, the keys of a heartbeat's `versions` and of `pulp:plugins`. */
export type AppLabel = string;

/** The PyPI distribution that ships each app's migrations (pulp_file and certguard live in pulpcore). */
export const PACKAGE_OF: Record<AppLabel, string> = {
  core: "pulpcore",
  file: "pulpcore",
  certguard: "pulpcore",
  ansible: "pulp-ansible",
  container: "pulp-container",
  deb: "pulp-deb",
  gem: "pulp-gem",
  maven: "pulp-maven",
  ostree: "pulp-ostree",
  python: "pulp-python",
  rpm: "pulp-rpm",
};

export interface Migration {
  app: AppLabel;
  name: string;
  /** The first release of the app's package that contains it (a later release of an older line does not). */
  shipsIn: string;
  /** RequireVersion(app, guard): `migrate` refuses while a process of the app older than this heartbeats. */
  guard?: string;
  /**
   * Code of the app older than this fails once the migration ran, guard or not: the migration cannot run
   * while such processes serve, so they must stop first.
   */
  breaksOlderThan?: string;
  /**
   * Every release of the app older than the guard requires a pulpcore older than this: a deployed pulpcore
   * at or above it proves the guard met when the deployed plugin version is not known.
   */
  metByCore?: string;
  why: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    app: "core",
    name: "0114_remove_task_args_remove_task_kwargs",
    shipsIn: "3.40.0",
    guard: "3.34.0",
    why: "drops task args/kwargs that workers before 3.34 read",
  },
  {
    app: "core",
    name: "0120_get_url_removal",
    shipsIn: "3.55.0",
    guard: "3.50.0",
    why: "removes get_url; pulpcore says migrating from 3.50 on is zero-downtime safe",
  },
  {
    app: "core",
    name: "0127_remove_upstreampulp_pulp_label_select",
    shipsIn: "3.70.0",
    breaksOlderThan: "3.70.0",
    why: "drops upstreampulp.pulp_label_select, which the UpstreamPulp model of 3.62-3.69 still selects (no guard)",
  },
  {
    app: "core",
    name: "0134_task_insert_trigger",
    shipsIn: "3.84.0",
    guard: "3.82.1",
    why: "a task insert trigger older workers do not expect",
  },
  {
    app: "core",
    name: "0140_require_appstatus_zdu",
    shipsIn: "3.87.0",
    guard: "3.85.0",
    why: "only processes writing the AppStatus table (3.85 on) may run",
  },
  {
    app: "core",
    name: "0143_require_app_lock_zdu",
    shipsIn: "3.89.0",
    guard: "3.87.0",
    why: "only processes that take the app lock (3.87 on) may run",
  },
  {
    app: "core",
    name: "0144_delete_old_appstatus",
    shipsIn: "3.90.0",
    guard: "3.87.0",
    // 3.89.2 (pulpcore #6991) only defers task.worker in queries; Task.objects.create still inserts it.
    breaksOlderThan: "3.90.0",
    why:
      "drops task.worker, which every release before 3.90 inserts on each task dispatch (every sync, " +
      "upload, publish or distribution change from an old api or content pod fails)",
  },
  {
    app: "core",
    name: "0145_domainize_import_export",
    shipsIn: "3.90.0",
    breaksOlderThan: "3.90.0",
    why:
      "adds NOT NULL pulp_domain to exporter, export, importer and import with no database default " +
      "(Django drops the callable default); releases before 3.90 insert them without it",
  },
  {
    app: "core",
    name: "0152_alter_repositoryversion_content_ids",
    shipsIn: "3.115.0",
    breaksOlderThan: "3.115.0",
    why:
      "makes repositoryversion.content_ids NOT NULL; releases before 3.115 insert versions with NULL " +
      "(repository create, sync, upload and modify fail on old pods), and it fills every version first, " +
      "which takes long unless `pulpcore-manager datarepair 7465` ran on the old release",
  },
  {
    app: "ansible",
    name: "0059_collectionversion_unique_sha256",
    shipsIn: "0.24.0",
    guard: "0.23.0",
    metByCore: "3.70.0",
    why: "a unique constraint on collection sha256 that pulp_ansible before 0.23 does not respect",
  },
  {
    app: "ansible",
    name: "0060_remove_collectionversion_unique_is_highest_and_more",
    shipsIn: "0.26.0",
    guard: "0.23.0",
    metByCore: "3.70.0",
    why: "drops the is_highest constraint that pulp_ansible before 0.23 relies on",
  },
  {
    app: "ansible",
    name: "0062_pivot_collectionversion_tags",
    shipsIn: "0.27.0",
    guard: "0.26.0",
    metByCore: "3.85.0",
    why: "drops the Tag model and renames the tags field that pulp_ansible before 0.26 uses",
  },
  {
    app: "gem",
    name: "0009_check_datarepair",
    shipsIn: "0.3.0",
    guard: "0.2.0",
    why: "needs pulp_gem's data repair from 0.2 on (also refuses on unrepaired data)",
  },
  {
    app: "rpm",
    name: "0073_evr_cleanup",
    shipsIn: "3.39.0",
    guard: "3.37.0",
    why: "drops rpm_package.evr, which pulp_rpm before 3.37 writes",
  },
];

/**
 * A migration that fails on rows older releases accepted: `migrate` stops there (in a rolling upgrade the
 * old release keeps serving) until the rows are fixed. Every plan crossing it names the query that lists
 * them, to run before the upgrade. Older code keeps working: it fails only on input the target rejects too.
 */
export interface DataCheck {
  app: AppLabel;
  name: string;
  shipsIn: string;
  /** What the migration requires of existing rows. */
  requires: string;
  /** SQL listing the rows that make it fail. */
  query: string;
}

export const DATA_CHECKS: readonly DataCheck[] = [
  {
    app: "core",
    // 0155 creates the relative_path domain; this changes core_distribution.base_path to it (from
    // 3.117.1 on base_path only; YANKED says why not 3.117.0). pulpcore ships no repair.
    name: "0156_alter_contentartifact_relative_path_and_more",
    shipsIn: "3.117.0",
    requires:
      "every distribution base_path is canonical (no whitespace, ? or #, no empty, . or .. segment), " +
      "which releases before 3.117 did not require",
    // The CHECK of pulpcore's relative_path domain (0155_create_rel_path_domains.py@3.117.1), verbatim.
    query:
      "SELECT name, base_path FROM core_distribution " +
      "WHERE '/' || base_path || '/' ~ '[\\n\\r\\s\\t\\?#]|(/\\.{0,2}/)';",
  },
];

/** A release its maintainers withdrew from PyPI whose migrations differ from the ones that replaced them. */
export interface Yanked {
  app: AppLabel;
  version: string;
  /** The first release after it. */
  use: string;
  why: string;
}

export const YANKED: readonly Yanked[] = [
  {
    app: "core",
    version: "3.117.0",
    use: "3.117.1",
    why:
      "its 0156 also moves core_contentartifact, core_publishedartifact and core_publishedmetadata " +
      "relative_path to the relative_path domain: a rewrite of the largest tables under an exclusive lock, " +
      "a migrate that fails on content paths with spaces, ? or #, and inserts of such paths that fail " +
      "after it (PyPI: 'Assumption in a migration causes problems with some plugins, and with Large " +
      "Installations'). 3.117.1 changes distribution base_path only, and its 0159 undoes the rest",
  },
];

/**
 * A squash whose replaced migrations were later deleted. A database whose history holds the replaced
 * migrations but not the squash (it was never migrated by a release that shipped both) fails in
 * releases from `purgedIn` on with InconsistentMigrationHistory: it must stop at a release in between.
 */
export interface Waypoint {
  app: AppLabel;
  squash: string;
  /** The first release shipping the squash with `replaces` (migrating with it records the squash). */
  squashedIn: string;
  /** The first release without the replaced migrations. */
  purgedIn: string;
  /** The release to stop at: the last one before purgedIn. */
  stopAt: string;
  /** Every release of the app older than squashedIn requires a pulpcore older than this (see Migration). */
  metByCore?: string;
}

export const WAYPOINTS: readonly Waypoint[] = [
  {
    app: "core",
    squash: "0001_squashed_0090_char_to_text_field",
    squashedIn: "3.69.0",
    purgedIn: "3.85.0",
    stopAt: "3.84.0",
  },
  {
    app: "file",
    squash: "0001_initial_squashed_0016_add_domain",
    squashedIn: "3.69.0",
    purgedIn: "3.85.0",
    stopAt: "3.84.0",
  },
  {
    app: "ansible",
    squash: "0001_initial_squashed_0040_ansiblerepository_keyring",
    squashedIn: "0.24.0",
    purgedIn: "0.30.0",
    stopAt: "0.29.12",
    metByCore: "3.70.0",
  },
];

/**
 * The pre-migrate hook that deletes AppStatus rows past their own TTL (pulpcore apps.py
 * `_clean_app_status`, commit 86b7809): in 3.91.0 on, backported to 3.85.3. Targets with the AppStatus
 * table but without the hook (3.85.0-3.85.2, 3.86.0-3.90.1) count every row in RequireVersion, however
 * old, so a process that did not exit cleanly blocks `migrate` until its row is deleted.
 */
export const APPSTATUS_CLEANUP = {
  tableSince: "3.85.0",
  hookSince: "3.91.0",
  backports: [{ from: "3.85.3", before: "3.86.0" }],
} as const;

/**
 * The last release of each package whose migrations were reviewed for this table: the check script fails
 * when a newer release adds migrations, until someone reads them and moves this on. pulpcore: every
 * migration through 3.123.1 (0155-0159: the base_path domain of DATA_CHECKS, a base_path overlap trigger
 * that older releases' own check already keeps, and 3.117.0's YANKED changes undone; 0158, 0160, 0161:
 * nullable fields and a new model). Plugins: their guards and squashes only.
 */
export const REVIEWED_THROUGH: Record<string, string> = {
  pulpcore: "3.123.1",
  "pulp-ansible": "0.30.3",
  "pulp-container": "2.30.0",
  "pulp-deb": "3.11.1",
  "pulp-gem": "0.8.0",
  "pulp-maven": "0.36.0",
  "pulp-ostree": "2.6.1",
  "pulp-python": "3.36.4",
  "pulp-rpm": "3.39.4",
};
