// Unit (plain parseConfig calls; loadConfig and the DataVolume under Pulumi mocks): bad input the review
// found accepted is refused before anything is created, naming the key, the value (never a secret) and a
// fix: a secret Pulp would call weak, a grace period within the preStop delay, PostgreSQL older than 14,
// and a backup's URL (a credential) in plain config. The fixes are pasted into the real CLI by
// test/e2e/configFix.test.ts.
import * as pulumi from "@pulumi/pulumi";
import { parseConfig } from "../../../../components/config/parse";
import {
  ConfigError,
  ConfigProblem,
  formatProblems,
  SECRET_GIVEN,
} from "../../../../components/config/problems";
import { PRE_STOP_SECONDS, SecretName, urlHasCredentials } from "../../../../components/config/rules";
import {
  adminPasswordProblem,
  djangoSecretKeyProblem,
  weakSecretKeyVerdict,
  weakSecretKeyWarning,
} from "../../../../components/config/strength";
import { pulpContainer } from "../../../../components/workload/pulpProcess";
import { MINIMAL } from "../../helpers/configs";
import { runWithMocks } from "../../helpers/pulumiMocks";
import { NO_PROBE_TUNING, pulpRuntime } from "../../helpers/runtime";

function problemsOf(
  changes: Record<string, unknown>,
  secrets: Partial<Record<SecretName, string>> = {},
  secretConfigKeys: string[] = [],
): ConfigProblem[] {
  try {
    parseConfig(
      { ...MINIMAL, ...changes },
      new Set(Object.keys(secrets) as SecretName[]),
      secrets,
      new Set(secretConfigKeys),
    );
    return [];
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.problems;
  }
}

describe("a secret too weak for Pulp", () => {
  test("SECRET_KEY: Django's check_secret_key (50 characters, 5 different, not django-insecure-)", () => {
    const strong = "a1b2c3d4e5".repeat(5);
    expect(djangoSecretKeyProblem(strong)).toBeUndefined();
    expect(djangoSecretKeyProblem(strong.slice(0, 49))).toMatch(/at least 50 characters/);
    expect(djangoSecretKeyProblem("abcd".repeat(20))).toMatch(/at least 5 different/);
    expect(djangoSecretKeyProblem(`django-insecure-${strong}`)).toMatch(/django-insecure-/);
    // Warned about, not refused: a live install could not take the fix (its key Secret is protected).
    expect(problemsOf({}, { secretKey: "short-key" })).toEqual([]);
    const warning = weakSecretKeyWarning("short-key")!;
    expect(warning).toMatch(/^pulp:secretKey should be a Django SECRET_KEY of at least 50 characters/);
    expect(warning).toContain("pulumi config rm pulp:secretKey");
    expect(warning).not.toContain("short-key");
    expect(weakSecretKeyWarning(strong)).toBeUndefined();
  });

  test("a weak SECRET_KEY is refused on a new install, warned about on a live one or a restore (its key is kept)", () => {
    const fresh = { firstInstall: true, restoring: false };
    const verdict = weakSecretKeyVerdict("short-key", fresh);
    expect(verdict).toEqual({
      refuse: {
        key: "pulp:secretKey",
        given: SECRET_GIVEN,
        message: expect.stringMatching(
          /^must be a Django SECRET_KEY of at least 50 characters.*Nothing runs with it yet$/,
        ),
        fix: "pulumi config rm pulp:secretKey",
        alternatives: [
          "pulumi config set --secret pulp:secretKey  (at the prompt: 50 or more random characters)",
        ],
      },
    });
    expect(formatProblems([(verdict as { refuse: ConfigProblem }).refuse])).not.toContain("short-key");
    expect(weakSecretKeyVerdict("short-key", { firstInstall: false, restoring: false })).toEqual({
      warn: weakSecretKeyWarning("short-key"),
    });
    expect(weakSecretKeyVerdict("short-key", { firstInstall: true, restoring: true })).toHaveProperty("warn");
    expect(weakSecretKeyVerdict("a1b2c3d4e5".repeat(5), fresh)).toBeUndefined();
    expect(weakSecretKeyVerdict(undefined, fresh)).toBeUndefined();
  });

  test("the admin password: the validators Pulp runs on passwords its API sets (8 characters, not only digits)", () => {
    expect(adminPasswordProblem("7-chars")).toMatch(/at least 8 characters/);
    expect(adminPasswordProblem("12345678")).toMatch(/not only digits/);
    expect(adminPasswordProblem("-starts-with-a-dash-Zq8")).toBeUndefined();
    const [problem] = problemsOf({}, { adminPassword: "hunter2" });
    expect(problem).toMatchObject({ key: "pulp:adminPassword", given: SECRET_GIVEN });
    expect(formatProblems([problem])).not.toContain("hunter2");
  });
});

