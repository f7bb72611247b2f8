// The millbase analysis board: draws the position the API describes, lets the user
// play the plies the API lists (nothing of the rules is repeated here), and shows
// each ply's value. State: the position loaded (`start`) and the plies played since
// (`played`), both kept in the page's URL so that a position can be shared.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const board = document.getElementById("board");
const el = (id) => document.getElementById(id);

const state = {
  start: "startpos",
  played: [],
  data: null, // the last answer of /api/position (or the error body)
  legal: [], // parsed legal plies: {text, from, to, remove, value, distance}
  sel: null, // {from, to}: a ply being entered
  request: 0,
  drag: null,
};

// Point names to board coordinates: file a..g is x 0..6, rank 7..1 is y 0..6.
function xy(name) {
  return [name.charCodeAt(0) - 97, 7 - Number(name.slice(1))];
}

const POINTS = [
  "a7", "d7", "g7", "b6", "d6", "f6", "c5", "d5", "e5", "a4", "b4", "c4",
  "e4", "f4", "g4", "c3", "d3", "e3", "b2", "d2", "f2", "a1", "d1", "g1",
];

// A ply's text to its parts: "d6", "a1-a4", "d6xg7", "a1-a4xg7", "xg7".
function parsePly(text) {
  const [main, remove] = text.split("x");
  const ply = { text, from: null, to: null, remove: remove || null };
  if (main.includes("-")) {
    [ply.from, ply.to] = main.split("-");
  } else if (main) {
    ply.to = main;
  }
  return ply;
}

function node(tag, attrs, parent) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  (parent || board).appendChild(e);
  return e;
}

function drawGrid() {
  const g = node("g", { class: "grid" });
  for (const d of [0, 1, 2]) {
    node("rect", { x: d, y: d, width: 6 - 2 * d, height: 6 - 2 * d }, g);
  }
  for (const [x1, y1, x2, y2] of [[3, 0, 3, 2], [3, 4, 3, 6], [0, 3, 2, 3], [4, 3, 6, 3]]) {
    node("line", { x1, y1, x2, y2 }, g);
  }
  for (const p of POINTS) {
    const [x, y] = xy(p);
    node("circle", { cx: x, cy: y, r: 0.1, class: "dot" });
  }
  for (let i = 0; i < 7; i++) {
    node("text", { x: i, y: 6.62, class: "label" }).textContent = String.fromCharCode(97 + i);
    node("text", { x: -0.6, y: i + 0.1, class: "label" }).textContent = String(7 - i);
  }
}

// The dynamic layer: stones, marks and hit targets, redrawn on every change.
let layer = null;

function stoneAt(name) {
  const b = state.data && state.data.position && state.data.position.board;
  if (!b) return null;
  if (b.white.includes(name)) return "white";
  if (b.black.includes(name)) return "black";
  return null;
}

function toMove() {
  return state.data && state.data.position ? state.data.position.to_move : "white";
}

// The best value class (win/draw/loss) among plies, for colouring.
function bestClass(plies) {
  const rank = { win: 2, draw: 1, loss: 0 };
  let best = null;
  for (const p of plies) {
    if (p.value && (best === null || rank[p.value] > rank[best])) best = p.value;
  }
  return best;
}

// The plies still possible given the selection.
function candidates() {
  const s = state.sel;
  return state.legal.filter((p) => {
    if (!s) return true;
    if (s.from && p.from !== s.from) return false;
    if (s.to && p.to !== s.to) return false;
    return true;
  });
}

function render() {
  if (layer) layer.remove();
  layer = node("g", {});
  const pos = state.data && state.data.position;
  if (!pos) return;
  const sel = state.sel;
  const cands = candidates();
  const marks = new Map(); // point -> plies ending or removing there
  const add = (k, p) => marks.set(k, (marks.get(k) || []).concat([p]));
  if (sel && sel.to) {
    for (const p of cands) if (p.remove) add(p.remove, p);
  } else if (sel && sel.from) {
    for (const p of cands) add(p.to, p);
  } else {
    for (const p of state.legal) {
      if (p.from) add(p.from, p);
      else if (p.to) add(p.to, p);
      else if (p.remove) add(p.remove, p);
    }
  }
  const last = state.played.length ? parsePly(state.played[state.played.length - 1]) : null;
  for (const name of POINTS) {
    const [x, y] = xy(name);
    let color = stoneAt(name);
    if (sel && sel.from === name) color = null;
    if (color) {
      const c = node("circle", { cx: x, cy: y, r: 0.34, class: `stone ${color}` }, layer);
      if (state.drag && state.drag.from === name) c.classList.add("dragging");
    }
    if (sel && sel.to === name) {
      node("circle", { cx: x, cy: y, r: 0.34, class: `stone ${toMove()} ghost` }, layer);
    }
    if (sel && sel.from === name) {
      node("circle", { cx: x, cy: y, r: 0.34, class: `stone ${toMove()} ghost` }, layer);
      node("circle", { cx: x, cy: y, r: 0.42, class: "sel" }, layer);
    }
    if (last && (last.to === name || last.from === name)) {
      node("circle", { cx: x, cy: y, r: 0.46, class: "lastmove" }, layer);
    }
    const m = marks.get(name);
    if (m) {
      const cls = bestClass(m) || "draw";
      if (color) {
        node("circle", { cx: x, cy: y, r: 0.4, class: `mark ${cls}` }, layer);
      } else {
        node("circle", { cx: x, cy: y, r: 0.17, class: `hint ${cls}` }, layer);
      }
    }
    node("circle", { cx: x, cy: y, r: 0.48, class: "hit point", "data-point": name }, layer);
  }
  if (state.drag && state.drag.at) {
    const [x, y] = state.drag.at;
    node("circle", { cx: x, cy: y, r: 0.34, class: `stone ${toMove()}` }, layer);
  }
}

