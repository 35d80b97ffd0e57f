"""The policy off the gateway's event loop: a push being judged holds up no other connection, and pushes that
queue meanwhile are judged in one call, each with its own answer and its events in order."""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

from kafka import KafkaProducer

from configwatch.contract import CONFIG_PUSH, CONNECTION_CLOSED, CONNECTION_OPENED
from policy import ClientConfig, ClientConfigData, KafkaTopicPolicy, RequestContext
from policy.client import ClientIdentity, PushOptions, push_config
from tests.conftest import eventually
from tests.gateway_helpers import gateway, metric, read_events
from tests.kafka_helpers import read_all


class GatedPolicy(KafkaTopicPolicy):
    """The project's policy, except that its first call waits for ``gate``; every call's size is kept."""

    gate: ClassVar[threading.Event] = threading.Event()
    calls: ClassVar[list[int]] = []

    def process_all(self, requests: Sequence[tuple[RequestContext, ClientConfigData]]) -> list[str | Exception | None]:
        type(self).calls.append(len(requests))
        if len(type(self).calls) == 1 and not type(self).gate.wait(120):
            raise TimeoutError("the test never opened the gate")
        return super().process_all(requests)


def test_a_push_being_judged_holds_up_no_connection_and_a_burst_is_judged_at_once(kafka_bootstrap: str,
                                                                                  topic_name: Any) -> None:
    events, data = topic_name("judge-events"), topic_name("judge-data")
    GatedPolicy.gate.clear()
    GatedPolicy.calls.clear()
    configs = [ClientConfig("acks", "all", "STRING", False), ClientConfig("sasl.jaas.config", "pw-5521", "PASSWORD",
                                                                          False)]
    careless = PushOptions(filter_sensitive=False)  # a client that pushes a password: the policy redacts it
    names = ["first", "burst-1", "burst-2", "burst-3"]
    identities = {n: ClientIdentity("apache-kafka-java", "4.1.0", n, str(uuid.uuid4())) for n in names}
    with gateway(kafka_bootstrap, events, upstream=kafka_bootstrap, gateway_broker_port_base=0,
                 client_config_policy_class_name="tests.test_gateway_judge.GatedPolicy") as gw, \
            ThreadPoolExecutor(len(names)) as pool:
        first = pool.submit(push_config, gw.bootstrap, configs, identities["first"], careless)
        eventually(lambda: GatedPolicy.calls == [1] or None)
        # A real client produces through the gateway while the policy holds the first push.
        producer = KafkaProducer(bootstrap_servers=gw.bootstrap, client_id="bystander", acks="all")
        producer.send(data, b"while-a-push-is-judged").get(timeout=60)
        producer.close()
        assert not first.done() and GatedPolicy.calls == [1]
        burst = [pool.submit(push_config, gw.bootstrap, configs, identities[n], careless) for n in names[1:]]
        eventually(lambda: metric(gw, "configwatch_gateway_pending_pushes") == 4 or None)
        GatedPolicy.gate.set()
        results = [first.result(timeout=60)] + [f.result(timeout=60) for f in burst]
        assert GatedPolicy.calls == [1, 3]  # the three that queued meanwhile: one call
        eventually(lambda: metric(gw, "configwatch_gateway_pending_pushes") == 0 or None)
        assert metric(gw, "configwatch_client_config_process_calls_total") == 4
    assert [v for _k, v, _p, _o in read_all(kafka_bootstrap, data)] == [b"while-a-push-is-judged"]
    assert [(r.status, r.error_code) for r in results] == [("violation", 40)] * 4
    assert all("sasl.jaas.config" in (r.error_message or "") for r in results)
    published = [e for _k, e in read_events(kafka_bootstrap, events)]
    for name in names:  # each connection's events in order: opened, its push (redacted), closed
        mine = [e for e in published if e.client_id == name]
        assert [e.event for e in mine] == [CONNECTION_OPENED, CONFIG_PUSH, CONNECTION_CLOSED], name
        push = mine[1]
        assert push.configs is not None and [(c.key, c.value, c.redacted) for c in push.configs] == [
            ("acks", "all", False), ("sasl.jaas.config", None, True)]
    assert "pw-5521" not in repr(published)


def _refused(address: tuple[str, int]) -> bool:
    try:
        socket.create_connection(address, timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


def test_a_gateway_stopping_mid_push_publishes_the_push_before_the_close(kafka_bootstrap: str,
                                                                         topic_name: Any) -> None:
    events = topic_name("judge-stop")
    GatedPolicy.gate.clear()
    GatedPolicy.calls.clear()
    running = gateway(kafka_bootstrap, events, client_config_policy_class_name="tests.test_gateway_judge.GatedPolicy")
    gw = running.__enter__()
    with ThreadPoolExecutor(2) as pool:
        try:
            pushed = pool.submit(push_config, gw.bootstrap, [ClientConfig("acks", "all", "STRING", False)],
                                 ClientIdentity("apache-kafka-java", "4.1.0", "stopped-mid-push", str(uuid.uuid4())),
                                 PushOptions(timeout_s=5))
            eventually(lambda: GatedPolicy.calls == [1] or None)
            stopping = pool.submit(running.__exit__, None, None, None)
            eventually(lambda: _refused(gw.address) or None)  # the gateway stops: its connections are cancelled
            assert not stopping.done()  # the connection waits for its push's outcome
        finally:
            GatedPolicy.gate.set()
        stopping.result(timeout=60)
        pushed.result(timeout=60)
    mine = [e.event for _k, e in read_events(kafka_bootstrap, events) if e.client_id == "stopped-mid-push"]
    assert mine == [CONNECTION_OPENED, CONFIG_PUSH, CONNECTION_CLOSED]
