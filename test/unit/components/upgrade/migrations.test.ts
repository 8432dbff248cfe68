// Each row of the migration table, and what the planner does because of it. The rows themselves are
// checked against the releases on PyPI by `npm run upgrades:check-table` (testbed/upgrades/).
import {
  DATA_CHECKS,
  Migration,
  MIGRATIONS,
  PACKAGE_OF,
  WAYPOINTS,
  YANKED,
} from "../../../../components/upgrade/migrations";
import { planUpgrade } from "../../../../components/upgrade/plan";

/** The release just before `v` in a plain x.y.z order (enough to land below a guard or a ship). */
const before = (v: string) => {
  const [x, y, z] = v.split(".").map(Number);
  return z > 0 ? `${x}.${y}.${z - 1}` : `${x}.${y - 1}.0`;
};
const running = { deployed: false, target: false };

/** Plan an upgrade of the row's app alone: core moves for core rows, the plugin moves on a fixed core. */
function planFor(m: Migration, deployed: string, target: string) {
  if (m.app === "core") return planUpgrade(deployed, target, running);
  return planUpgrade("3.105.16", "3.105.16", running, {
    plugins: { deployed: { [m.app]: deployed }, target: { [m.app]: target } },
  });
}
const named = (m: Migration, deployed: string, target: string) => {
  const p = planFor(m, deployed, target);
  return p.kind === "stop-the-world" && p.migrations.includes(m.name);
};

const why: Record<string, string> = {
  "0114_remove_task_args_remove_task_kwargs": "RequireVersion(core, 3.34.0), first in 3.40.0",
  "0120_get_url_removal": "RequireVersion(core, 3.50.0), first in 3.55.0",
  "0127_remove_upstreampulp_pulp_label_select": "no guard; 3.62-3.69 select the dropped column",
  "0134_task_insert_trigger": "RequireVersion(core, 3.82.1), first in 3.84.0",
  "0140_require_appstatus_zdu": "RequireVersion(core, 3.85), first in 3.87.0",
  "0143_require_app_lock_zdu": "RequireVersion(core, 3.87), first in 3.89.0",
  "0144_delete_old_appstatus":
    "RequireVersion(core, 3.87), and every release before 3.90 inserts task.worker",
  "0145_domainize_import_export":
    "no guard; before 3.90 exporters, exports, importers, imports lack pulp_domain",
  "0152_alter_repositoryversion_content_ids": "no guard; before 3.115 versions are inserted with NULL",
  "0059_collectionversion_unique_sha256": "RequireVersion(ansible, 0.23.0), first in 0.24.0",
  "0060_remove_collectionversion_unique_is_highest_and_more":
    "RequireVersion(ansible, 0.23.0), first in 0.26.0",
  "0062_pivot_collectionversion_tags": "RequireVersion(ansible, 0.26.0), first in 0.27.0",
  "0009_check_datarepair": "RequireVersion(gem, 0.2.0), first in 0.3.0 (pulp_gem is not in pulp-minimal)",
  "0073_evr_cleanup": "RequireVersion(rpm, 3.37), first in 3.39.0",
};

describe.each(MIGRATIONS.map((m) => [`${m.app} ${m.name}`, m] as const))("%s", (_, m) => {
  test(`is here because: ${why[m.name] ?? "(no reason written down)"}`, () => {
    expect(why[m.name]).toBeDefined();
    expect(m.why.length).toBeGreaterThan(10);
    expect(PACKAGE_OF[m.app]).toBeDefined();
    const needs = m.breaksOlderThan ?? m.guard!;
    // Below what it needs, crossing the release that ships it: one stop naming it.
    expect(named(m, before(needs), m.shipsIn)).toBe(true);
    // At what it needs: no stop for it.
    if (needs !== m.shipsIn) expect(named(m, needs, m.shipsIn)).toBe(false);
    // Not shipped yet by the target: not named, however old the deployed release.
    expect(named(m, before(needs), before(m.shipsIn))).toBe(false);
  });
});

test("a guard below its shipping release, and a break at or below it", () => {
  for (const m of MIGRATIONS) {
    expect(m.guard !== undefined || m.breaksOlderThan !== undefined).toBe(true);
    if (m.guard) expect(planUpgrade(m.guard, m.guard).kind).toBe("none"); // a version, not "3.85"
  }
});

describe.each(WAYPOINTS.map((w) => [`${w.app} ${w.squash}`, w] as const))("waypoint %s", (_, w) => {
  test(`${w.squashedIn} shipped it with replaces, ${w.purgedIn} deleted what it replaced: stop at ${w.stopAt}`, () => {
    const run = (deployed: string, target: string) =>
      w.app === "core" || w.app === "file"
        ? () => planUpgrade(deployed, target)
        : () =>
            planUpgrade("3.105.16", "3.105.16", running, {
              plugins: { deployed: { [w.app]: deployed }, target: { [w.app]: target } },
            });
    expect(run(before(w.squashedIn), w.purgedIn)).toThrow(
      `Stop at ${w.app === "file" ? "core" : w.app} ${w.stopAt}`,
    );
    expect(run(w.squashedIn, w.purgedIn)).not.toThrow(/squash purge/);
    expect(run(before(w.squashedIn), w.stopAt)).not.toThrow(/squash purge/);
  });
});

describe.each(DATA_CHECKS.map((c) => [`${c.app} ${c.name}`, c] as const))("data check %s", (_, c) => {
  test(`every plan that runs it (from before ${c.shipsIn}) names it and its query, no other plan does`, () => {
    const after = YANKED.find((y) => y.app === c.app && y.version === c.shipsIn)?.use ?? c.shipsIn;
    expect(planUpgrade(before(c.shipsIn), after, running).summary).toContain(c.query);
    expect(planUpgrade(before(c.shipsIn), after, { deployed: true, target: true }).summary).toContain(
      c.query,
    );
    expect(planUpgrade(after, after, running).summary).not.toContain(c.name);
    expect(planUpgrade(before(before(c.shipsIn)), before(c.shipsIn), running).summary).not.toContain(c.name);
  });
});

describe.each(YANKED.map((y) => [`${y.app} ${y.version}`, y] as const))("yanked %s", (_, y) => {
  test(`is refused as a target, naming ${y.use} instead`, () => {
    expect(() => planUpgrade(before(y.version), y.version, running)).toThrow(
      `Use ${PACKAGE_OF[y.app]} ${y.use} or later`,
    );
    expect(() => planUpgrade(before(y.version), y.use, running)).not.toThrow();
  });
});
