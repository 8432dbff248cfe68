// Unit test (no Pulumi engine, no cluster): nothing of pulp-operator's CRDs is dropped silently by the
// converter. Every field name in test/fixtures/pulp-operator/crd-fields.yaml (the spec of Pulp, of its
// api/content/worker/web, database and cache objects, of PulpBackup and PulpRestore: 2.0.0) is in exactly
// one of convert.ts's tables, MAPPED or UNMAPPED, and no table names a field the CRDs lack; every mapped
// field changes the conversion of some sample CR when it is taken out (the code does what the table says);
// every unmapped field, set, gets its note; and docs/migrate-from-pulp-operator.md holds the key map the
// tables generate.
import * as fs from "fs";
import * as path from "path";
import * as yaml from "js-yaml";
import { MAPPED, Scope, UNMAPPED, knownFields } from "../../../../tools/convert/convert";
import { COMPONENTS, ConvertError, KubeObject } from "../../../../tools/convert/operator";
import { keyMapMarkdown } from "../../../../tools/convert/render";
import { convertSample, FIXTURES, SAMPLES } from "./samples";

const CRD_FIELDS = yaml.load(fs.readFileSync(path.join(FIXTURES, "crd-fields.yaml"), "utf8")) as Record<
  string,
  string[]
>;
const REPO = path.resolve(__dirname, "../../../..");
const DOC = path.join(REPO, "docs/migrate-from-pulp-operator.md");

/** The CRD list's scopes as the tables name them: Pulp.api ... Pulp.web share `Pulp.<component>`. */
function crdFields(scope: Scope): string[] {
  if (scope !== "Pulp.<component>") return CRD_FIELDS[scope];
  return [...new Set(COMPONENTS.flatMap((c) => CRD_FIELDS[`Pulp.${c}`]))].sort();
}
const SCOPES = Object.keys(MAPPED) as Scope[];

test("the field list has what the tables need: Pulp, its six objects, PulpBackup and PulpRestore", () => {
  expect(Object.keys(CRD_FIELDS)).toEqual([
    "Pulp",
    "Pulp.api",
    "Pulp.content",
    "Pulp.worker",
    "Pulp.web",
    "Pulp.database",
    "Pulp.cache",
    "PulpBackup",
    "PulpRestore",
  ]);
  expect(CRD_FIELDS.Pulp).toHaveLength(65);
  expect(CRD_FIELDS["Pulp.api"]).toContain("gunicorn_workers");
});

test.each(SCOPES)("every %s field of the CRDs is mapped or listed as unmapped with a reason", (scope) => {
  const missing = crdFields(scope).filter((f) => !knownFields(scope).includes(f));
  expect({ scope, missing }).toEqual({ scope, missing: [] });
  const both = Object.keys(MAPPED[scope]).filter((f) => f in UNMAPPED[scope]);
  expect({ scope, both }).toEqual({ scope, both: [] });
  const reasonless = Object.entries(UNMAPPED[scope]).filter(([, why]) => why.length < 20);
  expect({ scope, reasonless }).toEqual({ scope, reasonless: [] });
});

test.each(SCOPES)("the %s tables name no field the CRDs lack", (scope) => {
  const stale = knownFields(scope).filter((f) => !crdFields(scope).includes(f));
  expect({ scope, stale }).toEqual({ scope, stale: [] });
});

/** The conversion as one comparable text, or the error it ends in. */
function outcome(run: () => unknown): string {
  try {
    return JSON.stringify(run());
  } catch (e) {
    if (e instanceof ConvertError) return `error: ${e.message}`;
    throw e;
  }
}

/** Where a mapped field of a scope sits in a sample's input: the objects that may hold it. */
function holders(scope: Scope, cr: KubeObject, backups: KubeObject[]): Record<string, unknown>[] {
  const spec = cr.spec ?? {};
  const of = (v: unknown) => (v && typeof v === "object" ? [v as Record<string, unknown>] : []);
  switch (scope) {
    case "Pulp":
      return [spec];
    case "Pulp.<component>":
      return COMPONENTS.flatMap((c) => of(spec[c]));
    case "Pulp.database":
      return of(spec.database);
    case "Pulp.cache":
      return of(spec.cache);
    case "PulpBackup":
      return backups.flatMap((b) => of(b.spec));
    case "PulpRestore":
      return [];
  }
}

