"""More planted misconfigurations and traps: request timeouts, transactional ids, batch caps, other-role keys,
librdkafka acks lowered to 1.

Same contract as ``tests.eval.misconfig`` and ``tests.eval.traps``: each returns False
when it does not apply to the client, and records what must (``expected``) or may
(``allowed``) be found.
"""

from __future__ import annotations

import uuid

from tests.eval.faults import OUTLIER, Draft, Fault

__all__ = ["FAULTS", "TRAPS"]


def _short_timeout(dr: Draft, families: tuple[str, ...], key: str, values: tuple[str, ...], rule: str) -> bool:
    """An acks=all producer with ``key`` set short (the transactional ones are left to their own faults)."""
    if not dr.producer or dr.family not in families or dr.push.get("transactional.id"):
        return False
    dr.push.set("acks", "all").set(key, dr.rng.choice(values), "INT")
    dr.expected.add(rule)
    dr.allowed.add(OUTLIER)
    return True


def _request_timeout_short(dr: Draft) -> bool:
    return _short_timeout(dr, ("java", "librdkafka"), "request.timeout.ms", ("1000", "2000", "5000"),
                          "request-timeout-below-replica-lag")


def _socket_timeout_short(dr: Draft) -> bool:
    return _short_timeout(dr, ("librdkafka",), "socket.timeout.ms", ("5000", "10000", "20000"),
                          "socket-timeout-below-request-timeout")


def _transactional_id_random(dr: Draft) -> bool:
    if not dr.producer or dr.family not in ("java", "librdkafka") or dr.push.get("transactional.id"):
        return False
    tx = str(uuid.UUID(int=dr.rng.getrandbits(128), version=4))
    dr.push.set("transactional.id", dr.rng.choice((tx, f"{dr.app.name}-{tx}", tx.replace("-", ""))), "STRING")
    dr.push.set("enable.idempotence", "true")
    dr.expected.add("transactional-id-random")
    return True


def _rdkafka_acks1(dr: Draft) -> bool:
    """acks lowered to 1 from librdkafka's default all (with idempotence set either way, other rules speak)."""
    if not dr.producer or dr.family != "librdkafka" or dr.explicit("enable.idempotence"):
        return False
    dr.push.set("acks", "1")
    dr.expected.add("acks-leader-only")
    return True


def _batch_above_cap(dr: Draft) -> bool:
    if not dr.producer or dr.family not in ("java", "librdkafka"):
        return False
    cap_key, default = ("max.request.size", 1048576) if dr.family == "java" else ("message.max.bytes", 1000000)
    cap = int(dr.push.get(cap_key) or default)  # a tuning may have raised the cap already
    batch = cap * dr.rng.choice((2, 4, 100))
    dr.push.set("batch.size", str(batch), "INT")
    dr.expected.add("batch-size-above-request-size")
    if dr.family == "java" and batch > int(dr.push.get("buffer.memory") or 33554432):
        dr.expected.add("buffer-below-batch")  # and one batch no longer fits the producer's buffer
    dr.allowed.add(OUTLIER)
    return True


def _other_role_key(dr: Draft) -> bool:
    """A consumer's key on a producer, or a producer's on a consumer (the client ignores it)."""
    if dr.family not in ("java", "librdkafka") or not (dr.producer or dr.consumer):
        return False
    if dr.producer:
        dr.push.set(*dr.rng.choice((("auto.offset.reset", "earliest"), ("enable.auto.commit", "false"))), "STRING")
    else:
        dr.push.set("acks", "all")
    dr.expected.add("key-of-other-role")
    return True


def _request_timeout_long_enough(dr: Draft) -> bool:
    """Fifteen seconds: below the default, above what a follower may lag before 2.5."""
    if not dr.producer or dr.family not in ("java", "librdkafka"):
        return False
    dr.push.set("request.timeout.ms", "15000", "INT")
    dr.allowed.add(OUTLIER)
    return True


def _stable_transactional_id(dr: Draft) -> bool:
    """A transactional id from the application's name and an ordinal: the same one after every restart."""
    if not dr.producer or dr.family not in ("java", "librdkafka") or dr.push.get("transactional.id"):
        return False
    dr.push.set("transactional.id", f"{dr.app.name}-{dr.rng.randint(0, 11)}", "STRING")
    dr.push.set("enable.idempotence", "true")
    return True


def _batch_at_cap(dr: Draft) -> bool:
    """batch.size raised with the request cap beside it."""
    if not dr.producer or dr.family != "java":
        return False
    dr.push.set("batch.size", "1048576", "INT").set("max.request.size", "4194304", "INT")
    dr.allowed.add(OUTLIER)
    return True


FAULTS: tuple[Fault, ...] = (
    ("anomaly/request-timeout-below-replica-lag", 1, _request_timeout_short),
    ("anomaly/socket-timeout-below-request-timeout", 2, _socket_timeout_short),
    ("anomaly/transactional-id-random", 1, _transactional_id_random),
    ("anomaly/batch-size-above-request-size", 2, _batch_above_cap),
    ("anomaly/key-of-other-role", 2, _other_role_key),
    ("anomaly/librdkafka-acks-1", 2, _rdkafka_acks1),
)

TRAPS: tuple[Fault, ...] = (
    ("trap/request-timeout-15s", 1, _request_timeout_long_enough),
    ("trap/stable-transactional-id", 1, _stable_transactional_id),
    ("trap/batch-size-below-raised-cap", 1, _batch_at_cap),
)
