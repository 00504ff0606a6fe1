// The run dashboard: polls the run's live status, metrics, gating and
// ladder, and redraws what changed. Everything comes from the run directory
// that `tammi train` writes; the page only reads.
"use strict";

const $ = id => document.getElementById(id);
const POLL_MS = 1000;

function fmtDuration(s) {
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = Math.floor(s % 60);
  return h ? `${h} h ${m} min` : m ? `${m} min ${sec} s` : `${sec} s`;
}

function renderStatus(st) {
  $("run-name").textContent = `run ${st.run}`;
  const s = st.state, live = st.live;
  const running = st.running ? "running" : "not running";
  $("run-state").textContent = `${running}; generation ${s.generation} at stage ${s.stage}; ` +
    `accepted model: generation ${s.accepted}; ${s.games} self-play games; ${fmtDuration(s.seconds)} of training`;
  $("run-state").dataset.running = String(st.running);
  if (live && live.stage) {
    const frac = live.total > 0 ? live.done / live.total : 0;
    $("progress-bar").style.width = `${(100 * frac).toFixed(1)}%`;
    $("progress-text").textContent = `generation ${live.generation} ${live.stage}: ` +
      `${live.done} / ${live.total} ${live.unit} ${live.message ? "- " + live.message : ""}` +
      (st.running ? "" : live.stopped ? ` (stopped: ${live.stopped})` : " (stopped)");
    $("progress-text").dataset.stage = live.stage;
  } else {
    $("progress-bar").style.width = "0";
    $("progress-text").textContent = "no trainer has reported progress yet";
  }
  $("latest").textContent = live ? [live.gate && `gate: ${live.gate}`, live.ladder && `ladder: ${live.ladder}`]
    .filter(Boolean).join(" | ") : "";
  $("lines").textContent = live ? live.lines.join("\n") : "";
}

function pick(series, tags) {
  return tags.filter(t => series[t]).map(t => ({ name: t, points: series[t] }));
}

function renderMetrics(m) {
  const s = m.series;
  lineChart($("chart-loss"), pick(s, ["loss/total", "loss/policy", "loss/value", "loss/moves_left"]),
    { xLabel: "optimizer step" });
  lineChart($("chart-accuracy"), pick(s, ["train/value_accuracy", "train/policy_entropy", "egdb/value_accuracy"]),
    { xLabel: "optimizer step (egdb: generation)" });
  lineChart($("chart-selfplay"), pick(s, ["selfplay/black_wins", "selfplay/white_wins", "selfplay/draws"]),
    { xLabel: "generation", yMin: 0, yMax: 1 });
}

function renderLadder(l) {
  lineChart($("chart-ladder"), l.depths.map(d => ({
    name: `vs depth ${d.depth}`, points: d.points.map(p => [p.hours, p.elo]),
  })), { xLabel: "hours of training" });
}

function renderGating(g) {
  const body = $("gating").querySelector("tbody");
  body.innerHTML = "";
  for (const r of g.gates.slice().reverse()) {
    const tr = document.createElement("tr");
    const cells = [r.generation, r.candidate, r.best, r.wins, r.draws, r.losses,
      `${(100 * r.score).toFixed(1)}%`, r.elo === null ? "" : r.elo.toFixed(0), r.accepted ? "yes" : "no", r.reason];
    for (const c of cells) {
      const td = document.createElement("td");
      td.textContent = String(c);
      tr.appendChild(td);
    }
    tr.className = r.accepted ? "accepted" : "rejected";
    body.appendChild(tr);
  }
  $("gating").dataset.rows = String(g.gates.length);
}

async function poll() {
  try {
    const [st, m, g, l] = await Promise.all([
      api("/api/run/status"), api("/api/run/metrics"), api("/api/run/gating"), api("/api/run/ladder"),
    ]);
    renderStatus(st);
    renderMetrics(m);
    renderGating(g);
    renderLadder(l);
    $("dash-message").textContent = "";
    document.body.dataset.updated = String(Date.now());
  } catch (e) {
    $("dash-message").textContent = e.message;
  }
  setTimeout(poll, POLL_MS);
}

poll();
