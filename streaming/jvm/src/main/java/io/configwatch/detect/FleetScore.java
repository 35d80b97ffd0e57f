package io.configwatch.detect;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code udfs.rules.fleet.score_group} for one (peer group, config key) of a batch, with {@code
 * _still_pending}: its values are added to the summary; while the group has fewer than {@code
 * MIN_PEERS} values the lone ones wait in the state, else the batch's values and the waiting ones are
 * scored and nothing waits any more.
 *
 * <p>A waiting value's time is kept as {@code event_times} reads it: int milliseconds, or null (also for the
 * float text earlier releases stored).
 */
final class FleetScore {
  private final Fleet fleet;
  private final String peerGroup;
  private final String key;
  private final List<FleetRow> rows;
  private final Fleet.Values fresh;

  FleetScore(Fleet fleet, String peerGroup, String key, List<FleetRow> rows, Fleet.Values fresh) {
    this.fleet = fleet;
    this.peerGroup = peerGroup;
    this.key = key;
    this.rows = rows;
    this.fresh = fresh;
  }

  /** Scores the key against {@code prior}, adds its findings to {@code found}, returns the new state. */
  FleetState run(FleetState prior, List<Fleet.Scored> found) {
    FleetSummary summary = prior.summary.add(Arrays.copyOf(fresh.values, fresh.n), fleet.maxBuckets);
    long peers = summary.count();
    if (peers < fleet.minPeers) {
      return new FleetState(summary, stillPending(prior.pending, summary));
    }
    List<Double> values = new ArrayList<>();
    List<Context> contexts = new ArrayList<>();
    for (int i = 0; i < fresh.n; i++) {
      values.add(fresh.values[i]);
      contexts.add(rows.get(fresh.rows[i]).context());
    }
    if (!prior.pending.isEmpty()) {
      Set<String> pushedAgain = Fleet.subjects(rows, fresh); // a client that pushed again: its new value stands
      for (FleetState.Pending p : prior.pending) {
        if (p.subject() == null || !pushedAgain.contains(p.subject())) {
          values.add(p.value());
          String[] id = p.identity();
          contexts.add(new Context(id[0], id[1], id[2], id[3], id[4], id[5], eventTime(p.timestamp()), p.subject()));
        }
      }
    }
    double q1 = summary.quantileLog(0.25);
    double q3 = summary.quantileLog(0.75);
    double reach = Math.max(fleet.iqrK * (q3 - q1), fleet.minLogDistance);
    Object median = shownQuantile(summary.quantileLog(0.5));
    List<Object> usual = List.of(shownQuantile(q1), shownQuantile(q3));
    double limit = fleet.rareLimit(peers);
    for (int i = 0; i < values.size(); i++) {
      double value = values.get(i);
      double y = FleetSummary.log(value);
      double outBy = Math.max(q1 - reach - y, y - q3 - reach);
      long near = summary.nearCount(y, fleet.rareRadius);
      if (outBy > 0 && near <= limit) {
        Object shown = FleetText.shown(value, fleet.shownPlaces);
        String text = FleetText.format(fleet.message, Map.of("key", key, "value", shown, "near", near,
            "peers", peers, "peer_group", peerGroup, "decades", outBy + reach, "low", usual.get(0),
            "high", usual.get(1)));
        Map<String, Object> evidence = Fleet.evidence("peer_group", peerGroup, "value", shown,
            "peer_median", median, "peer_iqr", usual, "peers", peers, "peers_near_value", near,
            "decades_outside", FleetText.round(outBy, fleet.decadesPlaces));
        found.add(new Fleet.Scored(new RawFinding(fleet.rule, List.of(key), text, evidence), contexts.get(i)));
      }
    }
    return new FleetState(summary, List.of());
  }

  /** {@code _shown(float(f"{_unlog(q):.3g}"))}; ArithmeticException where Python's {@code 10.0 ** q} overflows. */
  private Object shownQuantile(double q) {
    double power = Math.pow(10.0, Math.abs(q));
    if (Double.isInfinite(power)) {
      throw new ArithmeticException("(34, 'Numerical result out of range')");
    }
    double unlogged = Math.signum(q) * (power - 1.0);
    return FleetText.shown(PyJson.significant(unlogged, fleet.shownDigits), fleet.shownPlaces);
  }

  /** A waiting value's time as a long or null, as {@code udfs.rules.findings.event_times} reads it. */
  private static Long eventTime(Object time) {
    if (time instanceof Long l) {
      return l;
    }
    double d;
    if (time instanceof Double x) {
      d = x;
    } else if (time instanceof String s) {
      try {
        d = Double.parseDouble(s.strip());
      } catch (NumberFormatException e) {
        return null;
      }
    } else {
      return null;
    }
    return Double.isNaN(d) || Double.isInfinite(d) ? null : (long) d;
  }

  /** {@code _still_pending}: the candidates (waiting, then this batch's) that can still turn out rare. */
  private List<FleetState.Pending> stillPending(List<FleetState.Pending> waiting, FleetSummary summary) {
    int total = waiting.size() + fresh.n;
    boolean[] alone = new boolean[total];
    double limit = fleet.rareLimit(fleet.minPeers);
    for (int i = 0; i < total; i++) {
      double value = i < waiting.size() ? waiting.get(i).value() : fresh.values[i - waiting.size()];
      alone[i] = summary.nearCount(FleetSummary.log(value), fleet.rareRadius) <= limit;
    }
    Set<String> later = new HashSet<>(); // keep="last": walk backwards, the first seen per subject stands
    List<Integer> kept = new ArrayList<>();
    for (int i = total - 1; i >= 0; i--) {
      if (!alone[i]) {
        continue;
      }
      String subject = subject(waiting, i);
      if (subject == null || later.add(subject)) {
        kept.add(i);
      }
    }
    int from = Math.max(0, kept.size() - fleet.minPeers);
    List<FleetState.Pending> out = new ArrayList<>(kept.size() - from);
    for (int k = kept.size() - 1 - from; k >= 0; k--) {
      int i = kept.get(k);
      if (i < waiting.size()) {
        FleetState.Pending p = waiting.get(i);
        out.add(new FleetState.Pending(p.value(), p.identity(), eventTime(p.timestamp()), p.subject()));
      } else {
        Context c = rows.get(fresh.rows[i - waiting.size()]).context();
        out.add(new FleetState.Pending(fresh.values[i - waiting.size()], new String[] {c.clientInstanceId(),
            c.clientSoftwareName(), c.clientSoftwareVersion(), c.clientId(), c.principal(), c.clientAddress()},
            c.timestampMs(), c.subject()));
      }
    }
    return out;
  }

  private String subject(List<FleetState.Pending> waiting, int i) {
    return i < waiting.size() ? waiting.get(i).subject() : rows.get(fresh.rows[i - waiting.size()]).context().subject();
  }
}
