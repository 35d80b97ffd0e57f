/* configwatch dashboard: the "connections by software" chart, hand-written SVG (no library). */
"use strict";

const FAMILY_HUES = [214, 162, 266, 28, 338, 96, 190, 48];

/* One colour per (family, version): a hue per family, lighter for older versions. */
function versionColours(gauges) {
  const families = [...new Set(gauges.map(g => g.client_software_name))].sort();
  const colours = new Map();
  families.forEach((family, fi) => {
    const hue = FAMILY_HUES[fi % FAMILY_HUES.length];
    const versions = gauges.filter(g => g.client_software_name === family)
      .map(g => g.client_software_version).sort(compareVersions);
    versions.forEach((version, vi) => {
      const n = versions.length;
      const light = n === 1 ? 50 : 70 - (vi * 34) / (n - 1);  // newest = deepest
      colours.set(`${family}/${version}`, `hsl(${hue} 68% ${light}%)`);
    });
  });
  return colours;
}

/* An axis step of 1, 2 or 5 times a power of ten (whole connections), about five ticks. */
function niceStep(maxValue) {
  const raw = Math.max(1, maxValue / 5);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

function renderChart(container, gauges, colours) {
  container.replaceChildren();
  if (!gauges.length) {
    container.append(h("p", { class: "empty", text: "Waiting for the first gauge…" }));
    return;
  }
  const byFamily = new Map();
  for (const g of gauges) {
    if (!byFamily.has(g.client_software_name)) byFamily.set(g.client_software_name, []);
    byFamily.get(g.client_software_name).push(g);
  }
  const families = [...byFamily.entries()].map(([name, gs]) => ({
    name,
    total: gs.reduce((a, g) => a + g.connections, 0),
    versions: gs.sort((a, b) => compareVersions(a.client_software_version, b.client_software_version)),
  })).sort((a, b) => b.total - a.total || a.name.localeCompare(b.name));

  const width = Math.max(container.clientWidth || 640, 360);
  const labelW = Math.min(220, Math.max(130, width * 0.24));
  const totalW = 64;
  const plotW = width - labelW - totalW;
  const rowH = 34, barH = 20, top = 6, axisH = 22;
  const height = top + families.length * rowH + axisH;
  const step = niceStep(Math.max(...families.map(f => f.total)));
  const ticks = Math.max(1, Math.ceil(Math.max(...families.map(f => f.total)) / step));
  const max = step * ticks;
  const x = v => (v / max) * plotW;

  const svg = s("svg", { viewBox: `0 0 ${width} ${height}`, height, role: "img",
    "aria-label": "Open connections by client software family, stacked by version" });
  for (let i = 0; i <= ticks; i++) {
    const gx = labelW + (plotW * i) / ticks;
    svg.append(s("line", { class: "axis", x1: gx, x2: gx, y1: top - 2, y2: height - axisH + 4, "stroke-dasharray": i ? "2 3" : null }));
    svg.append(s("text", { class: "tick", x: gx, y: height - 6, "text-anchor": i === 0 ? "start" : "middle", text: fmtInt(step * i) }));
  }
  families.forEach((f, i) => {
    const y = top + i * rowH + (rowH - barH) / 2;
    svg.append(s("text", { class: "family", x: labelW - 12, y: y + barH / 2 + 4.5, "text-anchor": "end", text: f.name }));
    svg.append(s("rect", { class: "track", x: labelW, y, width: plotW, height: barH, rx: 4 }));
    let cx = labelW;
    for (const g of f.versions) {
      const w = x(g.connections);
      const colour = colours.get(g.key) || "var(--accent)";
      const seg = s("rect", { class: "seg", x: cx, y, width: Math.max(w, 0.5), height: barH, fill: colour, "data-key": g.key });
      seg.append(s("title", { text: `${g.key}: ${fmtInt(g.connections)} connections, ${fmtInt(g.client_instances)} instances` }));
      svg.append(seg);
      const label = g.client_software_version;
      if (w > label.length * 6.6 + 10) {
        svg.append(s("text", { class: "seg-label", x: cx + w / 2, y: y + barH / 2 + 4, "text-anchor": "middle", text: label }));
      }
      cx += w;
    }
    svg.append(s("text", { class: "total", x: labelW + plotW + 10, y: y + barH / 2 + 4.5, text: fmtInt(f.total) }));
  });
  container.append(svg);

  const legend = h("div", { class: "legend" });
  for (const f of families) {
    for (const g of f.versions) {
      legend.append(h("span", {}, h("i", { style: { background: colours.get(g.key) } }), `${g.key}`));
    }
  }
  container.append(legend);
}
