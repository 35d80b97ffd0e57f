package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The stateless half of detection for one push: the twin of {@code udfs.rules.stateful.prepare}
 * for one row. {@link View} is {@code udfs.rules.batch.PushBatch} for one push (identity fields
 * scanned and masked, the subject's fingerprint, keys that hold a secret replaced by their marker,
 * the profile); {@link #prepare} gives the finished stateless findings (leaks, typos, anomalies, in
 * alert id order) and the push's observations for the stateful rules (fleet and group rows).
 *
 * <p>Not thread-safe (its parts cache per distinct input): one instance per task thread.
 */
final class Detector {
  private final Knowledge knowledge;
  private final Keyed keyed;
  private final SecretScan scan;
  private final Sensitivity sensitivity;
  private final KeySets keySets;
  private final Anomalies anomalies;
  private final Typos typos;
  private final Groups groups;
  private final Fleet fleet; // its sentinel rule only: the fleet state lives in the keyed step
  private final Leaks leaks;
  private final Findings findings;
  private final String[] identityFields;
  private final List<String> subjectFallbacks;
  private final String markerPrefix;
  private final Pattern marker;
  private final String maskedAtEdge;
  private final Set<String> fleetTypes = new HashSet<>();
  private final List<String> fleetExcluded;
  private final Map<Profile, FleetKeys> fleetKeysByProfile = new IdentityHashMap<>(); // KeySets keeps one per profile
  private final String peerGroupFormat;

  Detector(Knowledge knowledge, Keyed keyed) {
    this.knowledge = knowledge;
    this.keyed = keyed;
    scan = SecretScan.of(knowledge);
    sensitivity = Sensitivity.of(knowledge, scan);
    keySets = KeySets.of(knowledge);
    anomalies = Anomalies.of(knowledge);
    typos = Typos.of(knowledge, keySets);
    groups = Groups.of(knowledge);
    leaks = new Leaks(knowledge);
    findings = new Findings(knowledge, keyed);
    identityFields = Findings.identityFields(knowledge).toArray(new String[0]);
    JsonNode section = knowledge.section("prepare");
    subjectFallbacks = Knowledge.strings(section.get("subject_fallbacks"));
    markerPrefix = section.get("marker_prefix").asText();
    marker = Pattern.compile(section.get("marker_pattern").asText());
    maskedAtEdge = section.get("masked_at_edge").asText();
    fleetTypes.addAll(Knowledge.strings(section.get("fleet_numeric_types")));
    fleetExcluded = Knowledge.strings(section.get("fleet_excluded"));
    peerGroupFormat = section.get("peer_group").asText();
    fleet = Fleet.of(knowledge);
  }

  SecretScan scan() {
    return scan;
  }

  Findings findings() {
    return findings;
  }

  /** {@code udfs.sensitivity.masked_identities} for one value: one holding a secret as its marker. */
  String shownIdentity(String value) {
    if (value == null || value.isEmpty() || scan.scanIdentity(value) == null) {
      return value;
    }
    return markerPrefix + keyed.fingerprint(value);
  }

  /** One push as every rule reads it ({@code PushBatch} for one row). */
  final class View {
    private final Push push;
    private final String[] safeIdentity;
    private final List<Leaks.IdentityHit> identityHits = new ArrayList<>(0);
    private final String subject;
    private final String[] safeKeys;
    private final String[] keySecrets;
    private final List<String> keys;
    private final Profile profile;

    View(Push push) {
      this.push = push;
      String[] identity = push.identity();
      subject = keyed.fingerprint(subjectText(push));
      safeIdentity = identity.clone();
      for (int f = 0; f < identity.length; f++) {
        String value = identity[f];
        if (value == null) {
          continue;
        }
        if (marker.matcher(value).find()) { // the edge masked it already: it stays, its print is in it
          identityHits.add(new Leaks.IdentityHit(identityFields[f], maskedAtEdge,
              value.substring(markerPrefix.length())));
          continue;
        }
        String kind = scan.scanIdentity(value);
        if (kind != null) {
          String print = keyed.fingerprint(value);
          safeIdentity[f] = markerPrefix + print;
          identityHits.add(new Leaks.IdentityHit(identityFields[f], kind, print));
        }
      }
      List<Entry> entries = push.entries();
      int n = entries.size();
      safeKeys = new String[n];
      keySecrets = new String[n];
      List<String> keyList = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        String key = entries.get(i).key();
        keyList.add(key);
        String kind = key == null ? null : scan.scan(key);
        keySecrets[i] = kind;
        safeKeys[i] = kind == null ? key : markerPrefix + keyed.fingerprint(key);
      }
      keys = keyList;
      profile = keySets.resolve(safeIdentity[1], safeIdentity[2], keys);
    }