describe("a grace period within the preStop delay", () => {
  test("is refused for api and content, whose servers wait out the preStop sleep first", () => {
    expect(problemsOf({ api: { terminationGracePeriodSeconds: 10 } })).toEqual([
      expect.objectContaining({
        key: "pulp:api.terminationGracePeriodSeconds",
        given: 10,
        message: expect.stringMatching(/^10 s is no longer than the 10 s preStop delay of the api pods/),
        fix: "pulumi config set --path 'pulp:api.terminationGracePeriodSeconds' 60",
      }),
    ]);
    expect(problemsOf({ content: { terminationGracePeriodSeconds: 3 } }).map((p) => p.fix)).toEqual([
      "pulumi config set --path 'pulp:content.terminationGracePeriodSeconds' 45",
    ]);
    expect(problemsOf({ api: { terminationGracePeriodSeconds: 11 } })).toEqual([]);
    // Workers have no preStop hook: a short grace period is their owner's choice.
    expect(problemsOf({ worker: { terminationGracePeriodSeconds: 5 } })).toEqual([]);
  });

  test("the rule's delay is the one the api and content containers sleep", () => {
    for (const process of ["api", "content"] as const) {
      const container = pulpContainer(
        process,
        pulpRuntime(),
        { requests: {}, limits: {} },
        NO_PROBE_TUNING,
      ) as {
        lifecycle?: { preStop?: { exec?: { command?: string[] } } };
      };
      const sleep = /^sleep (\d+)$/.exec(container.lifecycle?.preStop?.exec?.command?.at(-1) ?? "");
      expect({ process, seconds: Number(sleep?.[1]) }).toEqual({ process, seconds: PRE_STOP_SECONDS });
    }
  });
});

describe("PostgreSQL older than 14", () => {
  test("a CloudNativePG image whose tag is a plain version below 14 is refused, its version named", () => {
    const image = "ghcr.io/cloudnative-pg/postgresql:13.14-3";
    expect(problemsOf({ database: { cloudnativepg: { imageName: image } } })).toEqual([
      {
        key: "pulp:database.cloudnativepg.imageName",
        given: image,
        message: "runs PostgreSQL 13 (its tag says so), and Pulp needs PostgreSQL 14 or newer",
        fix: "pulumi config set --path 'pulp:database.cloudnativepg.imageName' ghcr.io/cloudnative-pg/postgresql:17",
        alternatives: ["pulumi config rm --path 'pulp:database.cloudnativepg.imageName'"],
      },
    ]);
    for (const ok of [
      "postgres:14",
      "localhost/postgresql:15",
      "ghcr.io/cloudnative-pg/postgresql:17.2-bookworm",
    ])
      expect(problemsOf({ database: { cloudnativepg: { imageName: ok } } })).toEqual([]);
    // A tag that is not a plain version says nothing at preview.
    expect(problemsOf({ database: { cloudnativepg: { imageName: "postgres:custom-build" } } })).toEqual([]);
  });

  test("an external database: refused when pulp:database.external.version says so (nothing else can tell)", () => {
    const external = (version?: number) => ({ database: { external: { host: "db.example.com", version } } });
    expect(problemsOf(external(12), { databasePassword: "x" })).toEqual([
      expect.objectContaining({
        key: "pulp:database.external.version",
        given: 12,
        message: expect.stringMatching(
          /^says the external database runs PostgreSQL 12, and Pulp needs PostgreSQL 14/,
        ),
        fix: "pulumi config set --path 'pulp:database.external.version' 14",
      }),
    ]);
    expect(problemsOf(external(16), { databasePassword: "x" })).toEqual([]);
    expect(problemsOf(external(), { databasePassword: "x" })).toEqual([]);
  });
});

