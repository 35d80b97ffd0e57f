package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The harness of the detection engine's probes (tests/jvmprobe.py): args[0] is the spec file, the
 * key comes from CONFIGWATCH_PROBE_KEY; each stdin line is one JSON input, each stdout line the JSON
 * (as Python writes it) of the probe's answer. A probe is a class with a main that calls {@link #run}.
 */
public final class Probes {
  private Probes() {}

  /** One probe: an answer per input. */
  public interface Fn {
    Object apply(Knowledge knowledge, Keyed keyed, JsonNode input) throws Exception;
  }

  public static void run(String[] args, Fn fn) throws Exception {
    Knowledge knowledge = Knowledge.parse(Files.readString(Path.of(args[0]), StandardCharsets.UTF_8));
    String key = System.getenv().getOrDefault("CONFIGWATCH_PROBE_KEY", "probe-key");
    JsonNode contract = knowledge.section("contract");
    Keyed keyed = new Keyed(key.getBytes(StandardCharsets.UTF_8), contract.get("fingerprint_hex_chars").asInt(),
        contract.get("alert_id_hex_chars").asInt());
    ObjectMapper mapper = new ObjectMapper();
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        Object answer = fn.apply(knowledge, keyed, mapper.readTree(line));
        out.println(answer instanceof PyJson.Raw raw ? raw.json() : PyJson.dumps(answer, false));
      }
    }
    out.flush();
  }

  /** A JSON input's text, or null. */
  public static String text(JsonNode node, String field) {
    JsonNode value = node.get(field);
    return value == null || value.isNull() ? null : value.asText();
  }
}
