// judgeflow review page. Every value that comes from an event is placed with textContent
// (never innerHTML), so a note or an answer containing markup stays text.
"use strict";

const FILTERS = ["task", "criterion", "kind", "status", "prompt_version"];
const FIELD = {task: "task_id", criterion: "field_id", kind: "kind", status: "status",
               prompt_version: "prompt_version"};
let maxItems = 500;
let selected = null;      // result id of the open cell
let current = null;       // the open cell's data
let me = {reviewer: null, name: null};

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

function when(iso) {  // "2026-12-01 14:03" (UTC as given), the full value in the title
  return iso ? String(iso).slice(0, 16).replace("T", " ") : "—";
}

async function getJSON(url) {
  const res = await fetch(url, {credentials: "same-origin", cache: "no-store"});
  if (!res.ok) throw new Error(url + ": " + res.status);
  return res.json();
}

function cookie(name) {
  for (const part of document.cookie.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return "";
}

// ---- the work queue -------------------------------------------------------------------
function currentFilters() {
  const form = document.getElementById("filters");
  const out = {};
  for (const name of FILTERS) {
    const v = form.elements[name].value;
    if (v) out[name] = v;
  }
  return out;
}

function stateFilter() { return document.getElementById("filters").elements.state.value; }

function matches(row, filters) {
  const state = stateFilter();
  if (state !== "all" && row.state !== state) return false;
  return Object.entries(filters).every(([k, v]) => String(row[FIELD[k]] ?? "") === v);
}

function addOption(name, value) {
  const select = document.getElementById("filters").elements[name];
  if (!value || [...select.options].some((o) => o.value === value)) return;
  const opt = el("option", value);
  opt.value = value;
  select.appendChild(opt);
}

const KIND = {disagreement: "disagreement", low_confidence: "low confidence", type_drift: "type drift"};

function rowNode(row) {
  const tr = el("tr");
  tr.dataset.id = row.id;
  tr.dataset.cell = row.cell;
  tr.dataset.rank = JSON.stringify(row.rank);
  const status = el("td");
  status.appendChild(el("span", row.status, "status status-" + token(row.status)));
  if (row.state === "decided") {  // a check mark: the column stays narrow enough for the criterion
    const mark = status.appendChild(el("span", " ✓", "muted"));
    mark.title = "decided";
    status.title = row.status + ", decided";
  }
  tr.appendChild(status);
  for (const key of ["field_id", "patient_id", "kind"]) {
    const td = el("td", key === "kind" ? KIND[row.kind] || row.kind : row[key]);
    td.title = row[key];
    tr.appendChild(td);
  }
  const answers = el("td", null, "answers");
  answers.textContent = (row.answers || []).map((a) => a.agent_id + ": " + show(a.answer)).join(" · ");
  answers.title = answers.textContent;
  tr.appendChild(answers);
  // a blind cell's suggestion is not sent to this page before the reviewer's own decision
  tr.appendChild(row.blind ? el("td", "blind", "suggestion muted") : el("td", show(row.suggested_answer), "suggestion"));
  const judged = el("td", when(row.judged_at).slice(5));  // "12-01 14:03": the year is in the title
  judged.title = row.judged_at || "";
  tr.appendChild(judged);
  tr.addEventListener("click", () => openCell(row.id, tr));
  if (row.id === selected) tr.classList.add("selected");
  return tr;
}

function before(a, b) {  // queue order: [band, judged_at, arrival]
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i];
  return false;
}

function updateCount(total) {
  const n = document.querySelectorAll("#queue tbody tr").length;
  const label = stateFilter() === "pending" ? " to do" : " shown";
  document.getElementById("count").textContent = (total ?? n) + label;
  document.getElementById("empty").hidden = n > 0;
}

function removeCell(cell) {
  for (const tr of document.querySelectorAll("#queue tbody tr")) if (tr.dataset.cell === cell) tr.remove();
}

