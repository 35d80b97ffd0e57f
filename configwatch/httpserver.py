"""A bounded HTTP/1.1 server for the dashboard and the gateway's ``/metrics``.

The stdlib ``ThreadingHTTPServer`` with the limits it lacks (issue 14):

- a connection cap (``max_connections``): at the cap, a new connection takes the
  slot of the oldest connection still sending its request (headers or body: the
  cheapest to lose, and what a slow-request attack holds); only when every slot
  is serving a response (live event streams) does it get a short 503, without a
  thread;
- a listen backlog of 1,024 instead of 5 (128 overflowed under a burst of
  200 connects in a tight loop: accepting starts a thread, connecting is faster);
- a deadline for the whole request, line, headers and body (``header_timeout_s``;
  a watchdog thread closes connections that drip them), and a socket timeout on
  every read and write (``io_timeout_s``);
- request header lines of at most ``max_header_bytes`` in all (32 KiB; the
  stdlib alone allows 100 lines of 64 KiB): more gets a 431 and the connection
  is closed;
- request bodies only with a valid ``Content-Length`` up to ``max_body_bytes``
  (:meth:`BoundedHandler.read_body`);
- no traceback, ever: a client that resets its connection or times out is one
  debug line, any other failure one warning line (:meth:`BoundedHTTPServer.handle_error`);
- the security headers on every response, stdlib error pages included.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import socket
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from configwatch.errors import ConfigwatchError

__all__ = ["SECURITY_HEADERS", "BoundedHTTPServer", "BoundedHandler", "RequestBodyError"]

log = logging.getLogger(__name__)

SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
}
_BUSY = ("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\nRetry-After: 1\r\n"
         + "".join(f"{name}: {value}\r\n" for name, value in SECURITY_HEADERS.items()) + "\r\n").encode()
_WATCHDOG_TICK_S = 0.5
# How long a new connection at the cap waits for the slot of the connection it evicted.
_EVICT_WAIT_S = 1.0


class RequestBodyError(ConfigwatchError):
    """A request body the server will not read (its status says why: 400, 411 or 413)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class BoundedHTTPServer(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` with a connection cap, a backlog and a header deadline (module docstring)."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024  # a burst of connects waits in the kernel, not ~1 s for a SYN retransmit

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], *,
                 max_connections: int = 256, header_timeout_s: float = 10.0, io_timeout_s: float = 30.0) -> None:
        self.max_connections = max_connections
        self.header_timeout_s = header_timeout_s
        self.io_timeout_s = io_timeout_s
        self._slots = threading.BoundedSemaphore(max_connections)
        self._deadlines: dict[socket.socket, float] = {}
        self._lock = threading.Lock()
        self.refused = 0
        self.evicted = 0
        self._open = 0
        super().__init__(address, handler)
        self._watchdog = threading.Thread(target=self._watch, name="http-header-deadline", daemon=True)
        self._watchdog.start()

    # -- the connection cap ----------------------------------------------------------------
    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False) and not (
                self._evict_oldest_request() and self._slots.acquire(timeout=_EVICT_WAIT_S)):
            self.refused += 1
            with contextlib.suppress(OSError):
                request.sendall(_BUSY)
            self.shutdown_request(request)
            return
        with self._lock:
            self._open += 1
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.request_read(request)
            self._release()

    def _release(self) -> None:
        with self._lock:
            self._open -= 1
        self._slots.release()

    @property
    def open_connections(self) -> int:
        """Connections being served now (each has a thread)."""
        with self._lock:
            return self._open

    def _evict_oldest_request(self) -> bool:
        """Close the connection that has been sending its request longest; False when none is."""
        with self._lock:
            if not self._deadlines:
                return False
            oldest = min(self._deadlines, key=self._deadlines.__getitem__)
            del self._deadlines[oldest]
            self.evicted += 1
        log.debug("connection cap reached: closed the oldest unfinished request to make room")
        with contextlib.suppress(OSError):
            oldest.shutdown(socket.SHUT_RDWR)  # its handler's read returns, its thread ends, its slot frees
        return True

    # -- the request deadline ----------------------------------------------------------------
    def request_started(self, request: socket.socket) -> None:
        """The request on ``request`` starts now: it must be read whole within ``header_timeout_s``."""
        with self._lock:
            self._deadlines[request] = time.monotonic() + self.header_timeout_s

    def request_read(self, request: socket.socket) -> None:
        """The request on ``request`` has been read (or abandoned): no deadline, not evictable."""
        with self._lock:
            self._deadlines.pop(request, None)

    def _watch(self) -> None:
        while True:
            time.sleep(_WATCHDOG_TICK_S)
            now = time.monotonic()
            with self._lock:
                late = [s for s, deadline in self._deadlines.items() if deadline < now]
                for s in late:
                    del self._deadlines[s]
            for s in late:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)  # the handler's blocked read returns and the thread ends

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line, never a traceback (socketserver's default prints one to stderr): a client that reset
        its connection, went away or timed out is routine (debug); anything else is a warning naming the
        exception's type only (its text may quote request data)."""
        exc = sys.exc_info()[1]
        peer = client_address[0] if client_address else "?"
        if isinstance(exc, OSError):  # ConnectionResetError, BrokenPipeError, TimeoutError and their kin
            log.debug("connection from %s ended: %s", peer, type(exc).__name__)
        else:
            log.warning("request from %s failed: %s", peer, type(exc).__name__)


class BoundedHandler(BaseHTTPRequestHandler):
    """Request handling under the server's deadlines; security headers on every response."""

    server: BoundedHTTPServer
    protocol_version = "HTTP/1.1"
    sys_version = ""
    max_body_bytes = 4096
    max_header_bytes = 32 * 1024  # the header lines after the request line (which has its own 64 KiB: 414)

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.io_timeout_s)

    def handle_one_request(self) -> None:
        self.server.request_started(self.request)
        try:
            super().handle_one_request()
        finally:
            self.server.request_read(self.request)

    def parse_request(self) -> bool:
        plain = self.rfile
        self._header_reader = _HeaderReader(plain, self.max_header_bytes)
        self.rfile = self._header_reader  # type: ignore[assignment]  # only readline is used on it
        try:
            ok = super().parse_request()  # a 431 when the reader raises (see send_error)
        finally:
            self.rfile = plain
        if not ok or not self.headers.get("Content-Length", "").strip().lstrip("0"):
            self.server.request_read(self.request)  # no body to come: the response runs under io_timeout_s
        return ok

    def end_headers(self) -> None:
        sent = {name.lower() for name in getattr(self, "_sent_header_names", ())}
        for name, value in SECURITY_HEADERS.items():
            if name.lower() not in sent:
                self.send_header(name, value)
        self._sent_header_names: list[str] = []
        super().end_headers()

    def send_header(self, keyword: str, value: str) -> None:
        if not hasattr(self, "_sent_header_names"):
            self._sent_header_names = []
        self._sent_header_names.append(keyword)
        super().send_header(keyword, value)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Errors as small JSON bodies, with the security headers (stdlib pages carry none)."""
        try:
            short = HTTPStatus(code).phrase
        except ValueError:
            short = "error"
        reader = getattr(self, "_header_reader", None)
        if code == HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE and reader is not None and reader.exceeded:
            message = f"request headers over {self.max_header_bytes} bytes"
        body = json.dumps({"error": message or short}).encode()
        self.close_connection = True
        if self.request_version == "HTTP/0.9":  # the request line did not parse: answer with a real head anyway
            self.request_version = "HTTP/1.1"
        self.send_response(code, message)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD" and code >= 200 and code not in (HTTPStatus.NO_CONTENT, HTTPStatus.NOT_MODIFIED):
            self.wfile.write(body)

    def read_body(self) -> bytes:
        """The request body: a valid Content-Length of at most ``max_body_bytes``, else RequestBodyError."""
        raw = self.headers.get("Content-Length")
        if raw is None:
            raise RequestBodyError(HTTPStatus.LENGTH_REQUIRED, "Content-Length required")
        if not raw.strip().isdigit():
            raise RequestBodyError(HTTPStatus.BAD_REQUEST, "Content-Length must be a non-negative integer")
        length = int(raw)
        if length > self.max_body_bytes:
            raise RequestBodyError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                                 f"request body over {self.max_body_bytes} bytes")
        body = self.rfile.read(length)  # under the request deadline, which ends here
        self.server.request_read(self.request)
        return body


class _HeaderReader:
    """``rfile`` while the headers are read: ``readline`` within a byte budget for all header lines together;
    over it, the ``HTTPException`` that ``parse_request`` answers with 431."""

    def __init__(self, raw: Any, budget: int) -> None:
        self._raw = raw
        self._left = budget
        self.exceeded = False

    def readline(self, limit: int = -1) -> bytes:
        want = self._left + 1 if limit < 0 else min(limit, self._left + 1)  # one byte more shows an overflow
        line: bytes = self._raw.readline(want)
        self._left -= len(line)
        if self._left < 0:
            self.exceeded = True
            raise http.client.HTTPException("request headers over the byte limit")
        return line
