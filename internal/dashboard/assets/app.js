// zerg dashboard: vanilla JS, no build, no network beyond this server.
// Every string from a run goes into the page as text (textContent), never
// as HTML; the graph is the server's own SVG, whose texts it escaped.
"use strict";

// Set once when the page loads: a test reads it back after a live update
// to prove the page was not reloaded.
window.zergLoadedAt = window.zergLoadedAt || Date.now();
window.zergUpdates = 0;

const $main = () => document.getElementById("main");

// put replaces the page's content; like el, it flattens lists and drops
// empty parts (replaceChildren would print them as "null").
function put(...kids) {
  $main().replaceChildren(...kids.flat(2).filter((k) => k !== undefined && k !== null && k !== false));
}

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else if (k === "href" || k === "src" || k === "id" || k === "title" || k === "alt") e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const k of kids.flat()) {
    if (k === undefined || k === null || k === false) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

// The session: the page logs in with the secret in its URL's fragment (the
// token zerg dashboard printed, or the one-time code of the file it opened
// the browser with), which no request carries, then keeps the session in
// this origin's storage (localStorage, so a new tab of the page has it
// too), which no other port's page can read, and sends it as a header. No
// cookie: a cookie for 127.0.0.1 would go to every port.
const sessionKey = "zerg-dashboard-session";
let session = localStorage.getItem(sessionKey) || "";
const needsToken = "zerg dashboard: this page needs the token in the link zerg dashboard printed (…/#t=TOKEN)";

async function login() {
  const m = /^#t=([^&]*)(?:&(.*))?$/.exec(location.hash);
  if (!m) return;
  // The secret leaves the address bar (and the history) at once.
  history.replaceState(null, "", location.pathname + "#" + (m[2] || "/"));
  const r = await fetch("/api/session", { method: "POST", credentials: "omit", headers: { "X-Zerg-Login": m[1] } });
  if (!r.ok) { forget(); return; }
  session = (await r.json()).session;
  localStorage.setItem(sessionKey, session);
}

function forget() {
  session = "";
  localStorage.removeItem(sessionKey);
}

class Refused extends Error {}

// api fetches a path of the server's API with the session.
async function api(path, signal) {
  if (!session) throw new Refused(needsToken);
  const r = await fetch(path, { credentials: "omit", headers: { "X-Zerg-Session": session }, signal });
  if (r.status === 403) { forget(); throw new Refused(needsToken); }
  if (!r.ok) throw new Error(path + ": " + r.status + " " + (await r.text()));
  return r;
}

async function getJSON(path) {
  return (await api(path)).json();
}

// readStream reads server-sent events from path (fetch, not EventSource,
// which cannot send a header), calling onEvent(name, data) for each.
async function readStream(path, signal, onOpen, onEvent) {
  const r = await api(path, signal);
  onOpen();
  const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let end;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const chunk = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of chunk.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data.push(line.slice(6));
      }
      if (data.length) onEvent(name, data.join("\n"));
    }
  }
}

const usd = (v) => "$" + (v || 0).toFixed(4);
const dur = (ms) => {
  if (!ms) return "0s";
  const s = Math.round(ms / 1000);
  return s < 90 ? s + "s" : Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s";
};
const enc = encodeURIComponent;

// The route is the hash: #/ (runs), #/run/F, #/run/F/task/T,
// #/run/F/gate/N (the N-th gate run, from 0), #/run/F/cost.
function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (parts[0] === "run" && parts[1]) {
    if (parts[2] === "task" && parts[3]) return { page: "task", feature: parts[1], task: parts[3] };
    if (parts[2] === "gate" && parts[3]) return { page: "gate", feature: parts[1], gate: parts[3] };
    if (parts[2] === "cost") return { page: "cost", feature: parts[1] };
    return { page: "run", feature: parts[1] };
  }
  return { page: "runs" };
}

// One event stream per run shown; it stays open across that run's pages.
let stream = null, streamFeature = null, last = null;

