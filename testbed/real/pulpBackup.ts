// A pulp-operator PulpBackup of a live install on the test bed, laid out as pulp-operator 2.0.0's
// controllers/backup write it (the operator's Go module is not served here): `pg_dump --clean --create -Ft`
// into pulp.db (database.go), `cp -fa /var/lib/pulp/.` into pulp/ (pulp_dir.go), the key Secrets as YAML
// (secret.go: pulp_secret_key.yaml the whole Secret as kubectl prints it, the others flat maps of its
// values), the CR's spec as JSON (cr.go). Then packed as a user moving it packs it: one tar of the
// directory, readable by all (CDI unpacks it with its modes; the restore runs as a non-root uid).
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as yaml from "js-yaml";
import { items, kubectl } from "../harness";
import { KUBECONFIG, toolchainBin } from "../local/environment";
import { portForward } from "./clients";
import { freePort } from "./hostServer";

/** The host's PostgreSQL client (Debian's postgresql-15, which `.ci/run` installs). */
const PG_BINDIR = process.env.PG_BINDIR ?? "/usr/lib/postgresql/15/bin";

/** `kubectl exec` with its standard output as bytes (a dump, a tar). */
function execBytes(namespace: string, pod: string, container: string, command: string[]): Buffer {
  return execFileSync(
    path.join(toolchainBin(), "kubectl"),
    ["--kubeconfig", KUBECONFIG, "exec", "-n", namespace, pod, "-c", container, "--", ...command],
    { maxBuffer: 1 << 30, stdio: ["ignore", "pipe", "pipe"] },
  );
}

const secretData = (namespace: string, name: string): Record<string, string> =>
  Object.fromEntries(
    Object.entries(
      JSON.parse(kubectl(["get", "secret", name, "-n", namespace, "-o", "json"])).data ?? {},
    ).map(([k, v]) => [k, Buffer.from(v as string, "base64").toString("utf8")]),
  );

/**
 * The PulpBackup `id` of the install `instance` in `namespace` (its CloudNativePG database, its volume, its
 * keys), as `<returned dir>/<id>/`, and packed as `<returned dir>/<id>.tar`. `operatorName` is the Pulp
 * CR's name the Secrets' names carry on the operator's side.
 */
export async function pulpBackupOf(
  namespace: string,
  instance: string,
  id: string,
  operatorName = "example",
): Promise<{ dir: string; archive: string }> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "pulpbackup-"));
  const dir = path.join(root, id);
  fs.mkdirSync(path.join(dir, "pulp"), { recursive: true });

  // As the operator's backup pod runs it: pg_dump over TCP as the database's own user, into a file. Here the
  // host's pg_dump (PostgreSQL 15, as the bed's server) through a port-forward: -Ft needs a writable /tmp,
  // which a CloudNativePG instance's read-only root lacks.
  const app = secretData(namespace, `${instance}-db-app`);
  const port = await freePort();
  const forward = await portForward(namespace, `${instance}-db-rw`, port, 5432);
  try {
    execFileSync(
      path.join(PG_BINDIR, "pg_dump"),
      ["--clean", "--create", "-Ft", "-d", app.dbname ?? "pulp", "-f", path.join(dir, "pulp.db")],
      {
        env: {
          ...process.env,
          PGHOST: "127.0.0.1",
          PGPORT: String(port),
          PGUSER: app.username,
          PGPASSWORD: app.password,
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
  } finally {
    forward.stop();
  }
  fs.chmodSync(path.join(dir, "pulp.db"), 0o600);

  const api = items("pods", namespace).find(
    (p) => p.metadata.name.startsWith(`${instance}-api-`) && p.status.phase === "Running",
  );
  if (!api) throw new Error(`no running ${instance}-api pod in ${namespace}`);
  const files = execBytes(namespace, api.metadata.name, "api", [
    "tar",
    "-C",
    "/var/lib/pulp",
    "-cf",
    "-",
    ".",
  ]);
  execFileSync("tar", ["-C", path.join(dir, "pulp"), "-xpf", "-"], { input: files });

  const secretKey = secretData(namespace, `${instance}-secret-key`);
  const dbFields = secretData(namespace, `${instance}-db-fields-encryption`);
  const admin = secretData(namespace, `${instance}-admin-password`);
  const b64 = (v: string) => Buffer.from(v).toString("base64");
  // `echo '<yaml>' > file`: one newline more than the YAML.
  fs.writeFileSync(
    path.join(dir, "pulp_secret_key.yaml"),
    `${yaml.dump({
      apiVersion: "v1",
      data: { secret_key: b64(secretKey.secret_key) },
      kind: "Secret",
      metadata: { name: `${operatorName}-secret-key`, namespace },
      type: "Opaque",
    })}\n`,
  );
  fs.writeFileSync(
    path.join(dir, "db_fields_encryption_secret.yaml"),
    `${yaml.dump({
      "database_fields.symmetric.key": dbFields["database_fields.symmetric.key"],
      db_fields_encryption_secret: `${operatorName}-db-fields-encryption`,
    })}\n`,
  );
  fs.writeFileSync(
    path.join(dir, "admin_secret.yaml"),
    `${yaml.dump({ admin_password_secret: `${operatorName}-admin-password`, password: admin.password })}\n`,
  );
  fs.writeFileSync(
    path.join(dir, "postgres_configuration_secret.yaml"),
    `${yaml.dump({
      database: "pulp",
      host: `${operatorName}-database-svc`,
      password: "not-the-real-one",
      port: "5432",
      postgres_secret: `${operatorName}-postgres-configuration`,
      sslmode: "prefer",
      type: "managed",
      username: "pulp",
    })}\n`,
  );
  fs.writeFileSync(
    path.join(dir, "cr_object"),
    `${JSON.stringify({ deployment_type: "pulp", image_version: "stable" })}\n`,
  );

  const archive = path.join(root, `${id}.tar`);
  execFileSync("tar", ["-C", root, "--mode=a+rX", "-cf", archive, id]);
  return { dir, archive };
}
