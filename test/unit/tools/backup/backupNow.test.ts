// Unit, with a stand-in kubectl (a shell script answering from files): what `npm run backup -- now` does
// and says. The real command against real Pulp is in test/e2e/real/backup.test.ts.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parseArgs } from "../../../../tools/backup/args";
import { backupNow } from "../../../../tools/backup/now";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "backup-now-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * A kubectl that logs its arguments and answers `get cronjob` (or NotFound), `create job`, `get job`
 * (running once, then `jobStatus`) and `get pods` (one pod whose container ended with `message`).
 */
function standIn(options: { cronJob: boolean; jobStatus: object; message: string }): string {
  const pod = {
    items: [
      {
        status: {
          containerStatuses: [{ name: "backup", state: { terminated: { message: options.message } } }],
        },
      },
    ],
  };
  fs.writeFileSync(path.join(dir, "pods.json"), JSON.stringify(pod));
  fs.writeFileSync(path.join(dir, "job.json"), JSON.stringify({ status: options.jobStatus }));
  fs.rmSync(path.join(dir, "polled"), { force: true });
  fs.rmSync(path.join(dir, "calls"), { force: true });
  const script = path.join(dir, "kubectl");
  fs.writeFileSync(
    script,
    `#!/bin/bash
echo "$*" >> ${dir}/calls
case "$1 $2" in
  "get cronjob") ${options.cronJob ? `echo '{"metadata": {"name": "pulp-backup"}}'` : `echo 'Error from server (NotFound): cronjobs.batch "pulp-backup" not found' >&2; exit 1`} ;;
  "create job") echo "job.batch/$3 created" ;;
  "get job") if [[ -e ${dir}/polled ]]; then cat ${dir}/job.json; else touch ${dir}/polled; echo '{"status": {"active": 1}}'; fi ;;
  "get pods") cat ${dir}/pods.json ;;
  *) echo "unexpected: $*" >&2; exit 3 ;;
esac
`,
    { mode: 0o755 },
  );
  return script;
}

const args = parseArgs(["now", "-n", "pulp-prod", "--timeout", "30"]);
const when = new Date("2026-11-24T03:15:00.123Z");

test("arguments: a command, the namespace, the instance, a timeout, an export's id; anything else is refused with the usage", () => {
  expect(args).toEqual({ command: "now", namespace: "pulp-prod", instance: "pulp", timeoutSeconds: 30 });
  expect(() => parseArgs([])).toThrow(/unknown command ""\nusage: npm run backup -- <command>/);
  expect(() => parseArgs(["now", "--timeout", "soon"])).toThrow(/--timeout must be a number of seconds/);
  expect(() => parseArgs(["now", "-n"])).toThrow(/-n needs a value/);
  expect(parseArgs(["export", "20261124T031500Z"])).toMatchObject({
    command: "export",
    id: "20261124T031500Z",
    output: "pulp-backup-20261124T031500Z.tar",
  });
  expect(() => parseArgs(["export", "latest"])).toThrow(
    /export needs one backup id such as 20261124T031500Z/,
  );
});

test("creates a Job from the CronJob, waits for it, and returns the backup's result line", async () => {
  const kubectl = standIn({
    cronJob: true,
    jobStatus: { succeeded: 1 },
    message: '{"id": "20261124T031500Z"}',
  });
  const result = await backupNow({ kubectl }, args, when);
  expect(JSON.parse(result).id).toBe("20261124T031500Z");
  const calls = fs.readFileSync(path.join(dir, "calls"), "utf8");
  expect(calls).toContain(
    "create job pulp-backup-now-20261124t031500 -n pulp-prod --from=cronjob/pulp-backup",
  );
});

test("a failed backup Job fails the command with the reason the backup gave", async () => {
  const kubectl = standIn({
    cronJob: true,
    jobStatus: { failed: 1 },
    message: "backup 20261124T031500Z failed: cannot reach PostgreSQL at pulp-db-rw:5432 as pulp",
  });
  await expect(backupNow({ kubectl }, args, when)).rejects.toThrow(
    /backup Job pulp-backup-now-20261124t031500 failed: backup 20261124T031500Z failed: cannot reach PostgreSQL/,
  );
});

test("without a backup CronJob it says backups are off and how to turn them on, and creates nothing", async () => {
  const kubectl = standIn({ cronJob: false, jobStatus: {}, message: "" });
  await expect(backupNow({ kubectl }, args, when)).rejects.toThrow(
    "no CronJob pulp-backup in namespace pulp-prod: backups are off for this install. " +
      "Turn them on: pulumi config set --path pulp:backup.enabled true && pulumi up",
  );
  expect(fs.readFileSync(path.join(dir, "calls"), "utf8")).not.toContain("create job");
});
