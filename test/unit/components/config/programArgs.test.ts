// Unit (no Pulumi): parseArgs, the config as a program passes it. The same rules as the stack config;
// each problem names the argument path, and its fix, applied to the object as printed, clears it.
import { ArgsError, argPath, parseArgs, programFix } from "../../../../components/config/programArgs";
import { MINIMAL } from "../../helpers/configs";

/** Applies a printed program fix to `raw` (what the reader does in code); false when it is not one. */
function apply(raw: Record<string, unknown>, fix: string): boolean {
  const set = /^set config\.(.+?) to (.*)$/.exec(fix);
  const leave = /^leave out config\.(.+)$/.exec(fix);
  const path = (set ?? leave)?.[1];
  if (!path) return false;
  const parts = path.match(/[^.[\]"]+/g)!;
  let at = raw as Record<string, unknown>;
  for (const part of parts.slice(0, -1)) at = (at[part] ??= {}) as Record<string, unknown>;
  if (set) at[parts.at(-1)!] = JSON.parse(set[2]);
  else delete at[parts.at(-1)!];
  return true;
}

function problems(raw: Record<string, unknown>) {
  try {
    parseArgs(raw);
    return [];
  } catch (e) {
    if (!(e instanceof ArgsError)) throw e;
    return e.problems;
  }
}

test("argument paths and fixes in a program's terms", () => {
  expect(argPath("pulp:api.replicas")).toBe("config.api.replicas");
  expect(argPath("pulp:adminPassword")).toBe("secrets.adminPassword");
  expect(programFix("pulumi config set --path 'pulp:api.replicas' 2")).toBe("set config.api.replicas to 2");
  expect(programFix("pulumi config set --path 'pulp:web.clientMaxBodySize' --type string 10")).toBe(
    'set config.web.clientMaxBodySize to "10"',
  );
  expect(programFix("pulumi config set pulp:idle true")).toBe("set config.idle to true");
  expect(programFix("pulumi config set --path 'pulp:x' 'it'\\''s'")).toBe(`set config.x to "it's"`);
  expect(programFix("pulumi config rm --path 'pulp:storage.pvc'")).toBe("leave out config.storage.pvc");
  expect(programFix("pulumi config set --secret pulp:databasePassword")).toBe(
    "pass secrets.databasePassword (any Input<string>, such as a secret output)",
  );
  // Not a config command, or one with a shell substitution: kept as is.
  const pin = `pulumi config set pulp:image "quay.io/pulp/pulp-minimal:3.85.1@$(skopeo inspect docker://x)"`;
  expect(programFix(pin)).toBe(pin);
  expect(programFix("kubectl get pods")).toBe("kubectl get pods");
});

test.each([
  ["a negative replica count", { api: { replicas: -2 } }],
  ["a string where a number goes", { api: { replicas: "two" } }],
  ["an unknown key", { apii: { replicas: 2 } }],
  ["a floating image tag", { image: "quay.io/pulp/pulp-minimal:latest" }],
  ["an API root without slashes", { apiRoot: "x" }],
])("%s: refused in argument terms, and the printed fix applied to the object clears it", (_, change) => {
  const raw: Record<string, unknown> = { ...MINIMAL, ...change };
  const before = problems(raw);
  expect(before.length).toBeGreaterThan(0);
  for (const p of before) {
    expect(p.key).toMatch(/^(config|secrets)\./);
    expect(p.message).not.toContain("pulumi config");
  }
  const fixed = JSON.parse(JSON.stringify(raw));
  const applied = before.filter((p) => apply(fixed, p.fix));
  expect(applied.length).toBeGreaterThan(0);
  const after = problems(fixed).map((p) => p.key);
  for (const p of applied) expect(after).not.toContain(p.key);
});

test("the message says which arguments, not which stack config", () => {
  const error = (() => {
    try {
      parseArgs({ ...MINIMAL, api: { replicas: -2 } });
    } catch (e) {
      return e as Error;
    }
    throw new Error("not refused");
  })();
  expect(error.message).toMatch(/^Invalid Pulp arguments \(parseArgs\) \(1 problem\)/);
  expect(error.message).toContain("  - config.api.replicas: ");
  expect(error.message).toContain("fix:   leave out config.api.replicas");
  expect((error as unknown as { __pulumiRunError: boolean }).__pulumiRunError).toBe(true);
});
