// Real PostgreSQL, no cluster: restore.sh's database part against a throwaway PostgreSQL 15 server on
// 127.0.0.1 (initdb in a temporary directory, as the postgres user when run as root; stopped and deleted
// afterwards). A small Pulp-like schema (hstore column, sequence, foreign key, index, trigger function,
// view) made by the app role is dumped with pg_dump --format=custom into a backup laid out as backup.sh
// does, and restored as the app role into an empty database and over the live one, with public and hstore
// owned as PostgreSQL 14 and managed databases have them (the bootstrap superuser's, hstore created by the
// DBA) and as PostgreSQL 15 does when the app role owns the database. Needs the server binaries (initdb,
// pg_ctl, postgres; PG_BINDIR, default Debian's /usr/lib/postgresql/15/bin, package postgresql-15) and the
// hstore extension: missing, this fails. Run: npx jest test/e2e/restoreDatabase.test.ts --selectProjects e2e
import { execFileSync, spawnSync } from "child_process";
import { createHash } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const BIN = process.env.PG_BINDIR ?? "/usr/lib/postgresql/15/bin";
const RESTORE = path.join(__dirname, "../../components/backup/restore.sh");
const ID = "20261125T031500Z";
const PORT = 40000 + Math.floor(Math.random() * 9000);
const ROOT = process.getuid?.() === 0;

jest.setTimeout(60000);

let dir: string;
let data: string;

/** A server binary, as the postgres user when this runs as root (initdb and postgres refuse root). */
function server(cmd: string, args: string[]) {
  const [file, argv] = ROOT
    ? ["runuser", ["-u", "postgres", "--", path.join(BIN, cmd), ...args]]
    : [path.join(BIN, cmd), args];
  execFileSync(file, argv, { stdio: "pipe" });
}

/** SQL as the superuser (psql script: \c switches databases). */
function sql(db: string, script: string): string {
  return execFileSync(
    path.join(BIN, "psql"),
    [
      "-X",
      "-q",
      "-A",
      "-t",
      "-v",
      "ON_ERROR_STOP=1",
      "-h",
      "127.0.0.1",
      "-p",
      String(PORT),
      "-U",
      "postgres",
      "-d",
      db,
    ],
    { input: script, encoding: "utf8" },
  ).trim();
}

beforeAll(() => {
  for (const bin of ["initdb", "pg_ctl", "postgres", "pg_dump", "pg_restore", "psql"]) {
    if (!fs.existsSync(path.join(BIN, bin))) {
      throw new Error(`${path.join(BIN, bin)} is missing: apt-get install postgresql-15, or set PG_BINDIR`);
    }
  }
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "restore-db-"));
  fs.chmodSync(dir, 0o755);
  data = path.join(dir, "data");
  fs.mkdirSync(data, { mode: 0o700 });
  if (ROOT) execFileSync("chown", ["postgres:", data]);
  server("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"]);
  server("pg_ctl", [
    ...["-D", data, "-w", "-l", path.join(data, "log"), "start"],
    ...["-o", `-c listen_addresses=127.0.0.1 -p ${PORT} -k ${data} -c fsync=off`],
  ]);
  sql("postgres", "CREATE ROLE pulp LOGIN;");
});

