// Unit (pure functions, no mocks): what real Pulp needs from the rendered settings, nginx.conf, probes,
// env and migration script, one case per finding of the project's runtime review (each case names what it checks).
// Real Pulp on the real node checks the same behaviour end to end (test/e2e/real/).
import { parseConfig } from "../../../components/config/parse";
import { MIGRATE_SCRIPT } from "../../../components/migration/migrationJob";
import { renderSettings, settingsValues, SettingsInput } from "../../../components/settings/render";
import { renderNginxConf } from "../../../components/web/nginx";
import { pulpEnv, pulpProbes } from "../../../components/workload/pulpProcess";
import { NGINX_INPUT } from "../helpers/nginxInput";
import { NO_PROBE_TUNING, pulpRuntime } from "../helpers/runtime";

const settings: SettingsInput = {
  contentOrigin: "https://pulp.example.com",
  apiRoot: "/pulp/",
  contentPathPrefix: "/pulp/content/",
  allowedContentChecksums: ["sha256"],
  database: { host: "db", port: 5432, name: "pulp", user: "pulp", sslmode: "prefer" },
  cacheEnabled: false,
  workerType: "pulpcore",
  extra: {},
};

const runtime = (pulpcoreVersion: string) => pulpRuntime({ pulpcoreVersion });
const noTuning = NO_PROBE_TUNING;

const nginx = (listenIPv6: boolean) => renderNginxConf({ ...NGINX_INPUT, listenIPv6 });

const problemsOf = (raw: Record<string, unknown>) => {
  try {
    parseConfig({ contentOrigin: "https://pulp.example.com", database: { cloudnativepg: {} }, ...raw });
    return "";
  } catch (e) {
    return String(e);
  }
};