// A click on a point: select, complete or play a ply.
function clickPoint(name) {
  const sel = state.sel;
  if (sel && sel.to) {
    const p = candidates().find((c) => c.remove === name);
    state.sel = null;
    if (p) return play(p.text);
    return render();
  }
  if (sel && sel.from) {
    const ps = candidates().filter((c) => c.to === name);
    if (ps.length) return choose(ps, { from: sel.from, to: name });
    state.sel = null;
    if (state.legal.some((c) => c.from === name)) state.sel = { from: name };
    return render();
  }
  const lone = state.legal.find((c) => !c.from && !c.to && c.remove === name);
  if (lone) return play(lone.text);
  const placing = state.legal.filter((c) => !c.from && c.to === name);
  if (placing.length) return choose(placing, { to: name });
  if (state.legal.some((c) => c.from === name)) {
    state.sel = { from: name };
  } else {
    state.sel = null;
  }
  render();
}

// Plies that share a start: one without removal is played, otherwise the user
// picks the stone to remove.
function choose(plies, sel) {
  if (plies.length === 1 && !plies[0].remove) return play(plies[0].text);
  state.sel = sel;
  render();
}

function play(text) {
  state.sel = null;
  state.played.push(text);
  update();
}

function pointFromEvent(ev) {
  const pt = board.createSVGPoint();
  pt.x = ev.clientX;
  pt.y = ev.clientY;
  const p = pt.matrixTransform(board.getScreenCTM().inverse());
  let best = null;
  let bestD = 0.5;
  for (const name of POINTS) {
    const [x, y] = xy(name);
    const d = Math.hypot(p.x - x, p.y - y);
    if (d < bestD) {
      best = name;
      bestD = d;
    }
  }
  return { name: best, at: [p.x, p.y] };
}

board.addEventListener("pointerdown", (ev) => {
  const { name } = pointFromEvent(ev);
  if (!name) return;
  const movable = state.legal.some((c) => c.from === name);
  if (movable && !(state.sel && state.sel.to)) {
    state.drag = { from: name, moved: false };
    board.setPointerCapture(ev.pointerId);
  }
});

board.addEventListener("pointermove", (ev) => {
  if (!state.drag) return;
  const { name, at } = pointFromEvent(ev);
  if (!state.drag.moved && name === state.drag.from) return;
  state.drag.moved = true;
  state.drag.at = at;
  state.sel = { from: state.drag.from };
  render();
});

board.addEventListener("pointerup", (ev) => {
  const { name } = pointFromEvent(ev);
  const drag = state.drag;
  state.drag = null;
  if (drag && drag.moved) {
    state.sel = { from: drag.from };
    if (name && name !== drag.from) return clickPoint(name);
    return render();
  }
  if (name) clickPoint(name);
});

board.addEventListener("pointercancel", () => {
  state.drag = null;
  render();
});

function verdictText(d) {
  const side = d.position.to_move;
  const other = side === "white" ? "black" : "white";
  if (d.value === "draw") return { text: "Draw", cls: "draw" };
  const n = d.distance;
  if (n === undefined) {
    // A WDL-only database: no distances.
    const winner = d.value === "win" ? side : other;
    return { text: `${cap(winner)} wins`, cls: d.value };
  }
  if (d.value === "loss" && n === 0) {
    return { text: `${cap(other)} has won: ${side} cannot play`, cls: "loss" };
  }
  const plies = n === 1 ? "1 ply" : `${n} plies`;
  if (d.value === "win") return { text: `${cap(side)} wins in ${plies}`, cls: "win" };
  return { text: `${cap(other)} wins in ${plies}`, cls: "loss" };
}

function valueLabel(p) {
  if (p.value === "draw" || p.distance === undefined) return p.value;
  return `${p.value} ${p.distance}`;
}

