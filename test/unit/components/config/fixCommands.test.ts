// Unit, plain parseConfig calls (no mocks): the fix each problem prints, by key type (boolean, number,
// string, enum, object, array item, key with dots, secret), exactly; and every fix, applied the way the CLI
// stores what it is given (`--path` makes "true" a boolean and "3" a number unless `--type string`), leads
// to a valid config without the same key coming back. test/e2e/configFix.test.ts pastes them into the real
// CLI and previews.
import { decode } from "../../../../components/config/load";
import { parseConfig } from "../../../../components/config/parse";
import { ConfigError, ConfigProblem, formatProblems } from "../../../../components/config/problems";
import { SECRET_NAMES, SecretName } from "../../../../components/config/rules";
import { MINIMAL } from "../../helpers/configs";

interface Stack {
  raw: Record<string, unknown>;
  secrets: Partial<Record<SecretName, string>>;
  /** Top-level keys holding a secret (set with --secret, in whole or in part). */
  secretKeys: Set<string>;
}

function problemsOf(stack: Stack): ConfigProblem[] {
  try {
    parseConfig(
      stack.raw,
      new Set(Object.keys(stack.secrets) as SecretName[]),
      stack.secrets,
      stack.secretKeys,
    );
    return [];
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.problems;
  }
}

const stackOf = (changes: Record<string, unknown>, secrets: Partial<Record<SecretName, string>> = {}) => ({
  raw: { ...structuredClone(MINIMAL), ...changes },
  secrets,
  secretKeys: new Set<string>(),
});

const only = (changes: Record<string, unknown>, secrets: Partial<Record<SecretName, string>> = {}) =>
  problemsOf(stackOf(changes, secrets)).map((p) => ({
    key: p.key,
    fix: p.fix,
    ...(p.alternatives ? { alternatives: p.alternatives } : {}),
  }));

