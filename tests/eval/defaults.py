"""Documented client defaults, per family, role and release, written down for the evaluation fleet.

Independent of ``udfs/rules/data``: these tables were written from each client's
own documentation (Apache Kafka's Producer/Consumer/Admin Configs pages per
release, librdkafka's CONFIGURATION.md, kafka-python's KafkaProducer/KafkaConsumer
keyword arguments, sarama's ``NewConfig``, franz-go's ``kgo`` options). A client
pushes the subset it knows with ``is_default=true``; sensitive keys (``sasl.*``,
``ssl.*``, ``security.*``, PASSWORD and CLASS types) are left out, as a KIP-compliant
client withholds them.

Each row is ``(key, ConfigDef type, default value as the client prints it, since)``;
``since`` is the first release that has the key (a version tuple).
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "FRANZ_GO",
    "JAVA_ADMIN",
    "JAVA_COMMON",
    "JAVA_CONSUMER",
    "JAVA_PRODUCER",
    "KAFKA_PYTHON_CONSUMER",
    "KAFKA_PYTHON_PRODUCER",
    "RDKAFKA_COMMON",
    "RDKAFKA_CONSUMER",
    "RDKAFKA_PRODUCER",
    "SARAMA_COMMON",
    "SARAMA_CONSUMER",
    "SARAMA_PRODUCER",
    "Row",
    "java_default",
    "rows_for",
]

Row = tuple[str, str, str, tuple[int, ...]]
_ANY: Final = (0,)
_JAVA_RANGE = "org.apache.kafka.clients.consumer.RangeAssignor"
_JAVA_COOP = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"

# CommonClientConfigs, as every Java client documents them (3.x and 4.x).
JAVA_COMMON: Final[tuple[Row, ...]] = (
    ("client.dns.lookup", "STRING", "use_all_dns_ips", _ANY),
    ("metadata.max.age.ms", "LONG", "300000", _ANY),
    ("reconnect.backoff.ms", "LONG", "50", _ANY),
    ("reconnect.backoff.max.ms", "LONG", "1000", _ANY),
    ("retry.backoff.ms", "LONG", "100", _ANY),
    ("retry.backoff.max.ms", "LONG", "1000", (3, 7)),           # KIP-580
    ("socket.connection.setup.timeout.ms", "LONG", "10000", _ANY),
    ("socket.connection.setup.timeout.max.ms", "LONG", "30000", _ANY),
    ("send.buffer.bytes", "INT", "131072", _ANY),
    ("request.timeout.ms", "INT", "30000", _ANY),
    ("metrics.num.samples", "INT", "2", _ANY),
    ("metrics.sample.window.ms", "LONG", "30000", _ANY),
    ("metrics.recording.level", "STRING", "INFO", _ANY),
    ("enable.metrics.push", "BOOLEAN", "true", (3, 7)),          # KIP-714
)

JAVA_PRODUCER: Final[tuple[Row, ...]] = (
    ("acks", "STRING", "all", _ANY),                              # all since 3.0 (KIP-679)
    ("batch.size", "INT", "16384", _ANY),
    ("buffer.memory", "LONG", "33554432", _ANY),
    ("compression.type", "STRING", "none", _ANY),
    ("delivery.timeout.ms", "INT", "120000", _ANY),
    ("enable.idempotence", "BOOLEAN", "true", _ANY),              # true since 3.0 (KIP-679)
    ("linger.ms", "LONG", "0", _ANY),                             # 5 from 4.0 (KIP-1030), see java_default
    ("max.block.ms", "LONG", "60000", _ANY),
    ("max.in.flight.requests.per.connection", "INT", "5", _ANY),
    ("max.request.size", "INT", "1048576", _ANY),
    ("retries", "INT", "2147483647", _ANY),
    ("transaction.timeout.ms", "INT", "60000", _ANY),
    ("partitioner.ignore.keys", "BOOLEAN", "false", (3, 3)),      # KIP-794
    ("partitioner.adaptive.partitioning.enable", "BOOLEAN", "true", (3, 3)),
    ("metadata.max.idle.ms", "LONG", "300000", _ANY),
    ("receive.buffer.bytes", "INT", "32768", _ANY),
    ("connections.max.idle.ms", "LONG", "540000", _ANY),
)

JAVA_CONSUMER: Final[tuple[Row, ...]] = (
    ("group.protocol", "STRING", "classic", (3, 7)),              # KIP-848
    ("session.timeout.ms", "INT", "45000", _ANY),                 # 45 s since 3.0 (KIP-735)
    ("heartbeat.interval.ms", "INT", "3000", _ANY),
    ("max.poll.records", "INT", "500", _ANY),
    ("max.poll.interval.ms", "INT", "300000", _ANY),
    ("fetch.min.bytes", "INT", "1", _ANY),
    ("fetch.max.bytes", "INT", "52428800", _ANY),
    ("fetch.max.wait.ms", "INT", "500", _ANY),
    ("max.partition.fetch.bytes", "INT", "1048576", _ANY),
    ("auto.offset.reset", "STRING", "latest", _ANY),
    ("enable.auto.commit", "BOOLEAN", "true", _ANY),
    ("auto.commit.interval.ms", "INT", "5000", _ANY),
    ("partition.assignment.strategy", "LIST", f"{_JAVA_RANGE},{_JAVA_COOP}", _ANY),
    ("isolation.level", "STRING", "read_uncommitted", _ANY),
    ("check.crcs", "BOOLEAN", "true", _ANY),
    ("allow.auto.create.topics", "BOOLEAN", "true", _ANY),
    ("exclude.internal.topics", "BOOLEAN", "true", _ANY),
    ("default.api.timeout.ms", "INT", "60000", _ANY),
    ("receive.buffer.bytes", "INT", "65536", _ANY),
    ("connections.max.idle.ms", "LONG", "540000", _ANY),
)

JAVA_ADMIN: Final[tuple[Row, ...]] = (
    ("default.api.timeout.ms", "INT", "60000", _ANY),
    ("retries", "INT", "2147483647", _ANY),
    ("receive.buffer.bytes", "INT", "65536", _ANY),
    ("connections.max.idle.ms", "LONG", "300000", _ANY),
)

# librdkafka CONFIGURATION.md (global properties, then the producer/consumer ones).
RDKAFKA_COMMON: Final[tuple[Row, ...]] = (
    ("message.max.bytes", "INT", "1000000", _ANY),
    ("receive.message.max.bytes", "INT", "100000000", _ANY),
    ("max.in.flight.requests.per.connection", "INT", "1000000", _ANY),
    ("topic.metadata.refresh.interval.ms", "INT", "300000", _ANY),
    ("metadata.max.age.ms", "INT", "900000", _ANY),
    ("socket.timeout.ms", "INT", "60000", _ANY),
    ("socket.send.buffer.bytes", "INT", "0", _ANY),
    ("socket.receive.buffer.bytes", "INT", "0", _ANY),
    ("socket.keepalive.enable", "BOOLEAN", "false", _ANY),
    ("reconnect.backoff.ms", "INT", "100", _ANY),
    ("reconnect.backoff.max.ms", "INT", "10000", _ANY),
    ("retry.backoff.ms", "INT", "100", _ANY),
    ("retry.backoff.max.ms", "INT", "1000", (2, 3)),
    ("statistics.interval.ms", "INT", "0", _ANY),
    ("api.version.request", "BOOLEAN", "true", _ANY),
    ("broker.address.family", "STRING", "any", _ANY),
    ("socket.connection.setup.timeout.ms", "INT", "30000", _ANY),
    ("connections.max.idle.ms", "INT", "0", _ANY),
)

RDKAFKA_PRODUCER: Final[tuple[Row, ...]] = (
    ("enable.idempotence", "BOOLEAN", "false", _ANY),
    ("queue.buffering.max.messages", "INT", "100000", _ANY),
    ("queue.buffering.max.kbytes", "INT", "1048576", _ANY),
    ("queue.buffering.max.ms", "DOUBLE", "5", _ANY),             # alias linger.ms
    ("message.send.max.retries", "INT", "2147483647", _ANY),     # alias retries
    ("batch.num.messages", "INT", "10000", _ANY),
    ("batch.size", "INT", "1000000", _ANY),
    ("compression.codec", "STRING", "none", _ANY),               # alias compression.type
    ("request.required.acks", "INT", "-1", _ANY),                # alias acks
    ("request.timeout.ms", "INT", "30000", _ANY),
    ("message.timeout.ms", "INT", "300000", _ANY),               # alias delivery.timeout.ms
    ("partitioner", "STRING", "consistent_random", _ANY),
    ("sticky.partitioning.linger.ms", "INT", "10", _ANY),
    ("transaction.timeout.ms", "INT", "60000", _ANY),
)

RDKAFKA_CONSUMER: Final[tuple[Row, ...]] = (
    ("partition.assignment.strategy", "STRING", "range,roundrobin", _ANY),
    ("session.timeout.ms", "INT", "45000", _ANY),
    ("heartbeat.interval.ms", "INT", "3000", _ANY),
    ("group.protocol", "STRING", "classic", (2, 4)),
    ("coordinator.query.interval.ms", "INT", "600000", _ANY),
    ("max.poll.interval.ms", "INT", "300000", _ANY),
    ("enable.auto.commit", "BOOLEAN", "true", _ANY),
    ("auto.commit.interval.ms", "INT", "5000", _ANY),
    ("enable.auto.offset.store", "BOOLEAN", "true", _ANY),
    ("queued.min.messages", "INT", "100000", _ANY),
    ("queued.max.messages.kbytes", "INT", "65536", _ANY),
    ("fetch.wait.max.ms", "INT", "500", _ANY),
    ("fetch.message.max.bytes", "INT", "1048576", _ANY),
    ("fetch.max.bytes", "INT", "52428800", _ANY),
    ("fetch.min.bytes", "INT", "1", _ANY),
    ("fetch.error.backoff.ms", "INT", "500", _ANY),
    ("isolation.level", "STRING", "read_committed", _ANY),
    ("enable.partition.eof", "BOOLEAN", "false", _ANY),
    ("check.crcs", "BOOLEAN", "false", _ANY),
    ("allow.auto.create.topics", "BOOLEAN", "false", _ANY),
    ("auto.offset.reset", "STRING", "largest", _ANY),
)

# kafka-python 2.x keyword arguments (KafkaProducer / KafkaConsumer DEFAULT_CONFIG).
KAFKA_PYTHON_PRODUCER: Final[tuple[Row, ...]] = (
    ("acks", "STRING", "1", _ANY),
    ("batch_size", "INT", "16384", _ANY),
    ("linger_ms", "INT", "0", _ANY),
    ("buffer_memory", "LONG", "33554432", _ANY),
    ("max_block_ms", "INT", "60000", _ANY),
    ("max_request_size", "INT", "1048576", _ANY),
    ("request_timeout_ms", "INT", "30000", _ANY),
    ("retry_backoff_ms", "INT", "100", _ANY),
    ("reconnect_backoff_ms", "INT", "50", _ANY),
    ("reconnect_backoff_max_ms", "INT", "1000", _ANY),
    ("reconnect_backoff_max_ms", "INT", "30000", (2, 1)),  # DEFAULT_CONFIG: 2.0.2 1000, 2.2.15 and 3.0.12 30000
    ("max_in_flight_requests_per_connection", "INT", "5", _ANY),
    ("metadata_max_age_ms", "INT", "300000", _ANY),
    ("connections_max_idle_ms", "INT", "540000", _ANY),
)

KAFKA_PYTHON_CONSUMER: Final[tuple[Row, ...]] = (
    ("fetch_min_bytes", "INT", "1", _ANY),
    ("fetch_max_wait_ms", "INT", "500", _ANY),
    ("fetch_max_bytes", "INT", "52428800", _ANY),
    ("max_partition_fetch_bytes", "INT", "1048576", _ANY),
    ("request_timeout_ms", "INT", "305000", _ANY),
    ("retry_backoff_ms", "INT", "100", _ANY),
    ("reconnect_backoff_ms", "INT", "50", _ANY),
    ("auto_offset_reset", "STRING", "latest", _ANY),
    ("enable_auto_commit", "BOOLEAN", "true", _ANY),
    ("auto_commit_interval_ms", "INT", "5000", _ANY),
    ("check_crcs", "BOOLEAN", "true", _ANY),
    ("metadata_max_age_ms", "INT", "300000", _ANY),
    ("partition_assignment_strategy", "LIST", "RangePartitionAssignor,RoundRobinPartitionAssignor", _ANY),
    ("max_poll_records", "INT", "500", _ANY),
    ("max_poll_interval_ms", "INT", "300000", _ANY),
    ("session_timeout_ms", "INT", "10000", _ANY),
    ("heartbeat_interval_ms", "INT", "3000", _ANY),
)

# sarama.NewConfig(): field paths of the Config struct, values as Go prints them (time.Duration as LONG).
SARAMA_COMMON: Final[tuple[Row, ...]] = (
    ("Net.MaxOpenRequests", "INT", "5", _ANY),
    ("Net.DialTimeout", "LONG", "30s", _ANY),
    ("Net.ReadTimeout", "LONG", "30s", _ANY),
    ("Net.WriteTimeout", "LONG", "30s", _ANY),
    ("Metadata.Retry.Max", "INT", "3", _ANY),
    ("Metadata.Retry.Backoff", "LONG", "250ms", _ANY),
    ("Metadata.RefreshFrequency", "LONG", "10m0s", _ANY),
    ("Metadata.Full", "BOOLEAN", "true", _ANY),
    ("ChannelBufferSize", "INT", "256", _ANY),
)

SARAMA_PRODUCER: Final[tuple[Row, ...]] = (
    ("Producer.MaxMessageBytes", "INT", "1048576", _ANY),
    ("Producer.RequiredAcks", "SHORT", "1", _ANY),
    ("Producer.Timeout", "LONG", "10s", _ANY),
    ("Producer.Idempotent", "BOOLEAN", "false", _ANY),
    ("Producer.Retry.Max", "INT", "3", _ANY),
    ("Producer.Retry.Backoff", "LONG", "100ms", _ANY),
    ("Producer.Return.Successes", "BOOLEAN", "false", _ANY),
)

SARAMA_CONSUMER: Final[tuple[Row, ...]] = (
    ("Consumer.Group.Session.Timeout", "LONG", "10s", _ANY),
    ("Consumer.Group.Heartbeat.Interval", "LONG", "3s", _ANY),
    ("Consumer.Group.Rebalance.GroupStrategies", "LIST", "range", _ANY),
    ("Consumer.Group.Rebalance.Timeout", "LONG", "1m0s", _ANY),
    ("Consumer.Fetch.Min", "INT", "1", _ANY),
    ("Consumer.Fetch.Default", "INT", "1048576", _ANY),
    ("Consumer.MaxWaitTime", "LONG", "500ms", _ANY),
    ("Consumer.MaxProcessingTime", "LONG", "100ms", _ANY),
    ("Consumer.Offsets.Initial", "LONG", "-1", _ANY),
    ("Consumer.Offsets.AutoCommit.Enable", "BOOLEAN", "true", _ANY),
    ("Consumer.Offsets.AutoCommit.Interval", "LONG", "1s", _ANY),
)

# franz-go kgo option names and their documented defaults (RequiredAcks is an interface: withheld as CLASS).
FRANZ_GO: Final[tuple[Row, ...]] = (
    ("DialTimeout", "LONG", "10s", _ANY),
    ("RequestTimeoutOverhead", "LONG", "10s", _ANY),
    ("ConnIdleTimeout", "LONG", "20s", _ANY),
    ("MetadataMaxAge", "LONG", "5m0s", _ANY),
    ("MetadataMinAge", "LONG", "5s", _ANY),
    ("RetryTimeout", "LONG", "30s", _ANY),
    ("ProducerBatchMaxBytes", "INT", "1000012", _ANY),
    ("MaxBufferedRecords", "INT", "10000", _ANY),
    ("FetchMaxWait", "LONG", "5s", _ANY),
    ("FetchMaxBytes", "INT", "52428800", _ANY),
    ("SessionTimeout", "LONG", "45s", _ANY),
    ("HeartbeatInterval", "LONG", "3s", _ANY),
    ("Balancers", "LIST", "cooperative-sticky", _ANY),
)


def rows_for(table: tuple[Row, ...], version: tuple[int, ...]) -> list[Row]:
    """The rows of ``table`` a client of ``version`` has."""
    return [row for row in table if version >= row[3]]


def java_default(key: str, version: tuple[int, ...]) -> str | None:
    """A Java client's documented default where it changed between releases, else None.

    acks and enable.idempotence changed in 3.0 (KIP-679), session.timeout.ms in 3.0
    (KIP-735), the consumer's partition.assignment.strategy in 3.0 (KIP-726), linger.ms
    in 4.0 (KIP-1030).
    """
    before_3 = version < (3, 0)
    if key == "linger.ms":
        return "5" if version >= (4, 0) else "0"
    if key == "acks":
        return "1" if before_3 else "all"
    if key == "enable.idempotence":
        return "false" if before_3 else "true"
    if key == "session.timeout.ms":
        return "10000" if before_3 else "45000"
    if key == "partition.assignment.strategy" and before_3:
        return _JAVA_RANGE
    return None