function upsertRow(row) {
  for (const name of FILTERS) addOption(name, row[FIELD[name]]);
  // the queue shows each cell's live result; a replay's only under its prompt_version filter
  const series = currentFilters().prompt_version;
  if (series ? row.prompt_version !== series : row.series === "replay") return;
  removeCell(row.cell);
  if (matches(row, currentFilters())) {
    const body = document.querySelector("#queue tbody");
    const node = rowNode(row);
    const next = [...body.children].find((tr) => before(row.rank, JSON.parse(tr.dataset.rank)));
    body.insertBefore(node, next || null);
    while (body.children.length > maxItems) body.lastChild.remove();
  }
  updateCount();
}

async function loadQueue() {
  const params = new URLSearchParams(currentFilters());
  params.set("state", stateFilter());
  const data = await getJSON("/api/queue?" + params.toString());
  maxItems = data.max_items;
  for (const [name, values] of Object.entries(data.facets)) for (const v of values) addOption(name, v);
  document.querySelector("#queue tbody").replaceChildren(...data.items.map(rowNode));
  updateCount(data.total);
  const over = data.total - data.items.length;
  document.getElementById("more").textContent = over > 0 ? over + " more not listed: decide or filter to see them" : "";
}

function step(delta) {
  const rows = [...document.querySelectorAll("#queue tbody tr")];
  if (!rows.length) return;
  let i = rows.findIndex((tr) => tr.dataset.id === selected);
  i = i < 0 ? 0 : Math.min(rows.length - 1, Math.max(0, i + delta));
  rows[i].scrollIntoView({block: "nearest"});
  openCell(rows[i].dataset.id, rows[i]).catch(console.error);
}

// ---- a cell's case and the validate form ----------------------------------------------
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

function noteNode(note) {
  const box = el("details", null, "note");
  box.appendChild(el("summary", "whole note " + note.note_id));
  const pre = el("div", null, "excerpt");
  if (!note.segments) pre.textContent = "note not found in the charts folder";
  for (const s of note.segments || []) pre.appendChild(s.mark ? el("mark", s.text) : document.createTextNode(s.text));
  box.appendChild(pre);
  return box;
}

function spanText(span) { return span ? " [" + span[0] + ", " + span[1] + "]" : ""; }

function consultedNode(rows) {  // what the judge searched and read with its chart tools
  const box = el("details", null, "consulted");
  box.appendChild(el("summary", "the judge searched and read (" + rows.length + ")"));
  const list = el("ul");
  for (const r of rows) {
    if (r.tool === "search_notes") {
      const where = r.windows.map((w) => w.note_id + spanText(w.span)).join(", ");
      list.appendChild(el("li", "searched " + JSON.stringify(r.pattern) + ": " + show(r.hits) + " hit(s)" + (where ? " — shown: " + where : "")));
    } else if (r.tool === "read_note") {
      list.appendChild(el("li", "read note " + r.note_id + spanText(r.span)));
    } else {
      list.appendChild(el("li", "listed the notes"));
    }
  }
  box.appendChild(list);
  return box;
}

function choiceOf(token, agent) {  // the form's choice for a token (+ the agent it blames)
  const choices = (current && current.classifications) || [];
  return choices.find((c) => c.value === token && agent && c.error_agent === agent) ||
    choices.find((c) => c.value === token && (!agent || !c.error_agent));
}

function classLabel(token, agent) {  // a classification in words, named by the cell's agents
  const choice = choiceOf(token, agent);
  return choice ? choice.label : token === "agent_error" && agent ? "error of " + agent : show(token);
}

