"""An OTLP/HTTP receiver for the telemetry tests: it decodes what a server exports with the
official OpenTelemetry protobuf definitions (`opentelemetry-proto`), and keeps every request.

    with OtlpReceiver() as receiver:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, ...}
        ...
        receiver.spans()    # every span exported, flattened with its resource's attributes
        receiver.metrics()  # the last export of each metric

Only `POST /v1/traces` and `POST /v1/metrics` with `Content-Type: application/x-protobuf` are
accepted (415 otherwise, 404 for another path); each is answered 200 with the serialized empty
`Export…ServiceResponse`, as a collector does.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

PROTOBUF = "application/x-protobuf"
KINDS = {
    "/v1/traces": (trace_service_pb2.ExportTraceServiceRequest, trace_service_pb2.ExportTraceServiceResponse),
    "/v1/metrics": (metrics_service_pb2.ExportMetricsServiceRequest, metrics_service_pb2.ExportMetricsServiceResponse),
}


def value_of(any_value):
    """The Python value of an OTLP `AnyValue`."""
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value_of(v) for v in any_value.array_value.values]
    return getattr(any_value, kind)


def attributes(key_values) -> dict:
    return {kv.key: value_of(kv.value) for kv in key_values}


class OtlpReceiver:
    def __init__(self) -> None:
        self.requests: list[tuple[str, object]] = []  # (path, decoded request)
        self.refused: list[tuple[str, int]] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                kinds = KINDS.get(self.path)
                if kinds is None:
                    return self._answer(404, b"")
                if self.headers.get("Content-Type", "").split(";")[0].strip() != PROTOBUF:
                    return self._answer(415, b"")
                request_type, response_type = kinds
                decoded = request_type.FromString(body)
                with receiver._lock:
                    receiver.requests.append((self.path, decoded))
                self._answer(200, response_type().SerializeToString())

            def _answer(self, status: int, body: bytes) -> None:
                if status != 200:
                    with receiver._lock:
                        receiver.refused.append((self.path, status))
                self.send_response(status)
                self.send_header("Content-Type", PROTOBUF)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> "OtlpReceiver":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _of(self, path: str) -> list:
        with self._lock:
            return [request for p, request in self.requests if p == path]

    def spans(self) -> list[dict]:
        """Every exported span: name, kind, ids (hex), parent, status, attributes, links, resource."""
        out = []
        for request in self._of("/v1/traces"):
            for resource_spans in request.resource_spans:
                resource = attributes(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        out.append({
                            "name": span.name,
                            "kind": span.kind,
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent_span_id": span.parent_span_id.hex(),
                            "status_code": span.status.code,
                            "status_message": span.status.message,
                            "attributes": attributes(span.attributes),
                            "links": [(link.trace_id.hex(), link.span_id.hex()) for link in span.links],
                            "resource": resource,
                            "scope": scope_spans.scope.name,
                        })
        return out

    def metrics(self) -> dict:
        """The last export of each metric by name: the protobuf `Metric` and its resource."""
        out = {}
        for request in self._of("/v1/metrics"):
            for resource_metrics in request.resource_metrics:
                resource = attributes(resource_metrics.resource.attributes)
                for scope_metrics in resource_metrics.scope_metrics:
                    for metric in scope_metrics.metrics:
                        out[metric.name] = (metric, resource)
        return out
