/* configwatch dashboard: loads the API, then follows /events (Server-Sent Events) without reloads. */
"use strict";

const state = {
  gauges: [], fleet: null, lastUpdatedMs: null,
  alerts: [], severityCounts: {}, filter: new Set(),
  clients: [], selected: null, health: null, connected: false,
};
const $ = id => document.getElementById(id);

/* ---------- gauges: KPIs, chart, table ---------- */

function bump(el, text) {
  if (el.textContent === text) return;
  el.textContent = text;
  el.classList.add("bump");
  requestAnimationFrame(() => requestAnimationFrame(() => el.classList.remove("bump")));
}

function applyGauges(doc) {
  const before = new Map(state.gauges.map(g => [g.key, g]));
  state.gauges = doc.gauges;
  state.fleet = doc.fleet;
  state.lastUpdatedMs = doc.last_updated_ms;
  const colours = versionColours(state.gauges);
  bump($("kpi-connections"), fmtInt(doc.fleet.connections));
  bump($("kpi-instances"), fmtInt(doc.fleet.client_instances));
  bump($("kpi-versions"), fmtInt(doc.fleet.software_versions));
  $("kpi-names").textContent = `${fmtInt(doc.fleet.software_names)} software families`;
  $("kpi-connections-foot").textContent = doc.ready ? "live from the gauges topic" : "rebuilding from the gauges topic…";
  renderChart($("chart"), state.gauges, colours);
  renderGaugeTable(before, colours);
  renderUpdated();
}

/* Connections per security protocol and SASL mechanism, most first: "SASL_SSL/SCRAM-SHA-512 3 · PLAINTEXT 1". */
function securityMix(byPosture) {
  return Object.entries(byPosture || {}).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([label, n]) => `${label} ${fmtInt(n)}`).join(" · ");
}

function renderGaugeTable(before, colours) {
  const tbody = $("gauges").querySelector("tbody");
  const total = state.fleet ? state.fleet.connections : 0;
  const rows = [...state.gauges].sort((a, b) => b.connections - a.connections || a.key.localeCompare(b.key));
  tbody.replaceChildren(...rows.map(g => {
    const share = total ? (100 * g.connections) / total : 0;
    const old = before.get(g.key);
    const changed = before.size && (!old || old.connections !== g.connections || old.client_instances !== g.client_instances);
    return h("tr", { class: changed ? "flash" : null, "data-key": g.key },
      h("td", {}, h("i", { class: "swatch", style: { background: colours.get(g.key) } }), g.client_software_name),
      h("td", { class: "mono", text: g.client_software_version }),
      h("td", { class: "num", text: fmtInt(g.connections) }),
      h("td", { class: "num", text: fmtInt(g.client_instances) }),
      h("td", { class: "mono security-mix", text: securityMix(g.connections_by_security) }),
      h("td", {}, h("div", { class: "share" },
        h("div", { class: "share-bar" }, h("i", { style: { width: `${share.toFixed(1)}%` } })),
        h("small", { text: `${share.toFixed(share < 10 ? 1 : 0)}%` }))),
      h("td", { class: "num when", "data-ms": g.updated_at_ms, text: fmtAge(g.updated_at_ms) }));
  }));
  $("gauges-empty").hidden = rows.length > 0;
}

function renderUpdated() {
  $("gauges-updated").textContent = state.lastUpdatedMs ? `last change ${fmtAge(state.lastUpdatedMs)}` : "";
  for (const td of document.querySelectorAll("td.when[data-ms]")) td.textContent = fmtAge(Number(td.dataset.ms));
  for (const el of document.querySelectorAll(".alert .when[data-ms]")) el.textContent = fmtAge(Number(el.dataset.ms));
}

/* ---------- alerts feed with severity filter ---------- */

