package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;

/**
 * The twin of {@code udfs.rules.fleet.NumericSummary}: a histogram of {@code sign(x) * log10(1 + |x|)}
 * in buckets of {@code width} (bucket ids ascending, with their counts), coarsened (width doubled,
 * ids halved by floor division) while it has more than {@code MAX_BUCKETS} buckets. Immutable.
 *
 * <p>The logarithm is {@link Math#log10} (on x86-64 HotSpot: correctly rounded in every value tried;
 * numpy's SIMD log10 differs from it by one ulp in about 0.05% of values, which moves a result only
 * when a value lies on a bucket edge or a fence to that precision). A bucket id of NaN or an
 * infinity is numpy's x86 cast of it to int64: {@link Long#MIN_VALUE}.
 */
final class FleetSummary {
  final double width;
  private final long[] ids;
  private final long[] counts;
  private double[] centers; // (id + 0.5) * width, lazily
  private long[] cum; // cum[0] = 0, cum[i + 1] = counts[0] + ... + counts[i]

  private FleetSummary(double width, long[] ids, long[] counts) {
    this.width = width;
    this.ids = ids;
    this.counts = counts;
  }

  static FleetSummary empty(double width) {
    return new FleetSummary(width, new long[0], new long[0]);
  }

  /** How many buckets. */
  int size() {
    return ids.length;
  }

  /** How many values ({@code NumericSummary.count}). */
  long count() {
    long total = 0;
    for (long c : counts) {
      total += c;
    }
    return total;
  }

  /** {@code sign(x) * log10(1 + |x|)}. */
  static double log(double x) {
    return Math.signum(x) * Math.log10(1.0 + Math.abs(x));
  }

  /** {@code np.floor(y / width).astype(np.int64)} as numpy does it on x86 (NaN, out of range: MIN_VALUE). */
  static long bucket(double y, double width) {
    double f = Math.floor(y / width);
    return f >= -0x1p63 && f < 0x1p63 ? (long) f : Long.MIN_VALUE;
  }

  /** A summary with {@code values} (raw config values) added, then bounded. */
  FleetSummary add(double[] values, int maxBuckets) {
    long[] added = new long[values.length];
    for (int i = 0; i < values.length; i++) {
      added[i] = bucket(log(values[i]), width);
    }
    Arrays.sort(added);
    int distinct = 0;
    long[] addIds = new long[added.length];
    long[] addCounts = new long[added.length];
    for (long id : added) {
      if (distinct > 0 && addIds[distinct - 1] == id) {
        addCounts[distinct - 1]++;
      } else {
        addIds[distinct] = id;
        addCounts[distinct++] = 1;
      }
    }
    return combine(width, ids, counts, ids.length, addIds, addCounts, distinct).bounded(maxBuckets);
  }

  /** {@code NumericSummary.merge}: both inputs at the coarser width, counts added, bounded. */
  FleetSummary merge(FleetSummary other, int maxBuckets) {
    FleetSummary a = this;
    FleetSummary b = other;
    while (a.width < b.width) {
      a = a.coarsen();
    }
    while (b.width < a.width) {
      b = b.coarsen();
    }
    return combine(a.width, a.ids, a.counts, a.ids.length, b.ids, b.counts, b.ids.length).bounded(maxBuckets);
  }

  private static FleetSummary combine(double width, long[] aIds, long[] aCounts, int na, long[] bIds, long[] bCounts,
      int nb) {
    long[] outIds = new long[na + nb];
    long[] outCounts = new long[na + nb];
    int i = 0;
    int j = 0;
    int n = 0;
    while (i < na || j < nb) {
      if (j >= nb || (i < na && aIds[i] < bIds[j])) {
        outIds[n] = aIds[i];
        outCounts[n++] = aCounts[i++];
      } else if (i >= na || bIds[j] < aIds[i]) {
        outIds[n] = bIds[j];
        outCounts[n++] = bCounts[j++];
      } else {
        outIds[n] = aIds[i];
        outCounts[n++] = aCounts[i++] + bCounts[j++];
      }
    }
    return new FleetSummary(width, Arrays.copyOf(outIds, n), Arrays.copyOf(outCounts, n));
  }