function follow(feature) {
  if (streamFeature === feature) return;
  if (stream) stream.abort();
  streamFeature = feature; last = null;
  const ctl = new AbortController();
  stream = ctl;
  const live = document.getElementById("live");
  (async () => {
    let failed = false;
    while (!ctl.signal.aborted) {
      try {
        await readStream("/api/runs/" + enc(feature) + "/stream", ctl.signal, () => {
          live.textContent = "● live"; live.className = "on";
          // A refused stream (no such run yet: zerg dashboard FEATURE
          // started before the rush) drew an error: draw the run now.
          if (failed) { failed = false; show(); }
        }, (name, data) => { if (name === "view") onView(feature, JSON.parse(data)); });
      } catch (e) {
        if (ctl.signal.aborted) return;
        if (e instanceof Refused) { live.textContent = "○ " + e.message; live.className = ""; return; }
      }
      if (ctl.signal.aborted) return;
      live.textContent = "○ reconnecting"; live.className = "";
      failed = true;
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
}

function onView(feature, snap) {
  const live = document.getElementById("live");
  if (snap.error) { live.textContent = "○ " + snap.error; return; }
  const prev = last;
  last = snap;
  window.zergUpdates++;
  window.zergView = snap.view;
  const r = route();
  if (r.feature !== feature) return;
  if (r.page === "run") drawRun(snap);
  else if (r.page === "task" && changed(prev, snap, r.task)) showTask(r);
  else if (r.page === "cost" && (!prev || prev.view.cost_usd !== snap.view.cost_usd)) showCost(r);
}

// changed: the task's part of the view moved (status, attempts, running).
function changed(prev, snap, id) {
  if (!prev) return false; // the page was just drawn from a fresh fetch
  const pick = (s) => JSON.stringify(s.view.tasks.find((t) => t.id === id) || null);
  return pick(prev) !== pick(snap);
}

function nav(r) {
  const n = document.getElementById("nav");
  n.replaceChildren();
  if (!r.feature) return;
  const link = (href, text, here) => el("a", { href, class: here ? "here" : "" }, text);
  n.append(link("#/run/" + enc(r.feature), r.feature, r.page === "run"),
    link("#/run/" + enc(r.feature) + "/cost", "cost", r.page === "cost"));
}

async function show() {
  const r = route();
  nav(r);
  try {
    if (r.page === "runs") return await showRuns();
    follow(r.feature);
    if (r.page === "run") {
      if (last) drawRun(last);
      else drawRun(await getJSON("/api/runs/" + enc(r.feature)));
    } else if (r.page === "task") await showTask(r);
    else if (r.page === "gate") await showGate(r);
    else if (r.page === "cost") await showCost(r);
  } catch (e) {
    put(el("p", { class: "error" }, String(e.message || e)));
  }
}

async function showRuns() {
  const runs = await getJSON("/api/runs");
  if (runs.length === 1) { location.hash = "#/run/" + enc(runs[0].feature); return; }
  const rows = runs.map((s) => el("tr", {},
    el("td", {}, el("a", { href: "#/run/" + enc(s.feature) }, s.feature)),
    el("td", {}, el("span", { class: "state " + (s.state || "") }, s.state || "?")),
    el("td", { class: "num" }, s.merged + " / " + s.tasks),
    el("td", { class: "num" }, usd(s.cost_usd)),
    el("td", { class: "error" }, s.error || "")));
  put(el("h1", {}, "Runs of this repository"),
    runs.length ? el("table", { id: "runs" }, el("tr", {}, el("th", {}, "feature"), el("th", {}, "state"),
      el("th", { class: "num" }, "merged"), el("th", { class: "num" }, "cost"), el("th", {}, "")), rows)
      : el("p", { class: "muted" }, "No run yet: start one with zerg rush FEATURE."));
}

function drawRun(snap) {
  const v = snap.view;
  const counts = {};
  for (const t of v.tasks) counts[t.status] = (counts[t.status] || 0) + 1;
  const graph = el("div", { class: "graph", id: "graph" });
  graph.innerHTML = snap.graph_svg; // the server's SVG: every text in it is escaped
  graph.addEventListener("click", (ev) => {
    const g = ev.target.closest("g.task");
    if (g) location.hash = "#/run/" + enc(v.feature) + "/task/" + enc(g.dataset.task);
  });
  const running = v.tasks.filter((t) => t.running);
  const workers = running.length
    ? el("table", { id: "workers" }, el("tr", {}, ["task", "attempt", "status", "for", "turns", "tokens", "pid"].map((h) => el("th", {}, h))),
      running.map((t) => el("tr", {},
        el("td", {}, el("a", { href: "#/run/" + enc(v.feature) + "/task/" + enc(t.id) }, t.id)),
        el("td", { class: "num" }, t.running.attempt), el("td", {}, t.status),
        el("td", { class: "num" }, dur(Date.now() - Date.parse(t.running.started))),
        el("td", { class: "num" }, t.running.turns), el("td", { class: "num" }, t.running.tokens),
        el("td", { class: "num" }, t.running.pid || ""))))
    : el("p", { class: "muted", id: "workers" }, v.state === "running" ? "No worker is running right now." : "No worker is running: the run is " + v.state + ".");
  const levels = el("table", {}, el("tr", {}, el("th", {}, "level"), el("th", {}, "state"), el("th", {}, "tasks"), el("th", {}, "head")),
    v.levels.map((l) => el("tr", {}, el("td", {}, l.level), el("td", {}, el("span", { class: "state " + l.state }, l.state)),
      el("td", {}, l.tasks.join(", ")), el("td", {}, (l.head || "").slice(0, 10) + (l.reason ? " " + l.reason : "")))));
  const gates = v.gates.length ? el("table", { id: "gates" },
    el("tr", {}, ["gate", "on", "head", "verdict", "its output names files of", ""].map((h) => el("th", {}, h))),
    v.gates.map((g, i) => el("tr", { class: "gate" + (g.superseded ? " superseded" : ""), "data-gate": g.name },
      el("td", {}, g.name), el("td", {}, gateOn(g)), el("td", {}, (g.head || "").slice(0, 10)),
      el("td", {}, el("span", { class: "state " + (g.exit === 0 ? "merged" : g.superseded ? "" : "failed") }, gateVerdict(g))),
      el("td", {}, (g.named || []).join(", ")),
      el("td", {}, el("a", { href: "#/run/" + enc(v.feature) + "/gate/" + i }, "output")))))
    : el("p", { class: "muted" }, "No gate has run yet.");
  const refused = v.tasks.filter((t) => (t.refused_writes || []).length);
  put(
    el("h1", {}, v.feature + " ", el("span", { class: "state " + v.state + (v.refused_writes ? " refused" : ""), id: "state" }, runWords(v)),
      v.rehearsal ? el("span", { class: "muted" }, " rehearsal") : null),
    el("p", { class: "muted" }, (v.reason ? v.reason + " · " : "") + dur(v.duration_ms) + " · " + usd(v.cost_usd) +
      (v.subscription ? " (usage at API prices)" : "") + " · " + v.workers + " workers · coordinator " + (v.coordinator.alive ? "alive" : "not running")),
    el("div", { class: "counts", id: "counts", "data-total": v.tasks.length },
      el("span", { class: "count", "data-status": "total" }, "tasks", el("b", {}, v.tasks.length)),
      Object.keys(counts).sort().map((s) => el("span", { class: "count", "data-status": s }, s, el("b", {}, counts[s])))),
    el("h2", {}, "Task graph"),
    el("div", { class: "legend" }, snap.legend.map((x) => el("span", {}, el("i", { style: "" }), x.status)),
      el("span", { class: "crit" }, el("i", {}), "critical path")),
    graph,
    refused.length ? [el("h2", {}, "Refused writes"),
      el("p", { class: "muted" }, "Writes the workers' hooks refused: they are not in the tasks' work, whatever the workers said."),
      el("ul", { id: "refused-writes" }, refused.flatMap((t) => t.refused_writes.map((w) => el("li", {},
        el("a", { href: "#/run/" + enc(v.feature) + "/task/" + enc(t.id) }, t.id), ": write refused: " + w.path + ", " + w.why))))] : null,
    el("h2", {}, "Workers"), workers,
    el("h2", {}, "Levels"), levels,
    el("h2", {}, "Gates"), gates);
  // Legend swatches: colours set through the DOM (the CSP forbids inline style attributes).
  document.querySelectorAll(".legend span:not(.crit) i").forEach((i, n) => { i.style.background = snap.legend[n].colour; });
}

// runWords is the run's state as the report words it: a delivery with
// refused writes is never a plain "delivered".
function runWords(v) {
  if (v.state === "delivered" && v.refused_writes) return "delivered with " + v.refused_writes + " refused write" + (v.refused_writes === 1 ? "" : "s");
  return v.state;
}

const gateOn = (g) => g.batch ? "batch " + g.batch + " [" + (g.tasks || []).join(" ") + "]" : "level " + g.level;

function gateVerdict(g) {
  if (g.exit === 0) return "passed";
  if (g.superseded) return "failed (exit " + g.exit + "), since run again";
  return (g.required ? "FAILED" : "failed, not required") + " (exit " + g.exit + ")";
}

async function showGate(r) {
  const p = await getJSON("/api/runs/" + enc(r.feature) + "/gates/" + enc(r.gate));
  const g = p.gate;
  put(
    el("h1", {}, "Gate " + g.name + " on " + gateOn(g) + " ",
      el("span", { class: "state " + (g.exit === 0 ? "merged" : g.superseded ? "" : "failed"), id: "gate-verdict" }, gateVerdict(g))),
    el("p", { class: "muted" }, "head " + (g.head || "").slice(0, 10) + " · ", el("code", {}, g.command)),
    (g.named || []).length ? el("p", { id: "gate-named" }, "Its output names files of: ",
      g.named.flatMap((id, i) => [i ? ", " : "", el("a", { href: "#/run/" + enc(p.feature) + "/task/" + enc(id) }, id)])) : null,
    p.from_log ? null : el("p", { class: "muted" }, "Only the excerpt the run's log kept (no gate log: an older zerg, or it is gone)."),
    p.truncated ? el("p", { class: "muted" }, "(its beginning is cut here; zerg logs " + p.feature + " --gate " + g.name + " prints it whole)") : null,
    el("pre", { class: "gate-output", id: "gate-output" }, p.output || "(no output)"));
}

function refusedView(list, id) {
  return el("div", { class: "refused", id },
    el("b", {}, "Writes its hook refused (not in its work, whatever the worker said):"),
    el("ul", {}, list.map((w) => el("li", {}, "write refused: " + w.path + ", " + w.why + " (" + w.tool + ")"))));
}

function diffView(text) {
  const pre = el("pre", { class: "diff" });
  for (const line of text.split("\n")) {
    let c = "";
    if (line.startsWith("diff --git") || line.startsWith("+++") || line.startsWith("---")) c = "file";
    else if (line.startsWith("@@")) c = "hunk";
    else if (line.startsWith("+")) c = "add";
    else if (line.startsWith("-")) c = "del";
    pre.append(el("span", { class: c }, line + "\n"));
  }
  return pre;
}

function diagnosisView(h) {
  return el("div", { class: "diagnosis" },
    el("b", {}, "Diagnosis: " + h.pattern), " (" + Math.round(100 * h.confidence) + "% sure, " + h.class + ")",
    (h.evidence || []).length ? el("ul", {}, h.evidence.map((e) => el("li", {}, el("code", {}, e)))) : null,
    el("div", {}, "Fix: " + h.fix));
}

async function showTask(r) {
  const p = await getJSON("/api/runs/" + enc(r.feature) + "/tasks/" + enc(r.task));
  const t = p.task;
  const attempts = p.attempts.slice().reverse().map((a) => el("section", { class: "attempt", "data-attempt": a.number },
    el("h2", {}, "Attempt " + a.number + " ", el("span", { class: "state " + (a.class === "success" ? "merged" : a.class ? "failed" : "running") }, a.class || "running")),
    a.reason ? el("p", {}, a.reason + (a.detail ? ": " + a.detail : "")) : null,
    el("p", { class: "muted" }, dur(a.duration_ms) + " · " + usd(a.cost_usd) + (a.changed ? " · changed " + a.changed.join(", ") : "")),
    a.diagnosis ? diagnosisView(a.diagnosis) : null,
    (a.refused_writes || []).length ? refusedView(a.refused_writes) : null,
    el("h3", {}, "Tool calls (" + a.tool_calls.length + ")"),
    a.tool_calls.length ? el("table", { class: "calls" }, a.tool_calls.map((c) => el("tr", { class: "call" + (c.error ? " error" : "") },
      el("td", {}, c.name), el("td", { class: "input" }, c.input), el("td", { class: "input" }, c.result || ""))))
      : el("p", { class: "muted" }, "none recorded"),
    (a.said || []).length ? el("details", {}, el("summary", {}, "What the worker said"), el("ul", {}, a.said.map((s) => el("li", {}, s)))) : null,
    el("h3", {}, "Diff"), a.diff ? diffView(a.diff) : el("p", { class: "muted" }, "no diff recorded"),
    el("h3", {}, "Verification output"), a.verify ? el("pre", { class: "verify" }, a.verify) : el("p", { class: "muted" }, "none recorded"),
    a.truncated ? el("p", { class: "muted" }, "(long records are cut; zerg logs shows them whole)") : null));
  put(
    el("h1", {}, t.id + " ", el("span", { class: "state " + t.status, id: "task-status" }, t.status)),
    p.title ? el("p", {}, p.title) : null,
    el("p", { class: "muted" }, "level " + t.level + " · " + t.attempts + " attempt(s) · " + usd(t.cost_usd) +
      (p.dependencies.length ? " · depends on " + p.dependencies.join(", ") : "") + (t.commit ? " · commit " + t.commit.slice(0, 10) : "")),
    t.diagnosis ? diagnosisView(t.diagnosis) : null,
    (t.refused_writes || []).length ? refusedView(t.refused_writes, "task-refused") : null,
    t.detail ? el("pre", {}, t.detail) : null,
    attempts.length ? attempts : el("p", { class: "muted" }, "No attempt yet."));
}

async function showCost(r) {
  const c = await getJSON("/api/runs/" + enc(r.feature) + "/cost");
  const rep = c.report;
  const row = (l) => el("tr", {}, el("td", {}, l.name), el("td", {}, l.model || ""), el("td", { class: "num" }, l.attempts),
    el("td", { class: "num" }, usd(l.cost_usd)), el("td", { class: "num" }, l.projected ? usd(l.projected.expected_usd) : "–"));
  const table = (title, lines) => [el("h2", {}, title), el("table", {}, el("tr", {}, ["", "model", "attempts", "actual", "projected"].map((h) => el("th", {}, h))), lines.map(row))];
  const stamp = Date.now(); // a fresh chart after each change
  put(
    el("h1", {}, "Cost of " + rep.feature),
    el("p", { id: "cost-total" }, "actual " + usd(rep.total.cost_usd) + (rep.total.projected ? " against " + usd(rep.total.projected.expected_usd) + " expected (range " + usd(rep.total.projected.low_usd) + "–" + usd(rep.total.projected.high_usd) + ")" : " (no projection recorded)")),
    el("div", { class: "charts" }, c.charts.map((name) => chart(name, "/api/runs/" + enc(r.feature) + "/cost/" + name + ".svg?v=" + stamp))),
    table("Per task", rep.tasks), table("Per level", rep.levels), table("Per model", rep.models));
}

// chart is an image of one of the run's charts: fetched with the session
// (an img's own request could not carry it), shown from a blob.
function chart(name, path) {
  const img = el("img", { alt: name + " chart" });
  api(path).then((r) => r.blob()).then((b) => {
    const u = URL.createObjectURL(b);
    img.onload = () => URL.revokeObjectURL(u);
    img.src = u;
  }).catch((e) => { img.alt = name + " chart: " + (e.message || e); });
  return img;
}

// A link with a secret opened in a tab already on the page changes only
// the hash: log in then too.
window.addEventListener("hashchange", () => login().finally(show));
login().finally(show);
