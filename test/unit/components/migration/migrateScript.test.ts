// Unit: the migration Job's script, rendered every way: valid sh, nothing that loads Pulp's settings before
// migrate.py, which loads them as `migrate`. preMigrate.py runs with python3 against a stand-in psycopg
// (fixtures/psycopg.py) that prints each statement and answers from a JSON file; migrate.py against a
// stand-in Django and Redis (fixtures/django, fixtures/pulpcore) that print each call. Real Pulp runs the
// script in test/e2e/images/real-pulp.sh and the e2e proofs (restore.test.ts clears the cache).
import { execFileSync, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { MIGRATE_PY, migrateScript, PRE_MIGRATE_SCRIPT } from "../../../../components/migration/migrationJob";
import { renderSettings } from "../../../../components/settings/render";
import { SETTINGS_INPUT } from "../../helpers/settingsInput";

test.each([true, false])("clearStaleAppStatus %s: sh parses the script", (clear) => {
  const script = migrateScript({ clearStaleAppStatus: clear });
  expect(() => execFileSync("sh", ["-n", "-c", script])).not.toThrow();
  const call = script.split("\n").find((l) => l.includes("<<'PRE_MIGRATE'"))!;
  expect(call.includes("--clear-stale-appstatus")).toBe(clear);
});

// pulpcore/app/settings.py@3.85.0 (3.86.0-3.104.x, older LTS patches) refuses to load its settings, while
// artifacts lack a newly allowed checksum, for any command but migrate, handle-artifact-checksums,
// collectstatic and openapi: before migrate.py nothing may load them, and it loads them as `migrate`.
test.each([
  [true, false],
  [false, true],
])(
  "clearStaleAppStatus %s, clearCache %s: nothing loads Pulp's settings before migrate.py, one process after preMigrate.py",
  (clearStaleAppStatus, clearCache) => {
    const script = migrateScript({ clearStaleAppStatus, clearCache });
    const before = script.slice(0, script.indexOf("<<'MIGRATE'"));
    expect(before).not.toContain("wait_on_postgres");
    expect(before).not.toContain("bin/pulpcore-manager ");
    expect(before.replace(PRE_MIGRATE_SCRIPT.trimEnd(), "")).not.toMatch(
      /import django|DJANGO_SETTINGS_MODULE|pulpcore\.app/,
    );
    expect(before.indexOf("<<'PRE_MIGRATE'")).toBeLessThan(before.length);
    const after = script.slice(script.indexOf("<<'MIGRATE'"));
    expect(after).not.toContain("bin/pulpcore-manager ");
    expect(script.split("\n").filter((l) => l.startsWith('"$py" -'))).toEqual([
      `"$py" - /etc/pulp/settings.py${clearStaleAppStatus ? " --clear-stale-appstatus" : ""} <<'PRE_MIGRATE'`,
      `"$py" -${clearCache ? " --clear-cache" : ""} <<'MIGRATE'`,
    ]);
  },
);

describe("migrate.py with a stand-in Django", () => {
  const fixtures = path.join(__dirname, "fixtures");
  /** Runs migrate.py as the Job does (from stdin); the stand-ins' calls, stderr and status. */
  const run = (flags: string[] = [], env: Record<string, string> = {}) => {
    const r = spawnSync("python3", ["-", ...flags], {
      input: MIGRATE_PY,
      encoding: "utf8",
      env: {
        PATH: process.env.PATH,
        PYTHONPATH: fixtures,
        PYTHONDONTWRITEBYTECODE: "1",
        ADMIN_PASSWORD: "-pw with 'quotes'",
        ...env,
      },
    });
    const calls = r.stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l));
    return { calls, stdout: r.stdout, err: r.stderr, status: r.status };
  };

  test("loads Pulp's settings once, as `migrate`, then runs the commands in order; the password as a value", () => {
    const { calls, err, status } = run();
    expect(err).toBe("");
    expect(status).toBe(0);
    expect(calls).toEqual([
      { setup: { argv: ["pulpcore-manager", "migrate"], settings: "pulpcore.app.settings" } },
      { call_command: ["migrate", [], { interactive: false, skip_checks: true }] },
      { call_command: ["handle-artifact-checksums", [], { skip_checks: true }] },
      { call_command: ["check", [], { databases: ["default"] }] },
      { call_command: ["reset-admin-password", [], { password: "-pw with 'quotes'" }] },
    ]);
  });

  test("--clear-cache: Pulp's cached responses (hashes) go after the checks, before the password; a lock stays", () => {
    const { calls, stdout, status } = run(["--clear-cache"]);
    expect(status).toBe(0);
    const steps = calls.map((c) => c.call_command?.[0] ?? c.redis_delete ?? "setup");
    expect(steps).toEqual([
      "setup",
      "migrate",
      "handle-artifact-checksums",
      "check",
      "/pulp/content/a/",
      "/pulp/content/b/",
      "reset-admin-password",
    ]);
    expect(stdout).toContain("Cached responses deleted after the restore: 2");
  });

  test.each(["migrate", "handle-artifact-checksums", "check"])(
    "%s failing stops the Job with the command's error, and nothing after it runs",
    (failing) => {
      const { calls, err, status } = run([], { FAIL_COMMAND: failing });
      expect(status).toBe(1);
      expect(err).toBe(`CommandError: ${failing} failed in the stand-in\n`);
      const ran = calls.flatMap((c) => (c.call_command ? [c.call_command[0]] : []));
      expect(ran[ran.length - 1]).toBe(failing);
      expect(ran).not.toContain("reset-admin-password");
    },
  );

  test("the Job's copy is the file without its docstring, and never holds the password", () => {
    expect(MIGRATE_PY.startsWith("# Pulp on Kubernetes, components/migration/migrate.py\n")).toBe(true);
    expect(MIGRATE_PY).not.toContain('"""\nPulp\'s manager commands');
    expect(MIGRATE_PY).toContain('env["ADMIN_PASSWORD"]');
  });
});