  /** Width doubled, bucket ids floor-halved ({@code NumericSummary._coarsen}). */
  FleetSummary coarsen() {
    long[] outIds = new long[ids.length];
    long[] outCounts = new long[ids.length];
    int n = 0;
    for (int i = 0; i < ids.length; i++) {
      long id = Math.floorDiv(ids[i], 2L);
      if (n > 0 && outIds[n - 1] == id) {
        outCounts[n - 1] += counts[i];
      } else {
        outIds[n] = id;
        outCounts[n++] = counts[i];
      }
    }
    return new FleetSummary(width * 2, Arrays.copyOf(outIds, n), Arrays.copyOf(outCounts, n));
  }

  FleetSummary bounded(int maxBuckets) {
    FleetSummary s = this;
    while (s.ids.length > maxBuckets) {
      s = s.coarsen();
    }
    return s;
  }

  private void prepare() {
    if (centers == null) {
      double[] c = new double[ids.length];
      long[] sums = new long[ids.length + 1];
      for (int i = 0; i < ids.length; i++) {
        c[i] = ((double) ids[i] + 0.5) * width;
        sums[i + 1] = sums[i] + counts[i];
      }
      cum = sums;
      centers = c;
    }
  }

  /** {@code NumericSummary.quantile_log}: the first center whose running count reaches {@code q} of all. */
  double quantileLog(double q) {
    prepare();
    if (ids.length == 0) {
      throw new IllegalStateException("the quantile of an empty summary");
    }
    double target = (double) cum[ids.length] * q;
    int lo = 0;
    int hi = ids.length - 1;
    while (lo < hi) { // the first i with cum[i + 1] >= target
      int mid = (lo + hi) >>> 1;
      if ((double) cum[mid + 1] >= target) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return centers[lo];
  }

  /** {@code NumericSummary.near_counts} for one log value: how many values lie within {@code radius}. */
  long nearCount(double y, double radius) {
    prepare();
    double reach = radius + width / 2.0;
    int lo = search(y - reach, false);
    int hi = search(y + reach, true);
    return cum[hi] - cum[lo];
  }

  /** numpy's searchsorted on the centers ({@code right}: first center > v, else first >= v; NaN sorts last). */
  private int search(double v, boolean right) {
    if (Double.isNaN(v)) {
      return centers.length;
    }
    int lo = 0;
    int hi = centers.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (right ? centers[mid] <= v : centers[mid] < v) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** {@code "width":...,"buckets":{...}}: the fields of {@code NumericSummary.to_obj}, ids ascending. */
  void writeFields(StringBuilder out) {
    out.append("\"width\":").append(PyJson.floatRepr(width)).append(",\"buckets\":{");
    for (int i = 0; i < ids.length; i++) {
      if (i > 0) {
        out.append(',');
      }
      out.append('"').append(ids[i]).append("\":").append(counts[i]);
    }
    out.append('}');
  }

  /** {@code NumericSummary.from_obj}. */
  static FleetSummary read(JsonNode obj) {
    double width = obj.get("width").asDouble();
    JsonNode buckets = obj.get("buckets");
    long[] ids = new long[buckets.size()];
    long[] counts = new long[buckets.size()];
    int n = 0;
    for (Iterator<Map.Entry<String, JsonNode>> it = buckets.fields(); it.hasNext(); n++) {
      Map.Entry<String, JsonNode> e = it.next();
      ids[n] = Long.parseLong(e.getKey().strip());
      counts[n] = e.getValue().asLong();
    }
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (a, b) -> Long.compare(ids[a], ids[b]));
    long[] sortedIds = new long[n];
    long[] sortedCounts = new long[n];
    for (int i = 0; i < n; i++) {
      sortedIds[i] = ids[order[i]];
      sortedCounts[i] = counts[order[i]];
    }
    return new FleetSummary(width, sortedIds, sortedCounts);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FleetSummary s && s.width == width && Arrays.equals(s.ids, ids)
        && Arrays.equals(s.counts, counts);
  }

  @Override
  public int hashCode() {
    return Double.hashCode(width) * 31 + Arrays.hashCode(ids);
  }
}
