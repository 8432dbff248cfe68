// pulp:metrics: pulpcore's own OpenTelemetry metrics, sent to the user's collector. settings.py turns them
// on (OTEL_ENABLED, settings/render.ts); the exporter in each process reads where to send them from the
// standard OTEL_* variables set here.
import * as k8s from "@pulumi/kubernetes";
import { MetricsConfig } from "../config/schema";

/**
 * The OTLP exporter's variables for api, content and worker. pulpcore makes an OTLPMetricExporter (OTLP/HTTP,
 * protobuf: pulpcore/metrics.py) and a PeriodicExportingMetricReader, which take these from the environment.
 */
export function metricsEnv(metrics: MetricsConfig | undefined): k8s.types.input.core.v1.EnvVar[] {
  if (!metrics) return [];
  return [
    { name: "OTEL_EXPORTER_OTLP_ENDPOINT", value: metrics.otlpEndpoint },
    { name: "OTEL_EXPORTER_OTLP_PROTOCOL", value: "http/protobuf" },
    { name: "OTEL_METRIC_EXPORT_INTERVAL", value: String(metrics.exportIntervalSeconds * 1000) },
  ];
}
