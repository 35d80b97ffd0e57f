"""The producer's anomaly predicates: vectorized masks over :class:`udfs.rules.effective.Effective`.

Each function takes the batch's effective values and returns one boolean per push;
``udfs.rules.anomalies`` pairs them with rule ids and messages. Where a client
adjusts a value itself, the predicate judges what the client will run with:

- Java (and kafka-python 3): idempotence is on by default from 3.0 and, in the
  releases ``defaults.json`` records, silently turned off when the user sets acks,
  retries or max.in.flight in conflict (``idempotence-implicitly-disabled``); the
  conflict rules fire only for an explicit ``enable.idempotence=true``, and only for
  values the user set: an idempotent Java producer sets acks (default 1 before 3.0)
  to all and retries to the maximum itself when they were not set. A default
  ``delivery.timeout.ms`` below linger + request timeout is raised by the client.
- librdkafka: with idempotence on it adjusts acks, retries and max.in.flight
  unless the user set them, so only explicit conflicts count; message.timeout.ms
  (``delivery.timeout.ms``) 0 means infinite.
"""

from __future__ import annotations

from typing import Final

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from udfs.rules.effective import Effective, flag
from udfs.rules.identity import UUID

__all__ = ["FAILOVER_MS", "IDEMPOTENCE_MAX_IN_FLIGHT", "KRAFT_FAILOVER_MS", "MIN_ACKS_ALL_REQUEST_TIMEOUT_MS",
           "MIN_BUFFER_MEMORY", "RANDOM_ID", "UNBOUNDED_MS", "acks_all_retries_zero", "acks_leader_only", "acks_zero",
           "batch_above_request_size", "batching_disabled", "buffer_below_batch", "buffer_too_small",
           "delivery_short", "delivery_unbounded", "idem_acks", "idem_implicit", "idem_inflight", "idem_off_reordering",
           "idem_retries", "max_block_short", "max_block_unbounded", "request_timeout_short", "retries_limited",
           "socket_timeout_below_request", "transactional", "transactional_id_random", "txn_no_idem"]

IDEMPOTENCE_MAX_IN_FLIGHT: Final = 5
UNBOUNDED_MS: Final = 86_400_000  # a day: a wait this long is no bound (max-block-, delivery-timeout-unbounded)
MIN_BUFFER_MEMORY: Final = 1 << 20  # buffer-memory-too-small
# retries-limited: zookeeper.session.timeout.ms, the longest default wait to notice a dead broker (KRaft's
# broker.session.timeout.ms is 9 s) before its leaderships move
FAILOVER_MS: Final = 18_000
KRAFT_FAILOVER_MS: Final = 9_000  # max-block-too-short, delivery-timeout-too-short: the shortest such wait, KRaft's
MIN_ACKS_ALL_REQUEST_TIMEOUT_MS: Final = 10_000  # request-timeout-below-replica-lag: replica.lag.time.max.ms before
#                                                  2.5 (30 s from 2.5, KIP-537)
RANDOM_ID: Final = f"{UUID}|[0-9a-fA-F]{{32}}"  # transactional-id-random: a UUID, with or without its dashes


def _counts(e: Effective, key: str) -> pd.Series:
    """librdkafka and the Java producer adjust conflicting idempotence settings unless the user set them.

    Java (ProducerConfig.postProcessParsedConfig) sets acks to all and retries to Integer.MAX_VALUE
    for an idempotent producer when they were not set; a default acks 1 (before 3.0) is not a conflict.
    """
    return ~e.judge.isin(["librdkafka", "java"]) | e.explicit[key]


def _idempotence_on(e: Effective) -> pd.Series:
    """Idempotence is on whatever else is set: set explicitly, or on by a default that does not give way.

    The Java producer's default never holds against a conflict: from 3.0.1 and 3.1.1 it gives way, and
    3.0.0 and 3.1.0 applied it only when set (KAFKA-13598; ``defaults.json``).
    """
    on = flag(e.value("enable.idempotence").eq(True))
    return on & (e.explicit["enable.idempotence"] | (~e.yields & (e.judge != "java")))


def _acks_all(e: Effective) -> pd.Series:
    return flag(e.value("acks") == -1)