function criterionNode(c) {
  const box = el("div", null, "criterion");
  if (!c) { box.appendChild(el("p", "This criterion is not in the skill: answers cannot be checked.", "warn")); return box; }
  box.appendChild(el("p", c.question, "question"));
  const s = c.answer_schema;
  let schema = "answer: " + s.type;
  if (s.enum) schema += " — one of " + s.enum.map(show).join(", ");
  if (s.unit) schema += " (" + s.unit + ")";
  if (s.allows_no_info) schema += "; no_info allowed";
  box.appendChild(el("p", schema, "muted"));
  if (c.gate) box.appendChild(el("p", "applies only when " + c.gate.field_id + " is " + c.gate.values.map(show).join(" or "), "muted"));
  if (c.definition) { const d = el("details"); d.appendChild(el("summary", "definition")); d.appendChild(el("div", c.definition, "prose")); box.appendChild(d); }
  for (const e of c.edge_cases) { const d = el("details"); d.appendChild(el("summary", "edge case: " + e.name)); d.appendChild(el("div", e.text, "prose")); box.appendChild(d); }
  return box;
}

function answerInput(c, suggestion) {
  const holder = document.getElementById("answer-input");
  holder.replaceChildren();
  const s = c ? c.answer_schema : {type: "string"};
  let input;
  if ((s.type === "enum" || s.type === "boolean") && s.enum) {
    input = el("select");
    const values = [...s.enum];
    if (s.allows_no_info && !values.includes("no_info")) values.push("no_info");
    for (const v of values) { const o = el("option", show(v)); o.value = JSON.stringify(v); input.appendChild(o); }
    const want = JSON.stringify(suggestion);
    if (suggestion === undefined) {  // blind: nothing preset, the reviewer must choose
      const none = el("option", "— choose —"); none.value = ""; none.disabled = true; input.prepend(none); input.value = "";
    } else if ([...input.options].some((o) => o.value === want)) input.value = want;
  } else if (s.type === "list" && s.enum) {
    input = el("div", null, "checks");
    const chosen = Array.isArray(suggestion) ? suggestion.map(String) : [];
    for (const v of s.enum) {
      const label = el("label"); const box = el("input"); box.type = "checkbox"; box.value = JSON.stringify(v);
      box.checked = chosen.includes(String(v)); label.appendChild(box); label.appendChild(document.createTextNode(" " + show(v))); input.appendChild(label);
    }
  } else {
    input = el("input"); input.type = "text";
    input.placeholder = s.type === "date" ? "YYYY-MM-DD" : s.type === "number" ? "a number" + (s.unit ? " (" + s.unit + ")" : "") : s.type === "list" ? "items, comma-separated" : "answer";
    input.value = suggestion === null || suggestion === undefined ? "" : Array.isArray(suggestion) ? suggestion.join(", ") : String(suggestion);
  }
  input.id = "final-answer";
  input.dataset.type = s.type;
  holder.appendChild(input);
}

function finalAnswer() {
  const input = document.getElementById("final-answer");
  if (input.tagName === "SELECT") return input.value === "" ? null : JSON.parse(input.value);
  if (input.tagName === "DIV") return [...input.querySelectorAll("input:checked")].map((b) => JSON.parse(b.value));
  return input.value;  // the server checks it with detect's normaliser
}

function classificationInput(choices, hint, agent) {  // preset: the judge's hint, by agent id
  const box = document.getElementById("classification");
  box.replaceChildren(el("legend", "classification"));
  const found = choiceOf(hint, agent);
  const preset = hint === undefined ? null : found ? found.key : "n_a";  // blind: no preset
  for (const c of choices) {
    const label = el("label"); const radio = el("input"); radio.type = "radio"; radio.name = "classification"; radio.value = c.key;
    radio.checked = c.key === preset;
    label.appendChild(radio); label.appendChild(document.createTextNode(" " + c.label)); box.appendChild(label);
  }
}