function renderFilter() {
  const box = $("severity-filter");
  const all = h("button", { class: "chip", type: "button", "aria-pressed": String(state.filter.size === 0),
    onclick: () => { state.filter.clear(); reloadAlerts(); } }, "all");
  box.replaceChildren(all, ...SEVERITIES.map(sev => h("button", {
    class: `chip ${sevClass(sev)}`, type: "button", "data-severity": sev, "aria-pressed": String(state.filter.has(sev)),
    onclick: () => { state.filter.has(sev) ? state.filter.delete(sev) : state.filter.add(sev); reloadAlerts(); },
  }, h("i"), sev)));
}

function alertItem(a, isNew) {
  const who = [a.client_software_name && `${a.client_software_name} ${a.client_software_version || ""}`.trim(),
    a.client_id && `client.id ${a.client_id}`, a.principal].filter(Boolean);
  return h("li", { class: `alert ${sevClass(a.severity)}${isNew ? " new" : ""}`, "data-alert-id": a.alert_id,
    "data-severity": a.severity, title: "Open this client instance",
    onclick: () => a.client_instance_id && openClient(a.client_instance_id) },
    h("span", { class: "badge", text: a.severity }),
    h("span", { class: "msg", text: a.message }),
    h("span", { class: "when", "data-ms": a.detected_at_ms, text: fmtAge(a.detected_at_ms) }),
    h("div", { class: "meta" }, h("code", { text: a.rule }), h("span", { text: a.keys.join(", ") }),
      ...who.map(w => h("span", { text: w }))));
}

function renderAlerts(newIds) {
  const list = $("alerts");
  list.replaceChildren(...state.alerts.slice(0, 200).map(a => alertItem(a, newIds && newIds.has(a.alert_id))));
  $("alerts-empty").hidden = state.alerts.length > 0;
  renderSeverityCounts();
}

function renderSeverityCounts() {
  const counts = state.severityCounts;
  const total = SEVERITIES.reduce((a, sev) => a + (counts[sev] || 0), 0);
  bump($("kpi-alerts"), fmtInt(total));
  $("kpi-alert-counts").replaceChildren(...SEVERITIES.map(sev =>
    h("span", { class: `sev-count ${sevClass(sev)}` }, h("i"), `${fmtInt(counts[sev] || 0)} ${sev}`)));
}

async function reloadAlerts() {
  renderFilter();
  const q = state.filter.size ? `?severity=${[...state.filter].join(",")}` : "";
  const doc = await getJSON(`/api/alerts${q}`);
  state.alerts = doc.alerts;
  state.severityCounts = doc.counts_by_severity;
  renderAlerts(null);
}

function onAlert(a) {
  state.severityCounts[a.severity] = (state.severityCounts[a.severity] || 0) + 1;
  if (state.filter.size && !state.filter.has(a.severity)) { renderSeverityCounts(); return; }
  state.alerts = [a, ...state.alerts.filter(x => x.alert_id !== a.alert_id)].slice(0, 500);
  renderAlerts(new Set([a.alert_id]));
  if (state.selected && a.client_instance_id === state.selected) openClient(state.selected, true);
}

/* ---------- client drill-down ---------- */

async function reloadClients() {
  const doc = await getJSON("/api/clients?limit=60");
  state.clients = doc.clients;
  $("recent-clients").replaceChildren(...state.clients.map(c => h("li", {
    class: c.client_instance_id === state.selected ? "selected" : null, "data-client": c.client_instance_id,
    onclick: () => openClient(c.client_instance_id) },
    h("span", { class: "rid", text: c.client_instance_id }),
    h("span", { class: "rsub", text: `${c.client_software_name || "unknown"} ${c.client_software_version || ""} · ${c.client_id || "no client.id"} · ${fmtAge(c.pushed_at_ms)}` }))));
}

function entryValue(e) {
  if (!e.sensitive) return h("span", { class: "mono", text: e.value === null ? "null" : e.value });
  return h("span", {}, h("span", { class: "fp", title: "HMAC-SHA256 fingerprint under the deployment key; the value is never shown" },
    lockIcon(), e.fingerprint || "no value"), h("span", { class: "reason", text: e.reason || "sensitive" }));
}

