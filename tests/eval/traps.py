"""Traps: settings that look wrong but are fine, per client family, role and release; nothing may fire for them.

Each returns False when it does not apply to the client. A value a rule reads that
is also rare in the fleet may draw a ``fleet-outlier`` finding: allowed, not expected.
"""

from __future__ import annotations

from tests.eval.faults import OUTLIER, Draft, Fault, java_yields

__all__ = ["TRAPS"]


def _acks1_no_yield(dr: Draft) -> bool:
    """acks=1 where default idempotence is off (2.8) or not applied unless set (3.0.0, 3.1.0, KAFKA-13598)."""
    if not dr.producer or dr.family != "java" or java_yields(dr.release):
        return False
    dr.push.set("acks", "1")
    return True


def _idempotence_off_acks1(dr: Draft) -> bool:
    if not dr.producer or dr.family != "java":
        return False
    dr.push.set("enable.idempotence", "false").set("acks", "1")
    return True


def _unbounded_poll_interval(dr: Draft) -> bool:
    if dr.family != "java" or dr.app.role not in ("consumer", "streams") or dr.client_id.endswith("-producer"):
        return False
    dr.push.set("max.poll.interval.ms", "2147483647")
    return True


def _os_socket_buffers(dr: Draft) -> bool:
    if dr.family != "java":
        return False
    dr.push.set("receive.buffer.bytes", "-1").set("send.buffer.bytes", "-1")
    return True


def _new_protocol(dr: Draft) -> bool:
    classic = ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy")
    if not dr.consumer or dr.family != "java" or dr.release < (3, 7) or any(dr.explicit(k) for k in classic):
        return False
    dr.push.set("group.protocol", "consumer")
    return True


def _static_member(dr: Draft) -> bool:
    if not dr.consumer or dr.family not in ("java", "librdkafka"):
        return False
    dr.push.set("group.instance.id", f"{dr.app.name}-{dr.rng.randint(0, 11)}", "STRING")
    dr.push.set("client.rack", dr.rng.choice(("euw1-az1", "euw1-az2", "use1-az4")), "STRING")
    return True


def _bootstrap_spaced(dr: Draft) -> bool:
    """A list with spaces after its commas, as people write it: a list all the same."""
    servers = dr.push.get("bootstrap.servers")
    if dr.family != "java" or not servers or "," not in servers:
        return False
    dr.push.set("bootstrap.servers", servers.replace(",", ", "))
    return True


def _private_address_bootstrap(dr: Draft) -> bool:
    """Brokers by private, shared or loopback addresses: inside the network, not on the internet."""
    if dr.family not in ("java", "librdkafka") or dr.expected & {"bootstrap-servers-malformed",
                                                                 "bootstrap-public-address"}:
        return False
    dr.push.set("bootstrap.servers", dr.rng.choice(("10.20.30.40:9092,10.20.30.41:9092", "172.31.7.12:9094",
                                                    "100.64.3.9:9092", "192.168.1.20:9092", "[fd12:3456::7]:9092")))
    return True


def _single_replica_at_least_once(dr: Draft) -> bool:
    """replication.factor=1 without exactly-once: a development choice, not this finding."""
    if dr.family != "java" or dr.app.role != "streams" or dr.app.eos:
        return False
    dr.push.set("processing.guarantee", "at_least_once", "STRING").set("replication.factor", "1", "INT")
    return True


def _long_but_bounded_block(dr: Draft) -> bool:
    """Ten minutes of max.block.ms: patient, not unbounded."""
    if not dr.producer or dr.family != "java":
        return False
    dr.push.set("max.block.ms", "600000", "LONG")
    dr.allowed.add(OUTLIER)
    return True


def _long_but_bounded_delivery(dr: Draft) -> bool:
    """Half an hour to deliver a record: patient, not unbounded."""
    if not dr.producer or dr.family not in ("java", "librdkafka"):
        return False
    dr.push.set("delivery.timeout.ms" if dr.family == "java" else "message.timeout.ms", "1800000", "INT")
    dr.allowed.add(OUTLIER)
    return True


def _many_retries(dr: Draft) -> bool:
    """retries in the thousands: more backoff than delivery.timeout.ms, so the delivery timeout still decides."""
    if not dr.producer or dr.family != "java":
        return False
    dr.push.set("retries", dr.rng.choice(("1000", "10000")), "INT")
    return True


def _small_but_sane_buffer(dr: Draft) -> bool:
    """A 4 MiB producer buffer: an eighth of the default, enough for many batches."""
    if not dr.producer or dr.family != "java":
        return False
    dr.push.set("buffer.memory", "4194304", "LONG")
    dr.allowed.add(OUTLIER)
    return True


def _large_but_sane_poll(dr: Draft) -> bool:
    if not dr.consumer or dr.family != "java":
        return False
    dr.push.set("max.poll.records", "20000")
    dr.allowed.add(OUTLIER)
    return True


TRAPS: tuple[Fault, ...] = (
    ("trap/acks-1-where-idempotence-does-not-yield", 3, _acks1_no_yield),
    ("trap/idempotence-off-with-acks-1", 2, _idempotence_off_acks1),
    ("trap/unbounded-max-poll-interval", 2, _unbounded_poll_interval),
    ("trap/os-default-socket-buffers", 2, _os_socket_buffers),
    ("trap/kip-848-group-protocol", 2, _new_protocol),
    ("trap/static-membership-and-rack", 2, _static_member),
    ("trap/bootstrap-servers-with-spaces", 2, _bootstrap_spaced),
    ("trap/private-address-bootstrap", 1, _private_address_bootstrap),
    ("trap/single-replica-at-least-once", 2, _single_replica_at_least_once),
    ("trap/large-but-sane-max-poll-records", 1, _large_but_sane_poll),
    ("trap/long-but-bounded-max-block", 1, _long_but_bounded_block),
    ("trap/long-but-bounded-delivery-timeout", 1, _long_but_bounded_delivery),
    ("trap/many-retries", 1, _many_retries),
    ("trap/small-but-sane-buffer-memory", 1, _small_but_sane_buffer),
)
