// npm run upgrades:check-table: checks components/upgrade/migrations.ts against the releases on PyPI.
// For each package it downloads (pip, into ~/.cache/pulp-pulumi-sdists, outside the repository) the
// releases a row names and their neighbours, and reads their migrations with scan.py. It fails when:
// - a row's migration is missing from its shipsIn release, or already in the release before it, or in
//   the newest patch of an older long-lived line (a backport the row does not know);
// - a guard in the newest release is not a row, or a row's guard differs from pulpcore's;
// - a squash in the newest release has lost its `replaces` (a purge) and is not a waypoint, or a
//   waypoint's squashedIn/purgedIn do not match;
// - a row's metByCore is not proven: a release of the app below the guard allows that pulpcore;
// - a release newer than REVIEWED_THROUGH adds migrations (read them, then move REVIEWED_THROUGH on);
// - a data check's migration is not first in its shipsIn (as for rows), or a YANKED release is not
//   yanked (pip lists it) or its replacement is not listed.
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import {
  DATA_CHECKS,
  MIGRATIONS,
  PACKAGE_OF,
  REVIEWED_THROUGH,
  WAYPOINTS,
  YANKED,
} from "../../components/upgrade/migrations";

const CACHE = process.env.PULP_SDIST_CACHE ?? path.join(os.homedir(), ".cache", "pulp-pulumi-sdists");
const SCAN = path.join(__dirname, "scan.py");

interface Scanned {
  migrations: { app: string; name: string; guards: [string, string][]; replaces: boolean; risky: string[] }[];
  requiresPulpcore: string | null;
}

