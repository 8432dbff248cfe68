import { loadConfig } from "../../../components/config/load";
import { SecretName } from "../../../components/config/rules";
import { Pulp } from "../../../components/pulp";
import { Deployed, FIRST_INSTALL } from "../../../components/upgrade/deployed";
import { MockRun, Registered, runWithMocks } from "./pulumiMocks";

// A render is pure in its config, and about a second each: a test file renders the same config once.
const rendered = new Map<string, Promise<MockRun>>();

/**
 * Renders a whole install under mocks from raw `pulp:` config (keys without the prefix), as an update of a
 * stack that last deployed `deployed`. The same arguments give the same (shared, read-only) run within a
 * test file.
 */
export function render(
  raw: Record<string, unknown>,
  secrets: Partial<Record<SecretName, string>> = {},
  preview = false,
  deployed: Deployed = FIRST_INSTALL,
): Promise<MockRun> {
  const key = JSON.stringify([raw, secrets, preview, deployed]);
  if (!rendered.has(key)) rendered.set(key, renderOnce(raw, secrets, preview, deployed));
  return rendered.get(key)!;
}

async function renderOnce(
  raw: Record<string, unknown>,
  secrets: Partial<Record<SecretName, string>>,
  preview: boolean,
  deployed: Deployed,
): Promise<MockRun> {
  const config: Record<string, unknown> = {};
  for (const [k, v] of Object.entries({ ...raw, ...secrets })) config[`pulp:${k}`] = v;
  const secretKeys = Object.keys(secrets).map((k) => `pulp:${k}`);
  // A backup's URL is secret config (`pulumi config set --secret --path 'pulp:restore.http.url'`), which
  // makes the whole top-level key secret to the program.
  if ((raw.restore as { http?: unknown } | undefined)?.http) secretKeys.push("pulp:restore");
  return runWithMocks({ config, secretKeys, preview }, () => {
    const loaded = loadConfig();
    new Pulp(loaded.config.instanceName, { ...loaded, deployed, cluster: {} });
  });
}

export const DEPLOYMENT = "kubernetes:apps/v1:Deployment";
export const JOB = "kubernetes:batch/v1:Job";
export const CRONJOB = "kubernetes:batch/v1:CronJob";
export const SECRET = "kubernetes:core/v1:Secret";
export const PVC = "kubernetes:core/v1:PersistentVolumeClaim";
export const CNPG = "kubernetes:postgresql.cnpg.io/v1:Cluster";
export const DATA_VOLUME = "kubernetes:cdi.kubevirt.io/v1beta1:DataVolume";

/** The pod template of each Deployment, by metadata.name. */
export function podTemplates(run: MockRun): Record<string, unknown> {
  return Object.fromEntries(
    run.ofType(DEPLOYMENT).map((d) => [d.inputs.metadata.name, d.inputs.spec.template]),
  );
}

/** What runs Pulp's own processes: the api, content and worker Deployments and the migration Job. */
export function pulpProcesses(run: MockRun): Registered[] {
  return [
    ...run.ofType(DEPLOYMENT).filter((d) => /^pulp-(api|content|worker)$/.test(d.inputs.metadata.name)),
    ...run.ofType(JOB).filter((j) => j.inputs.metadata.name.startsWith("pulp-migrate-")),
  ];
}

/** Every pod spec the install creates: Deployments, Jobs and CronJobs. */
export function podSpecs(run: MockRun): [string, Record<string, unknown>][] {
  const named = (r: Registered, template: { spec: Record<string, unknown> }) =>
    [`${r.type.split(":").pop()} ${r.inputs.metadata.name}`, template.spec] as [
      string,
      Record<string, unknown>,
    ];
  return [
    ...[...run.ofType(DEPLOYMENT), ...run.ofType(JOB)].map((r) => named(r, r.inputs.spec.template)),
    ...run.ofType(CRONJOB).map((r) => named(r, r.inputs.spec.jobTemplate.spec.template)),
  ];
}
