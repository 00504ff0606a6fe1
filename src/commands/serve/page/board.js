// The board page: play against any player, analyse, step through PDN.
// The game lives here as (variant, start FEN, moves); the server replays it
// on every request and answers with the position, legal moves and outcome.
"use strict";

const $ = id => document.getElementById(id);

const S = {
  info: null,
  variant: "english",
  startFen: "",
  moves: [],        // the game line
  cursor: 0,        // plies of the line shown on the board
  view: null,       // the server's view of the position at the cursor
  selected: [],     // squares clicked so far for the move being entered
  flipped: false,
  thinking: false,
  analysis: null,   // the last analysis of the position at the cursor
  pdnGames: [],
  generation: 0,    // bumped by every change, so late replies are dropped
};

function message(text, kind) {
  const m = $("message");
  m.textContent = text || "";
  m.className = "message" + (kind ? " " + kind : "");
}

function gameRequest(plies) {
  return { variant: S.variant, fen: S.startFen || null, moves: S.moves.slice(0, plies) };
}

function engineSide() {
  return $("engine-side").value;
}

/** The spec of the chosen opponent, time per move filled in. */
function opponentSpec() {
  const ms = Math.max(10, parseInt($("movetime").value, 10) || 1000);
  switch ($("opponent").value) {
    case "ab2": return "alphabeta:depth=2";
    case "ab6": return "alphabeta:depth=6";
    case "abtime": return `alphabeta:movetime=${ms}ms`;
    case "mcts": return `mcts:model=${S.info.model},movetime=${ms}ms`;
    case "abeval": return `alphabeta:eval=${S.info.eval},movetime=${ms}ms`;
    case "random": return "random";
    default: return $("spec").value.trim();
  }
}

function showSpec() {
  if ($("opponent").value !== "custom") $("spec").value = opponentSpec();
}

// ---------------------------------------------------------------- drawing

function squareCentre(n) {
  const sq = S.view.squares.find(s => s.n === n);
  const size = S.view.size;
  let [r, c] = [sq.row, sq.col];
  if (S.flipped) [r, c] = [size - 1 - r, size - 1 - c];
  return [c + 0.5, r + 0.5];
}

function render() {
  const v = S.view;
  if (!v) return;
  const board = $("board");
  board.innerHTML = "";
  board.style.setProperty("--size", v.size);
  board.dataset.variant = v.variant;
  board.dataset.ply = String(S.cursor);
  const pieces = new Map(v.pieces.map(p => [p.n, p]));
  const playable = !S.thinking && !v.outcome && S.cursor === S.moves.length && engineSide() !== v.side_to_move;
  const candidates = v.legal.filter(m => startsWith(m.path, S.selected));
  const from = new Set(playable && S.selected.length === 0 ? v.legal.map(m => m.path[0]) : []);
  const targets = new Set(playable && S.selected.length > 0
    ? candidates.filter(m => m.path.length > S.selected.length).map(m => m.path[S.selected.length]) : []);
  const last = v.last_move ? new Set(v.last_move.path) : new Set();
  // Light squares, then the dark ones with their numbers and pieces.
  for (let r = 0; r < v.size; r++) {
    for (let c = 0; c < v.size; c++) {
      const cell = document.createElement("div");
      cell.className = "sq light";
      cell.style.gridRow = String(r + 1);
      cell.style.gridColumn = String(c + 1);
      board.appendChild(cell);
    }
  }
  for (const sq of v.squares) {
    let [r, c] = [sq.row, sq.col];
    if (S.flipped) [r, c] = [v.size - 1 - r, v.size - 1 - c];
    const cell = document.createElement("div");
    cell.className = "sq dark";
    cell.style.gridRow = String(r + 1);
    cell.style.gridColumn = String(c + 1);
    cell.dataset.square = String(sq.n);
    if (from.has(sq.n)) cell.classList.add("movable");
    if (targets.has(sq.n)) cell.classList.add("target");
    if (S.selected.includes(sq.n)) cell.classList.add("selected");
    if (last.has(sq.n)) cell.classList.add("last");
    const num = document.createElement("span");
    num.className = "num";
    num.textContent = String(sq.n);
    cell.appendChild(num);
    const p = pieces.get(sq.n);
    if (p) {
      const piece = document.createElement("div");
      piece.className = `piece ${p.color}${p.king ? " king" : ""}`;
      piece.dataset.color = p.color;
      cell.appendChild(piece);
    }
    cell.addEventListener("pointerdown", ev => { ev.preventDefault(); S.dragFrom = sq.n; clickSquare(sq.n); });
    cell.addEventListener("pointerup", ev => {
      // A drag: released on another square than it started from.
      if (S.dragFrom !== undefined && S.dragFrom !== sq.n) clickSquare(sq.n);
      S.dragFrom = undefined;
      ev.preventDefault();
    });
    board.appendChild(cell);
  }
  drawPolicy();
  renderStatus();
  renderMoves();
}