test("every mapped field matters: taking it out of some sample CR changes the conversion", () => {
  const inert: string[] = [];
  for (const scope of SCOPES) {
    for (const field of Object.keys(MAPPED[scope])) {
      const matters = SAMPLES.some((sample) => {
        const before = outcome(() => convertSample(sample));
        let count = 0;
        convertSample(sample, (input) => {
          count = holders(scope, input.cr, input.backups).filter((h) => field in h).length;
        });
        // Each holder of the field in turn (api's, then content's, ...).
        return Array.from({ length: count }, (_, i) => i).some((i) => {
          const after = outcome(() =>
            convertSample(sample, (input) => {
              const holder = holders(scope, input.cr, input.backups).filter((h) => field in h)[i];
              delete holder[field];
            }),
          );
          return after !== before;
        });
      });
      if (!matters) inert.push(`${scope} ${field}`);
    }
  }
  expect(inert).toEqual([]);
});

test("every unmapped field, set, gets a note with its reason; an unknown one, a note that says so", () => {
  const spec: Record<string, unknown> = { api: { replicas: 1 }, database: {}, cache: { enabled: true } };
  for (const field of Object.keys(UNMAPPED.Pulp)) spec[field] = "set";
  for (const field of Object.keys(UNMAPPED["Pulp.<component>"]))
    (spec.api as Record<string, unknown>)[field] = 7;
  for (const field of Object.keys(UNMAPPED["Pulp.database"]))
    (spec.database as Record<string, unknown>)[field] = 7;
  for (const field of Object.keys(UNMAPPED["Pulp.cache"])) (spec.cache as Record<string, unknown>)[field] = 7;
  spec.made_up = true;
  (spec.api as Record<string, unknown>).made_up = true;
  const c = convertSample("nginx-ingress", (input) => {
    input.cr.spec = { ...input.cr.spec, ...spec };
  });
  const notes = new Map(c.notes.map((n) => [n.field, n.text]));
  const expected = [
    ...Object.entries(UNMAPPED.Pulp).map(([f, why]) => [f, why]),
    ...Object.entries(UNMAPPED["Pulp.<component>"]).map(([f, why]) => [
      `api.${f}`,
      why.replace(/<component>/g, "api"),
    ]),
    ...Object.entries(UNMAPPED["Pulp.database"]).map(([f, why]) => [`database.${f}`, why]),
    ...Object.entries(UNMAPPED["Pulp.cache"]).map(([f, why]) => [`cache.${f}`, why]),
  ];
  expect(expected.filter(([f, why]) => notes.get(f) !== why)).toEqual([]);
  expect(notes.get("made_up")).toMatch(/^not a field of pulp-operator 2.0.0's Pulp CRD/);
  expect(notes.get("api.made_up")).toMatch(/^not a field of pulp-operator 2.0.0's Pulp CRD/);
});

const START = "<!-- key map: generated by `npm run -s convert -- --key-map`; do not edit by hand -->\n\n";
const END = "\n<!-- end of key map -->";

test("docs/migrate-from-pulp-operator.md holds the key map the tables generate (npm run -s convert -- --key-map)", () => {
  const doc = fs.readFileSync(DOC, "utf8");
  const table = doc.slice(doc.indexOf(START) + START.length, doc.indexOf(END));
  expect(doc.indexOf(START)).toBeGreaterThan(0);
  expect(table).toBe(keyMapMarkdown());
});

test("the key map has a row per field of the CRDs, and Markdown shows every cell as written", () => {
  const rows = keyMapMarkdown().trimEnd().split("\n").slice(2);
  expect(rows).toHaveLength(SCOPES.reduce((n, s) => n + knownFields(s).length, 0));
  // A cell with a bare `<name>` or `|` would lose it (HTML) or split (a column).
  const outsideCode = rows
    .map((r) => r.replace(/`[^`]*`/g, ""))
    .filter((r) => /</.test(r) || r.split("|").length !== 4);
  expect(outsideCode).toEqual([]);
});
