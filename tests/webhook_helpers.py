"""A real HTTP server on loopback that records webhook POSTs (for the webhook sink and job tests)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Receiver"]


class Receiver:
    """A loopback HTTP server that records POSTed JSON bodies and answers from a script of statuses."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.statuses: list[int] = []  # answered in order; 200 once exhausted
        self.headers: dict[int, dict[str, str]] = {}
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.bodies.append(json.loads(body))
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                for name, value in receiver.headers.get(status, {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks/T0KEN-in-path"

    def start(self) -> Receiver:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def fingerprints(self) -> set[str]:
        with self.lock:
            return {a["fingerprint"] for body in self.bodies for a in body["alerts"]}