function drawPolicy() {
  const a = S.analysis;
  if (!a || !$("show-policy").checked) return;
  const rows = a.network ? a.network.policy.map(r => [r.move, r.p])
    : a.mcts ? a.mcts.moves.map(r => [r.move, r.policy]) : [];
  if (rows.length === 0) return;
  const size = S.view.size;
  const svg = svgElement("svg", { viewBox: `0 0 ${size} ${size}`, class: "overlay" }, $("board"));
  svgElement("defs", {}, svg).innerHTML =
    '<marker id="head" viewBox="0 0 10 10" refX="6" refY="5" markerWidth="4" markerHeight="4" orient="auto">' +
    '<path d="M0,0 L10,5 L0,10 z" fill="#0a7d2c"/></marker>';
  for (const [mv, p] of rows.slice(0, 6)) {
    if (p < 0.02) continue;
    const pts = mv.path.map(squareCentre);
    const d = pts.map((q, i) => `${i ? "L" : "M"}${q[0]},${q[1]}`).join(" ");
    svgElement("path", {
      d, class: "arrow", "stroke-width": (0.05 + 0.18 * p).toFixed(3),
      "marker-end": "url(#head)", opacity: (0.35 + 0.65 * p).toFixed(2),
    }, svg);
    const end = pts[pts.length - 1];
    svgElement("text", { x: end[0], y: end[1] + 0.38, class: "prob", "text-anchor": "middle" }, svg)
      .textContent = `${Math.round(100 * p)}%`;
  }
}

function renderStatus() {
  const v = S.view, st = $("status");
  st.dataset.side = v.side_to_move;
  if (v.outcome) {
    const who = v.outcome.winner ? `${v.outcome.winner} wins` : "draw";
    st.textContent = `Game over: ${v.outcome.result} (${who}, ${v.outcome.reason})`;
    st.dataset.result = v.outcome.result;
  } else {
    const turn = v.side_to_move[0].toUpperCase() + v.side_to_move.slice(1);
    st.textContent = `${turn} to move` + (S.thinking ? " (engine thinking...)" : "") +
      (S.cursor < S.moves.length ? ` (viewing move ${S.cursor} of ${S.moves.length})` : "");
    delete st.dataset.result;
  }
  $("fen").value = v.fen;
  $("cursor").textContent = `${S.cursor} / ${S.moves.length}`;
}

function renderMoves() {
  const ol = $("moves");
  ol.innerHTML = "";
  for (let i = 0; i < S.moves.length; i += 2) {
    const li = document.createElement("li");
    for (const k of [i, i + 1]) {
      if (k >= S.moves.length) break;
      const span = document.createElement("span");
      span.className = "mv" + (k + 1 === S.cursor ? " current" : "");
      span.textContent = S.moves[k];
      span.addEventListener("click", () => goTo(k + 1));
      li.appendChild(span);
    }
    ol.appendChild(li);
  }
}

