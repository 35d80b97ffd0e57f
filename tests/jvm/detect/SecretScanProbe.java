package io.configwatch.detect;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * SecretScan against udfs.rules.secretscan: {"scan": v} and {"identity": v} give the rule id or null;
 * {"strip": token}, {"split": value}, {"stats": token} ([length, entropy, switch rate, classes]) and
 * {"log2": [x, ...]} give the parts (strip_structure, split_identity, token_stats, a correctly rounded log2).
 * {"engine": "jdk"} or {"engine": "re2j"} sends every text to that regex engine (default: by length);
 * {"engine": "copy"} judges with a serialized and deserialized engine (what Spark ships to executors).
 */
public final class SecretScanProbe {
  private SecretScanProbe() {}

  public static void main(String[] args) throws Exception {
    Map<String, SecretScan> engines = new HashMap<>();
    Probes.run(args, (knowledge, keyed, input) -> {
      String engine = input.path("engine").asText("default");
      SecretScan scan = engines.computeIfAbsent(engine, e -> switch (e) {
        case "jdk" -> SecretScan.of(knowledge, Integer.MAX_VALUE);
        case "re2j" -> SecretScan.of(knowledge, 0);
        case "copy" -> copy(SecretScan.of(knowledge));
        default -> SecretScan.of(knowledge);
      });
      if (input.has("scan")) {
        return scan.scan(Probes.text(input, "scan"));
      }
      if (input.has("identity")) {
        return scan.scanIdentity(Probes.text(input, "identity"));
      }
      if (input.has("strip")) {
        return scan.identity().stripStructure(Probes.text(input, "strip"));
      }
      if (input.has("split")) {
        return scan.identity().splitIdentity(Probes.text(input, "split"));
      }
      if (input.has("stats")) {
        SecretScanEntropy.Stats s = scan.entropy().stats(Probes.text(input, "stats"));
        return List.of(s.length(), s.entropy(), s.switchRate(), s.classes());
      }
      if (input.has("log2")) {
        double[] xs = new double[input.get("log2").size()];
        for (int i = 0; i < xs.length; i++) {
          xs[i] = SecretScanEntropy.log2(input.get("log2").get(i).asDouble());
        }
        return Arrays.stream(xs).boxed().toList();
      }
      throw new IllegalArgumentException("unknown probe input: " + input);
    });
  }

  private static SecretScan copy(SecretScan scan) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
        scan.scan("warm the caches: AKIAIOSFODNN7EXAMPLE " + "a".repeat(600));
        out.writeObject(scan);
      }
      try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
        return (SecretScan) in.readObject();
      }
    } catch (IOException | ClassNotFoundException e) {
      throw new IllegalStateException(e);
    }
  }
}
