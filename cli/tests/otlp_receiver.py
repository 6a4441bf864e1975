#!/usr/bin/env python3
"""A loopback OTLP/HTTP receiver for cli/tests/otlp_live.rs.

Every request body is decoded with the official OpenTelemetry protobuf
classes (PyPI `opentelemetry-proto`): binary bodies with `FromString`,
OTLP/JSON bodies with protobuf's own JSON reader (`json_format.Parse`,
which rejects unknown fields) after turning OTLP/JSON's hex `traceId`,
`spanId` and `parentSpanId` into the base64 that protobuf's JSON mapping
expects. Each request is appended to OUT as one JSON line: its path,
content type, headers and the decoded message (`MessageToDict`, with the ids
back in hex). A request that does not decode is answered 400 and recorded
with its error.

Usage: otlp_receiver.py OUT [--mode ok|500|slow] [--tls CERT KEY]
It prints the port it listens on (127.0.0.1, chosen by the kernel), then
serves until killed.
"""

import argparse
import base64
import binascii
import gzip
import http.server
import json
import ssl
import sys
import time

from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

MESSAGES = {
    "/v1/traces": trace_service_pb2.ExportTraceServiceRequest,
    "/v1/metrics": metrics_service_pb2.ExportMetricsServiceRequest,
}
RESPONSES = {
    "/v1/traces": trace_service_pb2.ExportTraceServiceResponse,
    "/v1/metrics": metrics_service_pb2.ExportMetricsServiceResponse,
}
IDS = ("traceId", "spanId", "parentSpanId")


def ids(value, convert):
    """Applies `convert` to every id field, recursively."""
    if isinstance(value, dict):
        return {k: convert(v) if k in IDS and isinstance(v, str) else ids(v, convert) for k, v in value.items()}
    if isinstance(value, list):
        return [ids(v, convert) for v in value]
    return value


def hex_to_base64(text):
    return base64.b64encode(binascii.unhexlify(text)).decode()


def base64_to_hex(text):
    return base64.b64decode(text).hex()


class Handler(http.server.BaseHTTPRequestHandler):
    mode = "ok"
    out = None

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        record = {
            "path": self.path,
            "contentType": self.headers.get("Content-Type"),
            "headers": {k.lower(): v for k, v in self.headers.items()},
        }
        status = 200
        try:
            encoding = self.headers.get("Content-Encoding")
            if encoding == "gzip":
                body = gzip.decompress(body)
            elif encoding not in (None, "identity"):
                raise ValueError(f"unexpected content encoding {encoding!r}")
            message = MESSAGES[self.path]()
            if record["contentType"] == "application/x-protobuf":
                message.ParseFromString(body)
            elif record["contentType"] == "application/json":
                json_format.Parse(json.dumps(ids(json.loads(body), hex_to_base64)), message)
            else:
                raise ValueError(f"unexpected content type {record['contentType']!r}")
            record["message"] = ids(json_format.MessageToDict(message), base64_to_hex)
        except Exception as e:  # noqa: BLE001 -- whatever it is, recorded for the test to show
            record["error"] = f"{type(e).__name__}: {e}"
            status = 400
        with open(self.out, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
        if self.mode == "slow":
            time.sleep(30)
        if self.mode == "500":
            status = 500
        self.send_response(status)
        if status == 200:
            answer = RESPONSES[self.path]().SerializeToString()
            self.send_header("Content-Type", "application/x-protobuf")
        else:
            answer = b"receiver says no"
            self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--mode", default="ok", choices=["ok", "500", "slow"])
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    args = parser.parse_args()
    Handler.mode = args.mode
    Handler.out = args.out
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if args.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*args.tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
