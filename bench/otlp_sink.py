#!/usr/bin/env python3
"""The bench's OTLP/HTTP sink: answers every export `200` with an empty body at once, and counts
what it received (requests and bytes per path, and the spans, decoded with the official
`opentelemetry-proto` definitions off the answering path). Run it on the suite's venv Python.

otlp_sink.py --port-file FILE --counts FILE
Writes the port it listens on (127.0.0.1, a free one) to --port-file once it listens, and the
counts as JSON to --counts on SIGTERM or SIGINT, then exits."""
import argparse
import json
import queue
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--counts", required=True)
    a = ap.parse_args()
    counts = {"requests": {}, "bytes": {}, "spans": 0}
    lock = threading.Lock()
    traces: queue.Queue = queue.Queue()

    def decode():
        while True:
            body = traces.get()
            if body is None:
                return
            request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
            n = sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans)
            with lock:
                counts["spans"] += n

    class Sink(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                counts["requests"][self.path] = counts["requests"].get(self.path, 0) + 1
                counts["bytes"][self.path] = counts["bytes"].get(self.path, 0) + len(body)
            if self.path == "/v1/traces":
                traces.put(body)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    decoder = threading.Thread(target=decode, daemon=True)
    decoder.start()

    def stop(*_):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    with open(a.port_file, "w") as f:
        f.write(f"{server.server_address[1]}\n")
    server.serve_forever()
    traces.put(None)
    decoder.join(30)
    with lock, open(a.counts, "w") as f:
        json.dump(counts, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
