// A stack of one real pulpcore release on the real node, for the upgrade tests and the benches: a
// database of its own on the test bed's PostgreSQL (or a CloudNativePG cluster of its own), the dev
// stack's settings with the release's images (stack.ts releaseConfig), and the content the load needs.
import * as path from "path";
import { readUpgradePlan } from "../../components/contract";
import { dropStack, freshStack, getJson, mustPulumi, setSecrets } from "../harness";
import { REPO } from "../local/environment";
import { get, podReport, pulpCli } from "./clients";
import { ensureCnpgOperator } from "./cnpg";
import { DATABASE_PASSWORD, dropDatabase, ensureDatabase } from "./database";
import type { LoadTarget } from "./load";
import { prepareLoadTarget } from "./loadTarget";
import { importImages, localImages, releaseConfig, requireLocalImage, SMALL_PODS } from "./stack";

export interface ReleaseStack {
  /**
   * Its database is the program's CloudNativePG cluster of that many instances, not the test bed's; with
   * `pooler`, behind the program's Pooler (database.cloudnativepg.pooler) on the test bed's PgBouncer image.
   */
  cloudnativepg?: { instances: number; pooler?: { instances: number } };
  stack: string;
  namespace: string;
  database: string;
  password: string;
}

/**
 * Installs `release` on a fresh stack and database and waits until pulp-web serves; returns the load target
 * and the install's seconds. `config` replaces top-level keys of releaseConfig's (two workers, say). With
 * `signing`, the install also registers that signing service with that key (pulp:signing, pulp:signingKey),
 * as a user would set them before the first `up`.
 */
export async function installRelease(
  s: ReleaseStack,
  release: string,
  options: { signing?: { key: string; service: string }; config?: Record<string, unknown> } = {},
): Promise<{ target: LoadTarget; seconds: number }> {
  const { signing } = options;
  const { cloudnativepg } = s;
  importImages();
  const { postgresql, pgbouncer } = localImages();
  if (cloudnativepg) {
    ensureCnpgOperator();
  } else {
    ensureDatabase(postgresql, s.database);
    dropDatabase(s.database);
    ensureDatabase(postgresql, s.database);
  }
  const pooler = cloudnativepg?.pooler && {
    pooler: {
      ...cloudnativepg.pooler,
      imageName: pgbouncer,
      resources: { requests: { cpu: "20m", memory: "32Mi" }, limits: { memory: "128Mi" } },
    },
  };
  const database = cloudnativepg && {
    database: {
      cloudnativepg: {
        ...cloudnativepg,
        storageSize: "1Gi",
        imageName: postgresql,
        resources: SMALL_PODS,
        ...pooler,
      },
    },
  };
  freshStack(
    s.stack,
    { ...releaseConfig(s.namespace, s.database, release), ...database, ...options.config },
    path.join(REPO, "Pulumi.dev.yaml"),
  );
  setSecrets(s.stack, {
    "pulp:adminPassword": s.password,
    ...(cloudnativepg ? {} : { "pulp:databasePassword": DATABASE_PASSWORD }),
  });
  if (signing) {
    mustPulumi(s.stack, ["config", "set", "--secret", "pulp:signingKey"], undefined, signing.key);
    mustPulumi(s.stack, ["config", "set", "--path", "pulp:signing.services[0].name", signing.service]);
    mustPulumi(s.stack, ["config", "set", "--path", "pulp:signing.services[0].kind", "detached"]);
  }
  const { seconds } = mustPulumi(s.stack, ["up", "--yes", "--skip-preview"]);
  const base = `http://${getJson(["service", "pulp-web", "-n", s.namespace]).spec.clusterIP}:8080`;
  // The install is set-up here, not what is measured: wait until pulp-web serves the API. A gap after an
  // install's `up` returns (seen once in CI: 502 from pulp-web at the first call) is issue 27's to close;
  // its length is printed so that it is measured each time rather than hidden.
  const returned = Date.now();
  let answer = "";
  while (Date.now() - returned < 120_000) {
    answer = await get(`${base}/pulp/api/v3/status/`).then(
      (r) => String(r.status),
      (e: Error) => e.message,
    );
    if (answer === "200") break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  process.stdout.write(
    `${s.stack}: pulp-web answered status/ ${((Date.now() - returned) / 1000).toFixed(1)} s after up returned (last answer ${answer})\n`,
  );
  if (answer !== "200")
    throw new Error(`pulp-web never answered status/ after the install:\n${podReport(s.namespace)}`);
  return { target: await prepareLoadTarget(base, s.password, s.namespace), seconds };
}

/** Points the stack at another release's images, as a user would (the stack file keeps its secrets). */
export function configureRelease(s: ReleaseStack, release: string): void {
  mustPulumi(s.stack, [
    "config",
    "set",
    "pulp:image",
    requireLocalImage(`localhost/pulp-minimal:${release}`),
  ]);
  mustPulumi(s.stack, [
    "config",
    "set",
    "--path",
    "pulp:web.image",
    requireLocalImage(`localhost/pulp-web:${release}`),
  ]);
}

/** Forgets the stack and drops its namespace and database. */
export function dropRelease(s: ReleaseStack): void {
  dropStack(s.stack, s.namespace);
  // A CloudNativePG cluster goes with the namespace.
  if (!s.cloudnativepg) dropDatabase(s.database);
}

/** The pulpcore version the install reports in `pulp status`. */
export function coreVersion(target: LoadTarget): string {
  const status = pulpCli(target, ["status"]);
  return status.versions.find((v: { component: string }) => v.component === "core").version;
}

/** The upgrade plans a `pulumi preview` of the stack announces (components/contract.ts). */
export function previewPlans(s: ReleaseStack): ReturnType<typeof readUpgradePlan>[] {
  const preview = mustPulumi(s.stack, ["preview", "--json"]);
  return (JSON.parse(preview.stdout).diagnostics as { message: string }[])
    .map((d) => readUpgradePlan(d.message))
    .filter((p) => p !== undefined);
}
