// prefixgate dashboard: fetches /prefixgate/api/summary and draws cards, SVG charts and tables.
// With a Redis store (the summary says fleet: true) a switch shows the whole fleet instead:
// /prefixgate/api/fleet, hourly, cards, hit rate and models only (the rest is each replica's ledger).
// No libraries, nothing from the internet. The admin token (?token=) is sent as a Bearer header.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const SERIES = [
  ["input_usd", "paid input", "--input"],
  ["cache_read_usd", "cached read", "--read"],
  ["cache_write_usd", "cache write", "--write"],
  ["output_usd", "output", "--output"],
];
const params = new URLSearchParams(location.search);
const token = params.get("token");
let since = params.get("since") || "24h";
let scope = params.get("scope") === "fleet" ? "fleet" : "replica";

// Money as every prefixgate surface prints it (analyzer.cost.format_usd; a test holds the two
// equal): cents from a cent up, 4 significant digits below, "—" for unknown (null, never $0).
// toFixed rounds the exact binary value, halves up, as the Python side does.
const commas = (text) => text.replace(/^(\d+)/, (d) => d.replace(/\B(?=(\d{3})+(?!\d))/g, ","));
function usd(v) {
  if (v === null || v === undefined) return "—";
  const a = Math.abs(v);
  let text = a.toFixed(2);
  if (a > 0 && a < 0.01) {
    const small = a.toFixed(3 - Math.floor(Math.log10(a)));
    if (Number(small) < 0.01) text = small; // else it rounds up to a cent: shown in cents
  }
  return (v < 0 && /[1-9]/.test(text) ? "-$" : "$") + commas(text);
}
const pct = (v) => (100 * v).toFixed(1) + "%";
const int = (v) => Number(v).toLocaleString("en-US");
const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

function el(tag, attrs, ...children) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "style") Object.assign(node.style, v); // CSSOM: allowed by the page's CSP, unlike style=""
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function setCard(id, value, text) {
  const node = document.getElementById(id);
  node.dataset.value = String(value);
  node.textContent = text;
  node.classList.toggle("negative", typeof value === "number" && value < 0);
}

function timeLabel(t, step) {
  const d = new Date(t * 1000).toISOString();
  if (step >= 86400) return d.slice(5, 10);
  return step < 60 ? d.slice(11, 19) : d.slice(11, 16);
}

function axes(svg, w, h, pad, max, fmt, points, step) {
  for (let i = 0; i <= 4; i++) {
    const y = pad.t + (h - pad.t - pad.b) * (1 - i / 4);
    svg.append(el("svg:line", { x1: pad.l, x2: w - pad.r, y1: y, y2: y, class: "grid" }));
    svg.append(el("svg:text", { x: pad.l - 6, y: y + 3, "text-anchor": "end" }, fmt((max * i) / 4)));
  }
  const n = points.length;
  for (let i = 0; i < n; i += Math.max(1, Math.ceil(n / 6))) {
    const x = pad.l + ((w - pad.l - pad.r) * (i + 0.5)) / n;
    svg.append(el("svg:text", { x, y: h - 6, "text-anchor": "middle" }, timeLabel(points[i].t, step)));
  }
}

function drawCost(series) {
  const box = document.getElementById("chart-cost");
  box.replaceChildren();
  const w = Math.max(320, box.clientWidth || 640), h = 220, pad = { l: 64, r: 10, t: 10, b: 22 };
  const svg = el("svg:svg", { viewBox: `0 0 ${w} ${h}`, role: "img", "aria-label": "cost over time" });
  const pts = series.points;
  const totals = pts.map((p) => SERIES.reduce((s, [k]) => s + p[k], 0));
  const max = Math.max(...totals, 1e-9);
  pad.l = Math.max(44, 10 + 6 * Math.max(...[0, 1, 2, 3, 4].map((i) => usd((max * i) / 4).length))); // room for the labels
  axes(svg, w, h, pad, max, usd, pts, series.step);
  const bw = (w - pad.l - pad.r) / Math.max(pts.length, 1);
  pts.forEach((p, i) => {
    let y = h - pad.b;
    for (const [key, label, color] of SERIES) {
      const bh = ((h - pad.t - pad.b) * p[key]) / max;
      if (bh <= 0) continue;
      y -= bh;
      const rect = el("svg:rect", { x: pad.l + i * bw + bw * 0.12, y, width: bw * 0.76, height: bh, fill: css(color),
        class: "bar", "data-series": key, "data-value": p[key] });
      rect.append(el("svg:title", {}, `${timeLabel(p.t, series.step)} ${label}: ${usd(p[key])}`));
      svg.append(rect);
    }
  });
  box.append(svg);
  const legend = document.getElementById("legend-cost");
  legend.replaceChildren(...SERIES.map(([, label, color]) => el("span", {}, el("i", { style: { background: css(color) } }), label)));
}