const parse = (v: string) => v.split(".").map(Number);
const cmp = (a: string, b: string) => {
  const [x, y] = [parse(a), parse(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
};
const normal = (v: string) => [...parse(v), 0, 0].slice(0, 3).join(".");

const versionsCache = new Map<string, string[]>();
/** Final x.y.z releases, oldest first, from pip's own index query. */
function releases(pkg: string): string[] {
  if (!versionsCache.has(pkg)) {
    const out = execFileSync("pip", ["index", "versions", pkg], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    const list = /Available versions: (.*)/
      .exec(out)![1]
      .split(", ")
      .filter((v) => /^\d+\.\d+\.\d+$/.test(v));
    versionsCache.set(pkg, list.sort(cmp));
  }
  return versionsCache.get(pkg)!;
}

/** Wheel first (no build step); the sdist when a release has no wheel. */
function artifact(pkg: string, version: string): string {
  const stem = `${pkg.replace(/-/g, "_")}-${version}`;
  const find = () => fs.readdirSync(CACHE).find((f) => f.startsWith(`${stem}-`) || f === `${stem}.tar.gz`);
  let file = find();
  for (const binary of [
    ["--only-binary", ":all:"],
    ["--no-binary", ":all:"],
  ]) {
    if (file) break;
    try {
      execFileSync("pip", ["download", "-q", "--no-deps", ...binary, "-d", CACHE, `${pkg}==${version}`], {
        stdio: "ignore",
      });
    } catch {
      // try the other kind
    }
    file = find();
  }
  if (!file) throw new Error(`could not download ${pkg}==${version}`);
  return path.join(CACHE, file);
}

function scan(pkg: string, version: string): Scanned {
  const file = artifact(pkg, version);
  const cached = `${file}.scan.json`;
  if (!fs.existsSync(cached)) fs.writeFileSync(cached, execFileSync("python3", [SCAN, file]));
  return JSON.parse(fs.readFileSync(cached, "utf8"));
}

const has = (s: Scanned, app: string, name: string) =>
  s.migrations.find((m) => m.app === app && m.name === name);
/** The newest listed release below `version` (pip lists no yanked release, so one may be `version`). */
const previous = (pkg: string, version: string) =>
  releases(pkg)
    .filter((r) => cmp(r, version) < 0)
    .at(-1);
/** The newest patch of each minor line below `version` with at least 10 patches (the long-lived lines). */
const longLivedBelow = (pkg: string, version: string) => {
  const lines = new Map<string, string[]>();
  for (const v of releases(pkg).filter((r) => cmp(r, version) < 0)) {
    const line = v.split(".").slice(0, 2).join(".");
    lines.set(line, [...(lines.get(line) ?? []), v]);
  }
  return [...lines.values()].filter((l) => l.length >= 10).map((l) => l[l.length - 1]);
};
/** The newest patch of every minor line below `version`. */
const linesBelow = (pkg: string, version: string) => {
  const newest = new Map<string, string>();
  for (const v of releases(pkg).filter((r) => cmp(r, version) < 0))
    newest.set(v.split(".").slice(0, 2).join("."), v);
  return [...newest.values()];
};
/** pip's specifier `<3.85,>=3.49.0`: does it allow `core`? Only the operators pulp packages use. */
const allows = (spec: string | null, core: string) =>
  (spec ?? "")
    .replace(/[()]/g, "") // older metadata: "pulpcore (<3.7,>=3.6)"
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .every((s) => {
      const m = /^(<=|>=|<|>|==|~=|!=)\s*([\d.]+)/.exec(s);
      if (!m) return true;
      const c = cmp(core, m[2]);
      return {
        "<": c < 0,
        "<=": c <= 0,
        ">": c > 0,
        ">=": c >= 0,
        "==": c === 0,
        "~=": c >= 0,
        "!=": c !== 0,
      }[m[1]]!;
    });

const problems: string[] = [];
const notes: string[] = [];
const fail = (text: string) => problems.push(text);

for (const m of MIGRATIONS) {
  const pkg = PACKAGE_OF[m.app];
  const row = `${m.app} ${m.name}`;
  if (!has(scan(pkg, m.shipsIn), m.app, m.name)) fail(`${row}: not in ${pkg} ${m.shipsIn}`);
  const prev = previous(pkg, m.shipsIn);
  if (prev && has(scan(pkg, prev), m.app, m.name))
    fail(`${row}: already in ${pkg} ${prev}, before shipsIn ${m.shipsIn}`);
  for (const v of longLivedBelow(pkg, m.shipsIn)) {
    if (has(scan(pkg, v), m.app, m.name))
      fail(`${row}: backported to ${pkg} ${v} (below shipsIn ${m.shipsIn})`);
  }
  const guards = has(scan(pkg, m.shipsIn), m.app, m.name)?.guards ?? [];
  const guard = guards.find(([app]) => app === m.app)?.[1];
  if ((guard && normal(guard)) !== m.guard)
    fail(`${row}: RequireVersion says ${guard ?? "none"}, the row ${m.guard ?? "none"}`);
  if (m.metByCore) {
    for (const v of linesBelow(pkg, m.guard!)) {
      if (allows(scan(pkg, v).requiresPulpcore, m.metByCore))
        fail(`${row}: metByCore ${m.metByCore}, but ${pkg} ${v} (below the guard) allows that pulpcore`);
    }
  }
  notes.push(
    `ok ${row}: ships in ${pkg} ${m.shipsIn} (not in ${prev})${m.guard ? `, RequireVersion ${m.guard}` : ""}`,
  );
}

for (const c of DATA_CHECKS) {
  const pkg = PACKAGE_OF[c.app];
  const row = `data check ${c.app} ${c.name}`;
  if (!has(scan(pkg, c.shipsIn), c.app, c.name)) fail(`${row}: not in ${pkg} ${c.shipsIn}`);
  const prev = previous(pkg, c.shipsIn);
  if (prev && has(scan(pkg, prev), c.app, c.name))
    fail(`${row}: already in ${pkg} ${prev}, before ${c.shipsIn}`);
  for (const v of longLivedBelow(pkg, c.shipsIn)) {
    if (has(scan(pkg, v), c.app, c.name)) fail(`${row}: backported to ${pkg} ${v} (below ${c.shipsIn})`);
  }
  notes.push(`ok ${row}: ships in ${pkg} ${c.shipsIn} (not in ${prev})`);
}

for (const y of YANKED) {
  const pkg = PACKAGE_OF[y.app];
  if (releases(pkg).includes(y.version)) fail(`yanked ${pkg} ${y.version}: pip lists it (not yanked)`);
  if (!releases(pkg).includes(y.use))
    fail(`yanked ${pkg} ${y.version}: its replacement ${y.use} is not listed`);
  else notes.push(`ok yanked ${pkg} ${y.version}: not listed, ${y.use} is`);
}

for (const w of WAYPOINTS) {
  const pkg = PACKAGE_OF[w.app];
  const row = `waypoint ${w.app} ${w.squash}`;
  const state = (v: string) => {
    const s = has(scan(pkg, v), w.app, w.squash);
    return s ? (s.replaces ? "replaces" : "purged") : "absent";
  };
  const expect = (v: string | undefined, want: string) => {
    if (v && state(v) !== want) fail(`${row}: ${pkg} ${v} has it ${state(v)}, expected ${want}`);
  };
  expect(w.squashedIn, "replaces");
  expect(previous(pkg, w.squashedIn), "absent");
  expect(w.purgedIn, "purged");
  expect(previous(pkg, w.purgedIn), "replaces");
  if (cmp(w.stopAt, w.purgedIn) >= 0 || !releases(pkg).includes(w.stopAt))
    fail(`${row}: stopAt ${w.stopAt} is not a release before ${w.purgedIn}`);
  if (w.metByCore) {
    for (const v of linesBelow(pkg, w.squashedIn)) {
      if (allows(scan(pkg, v).requiresPulpcore, w.metByCore))
        fail(`${row}: metByCore ${w.metByCore}, but ${pkg} ${v} allows that pulpcore`);
    }
  }
  notes.push(`ok ${row}: with replaces from ${w.squashedIn}, purged in ${w.purgedIn}`);
}

for (const pkg of [...new Set(Object.values(PACKAGE_OF))]) {
  const newest = releases(pkg).at(-1)!;
  const latest = scan(pkg, newest);
  for (const m of latest.migrations) {
    for (const [app, version] of m.guards) {
      const row = MIGRATIONS.find((r) => r.app === m.app && r.name === m.name);
      if (!row)
        fail(`${pkg} ${newest}: ${m.app} ${m.name} has RequireVersion(${app}, ${version}) and no row`);
    }
    if (
      /squash/.test(m.name) &&
      !m.replaces &&
      !WAYPOINTS.some((w) => w.app === m.app && w.squash === m.name)
    ) {
      fail(`${pkg} ${newest}: ${m.app} ${m.name} no longer replaces anything (a purge) and is no waypoint`);
    }
  }
  const reviewed = REVIEWED_THROUGH[pkg];
  if (!reviewed) {
    fail(`${pkg}: no REVIEWED_THROUGH entry`);
    continue;
  }
  const known = new Set(scan(pkg, reviewed).migrations.map((m) => `${m.app} ${m.name}`));
  const unread = latest.migrations.filter((m) => !known.has(`${m.app} ${m.name}`));
  for (const m of unread) {
    fail(
      `${pkg} ${newest}: ${m.app} ${m.name} is newer than the reviewed ${reviewed} (${m.risky.join(", ") || "adds only"})`,
    );
  }
  notes.push(
    `ok ${pkg}: newest ${newest}, ${latest.migrations.length} migrations, reviewed through ${reviewed}`,
  );
}

for (const n of notes) process.stdout.write(`${n}\n`);
for (const p of problems) process.stdout.write(`PROBLEM ${p}\n`);
process.stdout.write(
  `${problems.length === 0 ? "the table matches PyPI" : `${problems.length} problem(s)`} (cache ${CACHE})\n`,
);
process.exit(problems.length === 0 ? 0 : 1);
