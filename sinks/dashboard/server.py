"""The HTTP side: routes, the live event stream, static assets, and ``/metrics``.

``configwatch.httpserver.BoundedHTTPServer`` (the stdlib threading server with a
connection cap, header deadline, timeouts, body limits and security headers on
every response): one thread per connection, which suits a few operators' browsers
and a Prometheus scraper. Every response is built from the state's safe
documents; no route echoes request data into HTML.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from http import HTTPStatus
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from configwatch.httpserver import BoundedHandler, BoundedHTTPServer, RequestBodyError
from sinks.dashboard.auth import Authenticator
from sinks.dashboard.state import DashboardState
from sinks.dashboard.views import (
    alerts_document,
    client_document,
    clients_document,
    dumps,
    gauges_document,
    health_document,
    parse_severities,
    security_document,
    upgrade_document,
)
from udfs.upgrade.releases import UnknownReleaseError

__all__ = ["DashboardHTTPServer", "load_assets"]

log = logging.getLogger(__name__)

_STATIC = {
    "index.html": "text/html; charset=utf-8",
    "login.html": "text/html; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "chart.js": "text/javascript; charset=utf-8",
    "dom.js": "text/javascript; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
_HEARTBEAT_S = 5.0


def load_assets() -> dict[str, bytes]:
    """The page's files, shipped as package data (no CDN: the page works offline)."""
    root = resources.files("sinks.dashboard").joinpath("static")
    return {name: root.joinpath(name).read_bytes() for name in _STATIC}


class DashboardHTTPServer(BoundedHTTPServer):
    """Binds ``(host, port)``; ``port`` 0 picks a free one (see ``server_port``)."""

    def __init__(self, address: tuple[str, int], state: DashboardState, registry: CollectorRegistry,
                 auth: Authenticator, assets: dict[str, bytes]) -> None:
        self.state = state
        self.registry = registry
        self.auth = auth
        self.live_connections = 0
        self._live_lock = threading.Lock()
        self.assets = assets
        super().__init__(address, _Handler)

    def live_delta(self, n: int) -> None:
        with self._live_lock:
            self.live_connections += n

    def live_count(self) -> int:
        with self._live_lock:
            return self.live_connections