test("#1 an admin password that starts with '-' is passed as a value, never as an argument to parse", () => {
  expect(MIGRATE_SCRIPT).toContain('call_command("reset-admin-password", password=password)');
  expect(MIGRATE_SCRIPT).not.toMatch(/--password "/);
});

test("#3 nginx listens on IPv6 only when asked", () => {
  expect(nginx(true)).toContain("listen [::]:8080 default_server;");
  expect(nginx(false)).not.toContain("[::]");
  expect(nginx(false)).toContain("listen 8080 default_server;");
});

test("#4 token auth off is said explicitly (pulp_container defaults to token auth)", () => {
  expect(settingsValues(settings).TOKEN_AUTH_DISABLED).toBe(true);
  const on = settingsValues({ ...settings, tokenAuth: { server: "https://pulp.example.com/token/" } });
  expect(on.TOKEN_AUTH_DISABLED).toBe(false);
  expect(on.TOKEN_SERVER).toBe("https://pulp.example.com/token/");
});

test("#5 registry blob and manifest redirects go to pulp-content; pushes have no body limit", () => {
  expect(nginx(true)).toMatch(/location \/pulp\/container\/ \{\s+proxy_pass http:\/\/pulp-content;/);
  expect(nginx(true)).toMatch(/location \/v2\/ \{\s+client_max_body_size 0;\s+proxy_pass http:\/\/pulp-api;/);
});

test("#6 #17 plugin URLs use the content origin, not the api pod's own name", () => {
  const values = settingsValues(settings);
  expect(values.ANSIBLE_API_HOSTNAME).toBe("https://pulp.example.com");
  expect(values.PYPI_API_HOSTNAME).toBe("https://pulp.example.com");
  expect(
    settingsValues({ ...settings, extra: { ANSIBLE_API_HOSTNAME: "https://galaxy.example.com" } }),
  ).toMatchObject({ ANSIBLE_API_HOSTNAME: "https://galaxy.example.com" });
});

test("#7 STATIC_ROOT is where the images collect static files", () => {
  expect(renderSettings(settings)).toContain('STATIC_ROOT = "/var/lib/operator/static/"');
});

test("#8 api liveness reads no database: livez from 3.112.0, a TCP check before", () => {
  expect(pulpProbes("api", runtime("3.111.2"), noTuning).livenessProbe).toMatchObject({
    tcpSocket: { port: 24817 },
  });
  expect(pulpProbes("api", runtime("3.112.0"), noTuning).livenessProbe).toMatchObject({
    httpGet: { path: "/pulp/api/v3/livez/", port: 24817 },
  });
  expect(pulpProbes("api", runtime(""), noTuning).livenessProbe).toHaveProperty("tcpSocket");
});

test("#9 with object storage MEDIA_ROOT is empty", () => {
  const s3 = settingsValues({ ...settings, s3: { bucket: "pulp", accessKeyId: "AKIA" } });
  expect(s3.MEDIA_ROOT).toBe("");
  expect(settingsValues(settings).MEDIA_ROOT).toBe("/var/lib/pulp/media");
});

test("#10 settings that need a newer pulpcore are refused for older images", () => {
  const old = problemsOf({
    image: "quay.io/pulp/pulp-minimal:3.107.1",
    workerType: "redis",
    redis: { enabled: true },
  });
  expect(old).toMatch(/workerType.*needs pulpcore >= 3\.108\.0, and the image runs 3\.107\.1/s);
  expect(old).toContain("pulumi config set pulp:workerType pulpcore");
  expect(
    problemsOf({ image: "quay.io/pulp/pulp-minimal:3.108.0", workerType: "redis", redis: { enabled: true } }),
  ).toBe("");
  expect(
    problemsOf({
      image: "quay.io/pulp/pulp-minimal:3.69.2",
      storage: { s3: { bucket: "pulp", accessKeyId: "A" } },
    }),
  ).toMatch(/storage\.s3.*needs pulpcore >= 3\.70\.0/s);
});

test("#11 content startup asks the content app over HTTP (its listing, HEAD), not readyz.py", () => {
  const command = (
    pulpProbes("content", runtime("3.123.1"), noTuning).startupProbe as { exec: { command: string[] } }
  ).exec.command;
  expect(command.slice(-3)).toEqual(["24816", "/pulp/content/", "/pulp/content/default/"]);
  expect(command.join(" ")).toContain('c.request("HEAD", path)');
  expect(command.join(" ")).not.toContain("readyz");
});

test("#12 the Job brings artifact checksums in line before the checks run", () => {
  const lines = MIGRATE_SCRIPT.split("\n");
  const at = (text: string) => lines.findIndex((l) => l.includes(text));
  expect(at('call_command("migrate", interactive=False, skip_checks=True)')).toBeGreaterThan(-1);
  expect(at('call_command("handle-artifact-checksums"')).toBeGreaterThan(at('call_command("migrate"'));
  expect(at('call_command("check", databases=["default"])')).toBeGreaterThan(
    at('call_command("handle-artifact-checksums"'),
  );
});

test("#13 content pods get the preStop and gunicorn's graceful 30 s", () => {
  expect(problemsOf({})).toBe("");
  const config = parseConfig({ contentOrigin: "https://pulp.example.com", database: { cloudnativepg: {} } });
  expect(config.content.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(10 + 30);
});

test("#14 secrets reach dynaconf as strings (@str), read from a variable dynaconf ignores", () => {
  const env = pulpEnv(runtime("3.123.1"));
  expect(env).toContainEqual({ name: "PULP_SECRET_KEY", value: "@str $(SECRET_SECRET_KEY)" });
  expect(env).toContainEqual({
    name: "SECRET_SECRET_KEY",
    valueFrom: { secretKeyRef: { name: "keys", key: "secret-key" } },
  });
  // Kubernetes expands $(VAR) only from variables defined earlier in the list.
  const names = env.map((e) => e.name);
  for (const e of env.filter((v) => typeof v.value === "string")) {
    const ref = /\$\((\w+)\)/.exec(String(e.value))![1];
    expect(names.indexOf(ref)).toBeLessThan(names.indexOf(e.name));
  }
  expect(names.filter((n) => !String(n).startsWith("PULP_"))).toEqual(
    names.filter((n) => String(n).startsWith("SECRET_")),
  );
});

test("Redis accepts the Pulp pods: protected mode is off (the entrypoint that turns it off is replaced)", async () => {
  const { render } = await import("../helpers/render");
  const { MINIMAL } = await import("../helpers/configs");
  const run = await render({ ...MINIMAL, redis: { enabled: true }, cacheEnabled: true });
  const [redis] = run
    .ofType("kubernetes:apps/v1:Deployment")
    .filter((d) => d.inputs.metadata.name === "pulp-redis");
  expect(redis.inputs.spec.template.spec.containers[0].command.join(" ")).toContain("--protected-mode no");
});