describe("the printed fix, by key type", () => {
  test("boolean: a boolean, never --type string (that stored a string and the problem came back)", () => {
    expect(only({ cacheEnabled: true })).toEqual([
      { key: "pulp:cacheEnabled", fix: "pulumi config set --path 'pulp:redis.enabled' true" },
    ]);
    expect(only({ workerType: "redis" })[0].fix).toBe("pulumi config set --path 'pulp:redis.enabled' true");
  });

  test("number: a number, never --type string", () => {
    expect(only({ api: { podDisruptionBudget: { minAvailable: 2 } } })).toEqual([
      {
        key: "pulp:api.podDisruptionBudget.minAvailable",
        fix: "pulumi config set --path 'pulp:api.podDisruptionBudget.minAvailable' 1",
        alternatives: [
          "pulumi config rm --path 'pulp:api.podDisruptionBudget.minAvailable' && pulumi config set --path 'pulp:api.podDisruptionBudget.maxUnavailable' 1",
        ],
      },
    ]);
    expect(only({ api: { terminationGracePeriodSeconds: 5 } })).toEqual([
      {
        key: "pulp:api.terminationGracePeriodSeconds",
        fix: "pulumi config set --path 'pulp:api.terminationGracePeriodSeconds' 60",
      },
    ]);
  });

  test("string: one that looks like a number or a boolean keeps --type string", () => {
    expect(only({ web: { clientMaxBodySiz: "0" } })).toEqual([
      {
        key: "pulp:web.clientMaxBodySiz",
        fix: "pulumi config rm --path 'pulp:web.clientMaxBodySiz' && pulumi config set --path 'pulp:web.clientMaxBodySize' --type string 0",
      },
    ]);
    expect(only({ restore: { backup: "20261124T031500Z", overwrite: "20261101T000000Z" } })).toContainEqual({
      key: "pulp:restore.overwrite",
      fix: "pulumi config set --path 'pulp:restore.overwrite' 20261124T031500Z",
    });
  });

  test("enum: removed to its default, or set to a value that fits", () => {
    expect(only({ storage: { pvc: { accessMode: "RWX" } } })).toEqual([
      { key: "pulp:storage.pvc.accessMode", fix: "pulumi config rm --path 'pulp:storage.pvc.accessMode'" },
    ]);
    expect(only({ scheduling: { tolerations: [{ operator: "Matches" }] } })[0].fix).toBe(
      "pulumi config set --path 'pulp:scheduling.tolerations[0].operator' Exists",
    );
  });

  test("object given a scalar: the message shows the shape, the fix replaces it with one field that works", () => {
    const [problem] = problemsOf(stackOf({ database: { cloudnativepg: true } }));
    expect(problem.key).toBe("pulp:database.cloudnativepg");
    expect(problem.message).toBe(
      "must be an object with the keys instances, storageSize, storageClass, imageName, resources, parameters, pooler, not a single " +
        "value; set each with --path, e.g. pulumi config set --path 'pulp:database.cloudnativepg.instances' 3",
    );
    expect(problem.fix).toBe(
      "pulumi config rm --path 'pulp:database.cloudnativepg' && pulumi config set --path 'pulp:database.cloudnativepg.instances' 3",
    );
    // An object with a default: removed (the default applies), the message still shows a field.
    const [resources] = problemsOf(stackOf({ api: { resources: "big" } }));
    expect(resources.message).toMatch(
      /^must be an object with the keys requests, limits, not a single value; .*requests.memory' 512Mi$/,
    );
    expect(resources.fix).toBe("pulumi config rm --path 'pulp:api.resources'");
  });

  test("an enabled feature's key is set to a value that works, not removed (the feature needs it)", () => {
    expect(only({ ingress: { enabled: true, host: "Bad_Host" } })).toEqual([
      { key: "pulp:ingress.host", fix: "pulumi config set --path 'pulp:ingress.host' pulp.example.com" },
    ]);
    expect(only({ backup: { enabled: true, image: "postgres:latest" } })).toEqual([
      {
        key: "pulp:backup.image",
        fix: "pulumi config set --path 'pulp:backup.image' ghcr.io/cloudnative-pg/postgresql:17",
      },
    ]);
    // Off, the same bad host is just removed.
    expect(only({ ingress: { host: "Bad_Host" } })[0].fix).toBe(
      "pulumi config rm --path 'pulp:ingress.host'",
    );
  });

  test("array item and key with dots: the key as --path takes it", () => {
    expect(
      only({ dataVolumes: [{ name: "Bad_Name", url: "https://example.com/seed.tar", size: "1Gi" }] }),
    ).toEqual([
      { key: "pulp:dataVolumes[0].name", fix: "pulumi config set --path 'pulp:dataVolumes[0].name' data" },
    ]);
    expect(only({ scheduling: { nodeSelector: { "kubernetes.io/os": "not valid!" } } })).toEqual([
      {
        key: 'pulp:scheduling.nodeSelector["kubernetes.io/os"]',
        fix: `pulumi config rm --path 'pulp:scheduling.nodeSelector["kubernetes.io/os"]'`,
      },
    ]);
  });

  test("secret: a prompt (the value never in a command or message), or removal for a generated one", () => {
    expect(only({}, { adminPassword: "1234" })).toEqual([
      {
        key: "pulp:adminPassword",
        fix: "pulumi config rm pulp:adminPassword",
        alternatives: ["pulumi config set --secret pulp:adminPassword"],
      },
    ]);
    expect(only({ database: { external: { host: "db.example.com" } } })).toEqual([
      { key: "pulp:database.external", fix: "pulumi config set --secret pulp:databasePassword" },
    ]);
  });

  test("a missing database names both choices, with a command for each", () => {
    const [problem] = problemsOf(stackOf({ database: {} }));
    expect(problem.message).toMatch(/pulp:database.cloudnativepg .* or pulp:database.external/);
    expect([problem.fix, ...problem.alternatives!]).toEqual([
      "pulumi config set --path 'pulp:database.cloudnativepg.instances' 3",
      "pulumi config set --path 'pulp:database.external.host' db.example.com",
    ]);
    expect(formatProblems([problem])).toContain(
      "      fix:   pulumi config set --path 'pulp:database.cloudnativepg.instances' 3\n" +
        "      or:    pulumi config set --path 'pulp:database.external.host' db.example.com",
    );
  });
});