class _Handler(BoundedHandler):
    server: DashboardHTTPServer
    server_version = "configwatch-dashboard"

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    # -- responses ------------------------------------------------------------------------

    def _send(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, doc: Any, status: int = HTTPStatus.OK) -> None:
        self._send(status, dumps(doc).encode(), "application/json; charset=utf-8")

    def _error(self, status: int, message: str) -> None:
        self._json({"error": message}, status)

    # -- routing --------------------------------------------------------------------------

    def do_HEAD(self) -> None:
        if urlsplit(self.path).path == "/events":  # a stream has no length to report
            self._send(HTTPStatus.METHOD_NOT_ALLOWED, b"", "text/plain", {"Allow": "GET"})
            return
        self.do_GET()

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        path = url.path
        query = parse_qs(url.query)
        if path == "/healthz":
            ready = self.server.state.health.ready
            self._send(HTTPStatus.OK if ready else HTTPStatus.SERVICE_UNAVAILABLE,
                       b"ok\n" if ready else b"starting\n", "text/plain; charset=utf-8")
            return
        if path.startswith("/static/") and path[len("/static/"):] in _STATIC:
            name = path[len("/static/"):]
            self._send(HTTPStatus.OK, self.server.assets[name], _STATIC[name])
            return
        if not self.server.auth.allowed(self.headers):
            self._unauthorized(path)
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the reader went away
            self._route(path, query)

    def _unauthorized(self, path: str) -> None:
        if not self.server.auth.enabled:  # no token: a non-loopback Host header (DNS rebinding guard)
            self._error(HTTPStatus.FORBIDDEN, "this dashboard only answers loopback host names")
        elif path in ("/", "/index.html"):
            self._send(HTTPStatus.UNAUTHORIZED, self.server.assets["login.html"], _STATIC["login.html"],
                       {"WWW-Authenticate": 'Bearer realm="configwatch"'})
        else:
            self._send(HTTPStatus.UNAUTHORIZED, b'{"error":"bearer token required"}',
                       "application/json; charset=utf-8", {"WWW-Authenticate": 'Bearer realm="configwatch"'})

    def _route(self, path: str, query: dict[str, list[str]]) -> None:
        state = self.server.state
        if path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, self.server.assets["index.html"], _STATIC["index.html"])
        elif path == "/metrics":
            encoder, content_type = choose_encoder(self.headers.get("Accept", ""))
            self._send(HTTPStatus.OK, encoder(self.server.registry), content_type)
        elif path == "/api/gauges":
            self._json(gauges_document(state))
        elif path == "/api/alerts":
            try:
                severities = parse_severities(",".join(query.get("severity", [])))
                limit = _limit(query, default=200, maximum=2000)
            except ValueError as exc:
                self._error(HTTPStatus.BAD_REQUEST, str(exc))
                return
            self._json(alerts_document(state, severities, limit))
        elif path == "/api/clients":
            try:
                limit = _limit(query, default=50, maximum=1000)
            except ValueError as exc:
                self._error(HTTPStatus.BAD_REQUEST, str(exc))
                return
            self._json(clients_document(state, limit))
        elif path.startswith("/api/clients/"):
            ident = unquote(path[len("/api/clients/"):])
            doc = client_document(state, ident)
            if doc is None:
                self._error(HTTPStatus.NOT_FOUND, "no config push seen for this client instance "
                            "(or it left the dashboard's bounded memory)")
            else:
                self._json(doc)
        elif path == "/api/upgrade":
            try:
                doc = upgrade_document(state, (query.get("target") or ["4.0"])[0])
            except UnknownReleaseError as exc:
                self._error(HTTPStatus.BAD_REQUEST, str(exc))
                return
            self._json(doc)
        elif path == "/api/security":
            self._json(security_document(state))
        elif path == "/api/health":
            self._json(health_document(state))
        elif path == "/events":
            self._events()
        else:
            self._error(HTTPStatus.NOT_FOUND, "no such route; see docs/dashboard.md")

    def do_POST(self) -> None:
        if urlsplit(self.path).path != "/login" or not self.server.auth.enabled:
            self._error(HTTPStatus.NOT_FOUND, "no such route")
            return
        try:
            body = self.read_body()
        except RequestBodyError as exc:
            self.send_error(exc.status, str(exc))
            return
        form = parse_qs(body.decode("utf-8", "replace"))
        if self.server.auth.check_token((form.get("token") or [""])[0]):
            self._send(HTTPStatus.SEE_OTHER, b"", "text/plain",
                       {"Location": "/", "Set-Cookie": self.server.auth.session_cookie()})
        else:
            self._send(HTTPStatus.SEE_OTHER, b"", "text/plain", {"Location": "/?login=failed"})

    # -- Server-Sent Events ---------------------------------------------------------------

    def _events(self) -> None:
        """Stream changes: first a full ``gauges`` snapshot, then every change as it happens."""
        state = self.server.state
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Accel-Buffering", "no")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        self.server.live_delta(1)
        try:
            seq = state.changes.seq
            self._event("hello", dumps({"seq": seq}))
            self._event("gauges", dumps(gauges_document(state)))
            self._event("health", dumps(health_document(state)))
            while not state.changes.closed:
                changes = state.changes.since(seq, _HEARTBEAT_S)
                if changes is None:  # fell behind the change log: the page reloads its data
                    seq = state.changes.seq
                    self._event("resync", dumps({"seq": seq}))
                    self._event("gauges", dumps(gauges_document(state)))
                    continue
                for change in changes:
                    self._event(change.event, change.data, change.seq)
                    seq = change.seq
                if not changes:
                    self._event("health", dumps(health_document(state)))
        except (BrokenPipeError, ConnectionResetError, TimeoutError, OSError):
            pass
        finally:
            self.server.live_delta(-1)

    def _event(self, name: str, data: str, seq: int | None = None) -> None:
        head = f"id: {seq}\n" if seq is not None else ""
        self.wfile.write(f"{head}event: {name}\ndata: {data}\n\n".encode())
        self.wfile.flush()


def _limit(query: dict[str, list[str]], *, default: int, maximum: int) -> int:
    values = query.get("limit")
    if not values:
        return default
    try:
        value = int(values[0])
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError("limit must be a positive integer")
    return min(value, maximum)
