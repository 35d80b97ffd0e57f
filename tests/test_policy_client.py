"""The client's pure parts: which entries it sends, and how long it backs off."""

from __future__ import annotations

import logging

import pytest

from policy.api import ClientConfig
from policy.client import PushOptions, _backoff_s, push_config, select_configs
from tests.conftest import free_port

CONFIGS = [
    ClientConfig("acks", "all", "STRING", True),
    ClientConfig("linger.ms", "5", "LONG", False),
    ClientConfig("transactional.id", None, "STRING", True),
    ClientConfig("sasl.mechanism", "PLAIN", "STRING", False),
    ClientConfig("key.serializer", "org.example.Ser", "CLASS", True),
    ClientConfig("config.push.allowed.keys", "acks,sasl.mechanism,config.push.allowed.keys", "LIST", False),
]


def test_allowed_keys_from_the_configs_replace_the_defaults_and_may_list_themselves() -> None:
    sent, withheld = select_configs(CONFIGS, PushOptions(default_keys=("linger.ms",)))
    assert [c.key for c in sent] == ["acks", "config.push.allowed.keys"]
    assert withheld == [("sasl.mechanism", "kip-sensitive-prefix")]


def test_without_allowed_keys_defaults_apply_and_the_key_itself_is_not_sent() -> None:
    configs = [*CONFIGS[:-1], ClientConfig("config.push.allowed.keys", "", "LIST", True)]
    sent, withheld = select_configs(configs, PushOptions())
    assert [c.key for c in sent] == ["acks", "linger.ms"]  # null values are not sent (ConfigValue not nullable)
    assert [k for k, _ in withheld] == ["sasl.mechanism", "key.serializer"]
    sent, _ = select_configs(configs, PushOptions(default_keys=("linger.ms", "key.serializer")))
    assert [c.key for c in sent] == ["linger.ms"]


def test_a_non_compliant_client_sends_sensitive_entries() -> None:
    sent, withheld = select_configs(CONFIGS, PushOptions(filter_sensitive=False, allowed_keys=("sasl.mechanism",)))
    assert [c.key for c in sent] == ["sasl.mechanism"] and withheld == []


def test_a_withheld_key_that_holds_a_secret_is_shown_as_its_marker(caplog: pytest.LogCaptureFixture) -> None:
    configs = [ClientConfig("ssl.AKIAIOSFODNN7EXAMPLE", "x", "STRING", False),
               ClientConfig("sasl.mechanism", "PLAIN", "STRING", False), ClientConfig("acks", "all", "STRING", True)]
    caplog.set_level(logging.DEBUG)
    # Nothing listens there: the warning and the result's withheld keys come before the first connect.
    result = push_config(("127.0.0.1", free_port()), configs,
                         options=PushOptions(allowed_keys=("ssl.AKIAIOSFODNN7EXAMPLE", "sasl.mechanism", "acks"),
                                             timeout_s=0.2, retry_backoff_ms=50))
    marker, plain = result.withheld_keys
    assert marker.startswith("redacted:") and plain == "sasl.mechanism"
    assert "AKIAIOSFODNN7EXAMPLE" not in caplog.text and marker in caplog.text
    assert select_configs(configs, PushOptions(allowed_keys=("ssl.AKIAIOSFODNN7EXAMPLE",)))[1] == [
        (marker, "kip-sensitive-prefix")]  # one marker per key within a process


def test_a_config_repr_leaves_the_value_out() -> None:
    config = ClientConfig("sasl.jaas.config", "S3CRET", "PASSWORD", False)
    assert "S3CRET" not in repr(config) and "sasl.jaas.config" in repr(config)


def test_backoff_doubles_from_retry_backoff_ms_up_to_the_max_with_jitter() -> None:
    options = PushOptions(retry_backoff_ms=100, retry_backoff_max_ms=1000)
    for attempt, base in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.8), (5, 1.0), (9, 1.0)]:
        samples = [_backoff_s(options, attempt) for _ in range(200)]
        assert base * 0.8 <= min(samples) and max(samples) <= base * 1.2
        assert max(samples) - min(samples) > 0  # jittered
