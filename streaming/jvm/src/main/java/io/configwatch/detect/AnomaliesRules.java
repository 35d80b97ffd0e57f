package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The predicates of {@code udfs.rules.anomalies.STATELESS_ANOMALIES} for one push, as Python writes them
 * over the batch (a NaN compares false; a NaN or null boolean is not true). The thresholds come from the
 * spec; the keys, roles and judges each predicate names are its logic, written here as in Python.
 */
final class AnomaliesRules implements Serializable {
  private static final long serialVersionUID = 1L;

  static final String PROTOCOL_RULE = "consumer-protocol-ignores-classic-keys";
  /** Keys the classic-key rule always names (the others only when set explicitly). */
  static final Set<String> ALWAYS_NAMED = Set.of("enable.idempotence", "group.protocol");
  private static final String ACKS = "acks";
  private static final String MIF = "max.in.flight.requests.per.connection";
  private static final String RETRIES = "retries";
  private static final String IDEMPOTENCE = "enable.idempotence";
  private static final String PROTOCOL = "group.protocol";
  private static final String SESSION = "session.timeout.ms";
  private static final String HEARTBEAT = "heartbeat.interval.ms";
  static final List<String> KEYS_READ = List.of(ACKS, MIF, RETRIES, IDEMPOTENCE, PROTOCOL, SESSION, HEARTBEAT,
      "transactional.id", "delivery.timeout.ms", "linger.ms", "request.timeout.ms", "buffer.memory", "batch.size",
      "reconnect.backoff.ms", "reconnect.backoff.max.ms", "retry.backoff.ms", "retry.backoff.max.ms",
      "socket.connection.setup.timeout.ms", "socket.connection.setup.timeout.max.ms", "fetch.max.wait.ms");

  private final double minSession;
  private final double maxSession;
  private final double maxInFlight;
  private final List<String> classicOnly;
  private transient Map<String, Predicate<Effective>> byId;

  AnomaliesRules(JsonNode section) {
    minSession = section.get("broker_min_session_ms").asDouble();
    maxSession = section.get("broker_max_session_ms").asDouble();
    maxInFlight = section.get("idempotence_max_in_flight").asDouble();
    classicOnly = Knowledge.strings(section.get("classic_only"));
  }

  Predicate<Effective> of(String id) {
    if (byId == null) {
      byId = Map.ofEntries(
          Map.entry("idempotence-acks", this::idemAcks),
          Map.entry("idempotence-max-in-flight", this::idemInflight),
          Map.entry("idempotence-retries", this::idemRetries),
          Map.entry("idempotence-implicitly-disabled", this::idemImplicit),
          Map.entry("transactional-without-idempotence", this::txnNoIdem),
          Map.entry("acks-zero", e -> producer(e) && e.number(ACKS) == 0),
          Map.entry("delivery-timeout-too-short", this::deliveryShort),
          Map.entry("buffer-below-batch", e -> producer(e) && e.number("buffer.memory") < e.number("batch.size")),
          Map.entry("reconnect-backoff-inverted", this::reconnect),
          Map.entry("retry-backoff-inverted", e -> e.number("retry.backoff.max.ms") < e.number("retry.backoff.ms")),
          Map.entry("socket-setup-timeout-inverted",
              e -> e.number("socket.connection.setup.timeout.max.ms") < e.number("socket.connection.setup.timeout.ms")),
          Map.entry("heartbeat-not-below-session",
              e -> consumer(e) && classic(e) && e.number(HEARTBEAT) >= e.number(SESSION)),
          Map.entry("heartbeat-above-third", this::hbThird),
          Map.entry("session-timeout-out-of-bounds", this::sessionBounds),
          Map.entry("fetch-wait-not-below-request-timeout",
              e -> consumer(e) && e.number("fetch.max.wait.ms") >= e.number("request.timeout.ms")),
          Map.entry(PROTOCOL_RULE, this::consumerProtocol));
    }
    Predicate<Effective> p = byId.get(id);
    if (p == null) {
      throw new IllegalArgumentException("no predicate for the anomaly rule " + id);
    }
    return p;
  }

