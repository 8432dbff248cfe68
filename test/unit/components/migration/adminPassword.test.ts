// Unit (the whole install under Pulumi mocks): a changed pulp:adminPassword reaches Pulp. The reset runs in a
// Job of its own whose replacement trigger (what the engine compares with the one it recorded) is an HMAC
// of the value keyed by SECRET_KEY (not a secret output: the CLI 3.248 panics serializing one in `preview
// --json`); the migration Job's name, and so every Deployment, stays as it was. That the
// engine replaces on a changed trigger is Pulumi's (pkg/resource/deploy/step_generator.go
// shouldTriggerReplace@v3.248.0, read, not run); a real `up` with a new password is for the e2e proofs.
import * as pulumi from "@pulumi/pulumi";
import { loadConfig } from "../../../../components/config/load";
import { Pulp } from "../../../../components/pulp";
import { FIRST_INSTALL } from "../../../../components/upgrade/deployed";
import { MINIMAL } from "../../helpers/configs";
import { runWithMocks } from "../../helpers/pulumiMocks";

const SECRET_KEY = "an-install-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz";

interface Seen {
  migrationJob: string;
  trigger: unknown;
  deleteBeforeReplace: boolean;
  command: string;
  dependsOnMigration: boolean;
}

async function install(adminPassword?: string): Promise<Seen> {
  const config: Record<string, unknown> = {};
  const given = { ...MINIMAL, secretKey: SECRET_KEY, ...(adminPassword ? { adminPassword } : {}) };
  for (const [k, v] of Object.entries(given)) {
    config[`pulp:${k}`] = v;
  }
  const seen: Partial<Seen> = {};
  let migrationUrn = "";
  const secretKeys = ["pulp:secretKey", ...(adminPassword ? ["pulp:adminPassword"] : [])];
  const run = await runWithMocks({ config, secretKeys }, () => {
    const monitor = pulumi.runtime.getMonitor() as any;
    const register = monitor.registerResource.bind(monitor);
    monitor.registerResource = (req: any, callback: unknown) => {
      if (req.getName() === "pulp-migrate-reset-admin-password") {
        seen.trigger = req.getReplacementTrigger()?.toJavaScript();
        seen.deleteBeforeReplace = req.getDeletebeforereplace();
        seen.dependsOnMigration = (req.getDependenciesList() as string[]).includes(migrationUrn);
      }
      return register(req, (err: unknown, res: { getUrn(): string } | undefined) => {
        if (req.getName() === "pulp-migrate" && res) migrationUrn = res.getUrn();
        (callback as (e: unknown, r: unknown) => void)(err, res);
      });
    };
    const loaded = loadConfig();
    new Pulp(loaded.config.instanceName, { ...loaded, deployed: FIRST_INSTALL, cluster: {} });
  });
  const migrate = run.get("kubernetes:batch/v1:Job", "pulp-migrate");
  const reset = run.get("kubernetes:batch/v1:Job", "pulp-migrate-reset-admin-password");
  seen.migrationJob = migrate.inputs.metadata.name;
  seen.command = reset.inputs.spec.template.spec.containers[0].command.join(" ");
  expect(reset.inputs.metadata.name).toBe("pulp-reset-admin-password");
  return seen as Seen;
}

/** A plain string (a secret trigger made `preview --json` panic), never the password itself. */
const secretValue = (trigger: unknown) => {
  expect(typeof trigger).toBe("string");
  return trigger as string;
};

test("a new pulp:adminPassword replaces the reset Job, the migration Job stays", async () => {
  const a = await install("first-Passw0rd");
  const b = await install("second-Passw0rd");
  const again = await install("first-Passw0rd");
  expect(secretValue(a.trigger)).not.toBe(secretValue(b.trigger));
  expect(secretValue(again.trigger)).toBe(secretValue(a.trigger));
  expect(secretValue(a.trigger)).not.toContain("first-Passw0rd");
  expect(b.migrationJob).toBe(a.migrationJob);
});

test("the reset Job runs reset-admin-password after the migration, deleted before it is replaced", async () => {
  const seen = await install("first-Passw0rd");
  expect(seen.command).toContain('reset-admin-password --password="$ADMIN_PASSWORD"');
  expect(seen.command).not.toContain("migrate");
  expect(seen.deleteBeforeReplace).toBe(true);
  expect(seen.dependsOnMigration).toBe(true);
});

test("the generated password (never changes) gives a fixed trigger", async () => {
  const seen = await install();
  expect(secretValue(seen.trigger)).toBe("generated");
});