/** `pulumi config set|rm` as the CLI stores it (pkg/cmd/pulumi/config: --path types "true" and integers). */
const TYPED: Record<string, string> = {
  adminPassword: "typed-admin-password-7Qx",
  databasePassword: "typed-database-password",
  secretKey: "typed-django-secret-key-abcdefghijklmnopqrstuvwxyz-0123456789",
  "restore.http.url": "https://s3.example.com/b/x.tar?X-Amz-Signature=1",
  "dataVolumes[0].url": "https://s3.example.com/b/x.tar?X-Amz-Signature=1",
};

function words(command: string): string[] {
  const out: string[] = [];
  const re = /'((?:[^']|'\\'')*)'|(\S+)/g;
  for (let m = re.exec(command); m; m = re.exec(command))
    out.push(m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]);
  return out;
}

function pathOf(key: string): (string | number)[] {
  const parts: (string | number)[] = [];
  const re = /\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]|\.?([^.[\]]+)/g;
  for (let m = re.exec(key); m; m = re.exec(key))
    parts.push(m[1] !== undefined ? JSON.parse(`"${m[1]}"`) : m[2] !== undefined ? Number(m[2]) : m[3]);
  return parts;
}

function apply(stack: Stack, command: string) {
  for (const one of command.split(" && ")) {
    const w = words(one);
    expect(w.slice(0, 2)).toEqual(["pulumi", "config"]);
    const flags = new Set(w.filter((x) => x.startsWith("--")));
    const typeAt = w.indexOf("--type");
    const type = typeAt >= 0 ? w[typeAt + 1] : undefined;
    const args = w.slice(3).filter((x, i, all) => !x.startsWith("--") && all[i - 1] !== "--type");
    const key = args[0].replace(/^pulp:/, "");
    const byPath = flags.has("--path");
    const path = byPath ? pathOf(key) : [key];
    if (w[2] === "rm") {
      const parent = path.slice(0, -1).reduce<any>((o, p) => o?.[p], stack.raw);
      if (parent && typeof parent === "object") delete parent[path.at(-1)!];
      if (SECRET_NAMES.includes(key as SecretName)) delete stack.secrets[key as SecretName];
      continue;
    }
    const text = args[1] ?? TYPED[key];
    expect({ command: one, value: text }).toEqual({ command: one, value: expect.any(String) });
    if (SECRET_NAMES.includes(key as SecretName)) {
      stack.secrets[key as SecretName] = text;
      continue;
    }
    if (flags.has("--secret")) stack.secretKeys.add(String(path[0]));
    const value = !byPath
      ? decode(text)
      : type === "string" || flags.has("--secret")
        ? text
        : /^(true|false)$/.test(text)
          ? text === "true"
          : /^-?\d+$/.test(text) || type === "float"
            ? Number(text)
            : text;
    let parent: any = stack.raw;
    path.slice(0, -1).forEach((p, i) => {
      if (parent[p] === undefined) parent[p] = typeof path[i + 1] === "number" ? [] : {};
      // The CLI refuses to set a field inside a scalar ("expected a map"): the fix must remove it first.
      expect({ command: one, parent: typeof parent[p] }).toEqual({ command: one, parent: "object" });
      parent = parent[p];
    });
    parent[path.at(-1)!] = value;
  }
}

