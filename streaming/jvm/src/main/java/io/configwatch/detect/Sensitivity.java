package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Why one config entry is sensitive: the twin of {@code udfs.sensitivity} for one entry. Its key
 * rules ({@code _key_reason}): the KIP's prefixes, infixes and suffixes on the normalised key
 * ({@code normalize_key}: NFKC, invisible and control characters dropped, trimmed, lower case), then
 * secret words and word pairs among the key's words in any naming style ({@code key_words}).
 * {@code sensitive_key_first}: a KIP type first, then the key rules, then a custom key;
 * {@code sensitive_first}: those, then a secret in the value ({@code SecretScan}). Key answers are
 * cached per distinct key.
 */
public final class Sensitivity implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final int CACHE = 65_536;

  private final SecretScan scan;
  private final Set<String> kipTypes;
  private final List<String> prefixes;
  private final List<String> infixes;
  private final List<String> suffixes;
  private final String ruleType;
  private final String rulePrefix;
  private final String ruleInfix;
  private final String ruleSuffix;
  private final String ruleCustom;
  private final String ruleName;
  private final Set<String> secretWords;
  private final Set<String> secretPairs = new HashSet<>();  // "first second": words never hold a space
  private final Pattern camelBoundary;
  private final Pattern word;
  private final Set<Integer> droppedTypes = new HashSet<>();
  private transient SecretScanCache reasons;

  private Sensitivity(Knowledge knowledge, SecretScan scan) {
    this.scan = scan;
    JsonNode s = knowledge.section("sensitivity");
    kipTypes = Set.copyOf(Knowledge.strings(s.get("kip_types")));
    prefixes = Knowledge.strings(s.get("kip_prefixes"));
    infixes = Knowledge.strings(s.get("kip_infixes"));
    suffixes = Knowledge.strings(s.get("kip_suffixes"));
    ruleType = s.get("rule_type").asText();
    rulePrefix = s.get("rule_prefix").asText();
    ruleInfix = s.get("rule_infix").asText();
    ruleSuffix = s.get("rule_suffix").asText();
    ruleCustom = s.get("rule_custom").asText();
    ruleName = s.get("rule_name").asText();
    secretWords = Set.copyOf(Knowledge.strings(s.get("secret_words")));
    for (JsonNode pair : s.get("secret_pairs")) {
      secretPairs.add(pair.get(0).asText() + " " + pair.get(1).asText());
    }
    // Python re patterns with ASCII classes and look-arounds only: java.util.regex reads them alike.
    camelBoundary = Pattern.compile(s.get("camel_boundary").asText());
    word = Pattern.compile(s.get("word").asText());
    for (String category : Knowledge.strings(s.get("dropped_categories"))) {
      droppedTypes.add(SensitivityUnicode.javaType(category));
    }
  }

  public static Sensitivity of(Knowledge knowledge, SecretScan scan) {
    return new Sensitivity(knowledge, scan);
  }

  /** udfs.sensitivity._key_reason: KIP prefix/infix/suffix on the normalised key, then secret words; or null. */
  public String keyReason(String key) {
    if (reasons == null) {
      reasons = new SecretScanCache(CACHE, this::judgeKey);
    }
    return reasons.get(key);
  }

  /** udfs.sensitivity.sensitive_key_first for one entry. */
  public String keyFirst(String key, String type, boolean custom) {
    if (type != null && kipTypes.contains(type)) {
      return ruleType;
    }
    String reason = keyReason(key);
    if (reason != null) {
      return reason;
    }
    return custom ? ruleCustom : null;
  }

  /** udfs.sensitivity.sensitive_first for one entry. */
  public String first(String key, String type, String value, boolean custom) {
    String reason = keyFirst(key, type, custom);
    return reason != null ? reason : scan.scan(value);
  }

  private String judgeKey(String key) {
    String norm = normalizeKey(key);
    for (String prefix : prefixes) {
      if (norm.startsWith(prefix)) {
        return rulePrefix;
      }
    }
    for (String infix : infixes) {
      if (norm.contains(infix)) {
        return ruleInfix;
      }
    }
    for (String suffix : suffixes) {
      if (norm.endsWith(suffix)) {
        return ruleSuffix;
      }
    }
    List<String> words = keyWords(key);
    for (int i = 0; i < words.size(); i++) {
      if (secretWords.contains(words.get(i)) || i > 0 && secretPairs.contains(words.get(i - 1) + " " + words.get(i))) {
        return ruleName;
      }
    }
    return null;
  }

  /** udfs.sensitivity.normalize_key. */
  String normalizeKey(String key) {
    return SensitivityUnicode.lower(EffectiveText.pyStrip(kept(key)));
  }

  /** udfs.sensitivity.key_words. */
  List<String> keyWords(String key) {
    String spaced = SensitivityUnicode.lower(camelBoundary.matcher(kept(key)).replaceAll(" "));
    List<String> out = new ArrayList<>();
    Matcher m = word.matcher(spaced);
    while (m.find()) {
      out.add(m.group());
    }
    return out;
  }

  /** The key in NFKC without the code points of the dropped categories. */
  private String kept(String key) {
    String folded = Normalizer.normalize(key, Normalizer.Form.NFKC);
    StringBuilder out = new StringBuilder(folded.length());
    folded.codePoints().filter(cp -> !droppedTypes.contains(Character.getType(cp))).forEach(out::appendCodePoint);
    return out.toString();
  }
}
