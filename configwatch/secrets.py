"""Secret values that never print, and the contract's fingerprints (spec section 4)."""

from __future__ import annotations

import hashlib
import hmac

__all__ = ["FINGERPRINT_HEX_CHARS", "SecretStr", "fingerprint"]

FINGERPRINT_HEX_CHARS = 16


class SecretStr:
    """A string whose ``str``/``repr`` is masked; read it with ``get_secret_value``."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get_secret_value(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SecretStr) and hmac.compare_digest(
            self._value.encode(), other._value.encode()
        )

    def __hash__(self) -> int:
        return hash(("SecretStr", len(self._value)))

    def __repr__(self) -> str:
        return "SecretStr('**********')" if self._value else "SecretStr('')"

    def __str__(self) -> str:
        return "**********" if self._value else ""

    def __reduce__(self) -> tuple[type[SecretStr], tuple[str]]:
        # Picklable (Spark ships settings to executors) without exposing the value in repr.
        return (SecretStr, (self._value,))


def fingerprint(value: str | bytes, key: SecretStr | bytes) -> str:
    """HMAC-SHA256 of ``value`` under the deployment key, cut to 16 hex characters."""
    raw_key = key.get_secret_value().encode() if isinstance(key, SecretStr) else key
    data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value
    return hmac.new(raw_key, data, hashlib.sha256).hexdigest()[:FINGERPRINT_HEX_CHARS]