function drawHit(series) {
  const box = document.getElementById("chart-hit");
  box.replaceChildren();
  const w = Math.max(240, box.clientWidth || 420), h = 220, pad = { l: 44, r: 10, t: 10, b: 22 };
  const svg = el("svg:svg", { viewBox: `0 0 ${w} ${h}`, role: "img", "aria-label": "hit rate over time" });
  const pts = series.points;
  axes(svg, w, h, pad, 1, pct, pts, series.step);
  const x = (i) => pad.l + ((w - pad.l - pad.r) * (i + 0.5)) / pts.length;
  const y = (v) => pad.t + (h - pad.t - pad.b) * (1 - v);
  const used = pts.map((p, i) => [p, i]).filter(([p]) => p.input_tokens > 0);
  if (used.length) {
    const d = used.map(([p, i], k) => `${k ? "L" : "M"}${x(i).toFixed(1)},${y(p.hit_rate).toFixed(1)}`).join(" ");
    svg.append(el("svg:path", { d, fill: "none", stroke: css("--read"), "stroke-width": 2, class: "hit-line" }));
    for (const [p, i] of used) {
      const dot = el("svg:circle", { cx: x(i), cy: y(p.hit_rate), r: 3, fill: css("--read"), class: "hit-point", "data-value": p.hit_rate });
      dot.append(el("svg:title", {}, `${timeLabel(p.t, series.step)}: ${pct(p.hit_rate)} of ${int(p.input_tokens)} input tokens`));
      svg.append(dot);
    }
  }
  box.append(svg);
}

function fillPrefixes(rows, bodies) {
  const body = document.querySelector("#prefixes tbody");
  body.replaceChildren();
  if (!rows.length) body.append(el("tr", {}, el("td", { colspan: 5, class: "empty" }, "no repeated prefixes in this range")));
  for (const r of rows) {
    const cell = el("td", {}, el("code", {}, r.fingerprint), ` ${r.segments} seg`);
    if (r.preview) cell.append(el("span", { class: "preview" }, r.preview));
    else if (!bodies) cell.title = "content redacted (start the proxy with --log-bodies to see it)";
    body.append(el("tr", { "data-fingerprint": r.fingerprint }, cell, el("td", {}, r.model || ""),
      el("td", { class: "n" }, int(r.count)), el("td", { class: "n" }, int(r.tokens)), el("td", { class: "n" }, int(r.repeated_tokens))));
  }
}

function fillReasons(rows) {
  const box = document.getElementById("reasons");
  box.replaceChildren();
  if (!rows.length) { box.append(el("p", { class: "empty" }, "no diagnosed misses in this range")); return; }
  const max = Math.max(...rows.map((r) => r.count));
  for (const r of rows) {
    box.append(el("div", { class: "reason", "data-reason": r.reason, "data-count": r.count },
      el("div", { class: "label-row" }, el("code", {}, r.reason), el("span", {}, `${int(r.count)} · missed ${usd(r.missed_usd)}`)),
      el("div", { class: "bar", style: { width: `${Math.max(2, (100 * r.count) / max)}%` } })));
  }
}

function fillProviderReasons(reasons) {
  // The provider's own miss reasons (Anthropic diagnostics), priced, with how often prefixgate agreed.
  const rows = Object.entries(reasons || {});
  const body = document.querySelector("#provider-reasons tbody");
  body.replaceChildren();
  document.getElementById("provider-miss").hidden = !rows.length;
  for (const [reason, m] of rows) {
    const num = (v, text) => el("td", { class: "n", "data-value": v === null ? "" : v }, text);
    body.append(el("tr", { "data-provider-reason": reason, "data-count": m.requests },
      el("td", {}, el("code", {}, reason)), num(m.requests, int(m.requests)), num(m.missed_tokens, int(m.missed_tokens)),
      num(m.missed_usd, usd(m.missed_usd)), num(m.agrees, `${int(m.agrees)} of ${int(m.requests)}`)));
  }
}

function fillDrift(s) {
  // Rules drift: usage the caching rules do not expect; each row names what to update.
  const rows = s.rules_drift || [];
  document.getElementById("drift-notice").hidden = !rows.length;
  document.getElementById("drift-count").textContent = `${int(s.rules_drift_rows || 0)} request(s)`;
  document.getElementById("drift-rows").replaceChildren(...rows.map((r) =>
    el("li", { "data-provider": r.provider, "data-model": r.model, "data-field": r.field, "data-why": r.why, "data-count": r.count },
      r.warning)));
}