function priorNode(decisions) {
  const box = document.getElementById("prior");
  box.replaceChildren();
  for (const d of decisions) {
    const who = d.adjudicator === me.reviewer ? "you" : d.adjudicator;
    box.appendChild(el("p", "decided " + when(d.adjudicated_at) + " by " + who + ": " + show(d.final_answer) +
      " · " + classLabel(d.classification, d.error_agent) + (d.decision ? " · " + d.decision : "") +
      (d.comment ? " · “" + d.comment + "”" : ""), "prior"));
  }
  if (decisions.length) box.appendChild(el("p", "Saving again supersedes the latest decision.", "muted"));
  const review = current && current.review;
  if (review && review.reviews === 2) box.appendChild(el("p", "Double review: another reviewer decides this cell independently; neither sees the other's decision until both are saved.", "muted"));
}

function agentsNode(answers) {
  const box = el("div", null, "agents");
  for (const a of answers) {
    const card = el("div", null, "agent");
    card.dataset.agent = a.agent_id;
    card.appendChild(el("strong", a.agent_id));
    card.appendChild(el("span", ": " + show(a.answer) + " (confidence " + show(a.confidence) + ")"));
    if (a.low_confidence_reason) card.appendChild(el("div", "low confidence: " + a.low_confidence_reason, "muted"));
    if (a.rationale) card.appendChild(el("div", a.rationale, "rationale"));
    for (const q of a.quotes || []) card.appendChild(el("blockquote", q.quote + " — " + q.note_id));
    box.appendChild(card);
  }
  if (!answers.length) box.appendChild(el("p", "the agents' answers are not in the window", "muted"));
  return box;
}

async function openCell(id, tr) {
  selected = id;
  for (const r of document.querySelectorAll("#queue tbody tr.selected")) r.classList.remove("selected");
  if (tr) tr.classList.add("selected");
  const data = await getJSON("/api/cell/" + encodeURIComponent(id));
  if (selected !== id) return;
  current = data;
  const row = data.row;
  document.getElementById("detail-title").textContent = row.task_id + " / " + row.patient_id + " / " + row.field_id;
  const body = document.getElementById("detail-body");
  body.replaceChildren();
  body.appendChild(criterionNode(data.criterion));
  body.appendChild(el("h3", "Agents"));
  body.appendChild(agentsNode(data.answers));
  body.appendChild(el("h3", "Judge"));
  const hidden = data.review && data.review.judge_hidden;
  if (hidden) {
    body.appendChild(el("p", "Blind review: decide from the chart and the agents' answers; the judge's answer is shown once your decision is saved.", "blind-note"));
  } else {
    body.appendChild(el("p", "suggests " + show(row.suggested_answer) + " · status " + row.status + " · " + row.kind +
      " · hint " + classLabel(row.classification_hint, row.error_agent) + " · confidence " + show(row.confidence) +
      " · judged " + show(row.judged_at), "judge-line"));
    body.appendChild(el("p", data.reasoning, "reasoning"));
    for (const ev of data.evidence) body.appendChild(excerptNode(ev));
    if (!data.evidence.length) body.appendChild(el("p", "no evidence pointers", "muted"));
  }
  for (const note of data.notes) body.appendChild(noteNode(note));
  if (data.consulted && data.consulted.length) body.appendChild(consultedNode(data.consulted));
  if (data.validation.length) {
    const list = el("ul", null, "problems");
    for (const p of data.validation) list.appendChild(el("li", show(p.type) + " (" + show(p.action) + "): " + show(p.message)));
    body.appendChild(list);
  }
  body.appendChild(el("p", show(data.provider) + " / " + show(data.model) + " · " + show(data.latency_ms) + " ms · USD " + show(data.usage && data.usage.cost_usd), "muted"));
  answerInput(data.criterion, hidden ? undefined : row.suggested_answer);
  classificationInput(data.classifications, hidden ? undefined : row.classification_hint, row.error_agent);
  document.querySelector("#decide textarea").value = "";
  priorNode(data.decisions);
  setStatus("", "");
  document.getElementById("save").disabled = !me.reviewer;
  document.getElementById("accept").disabled = !me.reviewer || hidden;
  if (!me.reviewer) setStatus("read-only: no reviewer identity", "error");
  document.getElementById("detail").hidden = false;
  if (me.reviewer && row.state === "pending") claim(id).catch(console.error);
}

