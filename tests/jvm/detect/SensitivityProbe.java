package io.configwatch.detect;

import java.util.ArrayList;
import java.util.List;

/**
 * Sensitivity against udfs.sensitivity: {"key": k} (_key_reason), {"normalize": k}, {"words": k},
 * {"key_first": [key, type, custom]}, {"first": [key, type, value, custom]}; {"category": [code points]}
 * gives Java's general category of each, as unicodedata names it (to tell Unicode-version differences apart).
 */
public final class SensitivityProbe {
  private SensitivityProbe() {}

  public static void main(String[] args) throws Exception {
    Sensitivity[] engine = new Sensitivity[1];
    Probes.run(args, (knowledge, keyed, input) -> {
      if (engine[0] == null) {
        engine[0] = Sensitivity.of(knowledge, SecretScan.of(knowledge));
      }
      Sensitivity s = engine[0];
      if (input.has("key")) {
        return s.keyReason(Probes.text(input, "key"));
      }
      if (input.has("normalize")) {
        return s.normalizeKey(Probes.text(input, "normalize"));
      }
      if (input.has("words")) {
        return s.keyWords(Probes.text(input, "words"));
      }
      if (input.has("key_first")) {
        var a = input.get("key_first");
        return s.keyFirst(text(a.get(0)), text(a.get(1)), a.get(2).asBoolean());
      }
      if (input.has("first")) {
        var a = input.get("first");
        return s.first(text(a.get(0)), text(a.get(1)), text(a.get(2)), a.get(3).asBoolean());
      }
      if (input.has("category")) {
        List<String> out = new ArrayList<>();
        input.get("category").forEach(cp -> out.add(SensitivityUnicode.category(cp.asInt())));
        return out;
      }
      throw new IllegalArgumentException("unknown probe input: " + input);
    });
  }

  private static String text(com.fasterxml.jackson.databind.JsonNode node) {
    return node == null || node.isNull() ? null : node.asText();
  }
}
