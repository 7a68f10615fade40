// The replay viewer: steps computed by the server (per seat, from the engine's views).
// Keys: ArrowLeft / ArrowRight step, Home / End jump. Deep link: #d=57 (and &seat=1).
import { cardSVG, backSVG } from "./cards.js";

const root = document.getElementById("viewer");
const table = document.getElementById("table");
const log = document.getElementById("log");
const pos = document.getElementById("pos");
const seatSelect = document.getElementById("seat");
let data = null;
let index = 0;
// The report embeds its replays (all-cards view): {match id: {header, seat, steps}}.
const store = document.getElementById("arena-replays");
const embedded = store ? JSON.parse(store.textContent) : null;
let matchId = null;

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
const face = (code) => cardSVG(code, data.header.deck);
const cards = (list) => list.map(face).join("");

function fromHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  return { d: parseInt(h.get("d") || "0", 10) || 0, seat: h.get("seat"), m: h.get("m") };
}

async function load(seat, step) {
  let body;
  if (embedded) {
    body = embedded[matchId];
    if (!body) { table.innerHTML = "<p>Choose a match above.</p>"; return; }
    document.getElementById("title").textContent = matchId;
  } else {
    const res = await fetch(`${root.dataset.src}?seat=${encodeURIComponent(seat)}`);
    body = await res.json();
    if (!res.ok) {
      table.innerHTML = `<p class="error">${esc(body.error || res.statusText)}</p>`;
      return;
    }
  }
  data = body;
  if (!data.header.finished && seat === "all") seatSelect.value = "0";
  show(step);
}

function seatBox(s, st) {
  const bot = data.header.bots[s] || "";
  const marks = [];
  if (st.dealer === s) marks.push("dealer");
  if (st.mano === s) marks.push("mano");
  if (st.gallo === s) marks.push("gallo");
  if (st.to_act === s) marks.push("to act");
  if (st.folded.includes(s)) marks.push("folded");
  const hand = st.hands[s];
  const shown = hand !== null && hand !== undefined && (hand.length || !st.held[s])
    ? cards(hand) : backSVG().repeat(st.held[s]);
  const partner = st.partner_cards.find(([p]) => p === s);
  const partnerCards = partner ? `<div class="partner">seen: ${cards(partner[1])}</div>` : "";
  const discard = st.discard && st.gallo === s ? `<div class="discard">discard ${face(st.discard)}</div>` : "";
  const mine = data.seat === s ? " mine" : "";
  return `<div class="seat team${data.header.team_of[s] % 2}${mine}" data-seat="${s}">` +
    `<div class="name">seat ${s} · ${esc(bot)} <small>${marks.join(" · ")}</small></div>` +
    `<div class="hand">${shown}</div>${partnerCards}${discard}</div>`;
}

function show(step) {
  const steps = data.steps;
  index = Math.max(0, Math.min(step, steps.length - 1));
  const cur = steps[index];
  const st = cur.state;
  const seats = [...Array(data.header.seats).keys()];
  const tricks = st.tricks.map((t, i) =>
    `<div class="trick"><small>trick ${i + 1}${t.winner === null ? " (parda)" : ", seat " + t.winner}</small>` +
    t.plays.map(([s, c]) => `<span class="play">${face(c)}<small>${s}</small></span>`).join("") + "</div>").join("");
  const current = st.current_trick.map(([s, c]) => `<span class="play">${face(c)}<small>${s}</small></span>`).join("");
  const pending = st.pending ? `<div class="pending">${esc(st.pending.kind)} by seat ${st.pending.caller}, seat ${st.pending.responder} to answer</div>` : "";
  const signals = st.signals.map(([s, , text]) => `<li>seat ${s} signed ${esc(text)}</li>`).join("");
  const decision = cur.decision
    ? `<div class="decision">decision ${index}: seat ${cur.decision.seat}, ${cur.decision.latency_ms} ms${cur.decision.fault ? ` <b class="fault">${esc(cur.decision.fault)}</b>` : ""}</div>`
    : `<div class="decision">${root.dataset.live ? `live, update ${cur.step}` : "the deal"}</div>`;
  const events = cur.events.map((ev) => {
    let extra = "";
    if (ev.card) extra = face(ev.card);
    if (ev.t === "hand_end") extra = ev.revealed.concat(ev.flor_revealed).map(([s, cs]) => `<span class="reveal">seat ${s}: ${cards(cs)}</span>`).join("");
    return `<li class="ev ${ev.t}">${esc(ev.text)} ${extra}</li>`;
  }).join("");
  const scores = st.scores.map((p, t) => `team ${t}: <b>${p}</b>/${st.target} (${st.games_won[t]} won)`).join(" · ");
  table.innerHTML =
    `<div class="score">game ${st.game + 1}, hand ${st.hand_number + 1} · ${scores} · hand worth ${st.hand_value}` +
    (st.duel ? ` · duel ${st.duel.index + 1}/${st.duel.of}` : "") + "</div>" +
    `<div class="seats">${seats.map((s) => seatBox(s, st)).join("")}</div>` +
    `<div class="centre"><div class="tricks">${tricks}</div><div class="current">${current}</div>${pending}</div>` +
    decision + `<ul class="events">${events}</ul>` +
    (signals ? `<ul class="signals">${signals}</ul>` : "") +
    (st.legal.length ? `<div class="legal">could choose: ${st.legal.map(esc).join(", ")}</div>` : "");
  log.innerHTML = st.moves.map((m) => `<li>${esc(m)}</li>`).join("");
  pos.textContent = `${index} / ${steps.length - 1}`;
  const seat = seatSelect.value;
  const m = embedded ? `m=${encodeURIComponent(matchId)}&` : "";
  history.replaceState(null, "", `#${m}d=${index}${seat === "all" ? "" : "&seat=" + seat}`);
  root.dataset.step = String(index);
}

function go(where) {
  if (!data) return;
  const last = data.steps.length - 1;
  show({ first: 0, prev: index - 1, next: index + 1, last }[where]);
}

document.addEventListener("keydown", (ev) => {
  const key = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last" }[ev.key];
  if (key && ev.target.tagName !== "SELECT") { ev.preventDefault(); go(key); }
});
root.querySelectorAll("[data-go]").forEach((b) => b.addEventListener("click", () => go(b.dataset.go)));
seatSelect.addEventListener("change", () => load(seatSelect.value, index));
window.addEventListener("hashchange", () => {
  const h = fromHash();
  const seat = h.seat === null ? "all" : h.seat;
  if (embedded && h.m !== matchId) { matchId = h.m; load("all", h.d); }
  else if (!embedded && seat !== seatSelect.value) { seatSelect.value = seat; load(seat, h.d); }
  else if (data) show(h.d);
});

function watch(url) {
  // Live spectating: public states pushed by the server (already delayed); the viewer follows
  // the newest one unless the spectator stepped back.
  const source = new EventSource(url);
  source.addEventListener("state", (ev) => {
    const msg = JSON.parse(ev.data);
    const following = !data || index === data.steps.length - 1;
    if (!data) data = { header: msg.header, seat: null, steps: [] };
    data.steps.push({ step: msg.step, decision: null, events: [], state: msg.state });
    if (following) show(data.steps.length - 1);
    if (msg.state.over) { source.close(); root.dataset.over = "1"; }
  });
}

const start = fromHash();
matchId = start.m;
if (start.seat !== null && !embedded) seatSelect.value = start.seat;
if (root.dataset.live) watch(root.dataset.live); else load(seatSelect.value, start.d);
