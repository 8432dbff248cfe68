// What every Pulp container reads (PulpRuntime), for the tests of probes, env and the like: a plain
// install of one release, any field overridden.
import { PulpRuntime } from "../../../components/workload/pulpProcess";

export function pulpRuntime(overrides: Partial<PulpRuntime> = {}): PulpRuntime {
  return {
    image: `quay.io/pulp/pulp-minimal:${overrides.pulpcoreVersion ?? "3.123.1"}`,
    settingsSecretName: "settings",
    secretKey: { name: "keys", key: "secret-key" },
    dbFieldsKey: { name: "fernet", key: "database_fields.symmetric.key" },
    databasePassword: { name: "db-app", key: "password" },
    dataVolume: { name: "data", emptyDir: {} },
    apiRoot: "/pulp/",
    contentPathPrefix: "/pulp/content/",
    pulpcoreVersion: "3.123.1",
    workerType: "pulpcore",
    ...overrides,
  };
}

/** Probe tunings that change nothing. */
export const NO_PROBE_TUNING = { startup: {}, readiness: {}, liveness: {} };