async function openClient(id, quiet) {
  state.selected = id;
  const detail = $("client-detail");
  for (const li of document.querySelectorAll("#recent-clients li")) li.classList.toggle("selected", li.dataset.client === id);
  let doc;
  try {
    doc = await getJSON(`/api/clients/${encodeURIComponent(id)}`);
  } catch (err) {
    if (!quiet) detail.replaceChildren(h("p", { class: "empty", text: err.status === 404 ? `No config push seen for ${id}.` : String(err) }));
    return;
  }
  const field = (label, value) => h("div", {}, h("dt", { text: label }), h("dd", { text: value ?? "–", title: value ?? "" }));
  const rows = doc.configs.map(e => h("tr", { "data-key": e.key, class: e.sensitive ? "sensitive" : null },
    h("td", { class: "mono", text: e.key }), h("td", {}, entryValue(e)),
    h("td", {}, h("span", { class: "tag", text: e.type })), h("td", { text: e.is_default ? "default" : "set" })));
  detail.replaceChildren(
    h("h3", { text: doc.client_instance_id }),
    h("dl", { class: "ident" },
      field("software", `${doc.client_software_name || "unknown"} ${doc.client_software_version || ""}`),
      field("client.id", doc.client_id), field("principal", doc.principal), field("address", doc.client_address),
      field("listener", doc.listener), field("security", doc.security_protocol),
      field("pushed", fmtTime(doc.pushed_at_ms)),
      field("entries", `${doc.config_entries} (${doc.sensitive_entries} sensitive)`)),
    h("div", { class: "table-wrap" }, h("table", { class: "data config" },
      h("thead", {}, h("tr", {}, h("th", { text: "Key" }), h("th", { text: "Value" }), h("th", { text: "Type" }), h("th", { text: "Default" }))),
      h("tbody", {}, rows))),
    doc.alerts.length ? h("div", { class: "client-alerts" }, h("div", { class: "subhead", text: `Alerts for this client (${doc.alerts.length})` }),
      h("ol", { class: "feed" }, doc.alerts.map(a => alertItem(a, false)))) : null);
}

/* ---------- upgrade readiness ---------- */

async function reloadUpgrade() {
  const select = $("upgrade-target");
  const doc = await getJSON(`/api/upgrade?target=${encodeURIComponent(select.value || "4.0")}`);
  if (!select.options.length) {
    select.replaceChildren(...doc.targets.map(t => h("option", { value: t, selected: t === doc.target }, t)));
  }
  $("upgrade-summary").textContent =
    `${fmtInt(doc.not_ready)} of ${fmtInt(doc.clients.length)} client versions not ready for Apache Kafka ${doc.target}`;
  $("upgrade").querySelector("tbody").replaceChildren(...doc.clients.map(c => {
    const ids = c.client_instance_ids;
    const shown = ids.slice(0, 3).join(", ") + (ids.length > 3 ? ` +${ids.length - 3}` : "");
    const who = c.client_id === null && c.principal === null ? c.client_software_name
      : `${c.client_software_name} (client.id ${c.client_id || "-"}, ${c.principal || "-"})`;
    return h("tr", { "data-key": c.key, "data-status": c.status },
      h("td", {}, h("span", { class: `status-badge status-${c.status}`, text: c.status.replace("_", " ") })),
      h("td", { text: who }),
      h("td", { class: "mono", text: c.client_software_version }),
      h("td", { class: "num", text: fmtInt(c.connections) }),
      h("td", { class: "mono ids", text: shown || "–", title: ids.join("\n") }),
      h("td", { class: "offending", text: c.offending.map(r => r.text).join("; ") || "–" }));
  }));
  $("upgrade-empty").hidden = doc.clients.length > 0;
}

/* ---------- security posture ---------- */

let securityTimer = null;

