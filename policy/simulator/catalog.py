"""What simulated clients look like: software families, versions, and their configuration keys.

Each family lists the versions seen in a fleet (with the highest ApiVersions
version each speaks and whether it implements the draft KIP's PushConfig; no
released client does yet, so push-capable versions stand for the first
releases that would) and, per client kind, its configuration keys with
ConfigDef type, default and realistic non-default values. Key names follow
each library's own convention (Java dotted keys, kafka-python underscores,
franz-go option names, sarama struct paths), as the KIP anticipates.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FAMILIES", "Family", "KeySpec", "Release"]


@dataclass(frozen=True, slots=True)
class KeySpec:
    """One configuration key: ConfigDef type name, default value, and common overrides."""

    key: str
    type: str
    default: str
    overrides: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Release:
    """A software version: highest ApiVersions version, PushConfig support, share of the fleet."""

    version: str
    api_versions: int
    pushes: bool
    weight: float


@dataclass(frozen=True, slots=True)
class Family:
    """A client library: the KIP-511 software name it reports, its releases and key sets per kind."""

    family: str
    software_name: str
    releases: tuple[Release, ...]
    kinds: dict[str, tuple[KeySpec, ...]]
    weight: float
    style: str  # "java" (dotted Kafka keys), "python", "go-option", "go-struct"


def _k(key: str, type_: str, default: str, *overrides: str) -> KeySpec:
    return KeySpec(key, type_, default, overrides)


_COMMON = (
    _k("bootstrap.servers", "LIST", "kafka-0:9092,kafka-1:9092,kafka-2:9092", "kafka.internal:9093"),
    _k("client.id", "STRING", "", "orders-service", "billing-etl", "fraud-scorer", "inventory-sync"),
    _k("client.dns.lookup", "STRING", "use_all_dns_ips"),
    _k("connections.max.idle.ms", "LONG", "540000", "300000"),
    _k("metadata.max.age.ms", "LONG", "300000", "60000"),
    _k("reconnect.backoff.ms", "LONG", "50", "100"),
    _k("reconnect.backoff.max.ms", "LONG", "1000", "10000"),
    _k("request.timeout.ms", "INT", "30000", "60000", "15000"),
    _k("retry.backoff.ms", "LONG", "100", "500"),
    _k("retry.backoff.max.ms", "LONG", "1000", "5000"),
    _k("receive.buffer.bytes", "INT", "32768", "65536", "-1"),
    _k("send.buffer.bytes", "INT", "131072", "-1"),
    _k("security.protocol", "STRING", "PLAINTEXT", "SASL_SSL", "SSL"),
    _k("sasl.mechanism", "STRING", "GSSAPI", "PLAIN", "SCRAM-SHA-512"),
    _k("ssl.endpoint.identification.algorithm", "STRING", "https"),
    _k("ssl.truststore.location", "STRING", "", "/etc/kafka/secrets/truststore.jks"),
    _k("metrics.num.samples", "INT", "2"),
    _k("metrics.sample.window.ms", "LONG", "30000"),
    _k("metrics.recording.level", "STRING", "INFO", "DEBUG"),
    _k("metric.reporters", "LIST", "", "io.confluent.metrics.reporter.ConfluentMetricsReporter"),
    _k("socket.connection.setup.timeout.ms", "LONG", "10000"),
    _k("socket.connection.setup.timeout.max.ms", "LONG", "30000"),
    _k("enable.metrics.push", "BOOLEAN", "true", "false"),
)

_PRODUCER = (
    _k("acks", "STRING", "all", "1", "-1"),
    _k("batch.size", "INT", "16384", "65536", "131072", "32768"),
    _k("buffer.memory", "LONG", "33554432", "67108864"),
    _k("compression.type", "STRING", "none", "lz4", "zstd", "snappy", "gzip"),
    _k("delivery.timeout.ms", "INT", "120000", "300000"),
    _k("enable.idempotence", "BOOLEAN", "true", "false"),
    _k("linger.ms", "LONG", "5", "0", "10", "20", "50"),
    _k("max.in.flight.requests.per.connection", "INT", "5", "1"),
    _k("retries", "INT", "2147483647", "10"),
    _k("max.request.size", "INT", "1048576", "5242880"),
    _k("max.block.ms", "LONG", "60000", "10000"),
    _k("partitioner.ignore.keys", "BOOLEAN", "false"),
    _k("partitioner.adaptive.partitioning.enable", "BOOLEAN", "true"),
    _k("partitioner.availability.timeout.ms", "LONG", "0"),
    _k("compression.gzip.level", "INT", "-1"),
    _k("compression.lz4.level", "INT", "9"),
    _k("compression.zstd.level", "INT", "3"),
    _k("metadata.max.idle.ms", "LONG", "300000"),
    _k("transaction.timeout.ms", "INT", "60000", "900000"),
    _k("key.serializer", "CLASS", "org.apache.kafka.common.serialization.StringSerializer"),
    _k("value.serializer", "CLASS", "org.apache.kafka.common.serialization.ByteArraySerializer",
       "io.confluent.kafka.serializers.KafkaAvroSerializer"),
    _k("interceptor.classes", "LIST", ""),
)

_CONSUMER = (
    _k("auto.offset.reset", "STRING", "latest", "earliest"),
    _k("enable.auto.commit", "BOOLEAN", "true", "false"),
    _k("auto.commit.interval.ms", "INT", "5000", "1000"),
    _k("fetch.min.bytes", "INT", "1", "1024", "65536"),
    _k("fetch.max.wait.ms", "INT", "500", "100"),
    _k("fetch.max.bytes", "INT", "52428800"),
    _k("max.partition.fetch.bytes", "INT", "1048576", "4194304"),
    _k("group.id", "STRING", "", "orders-consumers", "billing", "analytics-loader"),
    _k("group.protocol", "STRING", "classic", "consumer"),
    _k("isolation.level", "STRING", "read_uncommitted", "read_committed"),
    _k("max.poll.interval.ms", "INT", "300000", "600000"),
    _k("max.poll.records", "INT", "500", "100", "1000"),
    _k("session.timeout.ms", "INT", "45000", "30000", "10000"),
    _k("heartbeat.interval.ms", "INT", "3000", "1000"),
    _k("partition.assignment.strategy", "LIST",
       "org.apache.kafka.clients.consumer.RangeAssignor,org.apache.kafka.clients.consumer.CooperativeStickyAssignor"),
    _k("client.rack", "STRING", "", "use1-az1", "use1-az2"),
    _k("check.crcs", "BOOLEAN", "true"),
    _k("exclude.internal.topics", "BOOLEAN", "true"),
    _k("allow.auto.create.topics", "BOOLEAN", "true", "false"),
    _k("default.api.timeout.ms", "INT", "60000"),
    _k("key.deserializer", "CLASS", "org.apache.kafka.common.serialization.StringDeserializer"),
    _k("value.deserializer", "CLASS", "org.apache.kafka.common.serialization.ByteArrayDeserializer"),
)

_ADMIN = (
    _k("default.api.timeout.ms", "INT", "60000", "120000"),
    _k("retries", "INT", "2147483647", "5"),
    _k("metadata.recovery.strategy", "STRING", "rebootstrap", "none"),
    _k("metadata.recovery.rebootstrap.trigger.ms", "LONG", "300000"),
    _k("enable.metrics.push", "BOOLEAN", "false", "true"),
)

_STREAMS = (
    _k("application.id", "STRING", "orders-enricher", "fraud-features", "sessionizer"),
    _k("num.stream.threads", "INT", "1", "2", "4", "8"),
    _k("processing.guarantee", "STRING", "at_least_once", "exactly_once_v2"),
    _k("commit.interval.ms", "LONG", "30000", "100", "1000"),
    _k("replication.factor", "INT", "-1", "3"),
    _k("state.dir", "STRING", "/tmp/kafka-streams", "/var/lib/kafka-streams"),
    _k("statestore.cache.max.bytes", "LONG", "10485760", "104857600"),
    _k("num.standby.replicas", "INT", "0", "1"),
    _k("topology.optimization", "STRING", "none", "all"),
    _k("acceptable.recovery.lag", "LONG", "10000"),
    _k("max.task.idle.ms", "LONG", "0"),
    _k("poll.ms", "LONG", "100"),
    _k("buffered.records.per.partition", "INT", "1000"),
    _k("probing.rebalance.interval.ms", "LONG", "600000"),
    _k("default.key.serde", "CLASS", "org.apache.kafka.common.serialization.Serdes$StringSerde"),
    _k("default.value.serde", "CLASS", "io.confluent.kafka.streams.serdes.avro.SpecificAvroSerde"),
    _k("default.deserialization.exception.handler", "CLASS",
       "org.apache.kafka.streams.errors.LogAndFailExceptionHandler"),
    _k("rocksdb.config.setter", "CLASS", "", "com.example.streams.BoundedMemoryRocksDBConfig"),
)

# librdkafka: one configuration object for every role; a client sets the properties of its own role (librdkafka
# ignores, with a warning, what belongs to the other: CONFIGURATION.md's C/P column).
_LIBRDKAFKA = (
    _k("client.id", "STRING", "rdkafka", "payments-gw", "clickstream-ingest"),
    _k("bootstrap.servers", "STRING", "kafka-0:9092,kafka-1:9092"),
    _k("message.max.bytes", "INT", "1000000"),
    _k("retry.backoff.ms", "INT", "100"),
    _k("retry.backoff.max.ms", "INT", "1000"),
    _k("reconnect.backoff.ms", "INT", "100"),
    _k("reconnect.backoff.max.ms", "INT", "10000"),
    _k("socket.keepalive.enable", "BOOLEAN", "false", "true"),
    _k("socket.timeout.ms", "INT", "60000"),
    _k("statistics.interval.ms", "INT", "0", "60000"),
    _k("topic.metadata.refresh.interval.ms", "INT", "300000"),
    _k("metadata.max.age.ms", "INT", "900000"),
    _k("api.version.request", "BOOLEAN", "true"),
    _k("broker.address.family", "STRING", "any", "v4"),
    _k("security.protocol", "STRING", "plaintext", "sasl_ssl"),
    _k("sasl.mechanisms", "STRING", "GSSAPI", "PLAIN"),
    _k("ssl.ca.location", "STRING", "", "/etc/ssl/certs/ca.pem"),
    _k("log_level", "INT", "6"),
    _k("debug", "STRING", "", "broker,topic"),
)

_LIBRDKAFKA_PRODUCER = (
    _k("acks", "INT", "-1", "1"),
    _k("linger.ms", "DOUBLE", "5", "0", "50", "100"),
    _k("batch.num.messages", "INT", "10000", "1000"),
    _k("batch.size", "INT", "1000000"),
    _k("compression.codec", "STRING", "none", "lz4", "zstd"),
    _k("enable.idempotence", "BOOLEAN", "false", "true"),
    _k("queue.buffering.max.messages", "INT", "100000", "1000000"),
    _k("queue.buffering.max.kbytes", "INT", "1048576"),
    _k("message.timeout.ms", "INT", "300000", "30000"),
    _k("message.send.max.retries", "INT", "2147483647"),
    _k("sticky.partitioning.linger.ms", "INT", "10"),
    _k("partitioner", "STRING", "consistent_random", "murmur2_random"),
)

_LIBRDKAFKA_CONSUMER = (
    _k("enable.auto.commit", "BOOLEAN", "true", "false"),
    _k("auto.commit.interval.ms", "INT", "5000"),
    _k("session.timeout.ms", "INT", "45000", "10000"),
    _k("heartbeat.interval.ms", "INT", "3000"),
    _k("max.poll.interval.ms", "INT", "300000"),
    _k("fetch.wait.max.ms", "INT", "500"),
    _k("fetch.min.bytes", "INT", "1"),
    _k("fetch.max.bytes", "INT", "52428800"),
    _k("queued.min.messages", "INT", "100000"),
    _k("auto.offset.reset", "STRING", "largest", "smallest"),
    _k("group.id", "STRING", "", "rdkafka-consumers"),
    _k("enable.partition.eof", "BOOLEAN", "false"),
    _k("isolation.level", "STRING", "read_committed"),
)

_KAFKA_PYTHON = (
    _k("client_id", "STRING", "kafka-python-producer-1", "events-writer"),
    _k("bootstrap_servers", "LIST", "kafka-0:9092"),
    _k("acks", "STRING", "1", "all", "0"),
    _k("linger_ms", "INT", "0", "5", "20"),
    _k("batch_size", "INT", "16384", "65536"),
    _k("compression_type", "STRING", "none", "gzip", "lz4"),
    _k("retries", "INT", "2147483647", "3"),
    _k("max_in_flight_requests_per_connection", "INT", "5", "1"),
    _k("enable_idempotence", "BOOLEAN", "true", "false"),
    _k("request_timeout_ms", "INT", "30000"),
    _k("delivery_timeout_ms", "INT", "120000"),
    _k("max_block_ms", "INT", "60000"),
    _k("max_request_size", "INT", "1048576"),
    _k("metadata_max_age_ms", "INT", "300000"),
    _k("retry_backoff_ms", "INT", "100"),
    _k("reconnect_backoff_ms", "INT", "50"),
    _k("reconnect_backoff_max_ms", "INT", "30000"),
    _k("connections_max_idle_ms", "INT", "540000"),
    _k("receive_buffer_bytes", "INT", "32768"),
    _k("send_buffer_bytes", "INT", "131072"),
    _k("security_protocol", "STRING", "PLAINTEXT", "SASL_SSL"),
    _k("sasl_mechanism", "STRING", "PLAIN", "SCRAM-SHA-256"),
    _k("ssl_check_hostname", "BOOLEAN", "true"),
    _k("metrics_num_samples", "INT", "2"),
    _k("metrics_sample_window_ms", "INT", "30000"),
    _k("selector", "CLASS", "selectors.DefaultSelector"),
    _k("key_serializer", "CLASS", "", "json.dumps"),
)

_FRANZ_GO = (
    _k("ClientID", "STRING", "kgo", "ledger-writer", "audit-tail"),
    _k("SeedBrokers", "LIST", "kafka-0:9092,kafka-1:9092"),
    _k("RequiredAcks", "STRING", "AllISRAcks", "LeaderAck"),
    _k("ProducerLinger", "LONG", "0", "5ms", "10ms"),
    _k("ProducerBatchMaxBytes", "INT", "1000012"),
    _k("ProducerBatchCompression", "LIST", "snappy,none", "zstd", "lz4"),
    _k("MaxBufferedRecords", "INT", "10000"),
    _k("MaxBufferedBytes", "LONG", "0"),
    _k("RecordRetries", "INT", "2147483647"),
    _k("RecordDeliveryTimeout", "LONG", "0", "30s"),
    _k("DisableIdempotentWrite", "BOOLEAN", "false", "true"),
    _k("MaxProduceRequestsInflightPerBroker", "INT", "1", "5"),
    _k("RequestTimeoutOverhead", "LONG", "10s"),
    _k("ConnIdleTimeout", "LONG", "20s"),
    _k("DialTimeout", "LONG", "10s"),
    _k("MetadataMaxAge", "LONG", "5m"),
    _k("MetadataMinAge", "LONG", "5s"),
    _k("RetryBackoffFn", "CLASS", "kgo.defaultBackoff"),
    _k("RequestRetries", "INT", "20"),
    _k("ConsumerGroup", "STRING", "", "ledger-readers"),
    _k("SessionTimeout", "LONG", "45s", "10s"),
    _k("HeartbeatInterval", "LONG", "3s"),
    _k("RebalanceTimeout", "LONG", "60s"),
    _k("FetchMaxWait", "LONG", "5s", "500ms"),
    _k("FetchMaxBytes", "INT", "52428800"),
    _k("FetchMinBytes", "INT", "1"),
    _k("FetchIsolationLevel", "STRING", "ReadUncommitted", "ReadCommitted"),
    _k("ConsumeResetOffset", "STRING", "NewestOffset", "AtStart"),
    _k("DisableAutoCommit", "BOOLEAN", "false"),
    _k("AutoCommitInterval", "LONG", "5s"),
)

_SARAMA = (
    _k("ClientID", "STRING", "sarama", "notifier", "search-indexer"),
    _k("Version", "STRING", "2.1.0", "3.6.0"),
    _k("Net.MaxOpenRequests", "INT", "5", "1"),
    _k("Net.DialTimeout", "LONG", "30s"),
    _k("Net.ReadTimeout", "LONG", "30s"),
    _k("Net.WriteTimeout", "LONG", "30s"),
    _k("Net.KeepAlive", "LONG", "0"),
    _k("Net.SASL.Enable", "BOOLEAN", "false", "true"),
    _k("Net.SASL.Mechanism", "STRING", "", "PLAIN", "SCRAM-SHA-512"),
    _k("Net.TLS.Enable", "BOOLEAN", "false", "true"),
    _k("Metadata.Retry.Max", "INT", "3"),
    _k("Metadata.Retry.Backoff", "LONG", "250ms"),
    _k("Metadata.RefreshFrequency", "LONG", "10m"),
    _k("Metadata.Full", "BOOLEAN", "true", "false"),
    _k("Producer.MaxMessageBytes", "INT", "1000000"),
    _k("Producer.RequiredAcks", "SHORT", "1", "-1", "0"),
    _k("Producer.Timeout", "LONG", "10s"),
    _k("Producer.Compression", "STRING", "none", "snappy", "zstd"),
    _k("Producer.Idempotent", "BOOLEAN", "false", "true"),
    _k("Producer.Return.Successes", "BOOLEAN", "false", "true"),
    _k("Producer.Retry.Max", "INT", "3", "10"),
    _k("Producer.Retry.Backoff", "LONG", "100ms"),
    _k("Producer.Flush.Frequency", "LONG", "0", "500ms"),
    _k("Producer.Flush.Messages", "INT", "0", "100"),
    _k("Producer.Partitioner", "CLASS", "sarama.NewHashPartitioner"),
    _k("Consumer.Group.Session.Timeout", "LONG", "10s", "30s"),
    _k("Consumer.Group.Heartbeat.Interval", "LONG", "3s"),
    _k("Consumer.Group.Rebalance.Timeout", "LONG", "60s"),
    _k("Consumer.Fetch.Min", "INT", "1"),
    _k("Consumer.Fetch.Default", "INT", "1048576"),
    _k("Consumer.MaxWaitTime", "LONG", "500ms"),
    _k("Consumer.Offsets.Initial", "LONG", "-1", "-2"),
    _k("Consumer.Offsets.AutoCommit.Enable", "BOOLEAN", "true"),
    _k("Consumer.IsolationLevel", "INT", "0", "1"),
    _k("ChannelBufferSize", "INT", "256"),
)

FAMILIES: tuple[Family, ...] = (
    Family("apache-kafka-java", "apache-kafka-java", (
        Release("3.6.2", 3, False, 0.5), Release("3.7.2", 3, False, 0.5), Release("3.9.1", 4, False, 1.0),
        Release("4.1.1", 4, False, 1.0), Release("4.4.0", 5, True, 4.0), Release("4.5.0", 5, True, 2.0),
    ), {
        "producer": _COMMON + _PRODUCER, "consumer": _COMMON + _CONSUMER,
        "admin": _COMMON + _ADMIN, "streams": _COMMON + _STREAMS + _PRODUCER[:6] + _CONSUMER[:6],
    }, 5.0, "java"),
    Family("librdkafka", "librdkafka", (
        Release("2.3.0", 3, False, 0.5), Release("2.6.1", 3, False, 1.0), Release("2.12.0", 5, True, 3.0),
    ), {"producer": _LIBRDKAFKA + _LIBRDKAFKA_PRODUCER, "consumer": _LIBRDKAFKA + _LIBRDKAFKA_CONSUMER}, 2.0, "java"),
    Family("kafka-python", "kafka-python", (
        Release("2.0.2", 2, False, 0.5), Release("2.2.15", 4, False, 1.0), Release("3.1.0", 5, True, 2.0),
    ), {"producer": _KAFKA_PYTHON}, 1.0, "python"),
    Family("franz-go", "kgo", (
        Release("v1.17.1", 4, False, 1.0), Release("v1.20.0", 5, True, 2.0),
    ), {"producer": _FRANZ_GO, "consumer": _FRANZ_GO}, 1.0, "go-option"),
    Family("sarama", "sarama", (
        Release("1.43.3", 3, False, 1.0), Release("1.46.0", 5, True, 2.0),
    ), {"producer": _SARAMA, "consumer": _SARAMA}, 1.0, "go-struct"),
)
