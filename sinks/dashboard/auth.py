"""Who may read the dashboard: loopback binds by default, a bearer token for anything else.

With a token configured every route except ``/healthz``, ``/login`` and the
static assets needs ``Authorization: Bearer <token>`` or the session cookie that
``/login`` sets (browsers cannot add headers to ``EventSource``). Without a
token the service must bind a loopback address, and it then only answers
requests whose ``Host`` is a loopback name (a guard against DNS rebinding).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from http.cookies import CookieError, SimpleCookie
from typing import Any, Protocol

from configwatch.secrets import SecretStr
from sinks.dashboard.exceptions import UnsafeBindError

__all__ = ["COOKIE_NAME", "Authenticator", "Headers", "is_loopback", "require_safe_bind"]

COOKIE_NAME = "configwatch_session"
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")


def is_loopback(host: str) -> bool:
    """True for a loopback IP literal or the name ``localhost``."""
    host = host.strip("[]")
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_safe_bind(host: str, token: SecretStr | None) -> None:
    """Refuse a non-loopback bind without a token."""
    if not is_loopback(host) and not token:
        raise UnsafeBindError(
            f"binding {host} exposes the dashboard beyond this machine; set a bearer token "
            "(CONFIGWATCH_DASHBOARD_TOKEN) or bind 127.0.0.1")


def _host_name(host_header: str) -> str:
    if host_header.startswith("["):
        return host_header[1:].split("]", 1)[0]
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


class Headers(Protocol):
    """Case-insensitive request headers (``email.message.Message`` as the stdlib server gives them)."""

    def get(self, name: str, default: Any = None, /) -> Any: ...


class Authenticator:
    """Checks one request's headers against the configured token (constant-time)."""

    def __init__(self, token: SecretStr | None) -> None:
        self._token = token.get_secret_value().encode() if token else None
        # The cookie holds a value derived from the token, not the token itself.
        self._session = (hmac.new(self._token, b"configwatch-dashboard-session", hashlib.sha256).hexdigest()
                         if self._token else None)

    @property
    def enabled(self) -> bool:
        return self._token is not None

    def session_cookie(self, secure: bool = False) -> str:
        assert self._session is not None
        flags = "; Secure" if secure else ""
        return f"{COOKIE_NAME}={self._session}; Path=/; HttpOnly; SameSite=Strict{flags}"

    def check_token(self, candidate: str) -> bool:
        return self._token is not None and hmac.compare_digest(candidate.encode(), self._token)

    def allowed(self, headers: Headers) -> bool:
        """True when the request may read data."""
        if self._token is None:
            return is_loopback(_host_name(headers.get("Host", "localhost")))
        auth = headers.get("Authorization", "")
        scheme, _, credentials = auth.partition(" ")
        if scheme.lower() == "bearer" and self.check_token(credentials.strip()):
            return True
        raw_cookie = headers.get("Cookie")
        if raw_cookie and self._session is not None:
            try:
                jar = SimpleCookie(raw_cookie)
            except CookieError:
                return False
            morsel = jar.get(COOKIE_NAME)
            return morsel is not None and hmac.compare_digest(morsel.value.encode(), self._session.encode())
        return False
