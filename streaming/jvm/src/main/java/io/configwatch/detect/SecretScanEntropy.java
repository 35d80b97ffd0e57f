package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * The entropy test of one token: the twin of {@code udfs.rules.entropy.token_stats} (Shannon entropy
 * over the token's UTF-8 bytes, the share of neighbour bytes changing class, the bit set of classes)
 * and of the verdict {@code udfs.rules.secretscan._high_entropy} draws from it (all of lower, upper and
 * digit; entropy and switch rate at or above their thresholds).
 *
 * <p>The entropy is summed as numpy sums it: per byte value in ascending order, {@code p * log2(p)}
 * with {@code p = count / length}, then negated. The logarithm is {@code Math.log} first; where the
 * sum lands within 1e-9 of the threshold, it is summed again with a correctly rounded {@code log2}
 * (numpy's own {@code log2} is within one ulp of that).
 */
final class SecretScanEntropy implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final double INV_LN2 = 1.0 / Math.log(2.0);
  private static final double NEAR = 1e-9;
  private static final MathContext WIDE = new MathContext(40);
  private static final BigDecimal LN2 = lnOfMantissa(BigDecimal.valueOf(2));

  private final int[] classOf = new int[256];  // per byte
  private final int[] classBit;                // per class code
  private final int mixed;
  private final int longLen;
  private final double bits;
  private final double bitsLong;
  private final double switchRate;
  private transient Map<Double, Double> exactLog2;  // per probability: tokens share few of them

  SecretScanEntropy(JsonNode section) {
    JsonNode byteClass = section.get("byte_class");
    int codes = 0;
    for (int b = 0; b < 256; b++) {
      classOf[b] = byteClass.get(b).asInt();
      codes = Math.max(codes, classOf[b] + 1);
    }
    classBit = new int[codes];
    for (JsonNode pair : section.get("class_bits")) {
      classBit[pair.get(0).asInt()] = pair.get(1).asInt();
    }
    int m = 0;
    for (JsonNode bit : section.get("mixed")) {
      m |= bit.asInt();
    }
    mixed = m;
    longLen = section.get("entropy_long_len").asInt();
    bits = section.get("entropy_bits").asDouble();
    bitsLong = section.get("entropy_bits_long").asDouble();
    switchRate = section.get("switch_rate").asDouble();
  }

  /** {@code token_stats} of one token. */
  record Stats(int length, double entropy, double switchRate, int classes) {}

  /** Whether the token looks like a random credential. */
  boolean randomLike(String token) {
    byte[] data = token.getBytes(StandardCharsets.UTF_8);
    int classes = classes(data);
    if ((classes & mixed) != mixed || switchRate(data) < switchRate) {
      return false;
    }
    double threshold = data.length >= longLen ? bitsLong : bits;
    int[] counts = counts(data);
    double fast = entropy(counts, data.length, false);
    if (Math.abs(fast - threshold) > NEAR) {
      return fast >= threshold;
    }
    return entropy(counts, data.length, true) >= threshold;
  }

  /** The statistics of one token (the probes compare them with Python's). */
  Stats stats(String token) {
    byte[] data = token.getBytes(StandardCharsets.UTF_8);
    return new Stats(data.length, entropy(counts(data), data.length, true), switchRate(data), classes(data));
  }

  private int classes(byte[] data) {
    int out = 0;
    for (byte b : data) {
      out |= classBit[classOf[b & 0xff]];
    }
    return out;
  }

  private double switchRate(byte[] data) {
    int switches = 0;
    for (int i = 1; i < data.length; i++) {
      if (classOf[data[i] & 0xff] != classOf[data[i - 1] & 0xff]) {
        switches++;
      }
    }
    return (double) switches / Math.max(data.length - 1, 1);
  }

  private static int[] counts(byte[] data) {
    int[] counts = new int[256];
    for (byte b : data) {
      counts[b & 0xff]++;
    }
    return counts;
  }

  private double entropy(int[] counts, int length, boolean exact) {
    double sum = 0.0;
    for (int b = 0; b < 256; b++) {
      if (counts[b] > 0) {
        double p = (double) counts[b] / length;
        sum += p * (exact ? cachedLog2(p) : Math.log(p) * INV_LN2);
      }
    }
    return -sum;
  }

  private double cachedLog2(double p) {
    if (exactLog2 == null) {
      exactLog2 = new HashMap<>();
    }
    Double hit = exactLog2.get(p);
    if (hit == null) {
      if (exactLog2.size() > 16_384) {
        exactLog2.clear();
      }
      hit = log2(p);
      exactLog2.put(p, hit);
    }
    return hit;
  }

  /** log2(x) for a positive finite x, correctly rounded. */
  static double log2(double x) {
    int exponent = Math.getExponent(x);
    if (exponent < Double.MIN_EXPONENT) {  // subnormal: scale into the normal range first
      return log2(x * 0x1p60) - 60;
    }
    double mantissa = Math.scalb(x, -exponent);  // [1, 2), exact
    if (mantissa == 1.0) {
      return exponent;
    }
    BigDecimal fraction = lnOfMantissa(new BigDecimal(mantissa)).divide(LN2, WIDE);
    return new BigDecimal(exponent).add(fraction, WIDE).doubleValue();
  }

  /** ln(m) for m in [1, 2], to 40 digits: 2 * atanh((m - 1) / (m + 1)). */
  private static BigDecimal lnOfMantissa(BigDecimal m) {
    BigDecimal z = m.subtract(BigDecimal.ONE).divide(m.add(BigDecimal.ONE), WIDE);
    BigDecimal z2 = z.multiply(z, WIDE);
    BigDecimal power = z;
    BigDecimal sum = BigDecimal.ZERO;
    BigDecimal tiny = BigDecimal.ONE.movePointLeft(WIDE.getPrecision() + 2);
    for (int k = 1; power.abs().compareTo(tiny) > 0; k += 2) {
      sum = sum.add(power.divide(BigDecimal.valueOf(k), WIDE), WIDE);
      power = power.multiply(z2, WIDE);
    }
    return sum.multiply(BigDecimal.valueOf(2), WIDE);
  }
}
