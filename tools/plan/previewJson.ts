// The parts of `pulumi preview --json` the plan summary reads, and the one place that checks the shape.
// Written against what the real CLI prints (test/fixtures/preview/, captured by capture-fixtures.ts).

export interface StepState {
  type: string;
  /** false for component resources. */
  custom?: boolean;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  protect?: boolean;
  retainOnDelete?: boolean;
}

export interface PropertyDiff {
  kind: string;
  inputDiff?: boolean;
}

export interface PreviewStep {
  /** same, create, update, delete, replace, create-replacement, delete-replaced, read, ... */
  op: string;
  urn: string;
  oldState?: StepState;
  newState?: StepState;
  /** Property paths (`spec.template.spec.containers[0].image`) the provider reports as changed. */
  detailedDiff?: Record<string, PropertyDiff> | null;
  replaceReasons?: string[];
  diffReasons?: string[];
}

export interface PreviewDiagnostic {
  urn?: string;
  message: string;
  severity: string;
}

export interface PreviewJson {
  steps: PreviewStep[];
  diagnostics: PreviewDiagnostic[];
  changeSummary: Record<string, number>;
}

/** The input is not preview JSON: the only failure the summary exits non-zero for. */
export class UnreadablePreview extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Parses and checks the preview; a failed preview (diagnostics, few or no steps) is still readable. */
export function parsePreview(text: string): PreviewJson {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new UnreadablePreview(
      `not JSON (${(err as Error).message}); expected \`pulumi preview --json\` output`,
    );
  }
  if (!isObject(data))
    throw new UnreadablePreview("not a JSON object; expected `pulumi preview --json` output");
  const steps = data.steps ?? [];
  const diagnostics = data.diagnostics ?? [];
  if (!Array.isArray(steps) || !Array.isArray(diagnostics)) {
    throw new UnreadablePreview("`steps` and `diagnostics` must be arrays when present");
  }
  if (data.steps === undefined && data.diagnostics === undefined) {
    throw new UnreadablePreview("neither `steps` nor `diagnostics`: not `pulumi preview --json` output");
  }
  for (const [i, s] of steps.entries()) {
    if (!isObject(s) || typeof s.op !== "string" || typeof s.urn !== "string") {
      throw new UnreadablePreview(`steps[${i}] has no op and urn`);
    }
  }
  for (const [i, d] of diagnostics.entries()) {
    if (!isObject(d) || typeof d.message !== "string")
      throw new UnreadablePreview(`diagnostics[${i}] has no message`);
  }
  return {
    steps: steps as PreviewStep[],
    diagnostics: (diagnostics as PreviewDiagnostic[]).map((d) => ({ ...d, severity: d.severity ?? "info" })),
    changeSummary: isObject(data.changeSummary) ? (data.changeSummary as Record<string, number>) : {},
  };
}

/** `urn:pulumi:<stack>::<project>::<parent$...$type>::<name>` → the resource's own type and logical name. */
export function parseUrn(urn: string): { type: string; name: string } {
  const parts = urn.split("::");
  const qualified = parts[2] ?? "";
  return { type: qualified.split("$").pop() ?? qualified, name: parts.slice(3).join("::") };
}

/** The value at a dotted path with [n] indexes and ["quoted keys"], as detailedDiff names them. */
export function valueAt(root: unknown, path: string): unknown {
  const keys = [...path.matchAll(/\["([^"]*)"\]|\[(\d+)\]|([^.[\]]+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
  let v: unknown = root;
  for (const k of keys) {
    if (Array.isArray(v)) v = v[Number(k)];
    else if (isObject(v)) v = v[k];
    else return undefined;
  }
  return v;
}

/** Paths whose values differ between two input trees, in detailedDiff's notation (for steps without one). */
export function changedPaths(a: unknown, b: unknown, prefix = ""): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  const join = (k: string | number) =>
    typeof k === "number"
      ? `${prefix}[${k}]`
      : /^[A-Za-z_][\w-]*$/.test(k)
        ? prefix
          ? `${prefix}.${k}`
          : k
        : `${prefix}["${k}"]`;
  if (Array.isArray(a) && Array.isArray(b)) {
    return Array.from({ length: Math.max(a.length, b.length) }, (_, i) =>
      changedPaths(a[i], b[i], join(i)),
    ).flat();
  }
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => changedPaths(a[k], b[k], join(k)));
  }
  return [prefix];
}