describe("preMigrate.py with a stand-in psycopg", () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "premigrate-"));
    fs.copyFileSync(path.join(__dirname, "fixtures", "psycopg.py"), path.join(dir, "psycopg.py"));
    // The image's packages as far as the script looks: pulpcore's core migrations (a squash first, as
    // 3.123.1 ships them) and pulp_file's; no pulp_rpm. Importing pulpcore fails: the script must not.
    for (const [folder, names] of [
      [
        "pulpcore/app/migrations",
        [
          "0001_squashed_0090_char_to_text_field",
          "0147_content_pulp_labels_gin",
          "0148_artifact_artifact_domain_size_index",
        ],
      ],
      [
        "pulp_file/app/migrations",
        ["0001_initial_squashed_0016_add_domain", "0020_filerepository_last_sync_details"],
      ],
    ] as const) {
      fs.mkdirSync(path.join(dir, folder), { recursive: true });
      for (const name of ["__init__", ...names]) fs.writeFileSync(path.join(dir, folder, `${name}.py`), "");
    }
    fs.writeFileSync(path.join(dir, "pulpcore", "__init__.py"), "raise ImportError('settings not loaded')\n");
    // What the program writes, database options included (their connect_timeout once clashed with the script's).
    fs.writeFileSync(
      path.join(dir, "settings.py"),
      renderSettings({
        ...SETTINGS_INPUT,
        allowedContentChecksums: ["sha1", "sha256"],
        database: { host: "db.pulp.svc", port: 5432, name: "pulp", user: "pulp", sslmode: "require" },
      }),
    );
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Runs the script as the Job does (from stdin, Pulp's settings path, the flag); stdout, stderr, status. */
  const run = (
    state: object,
    flags: string[] = [],
    password: Record<string, string> = { SECRET_DATABASES__default__PASSWORD: "db-pass" },
    settings = path.join(dir, "settings.py"),
  ) => {
    fs.writeFileSync(path.join(dir, "state.json"), JSON.stringify(state));
    const r = spawnSync("python3", ["-", settings, ...flags], {
      input: PRE_MIGRATE_SCRIPT,
      encoding: "utf8",
      env: {
        PATH: process.env.PATH,
        PYTHONPATH: dir,
        FAKE_PG: path.join(dir, "state.json"),
        ...password,
      },
    });
    return { out: r.stdout, err: r.stderr, status: r.status };
  };

  test("connects with the settings' database and the Job's password, and waits until it answers", () => {
    const { out, status } = run({ fail_connects: 1 });
    expect(status).toBe(0);
    const connects = out.split("\n").filter((l) => l.startsWith("CONNECT:"));
    expect(connects).toHaveLength(2);
    expect(JSON.parse(connects[1].slice("CONNECT:".length))).toEqual({
      connect_timeout: 10,
      dbname: "pulp",
      host: "db.pulp.svc",
      keepalives: 1,
      keepalives_count: 3,
      keepalives_idle: 30,
      keepalives_interval: 10,
      password: "db-pass",
      port: 5432,
      sslmode: "require",
      tcp_user_timeout: 30000,
      user: "pulp",
    });
    expect(out).toContain("Waiting for PostgreSQL at db.pulp.svc:5432: connection refused");
  });

  test("without the SECRET_ variable, dynaconf's PULP_ one gives the password", () => {
    const { out, status } = run({}, [], { PULP_DATABASES__default__PASSWORD: "@str db-pass" });
    expect(status).toBe(0);
    expect(out).toContain('"password": "db-pass"');
  });

  test("a refused password fails at once instead of waiting out the Job's timeout", () => {
    const refuse = 'FATAL:  password authentication failed for user "pulp"';
    const { err, status } = run({ refuse });
    expect(status).toBe(1);
    expect(err).toContain(`PostgreSQL at db.pulp.svc:5432 refused the connection: ${refuse}`);
  });

  test.each([true, false])("--clear-stale-appstatus %s", (clear) => {
    const { out, status } = run({ appstatus: true }, clear ? ["--clear-stale-appstatus"] : []);
    expect(status).toBe(0);
    expect(out.includes("DELETE FROM core_appstatus WHERE last_heartbeat < now() - ttl")).toBe(clear);
  });

  test("an INVALID index of an interrupted 0147 is dropped, so migrate builds it again", () => {
    const { out, status } = run({
      migrations: ["core.0146_repository_retain_checkpoints"],
      invalid: [["public", "pulp_labels_gin_index", "core_content", false]],
    });
    expect(status).toBe(0);
    expect(out).toContain('SQL: DROP INDEX CONCURRENTLY IF EXISTS "public"."pulp_labels_gin_index"');
  });

  describe("the database's encrypted fields and the install's key", () => {
    /** A Fernet key and a remote password encrypted with it, by the cryptography library Pulp uses. */
    const fernet = (key?: string) =>
      JSON.parse(execFileSync("python3", ["-c", FERNET_PAIR, key ?? ""], { encoding: "utf8" })) as {
        key: string;
        token: string;
      };
    const FERNET_PAIR = [
      "import json, sys",
      "from cryptography.fernet import Fernet",
      "key = sys.argv[1].encode() or Fernet.generate_key()",
      "print(json.dumps({'key': key.decode(), 'token': Fernet(key).encrypt(b'remote-pass').decode()}))",
    ].join("\n");
    /** The program's settings with DB_ENCRYPTION_KEY at a file holding `keys`, one a line. */
    const withKeys = (keys: string[]) => {
      fs.writeFileSync(path.join(dir, "fields.key"), keys.map((k) => `${k}\n`).join(""));
      const settings = path.join(dir, "settings-keys.py");
      fs.writeFileSync(
        settings,
        `${fs.readFileSync(path.join(dir, "settings.py"), "utf8")}\nDB_ENCRYPTION_KEY = ${JSON.stringify(path.join(dir, "fields.key"))}\n`,
      );
      return settings;
    };
    const runWith = (settings: string, state: object, flags: string[] = []) =>
      run(state, flags, undefined, settings);

    test("a credential another install's key encrypted stops the Job before anything changes, naming the key to set", () => {
      const theirs = fernet();
      const ours = fernet();
      const { out, err, status } = runWith(withKeys([ours.key]), { appstatus: true, remote: theirs.token }, [
        "--clear-stale-appstatus",
      ]);
      expect(status).toBe(1);
      expect(err).toContain("cannot be read with this install's key (pulp:dbFieldsEncryptionKey)");
      expect(err).toContain(
        "pulumi config set --secret pulp:dbFieldsEncryptionKey < database_fields.symmetric.key",
      );
      expect(err).not.toContain(theirs.key);
      expect(err).not.toContain(ours.key);
      expect(out).not.toContain("DELETE");
    });

    test("readable with the key, or with an older key beside it (a rotation), or nothing encrypted: the Job goes on", () => {
      const old = fernet();
      const current = fernet();
      expect(runWith(withKeys([current.key, old.key]), { remote: old.token }).status).toBe(0);
      expect(runWith(withKeys([current.key]), { remote: fernet(current.key).token }).status).toBe(0);
      expect(runWith(withKeys([current.key]), { remote: null }).status).toBe(0);
      // An empty database: no core_remote yet.
      expect(runWith(withKeys([current.key]), {}).status).toBe(0);
    });
  });

  test("a database migrated by a newer release than the image stops the Job before anything changes", () => {
    const { out, err, status } = run(
      {
        appstatus: true,
        migrations: [
          "core.0001_squashed_0090_char_to_text_field",
          "core.0149_distributedpublication",
          "file.0020_filerepository_last_sync_details",
          "rpm.0070_x",
          "auth.0012_alter_user_first_name_max_length",
        ],
        invalid: [["public", "pulp_labels_gin_index", "core_content", false]],
      },
      ["--clear-stale-appstatus"],
    );
    expect(status).toBe(1);
    expect(err).toContain("The database was migrated by a newer release than this image runs");
    expect(err).toContain("pulp:image");
    // Only core is ahead: file is level, rpm is not in the image, auth is Django's.
    expect(err.split("\n").filter((l) => l.startsWith("  "))).toEqual([
      "  core: the database has 0149_distributedpublication, the image's newest is 0148_artifact_artifact_domain_size_index",
    ]);
    expect(out).not.toContain("DELETE");
    expect(out).not.toContain("DROP INDEX");
  });

  test("a database at or behind the image's migrations goes on to migrate", () => {
    const { status } = run({
      migrations: ["core.0148_artifact_artifact_domain_size_index", "file.0019_add_filegitremote"],
    });
    expect(status).toBe(0);
  });

  test("any other INVALID index stops the Job, naming the statement to run; nothing is dropped", () => {
    const { out, err, status } = run({
      migrations: ["core.0147_content_pulp_labels_gin"],
      invalid: [
        ["public", "artifact_domain_size_index", "core_artifact", true],
        ["public", "pulp_labels_gin_index", "core_content", false],
        ["public", "rpm_package_x", "rpm_package", false],
      ],
    });
    expect(status).toBe(1);
    expect(out).not.toContain("DROP INDEX");
    expect(err).toContain("artifact_domain_size_index on core_artifact is being built right now");
    expect(err).toContain(
      'pulp_labels_gin_index on core_content: REINDEX INDEX CONCURRENTLY "public"."pulp_labels_gin_index";',
    );
    expect(err).toContain('rpm_package_x on rpm_package: DROP INDEX CONCURRENTLY "public"."rpm_package_x";');
  });
});