afterAll(() => {
  if (fs.existsSync(path.join(data ?? "/nonexistent", "postmaster.pid"))) {
    server("pg_ctl", ["-D", data, "-m", "immediate", "stop"]);
  }
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

type Layout = "pg14-dba" | "pg15-owner" | "pg15-not-owner";

/**
 * An empty database as Pulp finds it. pg14-dba: PostgreSQL 14's public (the bootstrap superuser's, CREATE
 * for everyone) in a database the superuser owns, hstore created by the DBA. pg15-owner: the app role
 * owns the database (so public, pg_database_owner's), no hstore yet. pg15-not-owner: neither.
 */
function database(name: string, layout: Layout) {
  const owner = layout === "pg15-owner" ? "pulp" : "postgres";
  sql("postgres", `CREATE DATABASE ${name} OWNER ${owner};`);
  if (layout === "pg14-dba") {
    sql(
      name,
      "ALTER SCHEMA public OWNER TO postgres;\nGRANT CREATE, USAGE ON SCHEMA public TO PUBLIC;\nCREATE EXTENSION hstore;",
    );
  }
}

/** Pulp's objects, made by the app role (Pulp's 0098 runs CREATE EXTENSION IF NOT EXISTS hstore). */
function pulpSchema(db: string) {
  sql(
    db,
    `SET client_min_messages = warning;
SET ROLE pulp;
CREATE EXTENSION IF NOT EXISTS hstore;
CREATE TABLE django_migrations (id bigserial PRIMARY KEY, app text, name text);
CREATE TABLE core_artifact (pulp_id uuid PRIMARY KEY, file text NOT NULL, size bigint);
CREATE TABLE core_content (pulp_id uuid PRIMARY KEY, artifact_id uuid REFERENCES core_artifact, labels hstore);
CREATE INDEX ON core_content (artifact_id);
CREATE FUNCTION core_size() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.size := coalesce(NEW.size, 0); RETURN NEW; END $$;
CREATE TRIGGER core_size BEFORE INSERT ON core_artifact FOR EACH ROW EXECUTE FUNCTION core_size();
CREATE VIEW core_sizes AS SELECT file, size FROM core_artifact;
INSERT INTO django_migrations (app, name) VALUES ('core', '0001_initial');
INSERT INTO core_artifact VALUES ('00000000-0000-0000-0000-000000000001', 'artifact/0a/11', 3);
INSERT INTO core_content VALUES ('00000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-000000000001', 'a=>1');`,
  );
}

const sha256 = (bytes: string | Buffer) => createHash("sha256").update(bytes).digest("hex");

/** A backup of `db` as backup.sh lays it out (artifacts in object storage: MEDIA_ROOT stays empty). */
function backupOf(db: string): string {
  const b = path.join(dir, "backups", db, ID);
  fs.mkdirSync(path.join(b, "keys"), { recursive: true });
  execFileSync(path.join(BIN, "pg_dump"), ["--format=custom", `--file=${path.join(b, "database.dump")}`], {
    env: { ...process.env, PGHOST: "127.0.0.1", PGPORT: String(PORT), PGUSER: "pulp", PGDATABASE: db },
  });
  fs.writeFileSync(path.join(b, "artifacts.list"), "artifact/0a/11\n");
  const keys: string[] = [];
  for (const f of ["secret_key", "database_fields.symmetric.key", "admin_password"]) {
    fs.writeFileSync(path.join(b, "keys", f), `${f}-value`);
    keys.push(`"${f}": "${sha256(`${f}-value`)}"`);
  }
  const dump = sha256(fs.readFileSync(path.join(b, "database.dump")));
  fs.writeFileSync(
    path.join(b, "manifest.json"),
    [
      "{",
      `  "format": 1,`,
      `  "id": "${ID}",`,
      `  "versions": {"pulpcore": "3.116.0"},`,
      `  "database": {"file": "database.dump", "format": "pg_dump custom", "sha256": "${dump}"},`,
      `  "artifacts": {"storage": "s3://pulp", "referenced": 1, "files": 0, "bytes": 0, "list": "media.list"},`,
      `  "keys": {${keys.join(", ")}}`,
      "}",
    ].join("\n"),
  );
  return b;
}

/**
 * restore.sh as the restore Job runs it, as the app role; `overwrite` confirms this backup over live data;
 * `before` goes first on PATH (a stand-in).
 */
function restore(backup: string, db: string, overwrite = false, before = BIN) {
  const confirm = path.join(dir, "overwrite");
  fs.writeFileSync(confirm, overwrite ? ID : "");
  const log = path.join(dir, "termination-log");
  fs.rmSync(log, { force: true });
  const r = spawnSync("bash", [RESTORE], {
    encoding: "utf8",
    env: {
      ...process.env,
      PATH: `${before}:${BIN}:${process.env.PATH}`,
      ...{ PGHOST: "127.0.0.1", PGPORT: String(PORT), PGUSER: "pulp", PGDATABASE: db, PGSSLMODE: "disable" },
      BACKUP_DIR: backup,
      MEDIA_ROOT: "",
      KEYS_DIR: path.join(backup, "keys"),
      TARGET_PULPCORE: "3.116.0",
      OVERWRITE_FILE: confirm,
      TERMINATION_LOG: log,
    },
  });
  return {
    code: r.status,
    out: r.stdout + r.stderr,
    termination: fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "",
  };
}

/** What the restored database holds, and who owns public and hstore. */
function state(db: string) {
  return sql(
    db,
    `SELECT json_build_object(
  'tables', (SELECT json_agg(relname ORDER BY relname) FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'v')),
  'artifacts', (SELECT count(*) FROM core_artifact),
  'label', (SELECT labels -> 'a' FROM core_content),
  'viewed', (SELECT string_agg(file, ',') FROM core_sizes),
  'trigger', (SELECT count(*) FROM pg_trigger WHERE tgname = 'core_size'),
  'publicOwner', (SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'public'),
  'hstoreOwner', (SELECT pg_get_userbyid(extowner) FROM pg_extension WHERE extname = 'hstore'))`,
  );
}
/** A restore that went through; else its log. */
function expectDone(r: ReturnType<typeof restore>) {
  if (r.code !== 0) throw new Error(`restore.sh exited ${r.code}: ${r.termination}${r.out}`);
  expect(r.termination).toMatch(/^\{"restored": "20261125T031500Z", "seconds": \d+\}\n$/);
}
const RESTORED = {
  tables: ["core_artifact", "core_content", "core_sizes", "django_migrations"],
  artifacts: 1,
  label: "1",
  viewed: "artifact/0a/11",
  trigger: 1,
};

test("PostgreSQL 14's public and a DBA's hstore: restored into an empty database (B7)", () => {
  database("src14", "pg14-dba");
  pulpSchema("src14");
  const backup = backupOf("src14");
  database("new14", "pg14-dba");
  expectDone(restore(backup, "new14"));
  expect(JSON.parse(state("new14"))).toEqual({
    ...RESTORED,
    publicOwner: "postgres",
    hstoreOwner: "postgres",
  });
});

test("PostgreSQL 14's public and a DBA's hstore: restored over the live install, what it added gone (B7)", () => {
  database("live14", "pg14-dba");
  pulpSchema("live14");
  const backup = backupOf("live14");
  // The live install moved on: a row and a table (a newer migration's) the backup does not have.
  sql(
    "live14",
    "SET ROLE pulp;\nINSERT INTO core_artifact VALUES (gen_random_uuid(), 'artifact/ff/99', 1);\nCREATE TABLE core_newer (id int);",
  );
  expect(restore(backup, "live14").termination).toMatch(/is not empty .* with pulp:restore.overwrite/);
  expectDone(restore(backup, "live14", true));
  expect(JSON.parse(state("live14"))).toEqual({
    ...RESTORED,
    publicOwner: "postgres",
    hstoreOwner: "postgres",
  });
});

test("PostgreSQL 15 with the app role owning the database: hstore is created, and an overwrite works too (B7)", () => {
  database("src15", "pg15-owner");
  pulpSchema("src15");
  const backup = backupOf("src15");
  database("new15", "pg15-owner");
  expectDone(restore(backup, "new15"));
  expect(JSON.parse(state("new15"))).toEqual({
    ...RESTORED,
    publicOwner: "pg_database_owner",
    hstoreOwner: "pulp",
  });
  sql("new15", "SET ROLE pulp;\nDELETE FROM core_content;");
  expectDone(restore(backup, "new15", true));
  expect(JSON.parse(state("new15"))).toEqual({
    ...RESTORED,
    publicOwner: "pg_database_owner",
    hstoreOwner: "pulp",
  });
});

test("a restore that breaks off halfway (pg_restore fails) leaves the live install as it was (B7)", () => {
  database("cut15", "pg15-owner");
  pulpSchema("cut15");
  const backup = backupOf("cut15");
  sql("cut15", "SET ROLE pulp;\nCREATE TABLE core_newer (id int);");
  const before = state("cut15");
  // pg_restore stops after the first COPY's header: psql reads the rest of its input as that table's rows.
  const wrap = path.join(dir, "wrap");
  fs.mkdirSync(wrap, { recursive: true });
  const real = path.join(BIN, "pg_restore");
  fs.writeFileSync(
    path.join(wrap, "pg_restore"),
    `#!/bin/bash\ncase "$*" in *-list*) exec ${real} "$@" ;; esac\n${real} "$@" | sed '/^COPY /q'\nexit 1\n`,
    { mode: 0o755 },
  );
  const r = restore(backup, "cut15", true, wrap);
  expect(r.termination).toMatch(
    /^restore refused: the restore failed \(see the log\); the database is unchanged/,
  );
  expect(state("cut15")).toBe(before);
});

test("what the app role lacks is named before anything changes (B7)", () => {
  database("srcp", "pg14-dba");
  pulpSchema("srcp");
  const backup = backupOf("srcp");

  // PostgreSQL 15's public in a database the app role does not own: no CREATE there, none on the database.
  database("bare15", "pg15-not-owner");
  const bare = restore(backup, "bare15");
  expect(bare.code).toBe(1);
  expect(bare.termination).toBe(
    "restore refused: pulp cannot create tables in schema public (owner pg_database_owner): GRANT CREATE ON " +
      "SCHEMA public TO pulp, run by its owner; the backup needs extension hstore, which database bare15 does " +
      "not have and pulp cannot create: CREATE EXTENSION hstore WITH SCHEMA public, run in database bare15 by " +
      "a superuser or its owner. Nothing was changed\n",
  );
  expect(sql("bare15", "SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace")).toBe(
    "0",
  );

  // hstore where the dump's tables cannot find it (public.hstore).
  database("ext15", "pg15-owner");
  sql("ext15", "CREATE SCHEMA ext;\nCREATE EXTENSION hstore WITH SCHEMA ext;");
  expect(restore(backup, "ext15").termination).toBe(
    "restore refused: extension hstore is in schema ext here and in schema public in the backup: ALTER " +
      "EXTENSION hstore SET SCHEMA public, run by its owner postgres. Nothing was changed\n",
  );

  // Over a live install holding an object the app role may not drop.
  sql("srcp", "CREATE TABLE audit_log (id int);\nSET ROLE pulp;\nDELETE FROM core_content;");
  const live = restore(backup, "srcp", true);
  expect(live.code).toBe(1);
  expect(live.termination).toBe(
    "restore refused: over the live install, pulp must drop every object in schema public, and 1 of them " +
      "belong to others (table audit_log of postgres): make pulp their owner or drop them, run by their " +
      "owners. Nothing was changed\n",
  );
  expect(sql("srcp", "SELECT count(*) FROM core_content")).toBe("0");
});
