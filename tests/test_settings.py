"""Settings: flags over environment over defaults; secrets never print."""

from __future__ import annotations

import argparse
import pickle
from pathlib import Path

import pytest

from configwatch.errors import UsageError
from configwatch.secrets import SecretStr, fingerprint
from configwatch.settings import Settings


def test_flag_wins_over_environment(tmp_path: Path) -> None:
    env = {"CONFIGWATCH_INPUT_TOPIC": "from-env", "CONFIGWATCH_FINGERPRINT_KEY": "k"}
    assert Settings.load(None, env).input_topic == "from-env"
    args = argparse.Namespace(input_topic="from-flag")
    assert Settings.load(args, env).input_topic == "from-flag"


def test_defaults_are_resolved(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CONFIGWATCH_CACHE_DIR", str(tmp_path))
    s = Settings.load(None, {})
    assert s.kafka_home == tmp_path / "kafka" / "local"
    assert s.checkpoint_dir.name == "checkpoints"
    key_file = tmp_path / "fingerprint.key"
    assert key_file.stat().st_mode & 0o077 == 0  # only the owner can read the key
    assert Settings.load(None, {}).fingerprint_key == s.fingerprint_key  # stable across runs


def test_secret_never_prints() -> None:
    s = Settings.load(None, {"CONFIGWATCH_FINGERPRINT_KEY": "hunter2-key"})
    assert "hunter2-key" not in repr(s)
    assert "hunter2-key" not in str(s.fingerprint_key)
    assert s.fingerprint_key.get_secret_value() == "hunter2-key"
    assert pickle.loads(pickle.dumps(s.fingerprint_key)) == s.fingerprint_key


def test_bad_value_names_its_source() -> None:
    with pytest.raises(UsageError, match="CONFIGWATCH_KAFKA_PORT: cannot read 'x' as int"):
        Settings.load(None, {"CONFIGWATCH_KAFKA_PORT": "x", "CONFIGWATCH_FINGERPRINT_KEY": "k"})


def test_fingerprint_is_keyed_hmac_cut_to_16_hex() -> None:
    a = fingerprint("s3cret", SecretStr("key-1"))
    assert len(a) == 16 and int(a, 16) >= 0
    assert a == fingerprint("s3cret", SecretStr("key-1"))
    assert a != fingerprint("s3cret", SecretStr("key-2"))
    assert a != fingerprint("s3cret!", SecretStr("key-1"))


@pytest.mark.parametrize("name", ["bad!topic", "a/b", "with space", "", ".", "..", "t" * 250, "tópico"])
def test_a_topic_name_kafka_would_refuse_is_a_usage_error(name: str) -> None:
    env = {"CONFIGWATCH_FINGERPRINT_KEY": "k", "CONFIGWATCH_ALERTS_TOPIC": name}
    with pytest.raises(UsageError, match=r"^CONFIGWATCH_ALERTS_TOPIC: .* is not a Kafka topic name"):
        Settings.load(None, env)


@pytest.mark.parametrize("name", ["team-a.alerts", "a.b_c-D9", "t" * 249, "..."])
def test_topic_names_kafka_takes_are_kept(name: str) -> None:
    env = {"CONFIGWATCH_FINGERPRINT_KEY": "k", "CONFIGWATCH_ALERTS_TOPIC": name}
    assert Settings.load(None, env).alerts_topic == name


@pytest.mark.parametrize("url", ["notaurl-hunter2", "ftp://hooks.example/hunter2", "http:///hunter2",
                                 "http://[::1/hunter2", "http://hooks.example:hunter2/x", "http://hooks.example:99999/x",
                                 "http://hooks.example/hunter2 x", "http://hooks.example/hunter2\x7f",
                                 "http://hooks.example/hünter2"])
def test_a_webhook_that_is_no_http_url_is_a_usage_error_that_does_not_show_it(url: str) -> None:
    with pytest.raises(UsageError, match=r"^CONFIGWATCH_WEBHOOK_URL: not an http") as raised:
        Settings.load(None, {"CONFIGWATCH_FINGERPRINT_KEY": "k", "CONFIGWATCH_WEBHOOK_URL": url})
    assert "hunter2" not in str(raised.value)


@pytest.mark.parametrize("url", ["http://127.0.0.1:9093/api/v2/alerts", "https://hooks.example/x?token=t",
                                 "http://[::1]:8080/"])
def test_http_webhooks_are_kept(url: str) -> None:
    s = Settings.load(None, {"CONFIGWATCH_FINGERPRINT_KEY": "k", "CONFIGWATCH_WEBHOOK_URL": url})
    assert s.webhook_url is not None and s.webhook_url.get_secret_value() == url


def test_a_value_that_cannot_work_names_the_flag_or_the_variable_it_came_from() -> None:
    env = {"CONFIGWATCH_FINGERPRINT_KEY": "k", "CONFIGWATCH_MAX_OFFSETS_PER_TRIGGER": "0"}
    with pytest.raises(UsageError, match=r"^CONFIGWATCH_MAX_OFFSETS_PER_TRIGGER: must be a positive number, got 0$"):
        Settings.load(None, env)
    with pytest.raises(UsageError, match=r"^--max-offsets-per-trigger: must be a positive number, got -3$"):
        Settings.load(argparse.Namespace(max_offsets_per_trigger=-3), env)
    with pytest.raises(UsageError, match=r"^--connect-timeout-s: must be a finite number, got nan$"):
        Settings.load(argparse.Namespace(connect_timeout_s=float("nan")), {"CONFIGWATCH_FINGERPRINT_KEY": "k"})
    with pytest.raises(UsageError, match=r"^--connection-ttl: must be a positive number"):  # built in code: the flag
        Settings(fingerprint_key=SecretStr("k"), connection_ttl=-1.0)
    with pytest.raises(UsageError, match=r"^--driver-memory: '1.5g' is not a JVM memory size"):
        Settings.load(argparse.Namespace(driver_memory="1.5g"), {"CONFIGWATCH_FINGERPRINT_KEY": "k"})


@pytest.mark.parametrize("size", ["1536m", "2g", "2G", "4096M"])
def test_jvm_memory_sizes_are_kept(size: str) -> None:
    settings = Settings.load(argparse.Namespace(driver_memory=size), {"CONFIGWATCH_FINGERPRINT_KEY": "k"})
    assert settings.driver_memory == size


def test_every_topic_is_its_own() -> None:
    env = {"CONFIGWATCH_FINGERPRINT_KEY": "k", "CONFIGWATCH_USAGE_TOPIC": "client-version-gauges"}
    with pytest.raises(UsageError, match=r"^CONFIGWATCH_USAGE_TOPIC: 'client-version-gauges' is also --gauges-topic"):
        Settings.load(None, env)


@pytest.mark.parametrize("variable", ["CONFIGWATCH_FINGERPRINT_KEY", "CONFIGWATCH_DASHBOARD_TOKEN",
                                      "CONFIGWATCH_WEBHOOK_URL", "CONFIGWATCH_GATEWAY_HOST",
                                      "CONFIGWATCH_DASHBOARD_HOST"])
def test_a_blank_secret_or_address_is_refused_not_taken(variable: str) -> None:
    with pytest.raises(UsageError, match=rf"^{variable}: empty; leave it unset for the default$"):
        Settings.load(None, {"CONFIGWATCH_FINGERPRINT_KEY": "k", variable: " "})


_SERVERS, _HOST = "CONFIGWATCH_BOOTSTRAP_SERVERS", "CONFIGWATCH_GATEWAY_HOST"
_NO_HOST_PORT, _NO_HOST = r".*(HOST:PORT|empty)", r".* is not a host name or IP address$"


@pytest.mark.parametrize(("variable", "value", "refusal"), [
    *[(_SERVERS, v, None) for v in ("broker-1:9092", "a:1, b:2,", "[::1]:9092", "kafka_0.internal.:9092")],
    *[(_SERVERS, v, _NO_HOST_PORT) for v in ("broker-1", ":9092", "a:0", "", "b!:9092", "a..b:9092", "-a:9092")],
    *[(_HOST, v, None) for v in ("0.0.0.0", "::", "dash-1.corp.example", "kafka_0")],
    *[(_HOST, v, _NO_HOST) for v in ("not_a_host!", "a..b", "x" * 64, "dash-")],
])
def test_an_address_is_a_host_port_list_or_a_host_else_its_variable_is_named(variable: str, value: str,
                                                                             refusal: str | None) -> None:
    env = {"CONFIGWATCH_FINGERPRINT_KEY": "k", variable: value}
    if refusal is None:
        field = variable.removeprefix("CONFIGWATCH_").lower()
        assert getattr(Settings.load(None, env), field) == value
    else:
        with pytest.raises(UsageError, match=rf"^{variable}: {refusal}"):
            Settings.load(None, env)
