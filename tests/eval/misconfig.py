"""Planted misconfigurations with their ground truth, per client family, role and release.

Each returns False when it does not apply to the client (``tests.eval.traps`` holds
settings that look wrong but are fine). Values a rule reads that
are also rare in the fleet may draw a ``fleet-outlier`` finding: allowed, not
expected. Real outliers (``outlier``) are set on one instance of an application,
two or more orders of magnitude away from any value the fleet uses.
"""

from __future__ import annotations

from tests.eval.faults import OUTLIER, Draft, Fault, java_yields

__all__ = ["ANOMALIES", "OUTLIERS"]


def _acks_zero(dr: Draft) -> bool:
    if dr.family == "sarama":
        dr.push.set("Producer.RequiredAcks", "0")
        dr.expected.add("acks-zero")
        return True
    if not dr.producer or dr.family == "franz-go":
        return False
    key = "request.required.acks" if dr.family == "librdkafka" and dr.rng.random() < 0.5 else "acks"
    dr.push.set(key, "0")
    dr.expected.add("acks-zero")
    if (dr.family == "java" and java_yields(dr.release)) or (dr.family == "kafka-python" and dr.release >= (3, 0)):
        dr.expected.add("idempotence-implicitly-disabled")
    if dr.family == "librdkafka" and dr.push.get("enable.idempotence") == "true":
        # The application's tuning set enable.idempotence=true: with acks 0 that is the conflict
        # _idempotence_acks1 plants (librdkafka CONFIGURATION.md, enable.idempotence: "Producer
        # instantiation will fail if user-supplied configuration is incompatible").
        dr.expected.add("idempotence-acks")
    return True


def _idempotence_acks1(dr: Draft) -> bool:
    if not dr.producer or dr.family not in ("java", "librdkafka", "kafka-python"):
        return False
    if dr.family == "kafka-python":
        if dr.release < (3, 0):
            return False
        dr.push.set("enable_idempotence", "true", "BOOLEAN")
    else:
        dr.push.set("enable.idempotence", "true")
    dr.push.set("acks", "1")
    dr.expected.add("idempotence-acks")
    return True


def _idempotence_inflight(dr: Draft) -> bool:
    if not dr.producer or dr.family != "java" or dr.release >= (4, 0):
        return False
    dr.push.set("enable.idempotence", "true").set("max.in.flight.requests.per.connection", "10")
    dr.expected.add("idempotence-max-in-flight")
    return True


def _idempotence_retries(dr: Draft) -> bool:
    if not dr.producer or dr.family != "java":
        return False
    dr.push.set("enable.idempotence", "true").set("retries", "0")
    dr.expected.add("idempotence-retries")
    return True


def _implicitly_disabled(dr: Draft) -> bool:
    if not dr.producer or dr.family != "java" or not java_yields(dr.release):
        return False
    if dr.release < (4, 0) and dr.rng.random() < 0.3:
        dr.push.set("max.in.flight.requests.per.connection", "10")
    else:
        dr.push.set("acks", "1")
    dr.expected.add("idempotence-implicitly-disabled")
    return True


def _transactional_no_idempotence(dr: Draft) -> bool:
    if not dr.producer or dr.family != "java":
        return False
    dr.push.set("transactional.id", f"{dr.app.name}-tx-{dr.rng.randint(0, 9)}", "STRING")
    dr.push.set("enable.idempotence", "false")
    dr.expected.add("transactional-without-idempotence")
    return True


def _delivery_timeout(dr: Draft) -> bool:
    if not dr.producer or dr.family != "java":
        return False
    dr.push.set("delivery.timeout.ms", "20000")
    dr.expected.add("delivery-timeout-too-short")
    dr.allowed.add(OUTLIER)
    return True


def _buffer_below_batch(dr: Draft) -> bool:
    if not dr.producer or dr.family != "java":
        return False
    dr.push.set("batch.size", "262144").set("buffer.memory", "131072")
    dr.expected.add("buffer-below-batch")
    dr.allowed.add(OUTLIER)
    return True