describe("a backup's URL (a credential) in plain config", () => {
  const url = "https://s3.example.com/b/pulp.tar?X-Amz-Credential=AK&X-Amz-Signature=0f1e";
  const restore = {
    restore: { backup: "20261124T031500Z", http: { url, size: "1Gi" } },
    backup: { image: "postgres:17" },
  };

  test("is refused without being shown; the fix asks for it as a secret", () => {
    const problems = problemsOf(restore);
    expect(problems).toEqual([
      expect.objectContaining({
        key: "pulp:restore.http.url",
        given: SECRET_GIVEN,
        fix: "pulumi config set --secret --path 'pulp:restore.http.url'",
      }),
    ]);
    expect(formatProblems(problems)).not.toContain("X-Amz");
    // Held as a secret (the engine marks the whole top-level key), it is accepted.
    expect(problemsOf(restore, {}, ["restore"])).toEqual([]);
  });

  test("nor does any other problem show it: its given is hidden, and URLs elsewhere lose query and user info", () => {
    const bad = {
      ...restore,
      restore: { ...restore.restore, http: { url: `ftp${url.slice(5)}`, size: "1Gi" } },
    };
    const text = formatProblems(problemsOf(bad, {}, ["restore"]));
    expect(text).toContain("pulp:restore.http.url");
    expect(text).not.toContain("X-Amz");
    const other = problemsOf({ restore: { ...restore.restore, claim: "Bad_Claim" } }, {}, ["restore"]);
    expect(formatProblems(other)).not.toContain("X-Amz");
  });

  test("a data volume's URL is refused only when it carries a credential (a public archive's is no secret)", () => {
    expect(urlHasCredentials(url)).toBe(true);
    expect(urlHasCredentials("https://user:pw@mirror.example.com/seed.tar")).toBe(true);
    expect(urlHasCredentials("https://acct.blob.core.windows.net/c/seed.tar?sv=2024&sig=abc")).toBe(true);
    expect(urlHasCredentials("https://mirror.example.com/seed.tar?version=2")).toBe(false);
    const dataVolumes = (u: string) => ({ dataVolumes: [{ name: "seed", url: u, size: "1Gi" }] });
    expect(problemsOf(dataVolumes("https://mirror.example.com/seed.tar"))).toEqual([]);
    expect(problemsOf(dataVolumes(url)).map((p) => [p.key, p.given, p.fix])).toEqual([
      [
        "pulp:dataVolumes[0].url",
        SECRET_GIVEN,
        "pulumi config set --secret --path 'pulp:dataVolumes[0].url'",
      ],
    ]);
    expect(problemsOf(dataVolumes(url), {}, ["dataVolumes"])).toEqual([]);
  });
});

describe("under Pulumi mocks", () => {
  const url = "https://s3.example.com/b/pulp.tar?X-Amz-Signature=0f1e";
  const config = {
    "pulp:contentOrigin": "https://pulp.example.com",
    "pulp:database": { cloudnativepg: {} },
    "pulp:dataVolumes": [{ name: "seed", url, size: "1Gi" }],
  };

  test("loadConfig reads which keys the engine marks secret: the same URL is refused plain, accepted secret", async () => {
    const { loadConfig } = await import("../../../../components/config/load");
    let refused: unknown;
    await runWithMocks({ config }, () => {
      try {
        loadConfig();
      } catch (e) {
        refused = e;
      }
    });
    expect((refused as ConfigError).problems.map((p) => p.key)).toEqual(["pulp:dataVolumes[0].url"]);
    let loaded: unknown;
    await runWithMocks({ config, secretKeys: ["pulp:dataVolumes"] }, () => {
      loaded = loadConfig().config.dataVolumes[0].url;
    });
    expect(loaded).toBe(url);
  });

  test("the DataVolume gets its URL as a secret, so the state keeps it encrypted", async () => {
    const { DataVolumeImports } = await import("../../../../components/cdi/dataVolumes");
    const sent: Record<string, unknown>[] = [];
    await runWithMocks({ config: {} }, () => {
      const monitor = pulumi.runtime.getMonitor() as unknown as {
        registerResource: (req: { getType(): string; getObject(): unknown }, cb: unknown) => void;
      };
      const register = monitor.registerResource.bind(monitor);
      monitor.registerResource = (req, cb) => {
        if (req.getType().endsWith("DataVolume"))
          sent.push(pulumi.runtime.deserializeProperties(req.getObject() as never));
        register(req, cb);
      };
      new DataVolumeImports("t", {
        namespace: "pulp",
        namespaceName: "pulp",
        kube: {} as never,
        identity: { instance: "pulp", version: "3.123.1" } as never,
        imports: [{ name: "seed", url, size: "1Gi", waitForFirstConsumer: false }],
      });
    });
    // The wire form of a secret (pulumi.runtime's marker, the value inside). The SDK sends the whole spec
    // as one secret when a value inside it is one: the state keeps the spec encrypted.
    expect(sent[0].spec).toEqual({
      "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
      value: expect.objectContaining({ contentType: "archive", source: { http: { url } } }),
    });
  });
});
