"""The rule catalog: every detection rule's id, kind, severity, keys, rationale and source.

Findings carry these ids (contract section 2, ``rule``); ``docs/rules.md`` is
generated from this table (``python -m udfs.rules.docgen``) and a test keeps the
two in step. The KIP's own sensitivity rule ids come from :mod:`udfs.sensitivity`,
shared with the ingest policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from configwatch.contract import SEVERITIES
from udfs.rules.exceptions import RulesError
from udfs.sensitivity import RULE_CUSTOM, RULE_INFIX, RULE_NAME, RULE_PREFIX, RULE_SUFFIX, RULE_TYPE

__all__ = ["ANOMALY", "CATALOG", "POSTURE", "SENSITIVE_LEAK", "Rule", "rule"]

SENSITIVE_LEAK: Final = "sensitive_leak"
ANOMALY: Final = "anomaly"
POSTURE: Final = "security_posture"  # judged from the connection (udfs.rules.posture), not from pushed keys

_KIP = "draft KIP PushConfig / ClientConfigPolicy, section Sensitive Configuration"
_PRODUCER = "Kafka documentation, Producer Configs"
_CONSUMER = "Kafka documentation, Consumer Configs"
_COMMON = "Kafka documentation, Producer/Consumer/Admin Configs (CommonClientConfigs)"


@dataclass(frozen=True, slots=True)
class Rule:
    """One detection rule as documented in ``docs/rules.md``."""

    id: str
    kind: str
    severity: str
    keys: tuple[str, ...]
    rationale: str
    source: str
    stateful: bool = False
    clients: str = "every family and release"  # the client families and releases the rule applies to

    def __post_init__(self) -> None:
        if self.kind not in (SENSITIVE_LEAK, ANOMALY, POSTURE):
            raise RulesError(f"rule {self.id}: unknown kind {self.kind!r}")
        if self.severity not in SEVERITIES:
            raise RulesError(f"rule {self.id}: unknown severity {self.severity!r}")
        if not self.keys:
            raise RulesError(f"rule {self.id}: a rule reads at least one key")


def _leak(rule_id: str, severity: str, keys: tuple[str, ...], rationale: str, source: str,
          clients: str = "every family and release") -> Rule:
    return Rule(rule_id, SENSITIVE_LEAK, severity, keys, rationale, source, clients=clients)


def _anomaly(rule_id: str, severity: str, keys: tuple[str, ...], rationale: str, source: str,
             stateful: bool = False, clients: str = "every family with a key set, every release") -> Rule:
    return Rule(rule_id, ANOMALY, severity, keys, rationale, source, stateful, clients)


def _posture(rule_id: str, severity: str, keys: tuple[str, ...], rationale: str, source: str) -> Rule:
    return Rule(rule_id, POSTURE, severity, keys, rationale, source,
                clients="every family and release, on connections through the gateway (its TLS and SASL)")


_SECURITY = "Kafka documentation, Security: Encryption and Authentication using SSL, Authentication using SASL"
_OWN_NAMES = ("keys under each family's own names where it has the setting: kafka-python keyword arguments, "
              "sarama Config fields, franz-go options; Go durations read in milliseconds")
_PRODUCERS = f"producers of every family with a key set ({_OWN_NAMES})"
_CONSUMERS = f"consumers of every family with a key set ({_OWN_NAMES})"
_EXPLICIT_IDEMPOTENCE = (f"{_PRODUCERS}, with enable.idempotence set true by the user (Java's default gives way); "
                         "for Java and librdkafka only values the user set count, since both set acks to all "
                         "and retries above 0 themselves for an idempotent producer")


_ANY = ("*",)

CATALOG: Final[tuple[Rule, ...]] = (
    # --- sensitive leaks: the KIP's criteria (ids shared with the ingest policy) ---
    _leak(RULE_TYPE, "high", _ANY,
          "An entry of ConfigDef type PASSWORD or CLASS was published with its value.",
          f"{_KIP}: passwords (ConfigDef.Type PASSWORD) and class names (ConfigDef.Type CLASS)"),
    _leak(RULE_PREFIX, "medium", _ANY,
          "A key starting with sasl., security. or ssl. was published with its value.",
          f"{_KIP}: keys starting with sasl., security., or ssl."),
    _leak(RULE_INFIX, "medium", _ANY,
          "A key containing .sasl., .security. or .ssl. was published with its value.",
          f"{_KIP}: keys containing .sasl., .security., or .ssl."),
    _leak(RULE_SUFFIX, "medium", _ANY,
          "A key ending in .class or .classes was published with its value.",
          f"{_KIP}: keys ending in .class or .classes"),
    _leak(RULE_NAME, "high", _ANY,
          "A key whose words say it holds a secret (password, secret, token, credential, api key, user info, "
          "JAAS, keystore/truststore, in any naming style) was published with its value.",
          f"{_KIP}: sensitive configuration; the client families' own names for credentials "
          "(kafka-python sasl_plain_password, sarama Net.SASL.Password, franz-go SASL options, "
          "Confluent SerDes basic.auth.user.info)"),
    _leak(RULE_CUSTOM, "medium", _ANY,
          "A key outside the client family's known key set was published with its value; "
          "Kafka cannot tell what custom configuration holds.",
          f"{_KIP}: custom configuration (used by application, SerDes, etc.)"),
    _leak("policy-redacted", "low", _ANY,
          "The client sent a sensitive entry that the ingest policy had to redact: the client's own "
          "exclusion missed it.",
          f"{_KIP}: the client logs a warning and does not send a sensitive value; record contract, entry.redacted"),
    # --- sensitive leaks: secrets found inside values, keys and identity fields ---
    _leak("secret-private-key", "critical", _ANY,
          "A PEM private key block appears in a value or key.",
          "RFC 7468 (PEM textual encoding): -----BEGIN ... PRIVATE KEY-----"),
    _leak("secret-aws-access-key", "critical", _ANY,
          "An AWS access key id (AKIA/ASIA/... followed by 16 characters) appears in a value or key.",
          "AWS IAM documentation, Understanding unique ID prefixes"),
    _leak("secret-github-token", "critical", _ANY,
          "A GitHub token (ghp_/gho_/ghu_/ghs_/ghr_ or github_pat_) appears in a value or key.",
          "GitHub documentation, About authentication to GitHub: GitHub's token formats"),
    _leak("secret-api-token", "critical", _ANY,
          "A vendor API token with a documented prefix (Slack xox*, Google AIza, Stripe sk_live_/rk_live_) "
          "appears in a value or key.",
          "Slack, Google Cloud and Stripe API key documentation (token prefixes)"),
    _leak("secret-jwt", "critical", _ANY,
          "A JSON Web Token (a bearer credential) appears in a value or key.",
          "RFC 7519 (JWT), compact serialization header.payload.signature"),
    _leak("secret-url-credentials", "critical", _ANY,
          "A URL or a bootstrap.servers entry carries user:password@ credentials.",
          "RFC 3986 section 3.2.1 (userinfo is deprecated for passwords); Kafka bootstrap.servers host:port list"),
    _leak("secret-password-fragment", "critical", _ANY,
          "A password=, secret=, token= or api_key= fragment with a literal value (not a ${provider:...} "
          "reference) appears in a value or key.",
          "Kafka documentation, sasl.jaas.config (JAAS options username=/password=) and KIP-297 config providers"),
    _leak("secret-high-entropy", "high", _ANY,
          "A long, high-entropy token of mixed letters and digits (not a UUID, hex id, host or identifier) "
          "appears in a value or key.",
          "Shannon entropy over the token's characters; the same idea as detect-secrets' entropy plugins"),
    _leak("secret-in-identity", "critical", ("client.id", "principal"),
          "The event's client id or principal contains a secret (a secret pasted into client.id also "
          "travels as every request's client id). A TLS principal's distinguished name is judged attribute "
          "by attribute (CN=, OU=, ...), each value with the client-id conventions.",
          "Kafka protocol request header client_id; record contract, event fields client_id and principal",
             clients="every family and release (the edge masks such a field before publishing)"),
    # --- security posture: what the connection shows (a compliant client never pushes these keys) ---
    _posture("posture-plain-over-plaintext", "critical", ("security.protocol", "sasl.mechanism"),
             "SASL/PLAIN over a plaintext connection: the password crosses the network in clear text.",
             f"{_SECURITY}: SASL/PLAIN \"should be used only with TLS as transport layer\""),
    _posture("posture-weak-tls", "high", ("ssl.enabled.protocols", "ssl.protocol"),
             "The connection negotiated TLS 1.1 or older, which RFC 8996 deprecates; Kafka enables TLS 1.2 "
             "and 1.3 only by default.",
             f"RFC 8996 (Deprecating TLS 1.0 and TLS 1.1); {_SECURITY}: ssl.enabled.protocols"),
    _posture("posture-sasl-over-plaintext", "medium", ("security.protocol", "sasl.mechanism"),
             "SASL without TLS (SASL_PLAINTEXT): authenticated, but the session is neither encrypted nor "
             "protected from tampering.",
             f"{_SECURITY}: security.protocol SASL_PLAINTEXT vs SASL_SSL"),
    _posture("posture-plaintext-tls-offered", "low", ("security.protocol",),
             "An unauthenticated PLAINTEXT connection although TLS is offered for the same cluster "
             "(tls_offered_at): the client can move to it.",
             f"{_SECURITY}: security.protocol; configwatch --gateway-tls-offered-at"),
    # --- anomalies: every client ---
    _anomaly("bootstrap-servers-malformed", "medium", ("bootstrap.servers",),
             "bootstrap.servers has an entry with a URL scheme (http://, SSL://: the client drops or refuses it, "
             "and it turns no TLS on) or an empty entry; PLAINTEXT://, the default protocol's name, is not judged.",
             f"{_COMMON}: bootstrap.servers (a list of host/port pairs, host1:port1,host2:port2,...)"),
    _anomaly("bootstrap-public-address", "medium", ("bootstrap.servers",),
             "bootstrap.servers names a broker by a public IP address: the cluster is reached across the internet, "
             "and with an address instead of a name TLS hostname verification (on by default from 2.0) fails unless "
             "the certificate lists the address, so such clients mostly run PLAINTEXT, unencrypted and "
             "unauthenticated. A push cannot show security.protocol (the KIP withholds it); behind the gateway the "
             "posture rules see the connection's.",
             f"{_COMMON}: bootstrap.servers; Kafka documentation, Security: ssl.endpoint.identification.algorithm "
             "(KIP-294); IANA special-purpose address registries (RFC 6890: what is not public)"),
    # --- anomalies: producer ---
    _anomaly("idempotence-acks", "high", ("enable.idempotence", "acks"),
             "enable.idempotence=true needs acks=all; with acks 0 or 1 idempotence cannot hold.",
             f"{_PRODUCER}: enable.idempotence",
             clients=_EXPLICIT_IDEMPOTENCE),
    _anomaly("idempotence-max-in-flight", "high", ("enable.idempotence", "max.in.flight.requests.per.connection"),
             "enable.idempotence=true needs max.in.flight.requests.per.connection <= 5.",
             f"{_PRODUCER}: enable.idempotence",
             clients=_EXPLICIT_IDEMPOTENCE),
    _anomaly("idempotence-retries", "high", ("enable.idempotence", "retries"),
             "enable.idempotence=true needs retries > 0.",
             f"{_PRODUCER}: enable.idempotence",
             clients=_EXPLICIT_IDEMPOTENCE),
    _anomaly("idempotence-implicitly-disabled", "low",
             ("enable.idempotence", "acks", "max.in.flight.requests.per.connection", "retries"),
             "The producer silently turns its default idempotence off because the user set acks, retries "
             "or max.in.flight.requests.per.connection in conflict with it.",
             f"{_PRODUCER}: enable.idempotence (idempotence is disabled if conflicting configurations are set); "
             "ProducerConfig.postProcessParsedConfig at 3.0.1 and 3.2.0; kafka-python KafkaProducer at 3.0.0",
             clients="apache-kafka-java producers 3.0.1-3.0.x and 3.1.1 on (3.0.0 and 3.1.0 apply the "
             "default only when set, KAFKA-13598; before 3.0 the default is off); kafka-python 3.0 on"),
    _anomaly("transactional-without-idempotence", "high", ("transactional.id", "enable.idempotence"),
             "A transactional.id is configured while enable.idempotence=false; transactions need idempotence.",
             f"{_PRODUCER}: transactional.id",
             clients=_PRODUCERS),
    _anomaly("batching-disabled", "medium", ("batch.size",),
             "batch.size=0 disables batching: every record travels in a request of its own, at a large cost in "
             "throughput and broker load.",
             f"{_PRODUCER}: batch.size (a batch size of zero will disable batching entirely)",
             clients=_PRODUCERS),
    _anomaly("acks-all-retries-zero", "high", ("acks", "retries"),
             "acks=all with retries=0: the write waits for every in-sync replica, yet one transient error (a "
             "leader change, a timeout) fails it for good.",
             f"{_PRODUCER}: acks, retries; KIP-91 (retries defaults to Integer.MAX_VALUE from 2.1)",
             clients=f"{_PRODUCERS}, unless enable.idempotence=true is set (idempotence-retries says it)"),
    _anomaly("retries-limited", "medium", ("retries", "delivery.timeout.ms"),
             "retries set so low that, even at the longest retry backoff, they run out before delivery.timeout.ms "
             "and within 18 s, before a dead broker's partitions get new leaders (ZooKeeper's default session "
             "timeout; KRaft's is 9 s): a broker failure then fails the send instead of the producer riding it out.",
             f"{_PRODUCER}: retries (users should generally prefer to leave this config unset and instead use "
             "delivery.timeout.ms to control retry behavior), delivery.timeout.ms; KIP-91; Broker Configs: "
             "zookeeper.session.timeout.ms, broker.session.timeout.ms",
             clients="Java producers from 2.1 (delivery.timeout.ms), retries set by the user, 1 or more"),
    _anomaly("request-timeout-below-replica-lag", "medium", ("request.timeout.ms", "acks"),
             "acks=all with a request timeout set below 10 s: a produce request waits for every in-sync follower, "
             "which may lag up to replica.lag.time.max.ms (10 s before 2.5, 30 s from 2.5) before it leaves the ISR, "
             "so the client gives writes up and resends them while the broker is still completing them: "
             "duplicates without idempotence, and needless retries under load.",
             f"{_PRODUCER}: request.timeout.ms (this should be larger than replica.lag.time.max.ms, a broker "
             "configuration, to reduce the possibility of message duplication due to unnecessary producer retries); "
             "KIP-537; librdkafka CONFIGURATION.md: request.timeout.ms (the ack timeout of the producer request)",
             clients=f"{_PRODUCERS}, request.timeout.ms set by the user (librdkafka 1.5.0 and older default to 5000)"),
    _anomaly("socket-timeout-below-request-timeout", "medium", ("socket.timeout.ms", "request.timeout.ms", "acks"),
             "An acks=all producer whose socket.timeout.ms is below request.timeout.ms: librdkafka gives a produce "
             "request up after socket.timeout.ms, while the broker waits up to request.timeout.ms for the replicas, "
             "so slow writes are resent while they may still succeed (duplicates without idempotence).",
             "librdkafka CONFIGURATION.md: socket.timeout.ms (ProduceRequests use the lesser of socket.timeout.ms "
             "and the remaining message.timeout.ms), request.timeout.ms (the ack timeout, enforced by the broker)",
             clients="librdkafka producers, with either timeout set by the user"),
    _anomaly("transactional-id-random", "medium", ("transactional.id",),
             "A transactional.id holding a UUID is new at every start: the restarted producer fences no earlier "
             "instance, a crashed instance's open transaction holds read_committed consumers back until "
             "transaction.timeout.ms, and every id leaves state on the transaction coordinator until "
             "transactional.id.expiration.ms.",
             f"{_PRODUCER}: transactional.id (enables reliability semantics which span multiple producer sessions); "
             "KIP-98 (the TransactionalId is provided by users and stable across restarts)",
             clients=f"{_PRODUCERS}, but those Kafka Streams configures (client id ...-StreamThread-<n>-producer: "
                     "under exactly-once v2 its id holds the process UUID on purpose, fencing through the group, "
                     "KIP-447)"),
    _anomaly("batch-size-above-request-size", "low", ("batch.size", "max.request.size"),
             "batch.size set above the request size cap (Java max.request.size, librdkafka message.max.bytes): "
             "no batch grows past the cap, so the setting does not do what it says, and raising the cap to match "
             "gets batches refused by brokers (message.max.bytes, 1 MB by default).",
             f"{_PRODUCER}: max.request.size (effectively a cap on the maximum uncompressed record batch size); "
             "librdkafka CONFIGURATION.md: batch.size (the total MessageSet size is also limited by "
             "message.max.bytes)",
             clients=f"{_PRODUCERS}, batch.size set by the user"),
    _anomaly("max-block-unbounded", "medium", ("max.block.ms",),
             "max.block.ms of a day or more: send() waits that long for metadata or buffer space, so an "
             "unreachable cluster or a missing topic hangs the calling thread instead of failing it.",
             f"{_PRODUCER}: max.block.ms (bounds the time send() and partitionsFor() block)",
             clients="Java producers, every release, but those Kafka Connect configures itself (client id "
                     "connector-producer-..., ...-offsets, -statuses, -configs), which it blocks on purpose"),
    _anomaly("max-block-too-short", "medium", ("max.block.ms",),
             "max.block.ms set below 9 s, the shortest default wait before a dead broker's partitions get new "
             "leaders (KRaft's; ZooKeeper's 18 s): while a failover or a rolling restart holds batches back, the "
             "buffer fills and send() throws instead of waiting it out, so every broker restart becomes "
             "application errors.",
             f"{_PRODUCER}: max.block.ms (how long send() blocks for metadata or buffer space), buffer.memory; "
             "Broker Configs: zookeeper.session.timeout.ms, broker.session.timeout.ms",
             clients="Java producers, max.block.ms set by the user (librdkafka's produce() never blocks: its "
                     "queue-full error is immediate)"),
    _anomaly("delivery-timeout-unbounded", "medium", ("delivery.timeout.ms",),
             "A delivery timeout of a day or more, or none (librdkafka's 0 is infinite): a record that cannot be "
             "delivered is never reported as failed, so an outage fills the producer's buffer and hangs flush() "
             "instead of reaching the application as an error.",
             f"{_PRODUCER}: delivery.timeout.ms (an upper bound on the time to report success or failure after "
             "send() returns; KIP-91); librdkafka CONFIGURATION.md: message.timeout.ms (0 is infinite)",
             clients=f"{_PRODUCERS}, but those Kafka Connect configures itself (client id connector-producer-..., "
                     "...-offsets, -statuses, -configs) and transactional ones (transaction.timeout.ms bounds them; "
                     "Kafka Streams under exactly-once sets Integer.MAX_VALUE on purpose)"),
    _anomaly("idempotence-off-reordering", "medium",
             ("enable.idempotence", "acks", "retries", "max.in.flight.requests.per.connection"),
             "enable.idempotence=false set by the user on an acks=all producer that retries with more than one "
             "request in flight: a retried batch can be written twice and land after the batches sent behind it, "
             "where idempotence would give the same durability without either.",
             f"{_PRODUCER}: max.in.flight.requests.per.connection (greater than 1 with enable.idempotence=false: a "
             "risk of message reordering after a failed send due to retries), enable.idempotence (requires acks "
             "all); librdkafka CONFIGURATION.md: enable.idempotence (messages produced exactly once and in the "
             "original order)",
             clients="Java and librdkafka producers whose user set enable.idempotence=false with acks all (with "
                     "acks 0 or 1 idempotence cannot hold), unless idempotence-implicitly-disabled or "
                     "transactional-without-idempotence says it; not where false is only the release's default, "
                     "left unset (Java before 3.0, librdkafka)"),
    _anomaly("acks-zero", "medium", ("acks",),
             "acks=0: the producer never learns about failed writes and retries do not take effect.",
             f"{_PRODUCER}: acks",
             clients=_PRODUCERS),
    _anomaly("acks-leader-only", "medium", ("acks",),
             "acks=1 set on a producer whose client defaults to acks=all: the leader acknowledges a write before "
             "any follower has it, so a leader failure loses writes the application was told had succeeded.",
             "librdkafka CONFIGURATION.md: request.required.acks (alias acks), default -1 (all); "
             f"{_PRODUCER}: acks (acks=1: the record will be lost if the leader fails immediately after "
             "acknowledging it)",
             clients="librdkafka producers that set acks to 1, unless enable.idempotence=true (idempotence-acks); "
                     "not Java (default 1 before 3.0; from 3.0 idempotence-implicitly-disabled)"),
    _anomaly("delivery-timeout-too-short", "medium", ("delivery.timeout.ms", "linger.ms", "request.timeout.ms"),
             "delivery.timeout.ms is below linger.ms + request.timeout.ms, or below 9 s, the shortest default wait "
             "before a dead broker's partitions get new leaders (KRaft's): a failover or rolling restart then fails "
             "sends that retrying would have delivered.",
             f"{_PRODUCER}: delivery.timeout.ms (should be at least linger.ms + request.timeout.ms; an upper bound "
             "on the time to report success or failure, retries included); KIP-91; Broker Configs: "
             "broker.session.timeout.ms",
             clients=f"{_PRODUCERS}; the 9 s bound where the user set the value"),
    _anomaly("buffer-memory-too-small", "medium", ("buffer.memory",),
             "buffer.memory set below 1 MiB: the producer holds only a few batches, so any slowdown of the brokers "
             "blocks send() for up to max.block.ms and throughput collapses (default 32 MiB).",
             f"{_PRODUCER}: buffer.memory",
             clients=_PRODUCERS),
    _anomaly("buffer-below-batch", "medium", ("buffer.memory", "batch.size"),
             "buffer.memory is smaller than one batch.size, so a full batch can never be buffered.",
             f"{_PRODUCER}: buffer.memory, batch.size",
             clients=_PRODUCERS),
    # --- anomalies: every client ---
    _anomaly("reconnect-backoff-inverted", "low", ("reconnect.backoff.max.ms", "reconnect.backoff.ms"),
             "reconnect.backoff.max.ms is below reconnect.backoff.ms, so the exponential backoff never grows.",
             f"{_COMMON}: reconnect.backoff.max.ms"),
    _anomaly("retry-backoff-inverted", "low", ("retry.backoff.max.ms", "retry.backoff.ms"),
             "retry.backoff.max.ms is below retry.backoff.ms: the maximum is used as a constant backoff.",
             f"{_COMMON}: retry.backoff.max.ms"),
    _anomaly("socket-setup-timeout-inverted", "low",
             ("socket.connection.setup.timeout.max.ms", "socket.connection.setup.timeout.ms"),
             "socket.connection.setup.timeout.max.ms is below socket.connection.setup.timeout.ms.",
             f"{_COMMON}: socket.connection.setup.timeout.max.ms"),
    _anomaly("key-of-other-role", "low", _ANY,
             "A producer set a consumer's key, or a consumer a producer's (group.id on a producer, acks on a "
             "consumer): the client ignores it, so the setting the application relies on does not exist, often a "
             "configuration copied from the other role.",
             "librdkafka src/rdkafka_conf.c (CONFWARN: \"is a consumer property and will be ignored by this producer "
             "instance\") and CONFIGURATION.md's C/P column; Kafka documentation, Producer and Consumer Configs; "
             "AbstractConfig.logUnused (Java: \"supplied but isn't a known config\")",
             clients="apache-kafka-java and librdkafka producers and consumers, keys set by the user (kafka-python "
                     "refuses another role's keyword; the Go clients have one configuration for every role)"),
    _anomaly("unknown-key-typo", "medium", _ANY,
             "An unknown key within edit distance 2 of a known key: a likely typo, which the Java client "
             "only logs as unused while the intended setting keeps its default.",
             "Kafka documentation, client configs of the family; AbstractConfig.logUnused",
             clients="apache-kafka-java (it ignores unknown keys); not librdkafka or kafka-python (they refuse "
             "to start with one) nor sarama or franz-go (Go code cannot name one)"),
    # --- anomalies: consumer ---
    _anomaly("heartbeat-not-below-session", "high", ("heartbeat.interval.ms", "session.timeout.ms"),
             "heartbeat.interval.ms must be lower than session.timeout.ms.",
             f"{_CONSUMER}: heartbeat.interval.ms",
             clients=_CONSUMERS),
    _anomaly("heartbeat-above-third", "low", ("heartbeat.interval.ms", "session.timeout.ms"),
             "heartbeat.interval.ms is above 1/3 of session.timeout.ms, so one lost heartbeat risks the session.",
             f"{_CONSUMER}: heartbeat.interval.ms",
             clients=_CONSUMERS),
    _anomaly("session-timeout-out-of-bounds", "high", ("session.timeout.ms",),
             "session.timeout.ms is outside the broker's default bounds 6000..1800000 "
             "(group.min/max.session.timeout.ms); the broker rejects the join.",
             f"{_CONSUMER}: session.timeout.ms; Broker Configs: group.min.session.timeout.ms, "
             "group.max.session.timeout.ms",
             clients=_CONSUMERS),
    _anomaly("max-poll-records-out-of-range", "medium", ("max.poll.records",),
             "max.poll.records set above 100,000: the records of one poll must be processed within "
             "max.poll.interval.ms, or the member leaves the group and its partitions move. A release's own default "
             "is not flagged (0.10.0's Integer.MAX_VALUE, 500 from 0.10.1).",
             f"{_CONSUMER}: max.poll.records (default 500), max.poll.interval.ms",
             clients=_CONSUMERS),
    _anomaly("fetch-size-out-of-range", "medium", ("fetch.max.bytes", "max.partition.fetch.bytes"),
             "A fetch size set above 1 GiB: the consumer buffers up to that much per fetch in its heap (defaults "
             "50 MiB and 1 MiB).",
             f"{_CONSUMER}: fetch.max.bytes, max.partition.fetch.bytes",
             clients=_CONSUMERS),
    _anomaly("fetch-wait-not-below-request-timeout", "medium", ("fetch.max.wait.ms", "request.timeout.ms"),
             "fetch.max.wait.ms is not below request.timeout.ms, so an idle fetch times out before the broker answers.",
             f"{_CONSUMER}: fetch.max.wait.ms, request.timeout.ms",
             clients=_CONSUMERS),
    _anomaly("queued-min-messages-tiny", "medium", ("queued.min.messages",),
             "queued.min.messages set below 1,000 (default 100,000), fewer messages than one fetch of a partition "
             "returns (1 MiB of 1 KiB messages): the fetcher pauses after nearly every response, so consumption "
             "waits on a fetch round trip every few messages and the brokers see a stream of small fetches.",
             "librdkafka CONFIGURATION.md: queued.min.messages (minimum number of messages per topic+partition "
             "librdkafka tries to maintain in the local consumer queue), fetch.message.max.bytes (default 1 MiB)",
             clients="librdkafka consumers, queued.min.messages set by the user"),
    _anomaly("exactly-once-single-replica", "high", ("processing.guarantee", "replication.factor"),
             "Exactly-once processing with replication.factor=1: the application's changelog and repartition "
             "topics live on one broker, whose loss stops the application or loses its state.",
             "Kafka documentation, Kafka Streams configs: processing.guarantee (exactly-once requires a cluster of "
             "at least three brokers by default), replication.factor",
             clients="Kafka Streams (Java), every release"),
    _anomaly("consumer-protocol-ignores-classic-keys", "low",
             ("group.protocol", "session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"),
             "group.protocol=consumer with session.timeout.ms, heartbeat.interval.ms or "
             "partition.assignment.strategy set explicitly: the broker owns these under the new protocol.",
             f"{_CONSUMER}: group.protocol; KIP-848",
             clients="apache-kafka-java consumers 3.7 on (group.protocol, KIP-848) and librdkafka 2.4 on"),
    # --- anomalies: stateful, over the fleet ---
    _anomaly("fleet-outlier", "low", _ANY,
             "A numeric value that few peers use and that lies far outside what the rest use. Peers share "
             "software family, role and key-set major version (the same documented defaults). Judged once at "
             "least 50 peer values were seen, so that one value is at most 2% of them (a value that arrives "
             "earlier waits in the state, while no other lies near it, and is judged then). Flagged when at "
             "most 2% of the peer values are within 0.05 decades of "
             "the value (a setting a sizeable share uses on purpose, such as a 1 MiB receive.buffer.bytes, "
             "is a tuning) and it lies outside Tukey's fences on the log10 scale with a floor of 1.5 orders "
             "of magnitude (q1/q3 -+ max(1.5 IQR, 1.5 decades)), so a fleet on one default does not make every "
             "other value infinitely far and a deliberate tuning of up to ~32x (linger.ms 5 -> 100) is not "
             "flagged, while unit slips (1,000x) are. Sentinels are never counted or flagged: values <= 0 "
             "(-1 OS default of send/receive.buffer.bytes, 0 linger.ms, -1 never) and Integer/Long.MAX_VALUE "
             "(unbounded).",
             "configwatch fleet statistics over a mergeable log-scale histogram (Tukey's fences on "
             "log10 values, relative frequency); Kafka documentation, Producer/Consumer Configs (sentinels)",
             stateful=True),
    _anomaly("group-assignment-drift", "medium", ("group.id", "partition.assignment.strategy"),
             "Classic-protocol members of one group.id list partition.assignment.strategy values with no "
             "assignor in common: JoinGroup only picks an assignor every member supports, so members are "
             "refused with INCONSISTENT_GROUP_PROTOCOL. One alert per group (subject: the group "
             "fingerprint); members appear in evidence as subject fingerprints.",
             f"{_CONSUMER}: partition.assignment.strategy; Kafka protocol JoinGroup "
             "(GroupMetadata.selectProtocol, ConsumerCoordinator)", stateful=True,
             clients=_CONSUMERS),
    _anomaly("group-assignment-transition", "info", ("group.id", "partition.assignment.strategy"),
             "Classic-protocol members of one group.id list different partition.assignment.strategy values "
             "that still share an assignor, as in the documented rolling move from range (or another eager "
             "assignor) to cooperative-sticky: the group keeps working with the shared assignor. One "
             "finding per group, again only when the set of lists changes.",
             f"{_CONSUMER}: partition.assignment.strategy; KIP-429 (upgrading to cooperative rebalancing)",
             stateful=True,
             clients=_CONSUMERS),
    _anomaly("group-protocol-migration", "info", ("group.id", "group.protocol"),
             "Members of one group.id use group.protocol classic and consumer: a KIP-848 online migration, "
             "which the broker carries out while group.consumer.migration.policy allows it. One finding per "
             "group, again only when the set of protocols changes.",
             f"{_CONSUMER}: group.protocol; KIP-848 (online migration); Broker Configs: "
             "group.consumer.migration.policy", stateful=True,
             clients="apache-kafka-java consumers 3.7 on and librdkafka 2.4 on (group.protocol)"),
    _anomaly("group-protocol-drift", "low", ("group.id", "group.protocol"),
             "Members of one group.id use group.protocol values that no online migration connects (anything "
             "but a classic/consumer mix, e.g. a misspelt or a streams protocol). One alert per group.",
             f"{_CONSUMER}: group.protocol; KIP-848 (online migration)", stateful=True,
             clients="apache-kafka-java consumers 3.7 on and librdkafka 2.4 on (group.protocol)"),
)

_BY_ID: Final[dict[str, Rule]] = {r.id: r for r in CATALOG}
if len(_BY_ID) != len(CATALOG):
    raise RulesError("duplicate rule id in the catalog")


def rule(rule_id: str) -> Rule:
    """The catalog entry for ``rule_id``; RulesError when there is none."""
    try:
        return _BY_ID[rule_id]
    except KeyError:
        raise RulesError(f"no rule {rule_id!r} in the catalog") from None