def idem_acks(e: Effective) -> pd.Series:
    return e.producers & _idempotence_on(e) & flag(e.value("acks").isin([0, 1])) & _counts(e, "acks")


def idem_inflight(e: Effective) -> pd.Series:
    bad = flag(e.value("max.in.flight.requests.per.connection") > IDEMPOTENCE_MAX_IN_FLIGHT)
    return e.producers & _idempotence_on(e) & bad & _counts(e, "max.in.flight.requests.per.connection")


def idem_retries(e: Effective) -> pd.Series:
    return e.producers & _idempotence_on(e) & flag(e.value("retries") == 0) & _counts(e, "retries")


def idem_implicit(e: Effective) -> pd.Series:
    """Default idempotence given way (releases with that behaviour) to a value the user set.

    Where the user did not set it, the release's default (on) holds whatever value was pushed: the Java
    producer pushes its post-processed ``false`` once it has given way.
    """
    acks, mif = e.value("acks"), "max.in.flight.requests.per.connection"
    conflict = ((flag(acks.notna() & (acks != -1)) & e.explicit["acks"])
                | (flag(e.value(mif) > IDEMPOTENCE_MAX_IN_FLIGHT) & e.explicit[mif])
                | (flag(e.value("retries") == 0) & e.explicit["retries"]))
    return e.producers & e.yields & ~e.explicit["enable.idempotence"] & conflict


def idem_off_reordering(e: Effective) -> pd.Series:
    """An acks=all producer with enable.idempotence=false the user set (an unset release default is not judged),
    retrying with more than one request in flight. Idempotence would give the same durability
    without duplicates or reordering; with acks 0 or 1 it cannot hold, so false is no mistake there. Not where Java
    turned its own default off (idempotence-implicitly-disabled) nor on a transactional producer
    (transactional-without-idempotence)."""
    off = e.set_by_user("enable.idempotence", e.value("enable.idempotence").eq(False))
    retrying = flag(e.value("retries") > 0) & flag(e.value("max.in.flight.requests.per.connection") > 1)
    return (e.producers & e.judge.isin(["java", "librdkafka"]) & off & _acks_all(e) & retrying
            & ~idem_implicit(e) & ~transactional(e))


def transactional(e: Effective) -> pd.Series:
    txn = e.value("transactional.id").astype("string").str.strip()
    return flag(txn.notna() & (txn != ""))


def txn_no_idem(e: Effective) -> pd.Series:
    off = flag(e.value("enable.idempotence").eq(False)) & (e.explicit["enable.idempotence"] | (e.judge == "none"))
    return e.producers & transactional(e) & off


def transactional_id_random(e: Effective) -> pd.Series:
    """A UUID in the transactional.id: a new id every start. Not on a producer Kafka Streams configures (under
    exactly-once v2 its id holds the process UUID, and Streams fences through the consumer group, KIP-447)."""
    ids = pa.array(e.value("transactional.id").tolist(), pa.string(), from_pandas=True)
    random = pc.fill_null(pc.match_substring_regex(ids, RANDOM_ID), False).to_numpy(zero_copy_only=False)
    return e.producers & transactional(e) & pd.Series(random, index=e.role.index) & ~e.streams


def batching_disabled(e: Effective) -> pd.Series:
    return e.producers & flag(e.value("batch.size") == 0)


def batch_above_request_size(e: Effective) -> pd.Series:
    """batch.size set above the request cap (Java max.request.size, librdkafka message.max.bytes)."""
    return e.producers & e.set_by_user("batch.size", e.value("batch.size") > e.value("max.request.size"))


def acks_all_retries_zero(e: Effective) -> pd.Series:
    return e.producers & _acks_all(e) & flag(e.value("retries") == 0) & ~_idempotence_on(e)