function scheduleSecurity() {  // alerts can arrive by the thousand: one reload a second at most
  if (securityTimer === null) securityTimer = setTimeout(() => { securityTimer = null; reloadSecurity().catch(() => {}); }, 1000);
}

async function reloadSecurity() {
  const doc = await getJSON("/api/security");
  $("security-summary").textContent =
    `${fmtInt(doc.weak)} weak posture(s) across ${fmtInt(doc.client_versions)} client version(s)`;
  $("security").querySelector("tbody").replaceChildren(...doc.rows.map(r =>
    h("tr", { "data-rule": r.rule, "data-key": `${r.client_software_name}/${r.client_software_version}`,
      "data-severity": r.severity, class: sevClass(r.severity) },
      h("td", {}, h("span", { class: "badge", text: r.severity })),
      h("td", { class: "mono", text: r.rule }),
      h("td", { text: r.client_software_name }),
      h("td", { class: "mono", text: r.client_software_version }),
      h("td", { class: "mono", text: r.principal }),
      h("td", { class: "num", text: fmtInt(r.clients) }))));
  $("security-empty").hidden = doc.rows.length > 0;
}

/* ---------- health and the live stream ---------- */

function renderHealth() {
  const status = $("status");
  status.dataset.state = state.connected ? "live" : "reconnecting";
  const hth = state.health;
  const gauges = hth && hth.topics.find(t => t.role === "gauges");
  const lag = hth ? hth.topics.reduce((a, t) => a + (t.lag || 0), 0) : null;
  $("status-text").textContent = state.connected
    ? `live · ${state.lastUpdatedMs ? `gauges changed ${fmtAge(state.lastUpdatedMs)}` : "no gauges yet"}`
    : "reconnecting…";
  if (hth) {
    $("health-text").textContent = `consumer lag ${fmtInt(lag)} records · ${hth.ready ? "gauges rebuilt" : "rebuilding gauges"}`
      + ` · ${fmtInt(hth.tracked_clients)} clients tracked`
      + (gauges && gauges.last_update_age_s !== null ? ` · last gauge record ${Math.round(gauges.last_update_age_s)}s ago` : "");
  }
}

function connect() {
  const es = new EventSource("/events");
  es.addEventListener("open", () => { state.connected = true; renderHealth(); });
  es.addEventListener("error", () => { state.connected = false; renderHealth(); });
  es.addEventListener("gauges", ev => applyGauges(JSON.parse(ev.data)));
  es.addEventListener("alert", ev => { onAlert(JSON.parse(ev.data)); scheduleSecurity(); });
  es.addEventListener("alerts", () => { reloadAlerts(); scheduleSecurity(); });
  es.addEventListener("resync", () => {
    reloadAlerts(); reloadClients(); reloadUpgrade().catch(() => {}); reloadSecurity().catch(() => {});
  });
  es.addEventListener("health", ev => { state.health = JSON.parse(ev.data); renderHealth(); });
  es.addEventListener("usage", () => reloadUpgrade().catch(() => {}));
  es.addEventListener("clients", ev => {
    const changed = JSON.parse(ev.data).changed;
    reloadClients();
    if (state.selected && changed.includes(state.selected)) openClient(state.selected, true);
  });
}

function start() {
  renderFilter();
  $("client-form").addEventListener("submit", ev => {
    ev.preventDefault();
    const id = $("client-id").value.trim();
    if (id) openClient(id);
  });
  getJSON("/api/gauges").then(applyGauges).catch(() => {});
  reloadAlerts().catch(() => {});
  reloadClients().catch(() => {});
  $("upgrade-target").addEventListener("change", () => reloadUpgrade().catch(() => {}));
  reloadUpgrade().catch(() => {});
  reloadSecurity().catch(() => {});
  connect();
  setInterval(() => { renderUpdated(); renderHealth(); }, 1000);
  let resizeTimer = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => renderChart($("chart"), state.gauges, versionColours(state.gauges)), 150);
  });
}

document.addEventListener("DOMContentLoaded", start);
