package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The twin of {@code udfs.rules.fleet.PeerState} and of {@code peer_states_to_json}/{@code
 * peer_states_from_json}: one (peer group, config key)'s summary and the values that wait to be
 * scored, each with the fields its finding needs ({@code PENDING_COLUMNS}: the identity fields, the
 * time, the subject, in that order) as Python holds them after {@code json.loads} (a time is a Long,
 * a String or null).
 */
final class FleetState {
  /** A waiting value: the value and the {@code PENDING_COLUMNS} fields (identity, time, subject). */
  record Pending(double value, String[] identity, Object timestamp, String subject) {}

  final FleetSummary summary;
  final List<Pending> pending;

  FleetState(FleetSummary summary, List<Pending> pending) {
    this.summary = summary;
    this.pending = pending;
  }

  /** {@code PeerState.to_obj} as JSON text (ensure_ascii), appended to {@code out}. */
  void write(StringBuilder out) {
    out.append('{');
    summary.writeFields(out);
    if (!pending.isEmpty()) {
      out.append(",\"pending\":[");
      for (int i = 0; i < pending.size(); i++) {
        Pending p = pending.get(i);
        out.append(i > 0 ? ",[" : "[").append(PyJson.floatRepr(p.value()));
        for (String field : p.identity()) {
          out.append(',');
          FleetJson.write(out, field);
        }
        out.append(',');
        FleetJson.write(out, p.timestamp());
        out.append(',');
        FleetJson.write(out, p.subject());
        out.append(']');
      }
      out.append(']');
    }
    out.append('}');
  }

  /** Reads the state JSON text of a {@code fleet|<peer group>} key (null or empty: none yet). */
  static Map<String, FleetState> readAll(String json, int identityFields) {
    Map<String, FleetState> out = new LinkedHashMap<>();
    if (json == null || json.isEmpty()) {
      return out;
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = FleetJson.parse(json).fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      out.put(e.getKey(), read(e.getValue(), identityFields));
    }
    return out;
  }

  /** {@code peer_states_to_json}: the states by config key in code point order. */
  static String writeAll(Map<String, FleetState> states) {
    List<String> keys = new ArrayList<>(states.keySet());
    keys.sort(PyJson::compareCodePoints);
    StringBuilder out = new StringBuilder(256 + 64 * keys.size());
    out.append('{');
    for (int i = 0; i < keys.size(); i++) {
      if (i > 0) {
        out.append(',');
      }
      FleetJson.string(out, keys.get(i));
      out.append(':');
      states.get(keys.get(i)).write(out);
    }
    return out.append('}').toString();
  }

  /** {@code PeerState.from_obj}: a bare summary (what earlier releases stored) has nothing pending. */
  static FleetState read(JsonNode obj, int identityFields) {
    List<Pending> pending = new ArrayList<>();
    JsonNode list = obj.get("pending");
    if (list != null) {
      for (JsonNode p : list) {
        String[] identity = new String[identityFields];
        for (int i = 0; i < identityFields; i++) {
          identity[i] = text(p.get(1 + i));
        }
        Object time = FleetJson.scalar(p.get(1 + identityFields));
        pending.add(new Pending(p.get(0).asDouble(), identity, time, text(p.get(2 + identityFields))));
      }
    }
    return new FleetState(FleetSummary.read(obj), pending);
  }

  private static String text(JsonNode node) {
    Object value = FleetJson.scalar(node);
    return value == null ? null : value.toString();
  }
}
