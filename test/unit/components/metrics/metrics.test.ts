// Unit (plain parseConfig and renderSettings calls; rendering under Pulumi mocks): pulp:metrics. settings.py
// turns pulpcore's OpenTelemetry metrics on, and the api, content and worker pods get the exporter's
// endpoint; an install without the key keeps its settings and pods. On real Pulp, exported to a receiver on
// the host: test/e2e/real/autoscaling.test.ts.
import * as fs from "fs";
import * as path from "path";
import * as yaml from "js-yaml";
import { renderSettings } from "../../../../components/settings/render";
import { configProblems, MINIMAL, REPO } from "../../helpers/configs";
import { DEPLOYMENT, JOB, render } from "../../helpers/render";
import { SETTINGS_INPUT } from "../../helpers/settingsInput";

const METRICS = { otlpEndpoint: "http://otel-collector.monitoring.svc:4318", exportIntervalSeconds: 30 };

const envOf = (container: { env?: { name: string; value?: string }[] }) =>
  Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]));

test("an endpoint that is not an http(s) URL, and OTEL_ENABLED in extraSettings beside pulp:metrics, are refused", () => {
  expect(configProblems({ metrics: { otlpEndpoint: "otel-collector:4317" } })).toEqual([
    expect.objectContaining({ key: "pulp:metrics.otlpEndpoint", given: "otel-collector:4317" }),
  ]);
  expect(configProblems({ metrics: METRICS, extraSettings: { OTEL_ENABLED: false } })).toEqual([
    expect.objectContaining({
      key: "pulp:extraSettings.OTEL_ENABLED",
      message: expect.stringContaining("is set by pulp:metrics"),
      fix: "pulumi config rm --path 'pulp:extraSettings.OTEL_ENABLED'",
    }),
  ]);
  // Without pulp:metrics it stays the user's own setting, as before.
  expect(configProblems({ extraSettings: { OTEL_ENABLED: true } })).toEqual([]);
  expect(configProblems({ metrics: METRICS })).toEqual([]);
});

test("settings.py: OTEL_ENABLED only with pulp:metrics", () => {
  expect(renderSettings({ ...SETTINGS_INPUT, metrics: true })).toContain("\nOTEL_ENABLED = True\n");
  expect(renderSettings(SETTINGS_INPUT)).not.toContain("OTEL_ENABLED");
});

test("rendered: api, content and worker get the exporter's endpoint, protocol and interval; nothing else does", async () => {
  const run = await render({ ...MINIMAL, metrics: METRICS, web: { enabled: true } });
  for (const name of ["pulp-api", "pulp-content", "pulp-worker"]) {
    const env = envOf(run.k8s("Deployment", name).inputs.spec.template.spec.containers[0]);
    expect([
      name,
      env.OTEL_EXPORTER_OTLP_ENDPOINT,
      env.OTEL_EXPORTER_OTLP_PROTOCOL,
      env.OTEL_METRIC_EXPORT_INTERVAL,
    ]).toEqual([name, METRICS.otlpEndpoint, "http/protobuf", "30000"]);
  }
  const others = [
    ...run.ofType(DEPLOYMENT).filter((d) => /^pulp-(web|redis)$/.test(d.inputs.metadata.name)),
    ...run.ofType(JOB),
  ];
  expect(others.length).toBeGreaterThan(1);
  for (const r of others) {
    for (const c of r.inputs.spec.template.spec.containers)
      expect(envOf(c).OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
  }
  const plain = await render({ ...MINIMAL, web: { enabled: true } });
  for (const name of ["pulp-api", "pulp-content", "pulp-worker"]) {
    expect(
      Object.keys(envOf(plain.k8s("Deployment", name).inputs.spec.template.spec.containers[0])),
    ).not.toContain("OTEL_EXPORTER_OTLP_ENDPOINT");
  }
});

test("the production example's commented pulp:metrics line is valid config when uncommented", () => {
  const text = fs.readFileSync(path.join(REPO, "examples/production/Pulumi.production.yaml"), "utf8");
  const line = text.split("\n").find((l) => /^ {2}# pulp:metrics: /.test(l))!;
  const metrics = (yaml.load(line.replace(/^ {2}# /, "")) as Record<string, Record<string, unknown>>)[
    "pulp:metrics"
  ];
  expect(metrics.otlpEndpoint).toBe("http://otel-collector.monitoring.svc:4318");
  expect(configProblems({ metrics })).toEqual([]);
});