async function claim(id) {  // hold the cell while this reviewer works it (it expires)
  const res = await fetch("/api/claim", {
    method: "POST", credentials: "same-origin", cache: "no-store",
    headers: {"Content-Type": "application/json", "X-CSRF-Token": cookie("judgeflow_csrf")},
    body: JSON.stringify({result_id: id})});
  if (res.status === 409 && selected === id) {
    setStatus("another reviewer holds this cell", "error");
    document.getElementById("save").disabled = true;
    document.getElementById("accept").disabled = true;
  }
}

function setStatus(text, cls) {
  const status = document.getElementById("save-status");
  status.textContent = text;
  status.className = cls;
}

let saving = false;
async function save(accept) {
  if (!current || saving) return;
  if (accept && current.review && current.review.judge_hidden) return;  // nothing to accept
  const form = document.getElementById("decide");
  const key = form.elements.classification.value || "n_a";
  const choice = current.classifications.find((c) => c.key === key) || {value: "n_a"};
  const body = {result_id: current.row.id,
                final_answer: accept ? current.row.suggested_answer : finalAnswer(),
                classification: choice.value, comment: form.elements.comment.value};
  if (choice.error_agent) body.error_agent = choice.error_agent;
  saving = true;
  setStatus("saving…", "busy");
  try {
    const res = await fetch("/api/adjudications", {
      method: "POST", credentials: "same-origin", cache: "no-store",
      headers: {"Content-Type": "application/json", "X-CSRF-Token": cookie("judgeflow_csrf")},
      body: JSON.stringify(body)});
    const data = await res.json().catch(() => ({}));
    if (res.status === 201) {
      setStatus("saved", "saved");
      // back to the queue's keys (j, k, a, o) after a save typed into the form
      if (form.contains(document.activeElement)) document.activeElement.blur();
      document.getElementById("save-status").dataset.id = data.adjudication_id;
      if (current.review && current.review.judge_hidden) {  // reveal the judge's answer now
        const id = current.row.id;
        await openCell(id, document.querySelector("#queue tbody tr.selected"));
        setStatus("saved (blind); the judge's answer is now shown", "saved");
        document.getElementById("save-status").dataset.id = data.adjudication_id;
      }
    } else {
      setStatus("not saved: " + (data.error || res.status), "error");  // the form keeps its input
    }
  } catch (err) {
    setStatus("not saved: the page server is not reachable", "error");
  } finally {
    saving = false;
  }
}

// ---- calibration, cost, debriefs ------------------------------------------------------
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
      card.appendChild(el("div", "Safety breach: " + show(c.safety_breach.kind) + " — " + show(c.safety_breach.description), "breach-line"));
    }
    card.appendChild(el("div", "case " + show(c.case_id) + " · global " + verdict(c.global_rating) + " · " + when(c.evaluated_at)));
    const domains = el("ul");
    for (const [name, rating] of Object.entries(c.domain_scores || {})) if (rating) domains.appendChild(el("li", name + ": " + verdict(rating)));
    card.appendChild(domains);
    for (const d of c.dropped_criteria || []) card.appendChild(el("div", "dropped " + show(d.criterion_id) + ": " + show(d.reason) + " (" + show(d.guideline_ref) + ")", "muted"));
    for (const k of c.corrections || []) card.appendChild(el("div", "corrected " + show(k.scope) + ": model said " + show(k.model_verdict) + ", code computed " + show(k.verdict), "muted"));
    card.appendChild(el("p", c.narrative));
    box.appendChild(card);
  }
}

function pct(x) { return x === null || x === undefined ? "—" : (100 * x).toFixed(1) + "%"; }

