// The real node's PostgreSQL for the real upgrade tests: one pod from the local postgresql image with its
// data on a PVC, in a namespace of the test bed. The program reaches it as `database.external`, and a
// test can hold its locks and set its timeouts. (The dev stack and the real install test use the
// program's default, CloudNativePG: testbed/real/cnpg.ts.)
import { getJson, kubectl, kubectlUntil } from "../harness";

export const DATABASE_NAMESPACE = "pulp-testbed-db";
export const DATABASE_HOST = `postgres.${DATABASE_NAMESPACE}.svc.cluster.local`;
/** A throwaway local database's password; the upgrade stacks set it as their pulp:databasePassword. */
export const DATABASE_PASSWORD = "pulp-local-dev";

const manifest = (image: string) => `
apiVersion: v1
kind: Namespace
metadata: {name: ${DATABASE_NAMESPACE}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: ${DATABASE_NAMESPACE}}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 2Gi}}}
---
apiVersion: v1
kind: Secret
metadata: {name: postgres, namespace: ${DATABASE_NAMESPACE}}
stringData: {password: ${DATABASE_PASSWORD}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: postgres, namespace: ${DATABASE_NAMESPACE}}
spec:
  replicas: 1
  strategy: {type: Recreate}
  selector: {matchLabels: {app: postgres}}
  template:
    metadata: {labels: {app: postgres}}
    spec:
      nodeSelector: {pulp-testbed/node-kind: real}
      securityContext: {runAsUser: 26, runAsGroup: 26, fsGroup: 26}
      containers:
        - name: postgres
          image: ${image}
          imagePullPolicy: IfNotPresent
          # Not BestEffort: that CPU weight (2) loses to every other pod's on a busy node.
          resources: {requests: {cpu: 50m}}
          env:
            - {name: PGDATA, value: /var/lib/postgresql/data/pgdata}
            - {name: PASSWORD, valueFrom: {secretKeyRef: {name: postgres, key: password}}}
          command: [/bin/sh, -c]
          args:
            - |
              set -e
              if [ ! -s "$PGDATA/PG_VERSION" ]; then
                echo "$PASSWORD" > /tmp/pw
                initdb -D "$PGDATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 --pwfile=/tmp/pw
                rm /tmp/pw
                echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
                # The first start listens on a socket of its own: readiness (pg_isready on /tmp) waits for the real server.
                mkdir -p /tmp/init
                pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=/tmp/init" -w start
                psql -h /tmp/init -U postgres -v ON_ERROR_STOP=1 -c "CREATE ROLE pulp LOGIN PASSWORD '$PASSWORD'" -c "CREATE DATABASE pulp OWNER pulp"
                pg_ctl -D "$PGDATA" -m fast -w stop
              fi
              exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp
          ports: [{containerPort: 5432}]
          readinessProbe: {exec: {command: [pg_isready, -h, /tmp, -U, postgres]}, periodSeconds: 2}
          volumeMounts: [{name: data, mountPath: /var/lib/postgresql/data}]
      volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
---
apiVersion: v1
kind: Service
metadata: {name: postgres, namespace: ${DATABASE_NAMESPACE}}
spec: {selector: {app: postgres}, ports: [{port: 5432}]}
`;

/** psql in the server's pod, as the superuser on its socket, in `database`; `stdin` passes ours on. */
const psqlIn = (database: string, stdin = false) => [
  "-n",
  DATABASE_NAMESPACE,
  "exec",
  "deployment/postgres",
  ...(stdin ? ["-i"] : []),
  "--",
  "psql",
  "-h",
  "/tmp",
  "-U",
  "postgres",
  "-d",
  database,
  "-v",
  "ON_ERROR_STOP=1",
];

/** Runs SQL as the superuser in `database` (default: the server's own) and returns what it printed. */
export const psql = (sql: string, database = "postgres") =>
  kubectl([...psqlIn(database), "-tAc", sql]).trim();

/**
 * Holds an ACCESS EXCLUSIVE lock on `table` in `database` from a session of its own (a long transaction,
 * as a stuck report or backup would) until release() is called.
 */
export async function holdLock(database: string, table: string): Promise<{ release: () => void }> {
  const session = await kubectlUntil(
    psqlIn(database, true),
    /locked/,
    `BEGIN;\nLOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE;\nSELECT 'locked';\n`,
  );
  return {
    release: () => {
      session.stdin!.end("ROLLBACK;\n");
      session.kill();
    },
  };
}

/**
 * Starts the server if it is missing, waits until it accepts connections, and creates `name` (owned by
 * the role pulp) if it is not there: each stack gets a database of its own.
 */
export function ensureDatabase(image: string, name = "pulp"): void {
  kubectl(["apply", "--server-side", "--field-manager=pulp-testbed", "-f", "-"], manifest(image));
  kubectl(["-n", DATABASE_NAMESPACE, "rollout", "status", "deployment/postgres", "--timeout=180s"]);
  const ready = getJson(["deployment", "postgres", "-n", DATABASE_NAMESPACE]).status.readyReplicas;
  if (ready !== 1) throw new Error(`the test bed's PostgreSQL in ${DATABASE_NAMESPACE} is not ready`);
  if (psql(`SELECT 1 FROM pg_database WHERE datname = '${name}'`) !== "1") {
    psql(`CREATE DATABASE "${name}" OWNER pulp`);
  }
}

/** Starts the server if it is missing and gives a suite `name` empty: an earlier run's data dropped. */
export function emptyDatabase(image: string, name: string): void {
  ensureDatabase(image, name);
  dropDatabase(name);
  ensureDatabase(image, name);
}

/** Drops a stack's database, so the next run of a test starts from an empty one. */
export function dropDatabase(name: string): void {
  psql(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}