  private static boolean producer(Effective e) {
    return !e.role().equals("consumer") && !e.role().equals("admin");
  }

  private static boolean consumer(Effective e) {
    return !e.role().equals("producer") && !e.role().equals("admin");
  }

  /** The group protocol, stripped and lower-cased as pandas does (null: unknown). */
  private static String protocol(Effective e) {
    String proto = e.text(PROTOCOL);
    return proto == null ? null : EffectiveText.pyLower(EffectiveText.pyStrip(proto));
  }

  private static boolean classic(Effective e) {
    String proto = protocol(e);
    return proto == null || proto.equals("classic");
  }

  /** librdkafka and the Java producer adjust conflicting idempotence settings unless the user set them. */
  private static boolean counts(Effective e, String key) {
    return !(e.judge().equals("librdkafka") || e.judge().equals("java")) || e.explicit(key);
  }

  private static boolean idempotenceOn(Effective e) {
    return Boolean.TRUE.equals(e.bool(IDEMPOTENCE))
        && (e.explicit(IDEMPOTENCE) || (!e.yields() && !e.judge().equals("java")));
  }

  private boolean idemAcks(Effective e) {
    double acks = e.number(ACKS);
    return producer(e) && idempotenceOn(e) && (acks == 0 || acks == 1) && counts(e, ACKS);
  }

  private boolean idemInflight(Effective e) {
    return producer(e) && idempotenceOn(e) && e.number(MIF) > maxInFlight && counts(e, MIF);
  }

  private boolean idemRetries(Effective e) {
    return producer(e) && idempotenceOn(e) && e.number(RETRIES) == 0 && counts(e, RETRIES);
  }

  private boolean idemImplicit(Effective e) {
    double acks = e.number(ACKS);
    boolean conflict = (!Double.isNaN(acks) && acks != -1 && e.explicit(ACKS))
        || (e.number(MIF) > maxInFlight && e.explicit(MIF))
        || (e.number(RETRIES) == 0 && e.explicit(RETRIES));
    boolean defaultOn = Boolean.TRUE.equals(e.bool(IDEMPOTENCE)) && !e.explicit(IDEMPOTENCE);
    return producer(e) && e.yields() && defaultOn && conflict;
  }

  private boolean txnNoIdem(Effective e) {
    String txn = e.text("transactional.id");
    boolean hasTxn = txn != null && !EffectiveText.pyStrip(txn).isEmpty();
    boolean off = Boolean.FALSE.equals(e.bool(IDEMPOTENCE)) && (e.explicit(IDEMPOTENCE) || e.judge().equals("none"));
    return producer(e) && hasTxn && off;
  }

  private boolean deliveryShort(Effective e) {
    double dt = e.number("delivery.timeout.ms");
    boolean isShort = dt < e.number("linger.ms") + e.number("request.timeout.ms");
    boolean infinite = e.judge().equals("librdkafka") && dt == 0;
    return producer(e) && isShort && !infinite && (!e.judge().equals("java") || e.explicit("delivery.timeout.ms"));
  }

  private boolean reconnect(Effective e) {
    boolean inverted = e.number("reconnect.backoff.max.ms") < e.number("reconnect.backoff.ms");
    return inverted && (!e.judge().equals("java") || e.explicit("reconnect.backoff.max.ms"));
  }

  private boolean hbThird(Effective e) {
    double hb = e.number(HEARTBEAT);
    double st = e.number(SESSION);
    return consumer(e) && classic(e) && hb > st / 3 && hb < st;
  }

  private boolean sessionBounds(Effective e) {
    double st = e.number(SESSION);
    return consumer(e) && classic(e) && (st < minSession || st > maxSession);
  }

  private boolean consumerProtocol(Effective e) {
    boolean explicitAny = false;
    for (String key : classicOnly) {
      explicitAny |= e.explicit(key);
    }
    return consumer(e) && "consumer".equals(protocol(e)) && explicitAny;
  }
}