function confusionNode(conf) {  // one line per non-empty cell: reviewer's class → judge's hint
  const td = el("td", null, "confusion");
  if (!conf || !conf.labels || !conf.labels.length) { td.textContent = "—"; return td; }
  conf.labels.forEach((row, i) => conf.labels.forEach((col, j) => {
    const n = conf.counts[i][j];
    if (n) td.appendChild(el("div", row + " → " + col + ": " + n));
  }));
  if (!td.children.length) td.textContent = "—";
  return td;
}

function ci(pair, asPct) {  // " [low, high]" of a 95% interval
  if (!Array.isArray(pair)) return "";
  const f = (x) => asPct ? (100 * x).toFixed(0) + "%" : x.toFixed(2);
  return " [" + f(pair[0]) + ", " + f(pair[1]) + "]";
}

function ratioText(fig) {  // "75.0% (3/4) [30%, 95%]"
  if (!fig || fig.rate === null || fig.rate === undefined) return "—";
  return pct(fig.rate) + (fig.counts ? " (" + fig.counts + ")" : "") + ci(fig.ci95, true);
}

function coef(x, interval) { return typeof x === "number" ? x.toFixed(2) + ci(interval, false) : "—"; }

function modesNode(m) {
  const td = el("td", null, "modes");
  if (!m) { td.textContent = "no blind cells"; return td; }
  td.appendChild(el("div", "blind: " + ratioText(m.blind && m.blind.accuracy)));
  td.appendChild(el("div", "verify: " + ratioText(m.verify && m.verify.accuracy)));
  const d = m.difference;
  if (d && typeof d.estimate === "number") td.appendChild(el("div", "verify − blind: " + (100 * d.estimate).toFixed(0) + " pts" + (Array.isArray(d.ci95) ? " [" + (100 * d.ci95[0]).toFixed(0) + " to " + (100 * d.ci95[1]).toFixed(0) + "]" : "")));
  return td;
}

function humanNode(h) {
  const td = el("td", null, "human");
  if (!h) { td.textContent = "no double-reviewed cells"; return td; }
  td.appendChild(el("div", "agree " + ratioText(h.percent)));
  td.appendChild(el("div", "κ " + coef(h.kappa, h.kappa_ci95) + " · AC1 " + coef(h.ac1, h.ac1_ci95) + " · n " + show(h.n)));
  return td;
}

async function loadProgress() {
  const data = await getJSON("/api/progress");
  const crit = document.querySelector("#progress-criteria tbody");
  crit.replaceChildren(...data.criteria.map((r) => {
    const tr = el("tr");
    for (const k of ["field_id", "cells", "done", "blind", "double", "double_done"]) tr.appendChild(el("td", show(r[k])));
    return tr;
  }));
  const who = document.querySelector("#progress-reviewers tbody");
  who.replaceChildren(...data.reviewers.map((r) => {
    const tr = el("tr");
    for (const k of ["reviewer", "decided", "holding"]) tr.appendChild(el("td", show(r[k])));
    return tr;
  }));
}