function fillRewrites(s) {
  const body = document.querySelector("#rewrites tbody");
  body.replaceChildren();
  const rows = Object.entries(s.rewrites || {});
  if (!rows.length) body.append(el("tr", {}, el("td", { colspan: 2, class: "empty", id: "rewrites-none" }, "none in this range")));
  for (const [rewrite, count] of rows) {
    body.append(el("tr", { "data-rewrite": rewrite, "data-count": count },
      el("td", {}, el("code", {}, rewrite)), el("td", { class: "n" }, int(count))));
  }
  document.getElementById("rewrites-sub").textContent =
    rows.length ? `${int(s.rewritten)} of ${int(s.requests)} requests rewritten` : "";
}

function fillModels(rows) {
  const body = document.querySelector("#models tbody");
  body.replaceChildren();
  if (!rows.length) body.append(el("tr", {}, el("td", { colspan: 10, class: "empty" }, "no request reported usage in this range")));
  for (const m of rows) {
    const num = (v, text) => el("td", { class: "n", "data-value": v === null ? "" : v }, text);
    const name = el("td", {}, m.model || "(none)");
    if (m.priced_as) name.append(el("span", { class: "label", "data-priced-as": m.priced_as }, m.priced_as));
    body.append(el("tr", { "data-provider": m.provider, "data-model": m.model || "" },
      el("td", {}, m.provider), name, num(m.requests, int(m.requests)),
      num(m.input_tokens, int(m.input_tokens)), num(m.cached_tokens, int(m.cached_tokens)), num(m.token_hit_rate, pct(m.token_hit_rate)),
      num(m.cost_usd, usd(m.cost_usd)), num(m.saved_usd, usd(m.saved_usd)), num(m.missed_usd, usd(m.missed_usd)), num(m.unpriced, int(m.unpriced))));
  }
}

function fillUpstreams(upstreams, pools) {
  // Shown when more than one upstream had traffic in the range, or a pool of replicas did: a pool
  // shows one row per replica under its own (totals from the ledger, health as the proxy sees it now).
  const rows = Object.entries(upstreams || {}).filter(([, u]) => u.requests > 0)
    .sort((a, b) => b[1].requests - a[1].requests || (a[0] < b[0] ? -1 : 1));
  const pooled = rows.some(([, u]) => Object.keys(u.replicas || {}).length > 0);
  const body = document.querySelector("#upstreams tbody");
  body.replaceChildren();
  const shown = rows.length >= 2 || pooled;
  document.getElementById("per-upstream").hidden = !shown;
  if (!shown) return;
  const num = (v, text) => el("td", { class: "n", "data-value": v === null ? "" : v }, text);
  const cells = (u) => [num(u.requests, int(u.requests)), num(u.token_hit_rate, pct(u.token_hit_rate)),
    num(u.cost_usd, usd(u.cost_usd)), num(u.saved_usd, usd(u.saved_usd)), num(u.missed_usd, usd(u.missed_usd)),
    num(u.unpriced, int(u.unpriced)), num(u.errors, int(u.errors))];
  for (const [name, u] of rows) {
    body.append(el("tr", { "data-upstream": name }, el("td", {}, name), ...cells(u), el("td", {}, "")));
    const live = (pools || {})[name] || {};
    const replicas = Object.entries(u.replicas || {})
      .sort((a, b) => b[1].requests - a[1].requests || (a[0] < b[0] ? -1 : 1));
    for (const [url, r] of replicas) {
      const health = live[url] || "—";
      body.append(el("tr", { "data-pool": name, "data-replica": url, "data-health": health, class: "replica" },
        el("td", {}, el("span", { class: "sub" }, "↳ "), url), ...cells(r), el("td", {}, health)));
    }
  }
}

function fillNotBillable(rows) {
  const body = document.querySelector("#not-billable tbody");
  body.replaceChildren();
  document.getElementById("quiet").hidden = !rows.length;
  for (const r of rows) {
    body.append(el("tr", { "data-route": r.route, "data-method": r.method, "data-count": r.requests },
      el("td", {}, el("code", {}, `${r.method} ${r.route}`.trim())), el("td", { class: "n" }, int(r.requests)),
      el("td", { class: "n" }, int(r.errors)), el("td", {}, r.models.join(", ") || "—")));
  }
}

function render(s) {
  setCard("card-spent", s.cost_usd, usd(s.cost_usd));
  document.getElementById("card-spent-sub").textContent =
    `${int(s.requests)} requests` + (s.unpriced ? ` · ${int(s.unpriced)} unpriced` : "");
  setCard("card-saved", s.saved_usd, usd(s.saved_usd));
  setCard("card-missed", s.missed_usd, usd(s.missed_usd));
  setCard("card-hit", s.token_hit_rate, pct(s.token_hit_rate));
  document.getElementById("card-hit-sub").textContent =
    `${int(s.cached_tokens)} of ${int(s.input_tokens)} input tokens cached · ${int(s.prefix_hits)} requests repeated a prefix`;
  drawCost(s.series);
  drawHit(s.series);
  fillPrefixes(s.top_prefixes, s.bodies_logged);
  fillReasons(s.miss_reasons);
  fillProviderReasons(s.provider_miss_reasons);
  fillDrift(s);
  fillRewrites(s);
  fillModels(s.models);
  fillUpstreams(s.upstreams, s.pools);
  fillNotBillable(s.not_billable || []);
  document.getElementById("footer").textContent =
    `requests ${int(s.requests)} · errors ${int(s.errors)} · unanalysed ${int(s.unanalysed)} · ledger rows written ${int(s.ledger.written)}` +
    (s.ledger.failures ? ` · ledger write failures ${int(s.ledger.failures)}` : "");
}