    private String subjectText(Push p) {
      for (String field : subjectFallbacks) {
        String value = switch (field) {
          case "client_instance_id" -> p.clientInstanceId();
          case "client_id" -> p.clientId();
          case "connection_id" -> p.connectionId();
          default -> throw new IllegalArgumentException("no subject field " + field);
        };
        if (value != null) {
          return value;
        }
      }
      return "";
    }

    List<Entry> entries() {
      return push.entries();
    }

    String safeKey(int i) {
      return safeKeys[i];
    }

    String keySecret(int i) {
      return keySecrets[i];
    }

    List<Leaks.IdentityHit> identityHits() {
      return identityHits;
    }

    Profile profile() {
      return profile;
    }

    /** What this push's findings copy: the safe identity fields, the time, the subject. */
    Context context() {
      return new Context(safeIdentity[0], safeIdentity[1], safeIdentity[2], safeIdentity[3], safeIdentity[4],
          safeIdentity[5], push.timestampMs(), subject);
    }

    String connectionId() {
      return push.connectionId();
    }
  }

  /** What {@link #prepare} gives for one push. */
  record Prepared(List<Findings.Finished> findings, FleetRow fleet, GroupRow group, Context context) {}

  /** The stateless findings and the stateful observations of one push. */
  Prepared prepare(Push push, long nowMs) {
    View view = new View(push);
    List<Entry> entries = push.entries();
    int n = entries.size();
    Profile profile = view.profile();
    boolean[] custom = new boolean[n];
    boolean[] safe = new boolean[n];
    String[] kip = new String[n];
    String[] valueSecret = new String[n];
    for (int i = 0; i < n; i++) {
      Entry e = entries.get(i);
      custom[i] = keySets.custom(profile, e.key());
      safe[i] = view.safeKey(i) != null && view.safeKey(i).equals(e.key());
      kip[i] = sensitivity.keyFirst(e.key(), e.type(), custom[i]);
      valueSecret[i] = e.value() == null ? null : scan.scan(e.value());
    }
    List<RawFinding> raw = new ArrayList<>(leaks.findings(view, kip, valueSecret, keyed));
    raw.addAll(typos.findings(profile, view.keys, custom, safe));
    Effective effective = Effective.of(knowledge, push, profile);
    raw.addAll(anomalies.evaluate(effective));
    Context context = view.context();
    List<Findings.Finished> done = new ArrayList<>(raw.size());
    for (RawFinding r : raw) {
      done.add(findings.finish(r, context, nowMs));
    }
    done.sort(Comparator.comparing(Findings.Finished::alertId));
    GroupRow group = groups.observe(effective.role(), effective.text("group.id"), effective.text("group.protocol"),
        effective.text("partition.assignment.strategy"), push.timestampMs(), context.subject(), keyed, v -> scan.scan(v) != null);
    return new Prepared(done, fleetRow(view, profile), group, context);
  }

  /** {@code udfs.rules.fleet.fleet_values} for one push: its documented numeric values, in entry order. */
  private FleetRow fleetRow(View view, Profile profile) {
    if (profile == null) {
      return null;
    }
    FleetKeys fleetKeys = fleetKeysByProfile.computeIfAbsent(profile, this::fleetKeys);
    Set<String> excluded = fleetKeys.excluded();
    List<String> keys = new ArrayList<>();
    List<Double> values = new ArrayList<>();
    List<Entry> entries = view.entries();
    for (int i = 0; i < entries.size(); i++) {
      Entry e = entries.get(i);
      if (e.redacted() || e.key() == null || sensitivity.keyFirst(e.key(), e.type(), false) != null) {
        continue;
      }
      KeySpec spec = profile.keys().get(e.key());
      if (spec == null || !fleetTypes.contains(spec.type()) || excluded.contains(e.key())) {
        continue;
      }
      double value = PandasNumbers.parse(e.value());
      if (Double.isNaN(value) || fleet.isSentinel(value)) {
        continue;
      }
      keys.add(profile.canonical(e.key()));
      values.add(value);
    }
    if (keys.isEmpty()) {
      return null;
    }
    double[] array = values.stream().mapToDouble(Double::doubleValue).toArray();
    return new FleetRow(fleetKeys.peerGroup(), keys, array, view.context());
  }

  /** What {@link #fleetRow} reads of a profile, the same for every push of it. */
  private record FleetKeys(Set<String> excluded, String peerGroup) {}

  private FleetKeys fleetKeys(Profile profile) {
    Set<String> excluded = new HashSet<>(fleetExcluded);
    for (String key : fleetExcluded) {
      excluded.addAll(profile.sources(key));
    }
    String peerGroup = peerGroupFormat.replace("{family}", profile.family()).replace("{role}", profile.role())
        .replace("{major}", profile.version().split("\\.")[0]);
    return new FleetKeys(excluded, peerGroup);
  }
}