def _reconnect_inverted(dr: Draft) -> bool:
    keys = {"java": ("reconnect.backoff.ms", "5000"), "librdkafka": ("reconnect.backoff.ms", "20000"),
            "kafka-python": ("reconnect_backoff_ms", "45000")}  # above 30000, the max's default from 2.1
    if dr.family not in keys:
        return False
    dr.push.set(*keys[dr.family])
    if dr.family == "java":  # Java raises a maximum the user did not set (CommonClientConfigs)
        dr.push.set("reconnect.backoff.max.ms", "1000")
    dr.expected.add("reconnect-backoff-inverted")
    dr.allowed.add(OUTLIER)
    return True


def _retry_inverted(dr: Draft) -> bool:
    """librdkafka 2.3 and 2.4 document retry.backoff.ms and retry.backoff.max.ms for producers only (C/P: P)."""
    rdkafka = dr.family == "librdkafka" and (dr.release >= (2, 5) or (dr.release >= (2, 3) and dr.producer))
    if not ((dr.family == "java" and dr.release >= (3, 7)) or rdkafka):
        return False
    dr.push.set("retry.backoff.ms", "5000")
    dr.expected.add("retry-backoff-inverted")
    dr.allowed.add(OUTLIER)
    return True


def _socket_setup_inverted(dr: Draft) -> bool:
    if dr.family != "java":
        return False
    dr.push.set("socket.connection.setup.timeout.ms", "60000")
    dr.expected.add("socket-setup-timeout-inverted")
    dr.allowed.add(OUTLIER)
    return True


_TYPOS = {"producer": (("enable.idempotance", "true"), ("linger.msec", "20"), ("retires", "5"),
                       ("compresion.type", "lz4")),
          "consumer": (("max.poll.record", "100"), ("auto.offest.reset", "earliest"), ("fetch.min.byte", "1024"),
                       ("session.timout.ms", "30000"))}


def _typo(dr: Draft) -> bool:
    if dr.family != "java" or dr.app.role not in _TYPOS:
        return False
    dr.push.set(*dr.rng.choice(_TYPOS[dr.app.role]), "STRING")
    dr.expected.add("unknown-key-typo")
    dr.allowed.add("kip-sensitive-custom")  # a custom key by the KIP's definition, published with its value
    return True


_SESSION_KEYS = {"java": ("session.timeout.ms", "heartbeat.interval.ms", 1),
                 "librdkafka": ("session.timeout.ms", "heartbeat.interval.ms", 1),
                 "kafka-python": ("session_timeout_ms", "heartbeat_interval_ms", 1),
                 "sarama": ("Consumer.Group.Session.Timeout", "Consumer.Group.Heartbeat.Interval", 0),
                 "franz-go": ("SessionTimeout", "HeartbeatInterval", 0)}


def _session_pair(dr: Draft, session_ms: int, heartbeat_ms: int, rule: str, *, go: bool) -> bool:
    if not (dr.consumer or dr.family in ("sarama", "franz-go")) or (not go and dr.family in ("sarama", "franz-go")):
        return False
    session_key, heartbeat_key, in_ms = _SESSION_KEYS[dr.family]
    show = (lambda ms: str(ms)) if in_ms else (lambda ms: f"{ms / 1000:g}s")
    dr.push.set(session_key, show(session_ms)).set(heartbeat_key, show(heartbeat_ms))
    dr.expected.add(rule)
    dr.allowed |= {OUTLIER, "heartbeat-above-third"}
    return True


def _heartbeat_equal(dr: Draft) -> bool:
    return _session_pair(dr, 10000, 10000, "heartbeat-not-below-session", go=False)


def _heartbeat_third(dr: Draft) -> bool:
    return _session_pair(dr, 9000, 4000, "heartbeat-above-third", go=True)


def _session_bounds(dr: Draft) -> bool:
    return _session_pair(dr, 4000, 1000, "session-timeout-out-of-bounds", go=False)


def _fetch_wait(dr: Draft) -> bool:
    if not dr.consumer or dr.family != "java":
        return False
    dr.push.set("fetch.max.wait.ms", "30000")
    dr.expected.add("fetch-wait-not-below-request-timeout")
    dr.allowed.add(OUTLIER)
    return True