async function loadStats() {
  const data = await getJSON("/api/stats");
  loadProgress().catch(console.error);
  const cal = document.querySelector("#calibration tbody");
  cal.replaceChildren(...data.calibration.map((r) => {
    const tr = el("tr");
    if (!r.enough) tr.classList.add("few");
    for (const k of ["task_id", "field_id", "prompt_version", "judged"]) tr.appendChild(el("td", show(r[k])));
    const n = el("td", show(r.n));
    if (!r.enough) n.appendChild(el("div", "not enough cells (< " + data.min_cells + ")", "warn"));
    tr.appendChild(n);
    const acc = typeof r.accuracy === "number" ? pct(r.accuracy) : show(r.accuracy);
    tr.appendChild(el("td", (r.accuracy_counts ? acc + " (" + r.accuracy_counts + ")" : acc) + ci(r.accuracy_ci95, true)));
    tr.appendChild(el("td", typeof r.kappa === "number" ? r.kappa.toFixed(2) + ci(r.kappa_ci95, false) : show(r.kappa)));
    tr.appendChild(el("td", coef(r.ac1)));
    tr.appendChild(modesNode(r.modes));
    tr.appendChild(humanNode(r.human));
    tr.appendChild(el("td", typeof r.fallback === "number" ? pct(r.fallback) : show(r.fallback)));
    tr.appendChild(el("td", typeof r.cost_usd === "number" ? r.cost_usd.toFixed(4) : show(r.cost_usd)));
    tr.appendChild(confusionNode(r.confusion));
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

// ---- views, live updates, keys --------------------------------------------------------
function showView() {
  const name = (location.hash || "#queue").slice(1);
  const view = ["queue", "calibration", "debriefs"].includes(name) ? name : "queue";
  for (const v of document.querySelectorAll(".view")) v.hidden = v.id !== "view-" + view;
  for (const a of document.querySelectorAll("#views a")) a.classList.toggle("active", a.dataset.view === view);
}

let pending = {};
function later(name, fn, ms) {  // coalesce bursts of events into one re-read
  if (pending[name]) return;
  pending[name] = setTimeout(() => { pending[name] = null; fn().catch(console.error); }, ms || 1000);
}

function connect() {
  const live = document.getElementById("live");
  const source = new EventSource("/events");
  let dropped = false;
  source.onopen = () => {
    live.textContent = "live"; live.className = "live";
    if (dropped) {  // records may have arrived while we were away: re-read the window
      dropped = false;
      Promise.all([loadQueue(), loadDebriefs(), loadStats()]).catch(console.error);
    }
  };
  source.onerror = () => {
    dropped = true; live.textContent = "reconnecting"; live.className = "live off";
    if (source.readyState === EventSource.CLOSED) { source.close(); setTimeout(connect, 5000); }  // e.g. 503: too many pages
  };
  source.addEventListener("result", (e) => { upsertRow(JSON.parse(e.data)); later("stats", loadStats); });
  source.addEventListener("decided", (e) => {
    const d = JSON.parse(e.data);
    // a double-review cell stays to do for a second reviewer: the server decides
    if (stateFilter() === "pending" && d.adjudicator === me.reviewer) { removeCell(d.cell); updateCount(); }
    later("queue", loadQueue, 300);
    if (current && current.row.cell === d.cell) {
      getJSON("/api/cell/" + encodeURIComponent(current.row.id)).then((data) => {
        current.decisions = data.decisions; priorNode(data.decisions);
      }).catch(console.error);
    }
  });
  source.addEventListener("evaluations", () => later("debriefs", loadDebriefs));
  source.addEventListener("calibration", () => later("stats", loadStats, 300));
}

function typing(e) { return ["INPUT", "TEXTAREA", "SELECT"].includes(e.target.tagName); }

document.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && current) { e.preventDefault(); save(false); return; }
  if (typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === "j" || e.key === "ArrowDown") { e.preventDefault(); step(1); }
  else if (e.key === "k" || e.key === "ArrowUp") { e.preventDefault(); step(-1); }
  else if (e.key === "a" && current) { e.preventDefault(); save(true); }
  else if (e.key === "o" && current) { e.preventDefault(); document.getElementById("final-answer").focus(); }
});

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("filters").addEventListener("change", () => loadQueue().catch(console.error));
  document.getElementById("decide").addEventListener("submit", (e) => { e.preventDefault(); save(false); });
  document.getElementById("accept").addEventListener("click", () => save(true));
  window.addEventListener("hashchange", showView);
  showView();
  connect();
  Promise.all([getJSON("/api/me").then((m) => {
    me = m;
    document.getElementById("me").textContent = m.reviewer ? "reviewer " + m.name + " (" + m.reviewer + ")" : "read-only (no reviewer identity)";
  }), loadQueue(), loadDebriefs(), loadStats()]).then(() => {
    document.body.dataset.ready = "1";
  }).catch(console.error);
});