function renderAnalysis() {
  const out = $("analysis"), a = S.analysis;
  out.innerHTML = "";
  if (!a) return;
  const pct = x => `${(100 * x).toFixed(1)}%`;
  const add = (html, cls) => {
    const div = document.createElement("div");
    if (cls) div.className = cls;
    div.innerHTML = html;
    out.appendChild(div);
    return div;
  };
  if (a.network) {
    const [w, d, l] = a.network.wdl;
    add(`<b>Network</b> (side to move): win ${pct(w)}, draw ${pct(d)}, loss ${pct(l)}`, "net-wdl");
    add(`<div class="wdl"><span class="w" style="width:${pct(w)}"></span><span class="d" style="width:${pct(d)}"></span><span class="l" style="width:${pct(l)}"></span></div>`);
    add("policy: " + a.network.policy.slice(0, 8).map(r => `${r.move.text} ${pct(r.p)}`).join(", "), "policy");
  } else if (!a.model) {
    add("No network: start <code>tammi serve</code> with <code>--model DIR</code> or <code>--run DIR</code>.");
  }
  if (a.mcts) {
    const rows = a.mcts.moves.slice(0, 10).map(r =>
      `<tr><td>${r.move.text}</td><td>${r.visits}</td><td>${r.q === null ? "" : r.q.toFixed(3)}</td><td>${pct(r.policy)}</td></tr>`).join("");
    add(`<b>MCTS</b> ${a.mcts.simulations} visits, value ${a.mcts.value.toFixed(3)}, best ${a.mcts.best}` +
      `<table class="mcts"><thead><tr><th>move</th><th>visits</th><th>Q</th><th>target</th></tr></thead><tbody>${rows}</tbody></table>`);
  }
  if (a.alphabeta) {
    const ab = a.alphabeta;
    add(`<b>Alpha-beta</b> ${ab.spec}: score ${ab.score} (hundredths of a man), depth ${ab.depth}, ` +
      `${ab.nodes} nodes in ${ab.seconds.toFixed(2)} s<br>PV: <span class="pv">${ab.pv.join(" ")}</span>`, "ab");
  }
}

function startsWith(path, prefix) {
  return prefix.every((n, i) => path[i] === n);
}

// ---------------------------------------------------------------- actions

async function refresh() {
  const gen = ++S.generation;
  try {
    const view = await api("/api/legal", gameRequest(S.cursor));
    if (gen !== S.generation) return;
    S.view = view;
    S.selected = [];
    S.analysis = null;
    renderAnalysis();
    render();
    afterPosition();
  } catch (e) {
    message(e.message, "error");
  }
}

/** After every new position: analysis if asked, and the engine's turn. */
function afterPosition() {
  if ($("auto-analyse").checked) analyse();
  maybeEngine();
}

function clickSquare(n) {
  const v = S.view;
  if (!v || S.thinking) return;
  if (v.outcome) { message("The game is over.", "refused"); return; }
  if (S.cursor !== S.moves.length && engineSide() !== "none") {
    message("Go to the last move to play on (or set Engine plays: nobody).", "refused");
    return;
  }
  if (engineSide() === v.side_to_move) { message("It is the engine's turn.", "refused"); return; }
  const legal = v.legal;
  if (S.selected.length === 0) {
    // A removal (huffing) is one click on the opponent's offending piece.
    const removal = legal.find(m => m.path.length === 1 && m.path[0] === n);
    if (removal) { playMove(removal.text); return; }
    if (legal.some(m => m.path[0] === n)) {
      S.selected = [n];
      message("");
    } else {
      // Captures are compulsory when every legal move is one (not under huffing).
      const compulsory = legal.length > 0 && legal.every(m => m.captured.length && m.path.length > 1);
      message(`Square ${n}: no legal move starts there` +
        (compulsory ? " (a capture is compulsory)." : "."), "refused");
    }
    render();
    return;
  }
  if (S.selected.length === 1 && n === S.selected[0]) { S.selected = []; render(); return; }
  if (S.selected.length === 1 && legal.some(m => m.path[0] === n)) {
    S.selected = [n]; message(""); render(); return;
  }
  const next = S.selected.concat([n]);
  const candidates = legal.filter(m => startsWith(m.path, next));
  if (candidates.length === 0) {
    // A click on the final square of exactly one move plays it.
    const byEnd = legal.filter(m => m.path[0] === S.selected[0] && m.path[m.path.length - 1] === n);
    if (byEnd.length === 1) { playMove(byEnd[0].text); return; }
    message(`${next.join("-")}: not a legal move.`, "refused");
    render();
    return;
  }
  const complete = candidates.find(m => m.path.length === next.length);
  if (complete && candidates.length === 1) { playMove(complete.text); return; }
  S.selected = next;
  message("");
  render();
}