def _consumer_protocol_classic_keys(dr: Draft) -> bool:
    if not dr.consumer or not ((dr.family == "java" and dr.release >= (3, 7)) or
                                 (dr.family == "librdkafka" and dr.release >= (2, 4))):
        return False
    dr.push.set("group.protocol", "consumer").set("session.timeout.ms", "30000")
    dr.expected.add("consumer-protocol-ignores-classic-keys")
    dr.allowed.add("group-protocol-migration")
    return True


def _batching_disabled(dr: Draft) -> bool:
    if not dr.producer or dr.family not in ("java", "librdkafka"):
        return False
    dr.push.set("batch.size", "0")
    dr.expected.add("batching-disabled")
    dr.allowed.add(OUTLIER)
    return True


def _acks_all_retries_zero(dr: Draft) -> bool:
    """acks=all with retries=0 and no explicit idempotence (where it is explicit, idempotence-retries says it)."""
    if not dr.producer or dr.family != "java" or dr.explicit("enable.idempotence"):
        return False
    dr.push.set("acks", "all").set("retries", "0")
    dr.expected.add("acks-all-retries-zero")
    if java_yields(dr.release):  # and the user's retries=0 turns the default idempotence off
        dr.expected.add("idempotence-implicitly-disabled")
    dr.allowed.add(OUTLIER)
    return True


def _max_block_unbounded(dr: Draft) -> bool:
    if not dr.producer or dr.family != "java":
        return False
    dr.push.set("max.block.ms", dr.rng.choice(("9223372036854775807", "2147483647", "604800000")), "LONG")
    dr.expected.add("max-block-unbounded")
    dr.allowed.add(OUTLIER)
    return True


def _retries_limited(dr: Draft) -> bool:
    """A handful of retries on a Java producer (every release the set draws has delivery.timeout.ms)."""
    if not dr.producer or dr.family != "java":
        return False
    dr.push.set("retries", dr.rng.choice(("1", "3", "5", "10")), "INT")
    dr.expected.add("retries-limited")
    return True


def _delivery_unbounded(dr: Draft) -> bool:
    if not dr.producer or dr.family not in ("java", "librdkafka") or dr.push.get("transactional.id"):
        return False
    if dr.family == "java":
        dr.push.set("delivery.timeout.ms", dr.rng.choice(("2147483647", "604800000")), "INT")
    else:
        dr.push.set("message.timeout.ms", "0", "INT")  # librdkafka: infinite
    dr.expected.add("delivery-timeout-unbounded")
    dr.allowed.add(OUTLIER)
    return True


def _buffer_too_small(dr: Draft) -> bool:
    if not dr.producer or dr.family != "java":
        return False
    dr.push.set("buffer.memory", dr.rng.choice(("10000", "65536", "524288")), "LONG").set("batch.size", "1000", "INT")
    dr.expected.add("buffer-memory-too-small")
    dr.allowed.add(OUTLIER)
    return True


def _bootstrap_malformed(dr: Draft) -> bool:
    if dr.family not in ("java", "librdkafka"):
        return False
    servers = dr.push.get("bootstrap.servers") or "kafka-1:9092"
    broken = dr.rng.choice((f"http://{servers}", f"SSL://{servers}", f"{servers},", f"{servers},,kafka-9:9092"))
    dr.push.set("bootstrap.servers", broken)
    dr.expected.add("bootstrap-servers-malformed")
    return True


def _bootstrap_public(dr: Draft) -> bool:
    if dr.family not in ("java", "librdkafka") or "bootstrap-servers-malformed" in dr.expected:
        return False
    dr.push.set("bootstrap.servers", dr.rng.choice(("3.34.130.109:9092", "54.196.138.162:9092,54.196.138.163:9092",
                                                    "[2600:1f18:4a3:6900::10]:9092")))
    dr.expected.add("bootstrap-public-address")
    return True


def _max_poll_records(dr: Draft) -> bool:
    if not dr.consumer or dr.family != "java":
        return False
    dr.push.set("max.poll.records", "2147483647")
    dr.expected.add("max-poll-records-out-of-range")
    dr.allowed.add(OUTLIER)
    return True


