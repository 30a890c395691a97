// judgeflow review page. Every value that comes from an event is placed with textContent
// (never innerHTML), so a note or an answer containing markup stays text.
"use strict";

const FILTERS = ["task", "criterion", "kind", "status", "prompt_version"];
const FIELD = {task: "task_id", criterion: "field_id", kind: "kind", status: "status",
               prompt_version: "prompt_version"};
let maxRows = 500;
let selected = null;

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function show(value) {
  if (value === null || value === undefined) return "—";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function token(value) {  // a safe CSS class suffix from an event value
  return /^[a-z_]{1,32}$/.test(String(value)) ? String(value) : "other";
}

async function getJSON(url) {
  const res = await fetch(url, {credentials: "same-origin", cache: "no-store"});
  if (!res.ok) throw new Error(url + ": " + res.status);
  return res.json();
}

function currentFilters() {
  const form = document.getElementById("filters");
  const out = {};
  for (const name of FILTERS) {
    const v = form.elements[name].value;
    if (v) out[name] = v;
  }
  return out;
}

function matches(row, filters) {
  return Object.entries(filters).every(([k, v]) => String(row[FIELD[k]] ?? "") === v);
}

function addOption(name, value) {
  const select = document.getElementById("filters").elements[name];
  if (!value || [...select.options].some((o) => o.value === value)) return;
  const opt = el("option", value);
  opt.value = value;
  select.appendChild(opt);
}

function rowNode(row) {
  const tr = el("tr");
  tr.dataset.id = row.id;
  const when = el("td", (row.judged_at || "").slice(11, 19));
  when.title = row.judged_at || "";
  tr.appendChild(when);
  for (const key of ["task_id", "field_id", "patient_id", "kind"]) tr.appendChild(el("td", row[key]));
  const answers = el("td", null, "answers");
  for (const a of row.answers || []) {
    answers.appendChild(el("div", a.agent_id + ": " + show(a.answer) + " (" + show(a.confidence) + ")"));
  }
  tr.appendChild(answers);
  tr.appendChild(el("td", show(row.suggested_answer), "suggestion"));
  tr.appendChild(el("td", show(row.confidence)));
  const status = el("td");
  status.appendChild(el("span", row.status, "status status-" + token(row.status)));
  tr.appendChild(status);
  tr.appendChild(el("td", show(row.classification_hint)));
  tr.addEventListener("click", () => openCell(row.id, tr));
  if (row.id === selected) tr.classList.add("selected");
  return tr;
}

function updateCount() {
  const n = document.querySelectorAll("#queue tbody tr").length;
  document.getElementById("count").textContent = n + " row(s) shown";
  document.getElementById("empty").hidden = n > 0;
}

function upsertRow(row) {
  for (const name of FILTERS) addOption(name, row[FIELD[name]]);
  if (!matches(row, currentFilters())) return;
  const body = document.querySelector("#queue tbody");
  for (const old of body.querySelectorAll("tr")) if (old.dataset.id === row.id) old.remove();
  body.insertBefore(rowNode(row), body.firstChild);
  while (body.children.length > maxRows) body.lastChild.remove();
  updateCount();
}

async function loadRows() {
  const query = new URLSearchParams(currentFilters()).toString();
  const data = await getJSON("/api/rows" + (query ? "?" + query : ""));
  maxRows = data.max_rows;
  for (const [name, values] of Object.entries(data.facets)) for (const v of values) addOption(name, v);
  const body = document.querySelector("#queue tbody");
  body.replaceChildren(...data.rows.map(rowNode));
  updateCount();
}

function excerptNode(ev) {
  const box = el("div", null, "evidence");
  const head = el("div");
  head.appendChild(el("strong", ev.note_id || "(no note id)"));
  head.appendChild(el("span", " — " + ev.what_to_look_for));
  if (ev.offsets) head.appendChild(el("span", " [" + ev.offsets[0] + ", " + ev.offsets[1] + "]", "muted"));
  box.appendChild(head);
  if (!ev.note) {
    box.appendChild(el("div", "note not found in the charts folder", "muted"));
    return box;
  }
  const pre = el("div", null, "excerpt");
  if (ev.note.clipped_start) pre.appendChild(document.createTextNode("… "));
  pre.appendChild(document.createTextNode(ev.note.before));
  if (ev.note.highlight) pre.appendChild(el("mark", ev.note.highlight));
  pre.appendChild(document.createTextNode(ev.note.after));
  if (ev.note.clipped_end) pre.appendChild(document.createTextNode(" …"));
  box.appendChild(pre);
  return box;
}

async function openCell(id, tr) {
  selected = id;
  for (const r of document.querySelectorAll("#queue tbody tr.selected")) r.classList.remove("selected");
  if (tr) tr.classList.add("selected");
  const data = await getJSON("/api/cell/" + encodeURIComponent(id));
  const row = data.row;
  document.getElementById("detail-title").textContent =
    row.task_id + " / " + row.patient_id + " / " + row.field_id;
  const body = document.getElementById("detail-body");
  body.replaceChildren();
  body.appendChild(el("p", "status " + row.status + " · " + row.kind + " · suggestion " +
    show(row.suggested_answer) + " · agent correctness " + show(data.agent_correctness)));
  body.appendChild(el("h3", "Reasoning"));
  body.appendChild(el("p", data.reasoning, "reasoning"));
  body.appendChild(el("h3", "Evidence"));
  if (!data.evidence.length) body.appendChild(el("p", "no evidence pointers", "muted"));
  for (const ev of data.evidence) body.appendChild(excerptNode(ev));
  body.appendChild(el("h3", "Validation problems"));
  const list = el("ul", null, "problems");
  for (const p of data.validation) list.appendChild(el("li", show(p.type) + " (" + show(p.action) + "): " + show(p.message)));
  if (!data.validation.length) list.appendChild(el("li", "none", "muted"));
  body.appendChild(list);
  body.appendChild(el("p", show(data.provider) + " / " + show(data.model) + " · " +
    show(data.latency_ms) + " ms · USD " + show(data.usage && data.usage.cost_usd), "muted"));
  document.getElementById("detail").hidden = false;
}

function verdict(rating) {
  if (!rating || typeof rating !== "object") return "—";
  return show(rating.verdict) + " (" + show(rating.score) + ")";
}

async function loadDebriefs() {
  const data = await getJSON("/api/debriefs");
  const box = document.getElementById("debriefs");
  box.replaceChildren();
  if (!data.cards.length) box.appendChild(el("p", "No debrief evaluations yet.", "muted"));
  for (const c of data.cards) {
    const card = el("div", null, c.safety_breach ? "card breach" : "card");
    card.dataset.id = c.evaluation_id || c.request_id || "";
    if (c.safety_breach) {
      card.appendChild(el("div", "Safety breach: " + show(c.safety_breach.kind) + " — " +
        show(c.safety_breach.description), "breach-line"));
    }
    card.appendChild(el("div", "case " + show(c.case_id) + " · global " + verdict(c.global_rating)));
    const domains = el("ul");
    for (const [name, rating] of Object.entries(c.domain_scores || {})) {
      if (rating) domains.appendChild(el("li", name + ": " + verdict(rating)));
    }
    card.appendChild(domains);
    for (const d of c.dropped_criteria || []) {
      card.appendChild(el("div", "dropped " + show(d.criterion_id) + ": " + show(d.reason) +
        " (" + show(d.guideline_ref) + ")", "muted"));
    }
    for (const k of c.corrections || []) {
      card.appendChild(el("div", "corrected " + show(k.scope) + ": model said " +
        show(k.model_verdict) + ", code computed " + show(k.verdict), "muted"));
    }
    card.appendChild(el("p", c.narrative));
    box.appendChild(card);
  }
}

function pct(x) { return x === null || x === undefined ? "—" : (100 * x).toFixed(1) + "%"; }

async function loadStats() {
  const data = await getJSON("/api/stats");
  const cal = document.querySelector("#calibration tbody");
  cal.replaceChildren(...data.calibration.map((r) => {
    const tr = el("tr");
    for (const k of ["task_id", "field_id", "prompt_version", "n"]) tr.appendChild(el("td", show(r[k])));
    tr.appendChild(el("td", typeof r.accuracy === "number" ? pct(r.accuracy) : show(r.accuracy)));
    tr.appendChild(el("td", typeof r.kappa === "number" ? r.kappa.toFixed(2) : show(r.kappa)));
    tr.appendChild(el("td", typeof r.fallback === "number" ? pct(r.fallback) : show(r.fallback)));
    tr.appendChild(el("td", typeof r.cost_usd === "number" ? r.cost_usd.toFixed(4) : show(r.cost_usd)));
    return tr;
  }));
  document.getElementById("calibration-empty").hidden = data.calibration.length > 0;
  const cost = document.querySelector("#cost tbody");
  cost.replaceChildren(...data.cost.map((r) => {
    const tr = el("tr");
    tr.appendChild(el("td", r.prompt_version));
    tr.appendChild(el("td", r.results));
    tr.appendChild(el("td", Object.entries(r.statuses).map(([s, n]) => s + " " + n).join(", ")));
    tr.appendChild(el("td", r.cost_usd.toFixed(4)));
    tr.appendChild(el("td", pct(r.cache_share)));
    return tr;
  }));
}

let pending = {};
function later(name, fn) {  // coalesce bursts of events into one re-read per second
  if (pending[name]) return;
  pending[name] = setTimeout(() => { pending[name] = null; fn().catch(console.error); }, 1000);
}

function connect() {
  const live = document.getElementById("live");
  const source = new EventSource("/events");
  let dropped = false;
  source.onopen = () => {
    live.textContent = "live"; live.className = "live";
    if (dropped) {  // records may have arrived while we were away: re-read the window
      dropped = false;
      Promise.all([loadRows(), loadDebriefs(), loadStats()]).catch(console.error);
    }
  };
  source.onerror = () => { dropped = true; live.textContent = "reconnecting"; live.className = "live off"; };
  source.addEventListener("result", (e) => { upsertRow(JSON.parse(e.data)); later("stats", loadStats); });
  source.addEventListener("evaluations", () => later("debriefs", loadDebriefs));
  source.addEventListener("calibration", () => later("stats", loadStats));
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("filters").addEventListener("change", () => loadRows().catch(console.error));
  connect();
  Promise.all([loadRows(), loadDebriefs(), loadStats()]).then(() => {
    document.body.dataset.ready = "1";
  }).catch(console.error);
});