function cap(s) {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function showPosition(d) {
  const pos = d.position;
  el("turn").textContent =
    `${cap(pos.to_move)} to ${pos.pending_removal ? "remove a stone" : "play"} · ${pos.phase} phase`;
  el("hands").textContent =
    `In hand: white ${pos.hand.white}, black ${pos.hand.black} · on board: white ${pos.board.white.length}, black ${pos.board.black.length}`;
  el("fen").value = pos.fen;
}

function showAnswer(d) {
  const v = verdictText(d);
  el("verdict").textContent = v.text;
  el("verdict").className = v.cls;
  el("source").textContent =
    d.source === "table" ? `from the tables${d.sector ? ` (sector ${d.sector})` : ""}` : "from the opening search";
  const list = el("moves");
  list.replaceChildren();
  for (const m of d.moves) {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    b.className = m.value;
    b.dataset.ply = m.ply;
    b.innerHTML = `<span class="ply"></span><span class="val ${m.value}"></span>`;
    b.querySelector(".ply").textContent = m.ply;
    b.querySelector(".val").textContent = valueLabel(m);
    b.addEventListener("click", () => play(m.ply));
    li.appendChild(b);
    list.appendChild(li);
  }
  const line = el("line");
  line.replaceChildren();
  d.line.forEach((ply, i) => {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = ply;
    b.title = "play the line up to here";
    b.addEventListener("click", () => {
      state.sel = null;
      state.played.push(...d.line.slice(0, i + 1));
      update();
    });
    line.appendChild(b);
  });
  if (d.wdl_only) line.textContent = "(no best line: this database holds win/draw/loss only)";
  else if (!d.line.length) line.textContent = "(the game is over)";
}

function showError(d, status) {
  const box = el("error");
  box.hidden = false;
  box.replaceChildren();
  const p = document.createElement("div");
  p.textContent = d.error || `error ${status}`;
  box.appendChild(p);
  if (d.build) {
    const c = document.createElement("div");
    c.innerHTML = "Build it: <code></code>";
    c.querySelector("code").textContent = d.build;
    box.appendChild(c);
  }
  el("verdict").textContent = "Value unknown";
  el("verdict").className = "";
  el("source").textContent = "";
  el("moves").replaceChildren();
  el("line").textContent = "";
}

function syncUrl() {
  const q = new URLSearchParams();
  if (state.start !== "startpos") q.set("fen", state.start);
  if (state.played.length) q.set("moves", state.played.join(" "));
  const s = q.toString();
  history.replaceState(null, "", s ? `?${s}` : location.pathname);
}

async function update() {
  const id = ++state.request;
  syncUrl();
  el("played").textContent = state.played.length ? state.played.join(" ") : "(none)";
  el("undo").disabled = state.played.length === 0;
  const q = new URLSearchParams({ fen: state.start });
  if (state.played.length) q.set("moves", state.played.join(" "));
  let d;
  let status;
  try {
    const r = await fetch(`api/position?${q}`);
    status = r.status;
    d = await r.json();
  } catch (e) {
    d = { error: `no answer from the server: ${e}` };
  }
  if (id !== state.request) return;
  if (status === 400 && state.played.length) {
    // A ply the server refused: take it back and say why.
    state.played.pop();
    await update();
    showError(d, status);
    return;
  }
  state.data = d;
  state.sel = null;
  el("error").hidden = true;
  if (d.position) showPosition(d);
  if (status === 200) {
    state.legal = d.moves.map((m) => Object.assign(parsePly(m.ply), m));
    showAnswer(d);
  } else {
    state.legal = (d.legal || []).map(parsePly);
    showError(d, status);
  }
  el("best").disabled = !(status === 200 && d.moves.length);
  document.body.dataset.ready = String(id);
  render();
}

el("undo").addEventListener("click", () => {
  if (state.played.length) {
    state.played.pop();
    update();
  }
});
el("best").addEventListener("click", () => {
  if (state.data && state.data.moves && state.data.moves.length) play(state.data.moves[0].ply);
});
el("reset").addEventListener("click", () => {
  state.played = [];
  update();
});
el("new").addEventListener("click", () => {
  state.start = "startpos";
  state.played = [];
  update();
});
el("fen-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const text = el("fen").value.trim();
  if (!text) return;
  state.start = text;
  state.played = [];
  update();
});
el("copy").addEventListener("click", () => {
  const text = el("fen").value;
  if (navigator.clipboard) navigator.clipboard.writeText(text).catch(() => {});
  el("fen").select();
});
document.addEventListener("keydown", (ev) => {
  if (ev.target.tagName === "TEXTAREA") return;
  if (ev.key === "ArrowLeft") el("undo").click();
  if (ev.key === "ArrowRight") el("best").click();
  if (ev.key === "Escape") {
    state.sel = null;
    render();
  }
});

async function init() {
  drawGrid();
  const q = new URLSearchParams(location.search);
  state.start = q.get("fen") || "startpos";
  state.played = (q.get("moves") || "").split(/[\s_]+/).filter(Boolean);
  try {
    const info = await (await fetch("api/info")).json();
    el("rules").textContent =
      `${info.rules}, ${info.stones} stones · ${info.subspaces} subspaces, ${info.placement_sectors} placement sectors`;
  } catch (e) {
    el("rules").textContent = "";
  }
  await update();
}

init();
