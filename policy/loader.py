"""Build the configured ClientConfigPolicy from its dotted Python path.

``client_config_policy_class_name`` plays the KIP's ``client.config.policy.class.name``:
``package.module.ClassName``, instantiated with no arguments, then ``configure``d.
Empty or ``none`` disables the feature (the gateway then does not advertise PushConfig).
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

from configwatch.settings import Settings
from policy.api import ClientConfigPolicy
from policy.exceptions import PolicyConfigError

__all__ = ["DISABLED", "load_policy_class", "policy_configs"]

DISABLED = ("", "none", "null")


def load_policy_class(dotted: str | None) -> type[ClientConfigPolicy] | None:
    """The policy class named by ``dotted``, or None when the feature is disabled."""
    if dotted is None or dotted.strip().lower() in DISABLED:
        return None
    module_name, _, class_name = dotted.strip().rpartition(".")
    if not module_name:
        raise PolicyConfigError(f"client config policy {dotted!r} is not a dotted path (package.module.Class)")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise PolicyConfigError(f"client config policy {dotted!r}: cannot import {module_name} ({exc})") from None
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type) or not issubclass(cls, ClientConfigPolicy):
        raise PolicyConfigError(f"client config policy {dotted!r} is not a ClientConfigPolicy class")
    return cls


def policy_configs(settings: Settings, bootstrap_servers: str) -> dict[str, Any]:
    """The mapping a policy's ``configure`` receives: every setting, bootstrap resolved."""
    configs = {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)}
    configs["bootstrap_servers"] = bootstrap_servers
    return configs