async function playMove(text) {
  const gen = ++S.generation;
  try {
    const view = await api("/api/play", Object.assign(gameRequest(S.cursor), { move: text }));
    if (gen !== S.generation) return;
    setLine(view.moves, view);
    message("");
    afterPosition();
  } catch (e) {
    S.selected = [];
    message(e.message, "refused");
    render();
  }
}

function setLine(moves, view) {
  S.moves = moves.slice();
  S.cursor = S.moves.length;
  S.view = view;
  S.selected = [];
  S.analysis = null;
  renderAnalysis();
  render();
}

async function maybeEngine(force) {
  const v = S.view;
  if (!v || v.outcome || S.thinking || S.cursor !== S.moves.length) return;
  if (!force && engineSide() !== v.side_to_move) return;
  const spec = opponentSpec();
  if (!spec) { message("Choose an opponent or type a player spec.", "error"); return; }
  const gen = S.generation;
  S.thinking = true;
  render();
  try {
    const r = await api("/api/engine", Object.assign(gameRequest(S.cursor), { player: spec, seed: S.moves.length }));
    S.thinking = false;
    if (gen !== S.generation) { render(); return; }
    ++S.generation;
    setLine(r.state.moves, r.state);
    const extra = [r.score !== null ? `score ${r.score}` : "", r.depth !== null ? `depth ${r.depth}` : "",
      `${r.seconds.toFixed(2)} s`].filter(Boolean).join(", ");
    message(`${r.player} played ${r.move.text} (${extra})`, "engine");
    if ($("auto-analyse").checked) analyse();
    if (engineSide() === S.view.side_to_move) maybeEngine();
  } catch (e) {
    S.thinking = false;
    message(e.message, "error");
    render();
  }
}

async function analyse() {
  const gen = S.generation;
  const sims = Math.max(0, parseInt($("sims").value, 10) || 0);
  const ab = $("ab-spec").value.trim();
  const hasModel = !!(S.info && S.info.model);
  $("analysis").textContent = "analysing...";
  try {
    const a = await api("/api/evaluate", Object.assign(gameRequest(S.cursor), {
      network: hasModel, mcts_sims: hasModel ? sims : 0, alphabeta: ab || null,
    }));
    if (gen !== S.generation) return;
    S.analysis = a;
    renderAnalysis();
    render();
  } catch (e) {
    $("analysis").textContent = "";
    message(e.message, "error");
  }
}

function goTo(ply) {
  S.cursor = Math.max(0, Math.min(S.moves.length, ply));
  refresh();
}

function newGame(fen, moves) {
  S.startFen = fen || "";
  S.moves = moves || [];
  S.cursor = S.moves.length;
  message("");
  refresh();
}

function undo() {
  if (S.thinking || S.moves.length === 0) return;
  S.moves = S.moves.slice(0, S.cursor);
  S.moves.pop();
  // Against an engine, take back to the human's turn.
  const side = engineSide();
  if (side !== "none" && S.moves.length > 0 && S.view && S.view.side_to_move !== side) S.moves.pop();
  S.cursor = S.moves.length;
  refresh();
}

async function loadPdn(file) {
  try {
    const text = await file.text();
    const r = await api("/api/pdn/load", { text, variant: S.variant });
    S.pdnGames = r.games;
    const sel = $("pdn-games");
    sel.innerHTML = "";
    r.games.forEach((g, i) => {
      const o = document.createElement("option");
      const tag = k => (g.tags.find(t => t[0].toLowerCase() === k) || [])[1] || "?";
      o.value = String(i);
      o.textContent = `${i + 1}. ${tag("black")} - ${tag("white")} ${g.result || ""}`;
      sel.appendChild(o);
    });
    sel.hidden = r.games.length < 2;
    showPdnGame(0);
  } catch (e) {
    message(e.message, "error");
  }
}