def _fetch_size(dr: Draft) -> bool:
    if not dr.consumer or dr.family != "java":
        return False
    dr.push.set(dr.rng.choice(("fetch.max.bytes", "max.partition.fetch.bytes")), "2147483647")
    dr.expected.add("fetch-size-out-of-range")
    dr.allowed.add(OUTLIER)
    return True


def _exactly_once_single_replica(dr: Draft) -> bool:
    if dr.family != "java" or dr.app.role != "streams":
        return False
    guarantee = "exactly_once_v2" if dr.release >= (3, 0) else "exactly_once"
    dr.push.set("processing.guarantee", guarantee, "STRING").set("replication.factor", "1", "INT")
    dr.expected.add("exactly-once-single-replica")
    return True


ANOMALIES: tuple[Fault, ...] = (
    ("anomaly/acks-zero", 5, _acks_zero),
    ("anomaly/idempotence-with-acks-1", 3, _idempotence_acks1),
    ("anomaly/idempotence-max-in-flight", 2, _idempotence_inflight),
    ("anomaly/idempotence-retries-0", 2, _idempotence_retries),
    ("anomaly/idempotence-implicitly-disabled", 4, _implicitly_disabled),
    ("anomaly/transactional-without-idempotence", 2, _transactional_no_idempotence),
    ("anomaly/delivery-timeout-too-short", 2, _delivery_timeout),
    ("anomaly/buffer-below-batch", 2, _buffer_below_batch),
    ("anomaly/reconnect-backoff-inverted", 2, _reconnect_inverted),
    ("anomaly/retry-backoff-inverted", 2, _retry_inverted),
    ("anomaly/socket-setup-timeout-inverted", 1, _socket_setup_inverted),
    ("anomaly/typo", 4, _typo),
    ("anomaly/heartbeat-not-below-session", 2, _heartbeat_equal),
    ("anomaly/session-below-3x-heartbeat", 4, _heartbeat_third),
    ("anomaly/session-timeout-out-of-bounds", 2, _session_bounds),
    ("anomaly/fetch-wait-not-below-request-timeout", 2, _fetch_wait),
    ("anomaly/consumer-protocol-with-classic-keys", 2, _consumer_protocol_classic_keys),
    ("anomaly/batching-disabled", 2, _batching_disabled),
    ("anomaly/acks-all-retries-0", 2, _acks_all_retries_zero),
    ("anomaly/bootstrap-servers-malformed", 2, _bootstrap_malformed),
    ("anomaly/max-block-unbounded", 1, _max_block_unbounded),
    ("anomaly/delivery-timeout-unbounded", 1, _delivery_unbounded),
    ("anomaly/retries-limited", 2, _retries_limited),
    ("anomaly/buffer-memory-too-small", 1, _buffer_too_small),
    ("anomaly/bootstrap-public-address", 1, _bootstrap_public),
    ("anomaly/max-poll-records-out-of-range", 1, _max_poll_records),
    ("anomaly/fetch-size-out-of-range", 1, _fetch_size),
    ("anomaly/exactly-once-single-replica", 2, _exactly_once_single_replica),
)

# One-off values two or more orders of magnitude from anything the fleet uses: (family, role, key, values).
OUTLIERS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("java", "producer", "max.request.size", ("1073741824", "2000000000")),
    ("java", "producer", "metadata.max.age.ms", ("300", "500")),
    ("java", "producer", "request.timeout.ms", ("300", "250")),
    ("java", "consumer", "max.partition.fetch.bytes", ("1024", "512")),
    ("java", "consumer", "max.poll.interval.ms", ("300", "1000")),
    ("java", "consumer", "max.poll.records", ("500000", "1000000")),
    ("java", "admin", "default.api.timeout.ms", ("60", "100")),
    ("librdkafka", "producer", "queue.buffering.max.kbytes", ("1024", "512")),
    ("librdkafka", "consumer", "fetch.message.max.bytes", ("1024", "2048")),
    ("kafka-python", "producer", "max_request_size", ("1073741824",)),
    ("kafka-python", "consumer", "max_poll_records", ("500000",)),
)