const BROKEN: [string, Record<string, unknown>, Partial<Record<SecretName, string>>?][] = [
  ["cache without Redis", { cacheEnabled: true }],
  ["redis workers without Redis", { workerType: "redis" }],
  ["a budget that blocks drains", { api: { podDisruptionBudget: { minAvailable: 2 } } }],
  ["a grace period within the preStop delay", { content: { terminationGracePeriodSeconds: 10 } }],
  ["no database", { database: {} }],
  ["two databases", { database: { cloudnativepg: {}, external: { host: "db.example.com" } } }],
  ["an object given a scalar", { database: { cloudnativepg: true } }],
  ["a settings object given a scalar", { api: { resources: "big" } }],
  [
    "PostgreSQL 13",
    { database: { cloudnativepg: { imageName: "ghcr.io/cloudnative-pg/postgresql:13.14" } } },
  ],
  [
    "external PostgreSQL 12",
    { database: { external: { host: "db.example.com", version: 12 } } },
    { databasePassword: "x" },
  ],
  ["an enabled ingress with a bad host", { ingress: { enabled: true, host: "Bad_Host" } }],
  ["an enabled ingress without a host", { ingress: { enabled: true } }],
  [
    "router access for an Ingress",
    { ingress: { enabled: true, host: "pulp.example.com", tlsSecretName: "pulp-tls", routerAccess: true } },
  ],
  ["backups without a PostgreSQL image", { backup: { enabled: true } }],
  ["backups with a floating image", { backup: { enabled: true, image: "postgres:latest" } }],
  ["RWO storage", { storage: { pvc: { accessMode: "ReadWriteOnce" } } }],
  ["a misspelt string key", { web: { clientMaxBodySiz: "0" } }],
  ["a misspelt number key", { api: { replica: 3 } }],
  [
    "a bad array item",
    { dataVolumes: [{ name: "Bad_Name", url: "https://example.com/seed.tar", size: "0" }] },
  ],
  ["a key with dots", { extraSettings: { "A.B": true } }],
  ["a toleration's enum", { scheduling: { tolerations: [{ operator: "Matches" }] } }],
  [
    "a backup URL in plain text",
    {
      restore: {
        backup: "20261124T031500Z",
        http: { url: "https://s3.example.com/x.tar?X-Amz-Signature=1", size: "1Gi" },
      },
      backup: { image: "ghcr.io/cloudnative-pg/postgresql:17" },
    },
  ],
  [
    "a presigned data volume URL in plain text",
    { dataVolumes: [{ name: "seed", url: "https://x.example.com/s.tar?sig=1", size: "1Gi" }] },
  ],
  ["an admin password Pulp would refuse", {}, { adminPassword: "12345678" }],
  [
    "an old image with S3",
    {
      image: "quay.io/pulp/pulp-minimal:3.60.0",
      storage: { s3: { bucket: "pulp-artifacts", accessKeyId: "AK" } },
    },
    { s3SecretAccessKey: "x" },
  ],
];

// A rest parameter: with three named ones Jest would take the third for `done` on two-element rows.
test.each(BROKEN)(
  "%s: each fix, applied as the CLI stores it, leads to a valid config, no key twice",
  (...row) => {
    const [, changes, secrets] = row;
    const stack = stackOf(changes, secrets ?? {});
    const fixed = new Map<string, string>();
    let rounds = 0;
    for (let problems = problemsOf(stack); problems.length > 0; problems = problemsOf(stack)) {
      expect(rounds++).toBeLessThan(4);
      for (const p of problems) {
        expect({ key: p.key, cameBackAfter: fixed.get(p.key) }).toEqual({
          key: p.key,
          cameBackAfter: undefined,
        });
        fixed.set(p.key, p.fix);
        apply(stack, p.fix);
      }
    }
    expect(rounds).toBeGreaterThan(0);
  },
);

test("every alternative fix, applied alone, leads to a valid config too", () => {
  const cases: [Record<string, unknown>, Partial<Record<SecretName, string>>][] = [
    [{ database: {} }, {}],
    [{ database: { cloudnativepg: {}, external: { host: "db.example.com" } } }, {}],
    [{ api: { podDisruptionBudget: { minAvailable: 2 } } }, {}],
    [{}, { adminPassword: "short" }],
  ];
  for (const [changes, secrets] of cases) {
    for (const alternative of problemsOf(stackOf(changes, secrets))[0].alternatives!) {
      const stack = stackOf(changes, { ...secrets });
      apply(stack, alternative);
      for (const p of problemsOf(stack)) apply(stack, p.fix);
      expect({ alternative, left: problemsOf(stack).map((p) => p.key) }).toEqual({ alternative, left: [] });
    }
  }
});