function renderFleet(f) {
  const known = f.requests !== undefined; // Redis never answered yet: nothing to show
  setCard("card-spent", known ? f.cost_usd : "", known ? usd(f.cost_usd) : "—");
  document.getElementById("card-spent-sub").textContent = known
    ? `${int(f.requests)} requests across the fleet` + (f.unpriced ? ` · ${int(f.unpriced)} unpriced` : "") : "";
  setCard("card-saved", known ? f.saved_usd : "", known ? usd(f.saved_usd) : "—");
  setCard("card-missed", known ? f.missed_usd : "", known ? usd(f.missed_usd) : "—");
  setCard("card-hit", known ? f.token_hit_rate : "", known ? pct(f.token_hit_rate) : "—");
  document.getElementById("card-hit-sub").textContent = known
    ? `${int(f.cached_tokens)} of ${int(f.input_tokens)} input tokens cached · ${int(f.prefix_hits)} requests repeated a prefix` : "";
  drawHit(f.series);
  fillModels(known ? f.models : []);
  const read = f.as_of ? new Date(f.as_of * 1000).toISOString().slice(0, 19).replace("T", " ") + " UTC" : "never";
  document.getElementById("footer").textContent = (known
    ? `whole fleet · requests ${int(f.requests)} · errors ${int(f.errors)} · unanalysed ${int(f.unanalysed)} · ` : "whole fleet · ") +
    `read from Redis ${read} · this replica's counts not yet flushed ${int(f.flush.pending_requests)}`;
  return f.available ? null : `fleet totals unavailable (${f.error}): ` + (known ? `showing the values read ${read}` : "nothing read yet");
}

function showScope(exists) {
  document.getElementById("scope").hidden = !exists;
  for (const b of document.querySelectorAll("#scope button")) b.classList.toggle("active", b.dataset.scope === scope);
  document.body.dataset.scope = scope;
  document.getElementById("scope-note").hidden = scope !== "fleet";
}

let drawn = scope; // the scope on screen: a failed switch goes back to it (buttons and numbers agree)
let loads = 0; // each load's number: only the latest one draws (a slow fleet answer must not overwrite a later click)

async function load() {
  const mine = ++loads;
  document.body.dataset.state = "loading";
  for (const b of document.querySelectorAll("#range button")) b.classList.toggle("active", b.dataset.since === since);
  const headers = token ? { Authorization: "Bearer " + token } : {};
  try {
    let problem = null;
    if (scope === "fleet") {
      const resp = await fetch(`api/fleet?since=${encodeURIComponent(since)}`, { headers, cache: "no-store" });
      if (mine !== loads) return;
      if (resp.status === 404) { scope = "replica"; return load(); } // no fleet here (memory store)
      if (!resp.ok) throw new Error(`fleet: HTTP ${resp.status}`);
      const f = await resp.json();
      if (mine !== loads) return;
      showScope(true); // first: the charts measure the layout of this scope
      problem = renderFleet(f);
    } else {
      const resp = await fetch(`api/summary?since=${encodeURIComponent(since)}&buckets=36`, { headers, cache: "no-store" });
      if (mine !== loads) return;
      if (!resp.ok) throw new Error(`summary: HTTP ${resp.status}`);
      const s = await resp.json();
      if (mine !== loads) return;
      showScope(Boolean(s.fleet));
      render(s);
    }
    const box = document.getElementById("error");
    box.textContent = problem || "";
    box.hidden = !problem;
    drawn = scope;
    document.body.dataset.state = "ready";
  } catch (err) {
    if (mine !== loads) return;
    scope = drawn; // the numbers shown are still that scope's; the next load asks for it again
    showScope(!document.getElementById("scope").hidden);
    const box = document.getElementById("error");
    box.textContent = String(err.message || err);
    box.hidden = false;
    document.body.dataset.state = "error";
  }
}

if (token) document.getElementById("kv-link").href = "kv?token=" + encodeURIComponent(token);
document.querySelectorAll("#range button").forEach((b) => b.addEventListener("click", () => { since = b.dataset.since; load(); }));
document.querySelectorAll("#scope button").forEach((b) => b.addEventListener("click", () => { scope = b.dataset.scope; load(); }));
load();