def retries_limited(e: Effective) -> pd.Series:
    """Java from 2.1, where delivery.timeout.ms bounds a send (KIP-91): retries set so low that, even at the
    longest backoff, they run out before it and before a dead broker's leaderships move (0 is for
    acks-all-retries-zero and idempotence-retries). Not librdkafka: on the real-world set its reviewers judged
    5 of 7 such producers fine (``docs/detection.md``)."""
    retries = e.value("retries")
    backoff = pd.concat([e.value("retry.backoff.ms"), e.value("retry.backoff.max.ms")], axis=1).max(axis=1)
    budget = retries * backoff
    early = flag(retries >= 1) & flag(budget < e.value("delivery.timeout.ms")) & flag(budget < FAILOVER_MS)
    return e.producers & (e.judge == "java") & e.explicit["retries"] & early


def request_timeout_short(e: Effective) -> pd.Series:
    """acks=all with a request timeout the user set below what a follower may lag before it leaves the ISR."""
    short = e.value("request.timeout.ms") < MIN_ACKS_ALL_REQUEST_TIMEOUT_MS
    return e.producers & _acks_all(e) & e.set_by_user("request.timeout.ms", short)


def socket_timeout_below_request(e: Effective) -> pd.Series:
    """librdkafka: the client gives a produce request up (socket.timeout.ms) before the broker's ack timeout
    (request.timeout.ms) runs out; judged where the user set either."""
    below = flag(e.value("socket.timeout.ms") < e.value("request.timeout.ms"))
    chosen = e.explicit["socket.timeout.ms"] | e.explicit["request.timeout.ms"]
    return e.producers & (e.judge == "librdkafka") & _acks_all(e) & below & chosen


def buffer_too_small(e: Effective) -> pd.Series:
    return e.producers & e.set_by_user("buffer.memory", e.value("buffer.memory") < MIN_BUFFER_MEMORY)


def max_block_short(e: Effective) -> pd.Series:
    """Java, set by the user below even KRaft's wait to notice a dead broker; librdkafka's produce() never blocks."""
    short = e.value("max.block.ms") < KRAFT_FAILOVER_MS
    return e.producers & (e.judge == "java") & e.set_by_user("max.block.ms", short)


def max_block_unbounded(e: Effective) -> pd.Series:
    """Not on a Kafka Connect task's producer: Connect blocks its task thread on purpose (Worker sets
    max.block.ms to Long.MAX_VALUE so that a source task waits out an outage instead of failing)."""
    return e.producers & (e.judge == "java") & ~e.connect & flag(e.value("max.block.ms") >= UNBOUNDED_MS)


def delivery_unbounded(e: Effective) -> pd.Series:
    """A day or more, or librdkafka's 0 (infinite). Not on a producer Kafka Connect configures (it sets
    Integer.MAX_VALUE on its tasks' and its internal topics' producers, on purpose) nor a transactional one, whose
    transaction.timeout.ms bounds every send (Kafka Streams under exactly-once sets Integer.MAX_VALUE)."""
    dt = e.value("delivery.timeout.ms")
    unbounded = flag(dt >= UNBOUNDED_MS) | ((e.judge == "librdkafka") & flag(dt == 0))
    return e.producers & unbounded & ~e.connect & ~transactional(e)


def acks_zero(e: Effective) -> pd.Series:
    return e.producers & flag(e.value("acks") == 0)


def acks_leader_only(e: Effective) -> pd.Series:
    """librdkafka, whose acks default is all, with acks=1 set by the user (idempotence-acks says it where
    idempotence is on). Not Java: its default was 1 before 3.0, and from 3.0 idempotence-implicitly-disabled
    says it."""
    return (e.producers & (e.judge == "librdkafka") & e.explicit["acks"] & flag(e.value("acks") == 1)
            & ~_idempotence_on(e))


def delivery_short(e: Effective) -> pd.Series:
    """Below linger + request timeout (Java raises a default itself), or set by the user below a KRaft failover."""
    dt = e.value("delivery.timeout.ms")
    short = flag(dt < e.value("linger.ms") + e.value("request.timeout.ms"))
    infinite = (e.judge == "librdkafka") & flag(dt == 0)
    below_failover = e.set_by_user("delivery.timeout.ms", dt < KRAFT_FAILOVER_MS)
    judged = (e.judge != "java") | e.explicit["delivery.timeout.ms"]
    return e.producers & (short | below_failover) & ~infinite & judged


def buffer_below_batch(e: Effective) -> pd.Series:
    return e.producers & flag(e.value("buffer.memory") < e.value("batch.size"))
