"""A client's retry of a push the gateway already recorded gets the first answer and is not recorded twice."""

from __future__ import annotations

import socket
import uuid
from typing import Any

import pytest

from configwatch.contract import CONFIG_TYPE_IDS
from policy.api import ClientConfig
from policy.client import ClientIdentity, PushOptions, push_config
from policy.gateway.recorded import RecordedAnswer, RecordedPushes
from policy.protocol import NONE, ApiVersionsRequest, PushConfigRequest, encode_request
from tests.conftest import eventually
from tests.gateway_helpers import gateway, metric, raw_connect, read_events, recv_frame

CONFIGS = [ClientConfig("acks", "all", "STRING", False), ClientConfig("linger.ms", "5", "LONG", True)]
LEAKY = [*CONFIGS, ClientConfig("sasl.jaas.config", "secret-jaas-value", "PASSWORD", False)]
OK = RecordedAnswer(NONE, None)
UNFILTERED = PushOptions(filter_sensitive=False)  # a client that sends what the KIP says it must not


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_same_push_from_the_same_instance_gets_the_recorded_answer() -> None:
    recorded = RecordedPushes()
    digest = recorded.digest(CONFIGS)
    assert recorded.answer("a", digest) is None
    recorded.record("a", digest, OK)
    assert recorded.answer("a", recorded.digest(list(CONFIGS))) == OK
    assert recorded.answer("b", digest) is None  # another instance
    assert recorded.answer("a", recorded.digest(CONFIGS[:1])) is None  # another push
    assert recorded.answer("a", recorded.digest([*CONFIGS[:1], ClientConfig("linger.ms", "5", "LONG", False)])) is None
    recorded.record(None, digest, OK)  # no instance id: nothing to recognise a retry by
    assert recorded.answer(None, digest) is None and len(recorded) == 1


def test_recorded_pushes_expire_and_are_bounded() -> None:
    clock = Clock()
    recorded = RecordedPushes(window_s=60, max_instances=2, clock=clock)
    digest = recorded.digest(CONFIGS)
    recorded.record("a", digest, OK)
    clock.now = 60.0
    assert recorded.answer("a", digest) == OK
    clock.now = 60.5
    assert recorded.answer("a", digest) is None
    recorded.record("b", digest, OK)
    recorded.record("c", digest, OK)
    assert len(recorded) == 2 and recorded.answer("b", digest) == OK  # "a", the oldest, went first


def test_the_digest_is_keyed_per_gateway_and_unambiguous() -> None:
    one, two = RecordedPushes(), RecordedPushes()
    assert one.digest(LEAKY) != two.digest(LEAKY)  # says nothing outside the gateway that made it
    assert one.digest([ClientConfig("ab", "c", "STRING", False)]) != one.digest([ClientConfig("a", "bc", "STRING",
                                                                                              False)])


def _push_and_hang_up(address: tuple[str, int], instance: str) -> None:
    """A client whose first push times out: it sends the push and closes without reading the answer."""
    with raw_connect(address) as sock:
        hello = ApiVersionsRequest(version=5, client_software_name="probe", client_software_version="1.0",
                                   client_instance_id=uuid.UUID(instance))
        sock.sendall(encode_request(hello, 5, 1, "retrier"))
        assert recv_frame(sock) is not None
        configs = [PushConfigRequest.Config(config_key=c.key, config_value=c.value, config_type=CONFIG_TYPE_IDS[c.type],
                                            is_default=c.is_default) for c in CONFIGS]
        sock.sendall(encode_request(PushConfigRequest(version=0, configs=configs), 0, 2, "retrier"))
        sock.shutdown(socket.SHUT_WR)


@pytest.mark.kafka
def test_a_retried_push_is_answered_as_before_and_published_once(kafka_bootstrap: str, topic_name: Any) -> None:
    topic = topic_name("retries")
    clean = ClientIdentity(client_id="retrier", client_instance_id=str(uuid.uuid4()))
    leaky = ClientIdentity(client_id="leaky", client_instance_id=str(uuid.uuid4()))
    lost = str(uuid.uuid4())
    with gateway(kafka_bootstrap, topic) as gw:
        first, retry = push_config(gw.bootstrap, CONFIGS, clean), push_config(gw.bootstrap, CONFIGS, clean)
        assert (first.status, retry.status) == ("accepted", "accepted")
        changed = push_config(gw.bootstrap, CONFIGS[:1], clean)  # another push from that instance is recorded
        assert changed.status == "accepted"
        violations = [push_config(gw.bootstrap, LEAKY, leaky, UNFILTERED) for _ in range(2)]
        assert [v.status for v in violations] == ["violation"] * 2
        assert violations[0].error_message == violations[1].error_message
        assert "sasl.jaas.config" in (violations[0].error_message or "")

        _push_and_hang_up(gw.address, lost)
        eventually(lambda: metric(gw, "configwatch_client_config_process_calls_total") >= 4)
        assert push_config(gw.bootstrap, CONFIGS, ClientIdentity(client_id="retrier", client_instance_id=lost)
                           ).status == "accepted"
        # three retries answered (more if a client also retried on its own)
        assert metric(gw, "configwatch_gateway_requests_total", api="PushConfig", outcome="retry_answered") >= 3
    pushes = [e for _, e in read_events(kafka_bootstrap, topic) if e.event == "config_push"]
    by_instance = {i: [len(e.configs or ()) for e in pushes if e.client_instance_id == i]
                   for i in (clean.client_instance_id, leaky.client_instance_id, lost)}
    assert by_instance == {clean.client_instance_id: [2, 1], leaky.client_instance_id: [3], lost: [2]}
