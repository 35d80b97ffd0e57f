package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * What {@code udfs.rules.effective} reads the rule keys with: the keys by type, the number pattern and
 * the acks words (RE2 patterns of pyarrow; both are anchored at both ends and Java's {@code $} could
 * also match before a final line terminator, so numbers use {@link java.util.regex.Matcher#matches()}
 * and the acks decoration is applied to text already trimmed of every line terminator), and per
 * profile which pushed key carries which rule key and its defaults. Caches per distinct text and per
 * profile; not thread-safe.
 */
final class EffectiveRules implements Serializable {
  private static final long serialVersionUID = 1L;

  final String[] ruleKeys;
  final int numeric;
  final int bools;
  final Map<String, Integer> column = new HashMap<>();
  final int acks;
  final int[] msColumns;
  final String yielding;
  final String noProfile;
  final String goDurations;
  private final Map<String, Boolean> boolWords = new HashMap<>();
  private final Map<String, String> acksWords = new LinkedHashMap<>();
  private final Pattern number;
  private final Pattern acksDecoration;
  final GoDurations go;
  private transient Map<String, Double> numbers;
  private transient Map<String, Double> acksNumbers;
  private transient Map<String, PerProfile> perProfile;

  /** One profile's mapping of pushed keys to rule-key columns and its defaults per column. */
  record PerProfile(Map<String, Integer> columns, String[] defaults) {}

  EffectiveRules(Knowledge knowledge) {
    JsonNode s = knowledge.section("effective");
    List<String> all = new ArrayList<>(Knowledge.strings(s.get("numeric_keys")));
    numeric = all.size();
    all.addAll(Knowledge.strings(s.get("bool_keys")));
    bools = all.size() - numeric;
    all.addAll(Knowledge.strings(s.get("string_keys")));
    ruleKeys = all.toArray(new String[0]);
    for (int i = 0; i < ruleKeys.length; i++) {
      column.put(ruleKeys[i], i); // a later duplicate wins, as a dict comprehension does
    }
    acks = column.getOrDefault("acks", -1);
    List<String> ms = Knowledge.strings(s.get("ms_keys"));
    msColumns = ms.stream().mapToInt(column::get).toArray();
    yielding = s.get("yielding_idempotence").asText();
    noProfile = s.get("no_profile").asText();
    goDurations = knowledge.section("keysets").get("go_durations").asText();
    s.get("bool_words").fields().forEachRemaining(w -> boolWords.put(w.getKey(), w.getValue().asBoolean()));
    s.get("acks_words").fields().forEachRemaining(w -> acksWords.put(w.getKey(), w.getValue().asText()));
    number = Pattern.compile(s.get("number").asText());
    acksDecoration = Pattern.compile(s.get("acks_decoration").asText());
    go = new GoDurations(knowledge);
  }

  /** Column of a rule key, or -1. */
  int columnOf(String ruleKey) {
    Integer c = column.get(ruleKey);
    return c == null ? -1 : c;
  }

  PerProfile of(Profile profile) {
    if (perProfile == null) {
      perProfile = KeySets.lru(1024);
    }
    PerProfile out = perProfile.get(profile.id());
    if (out == null) {
      Map<String, Integer> columns = new HashMap<>();
      String[] defaults = new String[ruleKeys.length];
      for (int c = 0; c < ruleKeys.length; c++) {
        for (String src : profile.sources(ruleKeys[c])) {
          columns.put(src, c); // a later rule key wins, as the dict comprehension does
        }
        defaults[c] = profile.defaultOf(ruleKeys[c]);
      }
      out = new PerProfile(columns, defaults);
      perProfile.put(profile.id(), out);
    }
    return out;
  }

  /** {@code _floats(_normalised(text))}: a number, NaN where the text is none. */
  double number(String text) {
    if (text == null) {
      return Double.NaN;
    }
    if (numbers == null) {
      numbers = KeySets.lru(16384);
    }
    Double out = numbers.get(text);
    if (out == null) {
      out = parse(normalised(text));
      numbers.put(text, out);
    }
    return out;
  }

  /** {@code _acks}: the acks text, {@code all} and the Go clients' acks constants read as numbers. */
  double acks(String text) {
    if (text == null) {
      return Double.NaN;
    }
    if (acksNumbers == null) {
      acksNumbers = KeySets.lru(4096);
    }
    Double out = acksNumbers.get(text);
    if (out == null) {
      String t = normalised(text);
      String named = acksWords.get(acksDecoration.matcher(t).replaceAll(""));
      out = parse(named != null ? named : t);
      acksNumbers.put(text, out);
    }
    return out;
  }

  /** {@code BOOL_WORDS} of the stripped, lower-cased text, or null. */
  Boolean bool(String text) {
    return text == null ? null : boolWords.get(EffectiveText.pyLower(EffectiveText.pyStrip(text)));
  }

  private static String normalised(String text) {
    return EffectiveText.arrowLower(EffectiveText.pyStrip(text));
  }

  /** pyarrow's cast to float64 of a text the number pattern matches (any other: NaN). */
  private double parse(String text) {
    return number.matcher(text).matches() ? Double.parseDouble(text) : Double.NaN;
  }
}