function showPdnGame(i) {
  const g = S.pdnGames[i];
  if (!g) return;
  $("engine-side").value = "none";
  S.variant = g.variant;
  $("variant").value = g.variant;
  S.startFen = g.fen;
  S.moves = g.moves.slice();
  S.cursor = 0;
  message(`Loaded game ${i + 1} (${g.moves.length} moves): step through it with > and <.`);
  refresh();
}

async function savePdn() {
  try {
    const side = engineSide();
    const spec = opponentSpec();
    const r = await api("/api/pdn/save", Object.assign(gameRequest(S.moves.length), {
      black: side === "black" ? spec : "human", white: side === "white" ? spec : "human",
    }));
    $("pdn-text").value = r.pdn;
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([r.pdn], { type: "application/x-pdn" }));
    a.download = "tammi-game.pdn";
    document.body.appendChild(a);
    a.click();
    a.remove();
  } catch (e) {
    message(e.message, "error");
  }
}

async function opening() {
  try {
    const r = await api("/api/opening", { variant: S.variant });
    const which = r.count === null ? "random opening" : `${r.kind} opening ${r.index + 1} of ${r.count}`;
    message(`${which}: ${r.moves.join(" ")}`);
    newGame("", r.moves);
  } catch (e) {
    message(e.message, "error");
  }
}

async function start() {
  try {
    S.info = await api("/api/info");
  } catch (e) {
    message(e.message, "error");
    return;
  }
  const vs = $("variant");
  for (const v of S.info.variants) {
    const o = document.createElement("option");
    o.value = v.name;
    o.textContent = `${v.name} (${v.size}x${v.size})`;
    vs.appendChild(o);
  }
  S.variant = S.info.default_variant;
  vs.value = S.variant;
  const opponents = [["ab2", "alpha-beta depth 2"], ["ab6", "alpha-beta depth 6"],
    ["abtime", "alpha-beta, time per move"]];
  if (S.info.model) opponents.push(["mcts", "network + MCTS, time per move"]);
  if (S.info.eval) opponents.push(["abeval", "alpha-beta, learned evaluation, time per move"]);
  opponents.push(["random", "random moves"], ["custom", "custom spec"]);
  for (const [value, label] of opponents) {
    const o = document.createElement("option");
    o.value = value;
    o.textContent = label;
    $("opponent").appendChild(o);
  }
  $("opponent").value = S.info.model ? "mcts" : "ab6";
  showSpec();
  $("opponent").addEventListener("change", showSpec);
  $("movetime").addEventListener("change", showSpec);
  $("spec").addEventListener("input", () => { $("opponent").value = "custom"; });
  vs.addEventListener("change", () => { S.variant = vs.value; newGame(""); });
  $("new-game").addEventListener("click", () => newGame(""));
  $("ballot").addEventListener("click", opening);
  $("undo").addEventListener("click", undo);
  $("flip").addEventListener("click", () => { S.flipped = !S.flipped; render(); });
  $("set-fen").addEventListener("click", () => newGame($("fen").value.trim()));
  $("engine-move").addEventListener("click", () => maybeEngine(true));
  $("engine-side").addEventListener("change", () => { render(); maybeEngine(); });
  $("analyse").addEventListener("click", analyse);
  $("show-policy").addEventListener("change", render);
  $("first").addEventListener("click", () => goTo(0));
  $("back").addEventListener("click", () => goTo(S.cursor - 1));
  $("forward").addEventListener("click", () => goTo(S.cursor + 1));
  $("last").addEventListener("click", () => goTo(S.moves.length));
  $("pdn-file").addEventListener("change", ev => { if (ev.target.files[0]) loadPdn(ev.target.files[0]); });
  $("pdn-games").addEventListener("change", ev => showPdnGame(parseInt(ev.target.value, 10)));
  $("save-pdn").addEventListener("click", savePdn);
  newGame("");
}

start();
