package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Fleet outliers for one {@code fleet|<peer group>} state key: the twin of {@code
 * udfs.rules.stateful.step} there ({@code _fleet_values}, then {@code udfs.rules.fleet.score_group}
 * per config key in code point order), with {@code is_sentinel} and {@code rare_limit}. The state is
 * the key's JSON text ({@code peer_states_to_json}), read and written as Python does, byte for byte.
 *
 * <p>The rows are those Spark delivers for the key in one micro-batch, in its order. As in Python,
 * where one of them has no time (pandas then holds the batch's times as floats), the times that a
 * waiting value keeps in the state are Python's text of that float ({@code "1700000000000.0"}); see
 * {@link FleetScore}.
 */
public final class Fleet implements Serializable {
  private static final long serialVersionUID = 1L;

  /** One finding with the context it gets ({@code to_table}'s row of the scored rows). */
  public record Scored(RawFinding finding, Context context) {}

  /**
   * The findings in Python's order before {@code to_table} sorts them (the caller sorts them by alert id,
   * stably, as {@code to_table} does), and the new state JSON.
   */
  public record Result(List<Scored> findings, String stateJson) {}

  final String rule;
  final String message;
  final int minPeers;
  final double rareShare;
  final double rareRadius;
  final double iqrK;
  final double minLogDistance;
  final double bucketWidth;
  final int maxBuckets;
  final int shownDigits;
  final int shownPlaces;
  final int decadesPlaces;
  final int identityFields;
  private final double[] unbounded;

  private Fleet(Knowledge knowledge) {
    JsonNode s = knowledge.section("fleet");
    rule = s.get("rule").asText();
    message = s.get("message").asText();
    minPeers = s.get("min_peers").asInt();
    rareShare = s.get("rare_share").asDouble();
    rareRadius = s.get("rare_radius").asDouble();
    iqrK = s.get("iqr_k").asDouble();
    minLogDistance = s.get("min_log_distance").asDouble();
    bucketWidth = s.get("bucket_width").asDouble();
    maxBuckets = s.get("max_buckets").asInt();
    shownDigits = s.get("shown_digits").asInt();
    shownPlaces = s.get("shown_places").asInt();
    decadesPlaces = s.get("decades_places").asInt();
    unbounded = new double[s.get("unbounded").size()];
    for (int i = 0; i < unbounded.length; i++) {
      unbounded[i] = s.get("unbounded").get(i).asDouble();
    }
    List<String> identity = Findings.identityFields(knowledge);
    List<String> expected = new ArrayList<>(identity);
    expected.add("timestamp_ms");
    expected.add("subject_fp");
    if (!Knowledge.strings(s.get("pending_columns")).equals(expected)) {
      throw new IllegalArgumentException("PENDING_COLUMNS are not the identity fields, time and subject: "
          + s.get("pending_columns"));
    }
    identityFields = identity.size();
  }

  public static Fleet of(Knowledge knowledge) {
    return new Fleet(knowledge);
  }

  /** {@code is_sentinel}: a documented mode rather than a magnitude (<= 0, Integer/Long.MAX_VALUE). */
  public boolean isSentinel(double value) {
    if (value <= 0) {
      return true;
    }
    for (double u : unbounded) {
      if (value == u) {
        return true;
      }
    }
    return false;
  }

  /** {@code rare_limit}: how many of {@code peers} values may lie near a rare one. */
  double rareLimit(long peers) {
    return Math.max(1.0, rareShare * peers);
  }

  /** A config key's values in the batch: the row of each (its index in {@code rows}) and the value. */
  static final class Values {
    int[] rows = new int[8];
    double[] values = new double[8];
    int n;

    void add(int row, double value) {
      if (n == rows.length) {
        rows = Arrays.copyOf(rows, n * 2);
        values = Arrays.copyOf(values, n * 2);
      }
      rows[n] = row;
      values[n++] = value;
    }
  }

  /** step() for a {@code fleet|<peerGroup>} key: the findings with their contexts, and the new state JSON. */
  public Result step(String peerGroup, List<FleetRow> rows, String stateJson) {
    Map<String, FleetState> states = FleetState.readAll(stateJson, identityFields);
    Map<String, Values> byKey = new HashMap<>();
    for (int r = 0; r < rows.size(); r++) {
      FleetRow row = rows.get(r);
      if (row.keys().size() != row.values().length) {
        throw new IllegalArgumentException("a fleet row has " + row.keys().size() + " keys and "
            + row.values().length + " values");
      }
      for (int i = 0; i < row.values().length; i++) {
        byKey.computeIfAbsent(row.keys().get(i), k -> new Values()).add(r, row.values()[i]);
      }
    }
    List<String> keys = new ArrayList<>(byKey.keySet());
    keys.sort(PyJson::compareCodePoints);
    List<Scored> found = new ArrayList<>();
    for (String key : keys) {
      FleetState prior = states.getOrDefault(key, new FleetState(FleetSummary.empty(bucketWidth), List.of()));
      FleetScore score = new FleetScore(this, peerGroup, key, rows, byKey.get(key));
      states.put(key, score.run(prior, found));
    }
    return new Result(found, FleetState.writeAll(states));
  }

  /** {@code peer_states_from_json} then {@code peer_states_to_json}: a state's canonical text (tests). */
  String roundTrip(String stateJson) {
    return FleetState.writeAll(FleetState.readAll(stateJson, identityFields));
  }

  /** The subjects of some rows that are not null ({@code observations[SUBJECT].dropna()}). */
  static Set<String> subjects(List<FleetRow> rows, Values values) {
    Set<String> out = new HashSet<>();
    for (int i = 0; i < values.n; i++) {
      String s = rows.get(values.rows[i]).context().subject();
      if (s != null) {
        out.add(s);
      }
    }
    return out;
  }

  /** A finding's evidence in Python's key order (the writer sorts keys anyway). */
  static Map<String, Object> evidence(Object... pairs) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      out.put((String) pairs[i], pairs[i + 1]);
    }
    return out;
  }
}
