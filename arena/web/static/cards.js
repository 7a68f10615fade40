// Card faces as SVG strings: a rank and a suit symbol, drawn here (no card art is copied).
// Spanish deck (Argentine): rank 1-7, 10-12, suit e/b/o/c (espadas, bastos, oros, copas).
// Brazilian deck (Mineiro): rank A, 2-7, J, Q, K, suit c/h/s/d.

const SPANISH = {
  // oros: a coin
  o: { colour: "#b8860b", draw: '<circle cx="0" cy="0" r="11" fill="#f2c531" stroke="#8a6508" stroke-width="2"/><circle cx="0" cy="0" r="5" fill="none" stroke="#8a6508" stroke-width="1.5"/>' },
  // copas: a cup
  c: { colour: "#b22222", draw: '<path d="M-10,-12 H10 Q10,2 0,4 Q-10,2 -10,-12 Z" fill="#d84a3a" stroke="#7a1010" stroke-width="1.5"/><rect x="-1.5" y="4" width="3" height="6" fill="#7a1010"/><rect x="-7" y="10" width="14" height="3" rx="1" fill="#7a1010"/>' },
  // espadas: a sword
  e: { colour: "#1f4e9c", draw: '<path d="M0,-15 L3,-11 L3,6 L-3,6 L-3,-11 Z" fill="#9fb6d8" stroke="#1f4e9c" stroke-width="1.2"/><rect x="-9" y="6" width="18" height="3" rx="1" fill="#1f4e9c"/><rect x="-1.5" y="9" width="3" height="6" fill="#5a3a1a"/>' },
  // bastos: a club
  b: { colour: "#2e6b2e", draw: '<path d="M-3,14 L-5,-8 Q0,-17 5,-8 L3,14 Z" fill="#7fa35a" stroke="#2e5a1e" stroke-width="1.5"/><circle cx="-4" cy="-3" r="2" fill="#2e5a1e"/><circle cx="3" cy="3" r="2" fill="#2e5a1e"/>' },
};
const BRAZILIAN = {
  c: { colour: "#111", symbol: "\u2663" }, s: { colour: "#111", symbol: "\u2660" },
  h: { colour: "#c00", symbol: "\u2665" }, d: { colour: "#c00", symbol: "\u2666" },
};

export function parseCard(code) {
  const m = /^(\d{1,2}|[AJQK])([a-z])$/.exec(code);
  return m ? { rank: m[1], suit: m[2] } : null;
}

export function cardSVG(code, deck, extra = "") {
  const c = parseCard(code);
  if (!c) return "";
  let colour, symbol;
  if (deck === "brazilian") {
    const s = BRAZILIAN[c.suit];
    colour = s.colour;
    symbol = `<text x="0" y="9" font-size="28" text-anchor="middle" fill="${s.colour}">${s.symbol}</text>`;
  } else {
    const s = SPANISH[c.suit];
    colour = s.colour;
    symbol = s.draw;
  }
  return `<svg class="card ${extra}" data-card="${code}" viewBox="0 0 60 90" width="48" height="72" role="img" aria-label="${code}">` +
    `<rect x="1" y="1" width="58" height="88" rx="6" fill="#fffdf6" stroke="#444" stroke-width="1.5"/>` +
    `<text x="6" y="17" font-size="15" font-weight="bold" fill="${colour}">${c.rank}</text>` +
    `<text x="54" y="84" font-size="15" font-weight="bold" fill="${colour}" text-anchor="end">${c.rank}</text>` +
    `<g transform="translate(30,46)">${symbol}</g></svg>`;
}

export function backSVG() {
  return `<svg class="card back" viewBox="0 0 60 90" width="48" height="72" role="img" aria-label="hidden card">` +
    `<rect x="1" y="1" width="58" height="88" rx="6" fill="#2b4c7e" stroke="#444" stroke-width="1.5"/>` +
    `<rect x="7" y="7" width="46" height="76" rx="4" fill="none" stroke="#8fb0e0" stroke-dasharray="4 3"/></svg>`;
}
