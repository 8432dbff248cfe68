"""An OTLP/HTTP metrics receiver for the test bed: what an OpenTelemetry Collector's otlp receiver takes
(POST /v1/metrics, protobuf or JSON, gzip or not), decoded and appended as one JSON line per data point:
{"service": ..., "metric": ..., "attributes": {...}, "value": ...}. Answers each export with an empty
ExportMetricsServiceResponse, as the collector does.

    receiver.py HOST PORT OUT_FILE
"""

import gzip
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.json_format import Parse
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)


def value_of(kv):
    v = kv.value
    return getattr(v, v.WhichOneof("value")) if v.WhichOneof("value") else None


def points(metric):
    kind = metric.WhichOneof("data")
    data = getattr(metric, kind)
    for p in data.data_points:
        if kind == "histogram":
            value = {"count": p.count, "sum": p.sum}
        else:
            value = p.as_int if p.WhichOneof("value") == "as_int" else p.as_double
        yield kind, {a.key: value_of(a) for a in p.attributes}, value


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        request = ExportMetricsServiceRequest()
        json_body = self.headers.get("Content-Type", "").startswith("application/json")
        if json_body:
            Parse(body, request)
        else:
            request.ParseFromString(body)
        with open(self.server.out, "a") as out:
            for rm in request.resource_metrics:
                service = {a.key: value_of(a) for a in rm.resource.attributes}.get("service.name")
                for sm in rm.scope_metrics:
                    for metric in sm.metrics:
                        for kind, attributes, value in points(metric):
                            line = {
                                "service": service,
                                "metric": metric.name,
                                "kind": kind,
                                "attributes": attributes,
                                "value": value,
                            }
                            out.write(json.dumps(line) + "\n")
        answer = ExportMetricsServiceResponse()
        payload = b"{}" if json_body else answer.SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/json" if json_body else "application/x-protobuf")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format, *args):
        sys.stderr.write("%s %s\n" % (self.address_string(), format % args))


if __name__ == "__main__":
    host, port, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    server = ThreadingHTTPServer((host, port), Handler)
    server.out = out
    server.serve_forever()
