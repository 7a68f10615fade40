"""HTML for the web pages and the report: plain functions of plain data, every text escaped.

`section_*` return fragments (the live feed re-sends `section_standings` as the tournament
goes on); `page` wraps a body in the layout, linking the static CSS and JS, or inlining them
for the self-contained report.
"""

from __future__ import annotations

import math
import time
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from arena.tournament.standings import Cell, Line
from arena.web.data import TERMINATIONS, BotStats, LadderRatings, Progress, Table, Tournament


def e(value: object) -> str:
    return escape(str(value), quote=True)


def page(title: str, body: str, *, scripts: tuple[str, ...] = (), inline: str = "") -> str:
    """A whole page. `inline`: CSS and JS inlined instead of linked (the report)."""
    head = inline or '<link rel="stylesheet" href="/static/app.css">'
    tags = "".join(f'<script type="module" src="/static/{e(s)}"></script>' for s in scripts)
    nav = "" if inline else (
        '<nav><a href="/">tournaments</a> <a href="/ladder">ladder</a> '
        '<a href="/matches">matches</a> <a href="/live">live</a></nav>')
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<link rel="icon" href="data:,">'
            f"<title>{e(title)} · Truco Arena</title>{head}</head><body>{nav}"
            f"<main>{body}</main>{tags}</body></html>")


def when(ts: float | None) -> str:
    return "" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    s = round(seconds)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def tournaments_list(ts: list[Tournament], progress: dict[str, Progress]) -> str:
    if not ts:
        return "<h1>Tournaments</h1><p>No tournament in this database yet.</p>"
    rows = "".join(
        f'<tr><td><a href="/t/{quote(t.name, safe="")}">{e(t.name)}</a></td>'
        f"<td>{e(', '.join(t.variants))}</td><td>{len(t.bots) or ''}</td>"
        f"<td>{progress_text(progress[t.name])}</td><td>{e(when(t.started_at))}</td></tr>"
        for t in ts)
    return ("<h1>Tournaments</h1><table class=list><thead><tr><th>name</th><th>variants</th>"
            "<th>bots</th><th>progress</th><th>started</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>")


def progress_text(p: Progress) -> str:
    if p.ladder:
        return e(f"{p.done} matches (a ladder service: continuous, no total)")
    total = "?" if p.total is None else str(p.total)
    state = "finished" if p.finished else (
        f"ETA {duration(p.eta_s)}" if p.eta_s is not None else "running")
    return e(f"{p.done}/{total} matches, {state}")


def progress_bar(p: Progress) -> str:
    frac = 1.0 if p.finished else (p.done / p.total if p.total else 0.0)
    return (f'<div class="progress" data-done="{p.done}" data-total="{p.total or ""}">'
            f'<div class="bar"><div style="width:{100 * min(frac, 1.0):.1f}%"></div></div>'
            f'<span class="ptext">{progress_text(p)}</span></div>')


def elo_interval(line: Line, lo: float, hi: float, width: int = 220) -> str:
    """The bot's Elo and its 95 % interval on a shared axis [lo, hi], as inline SVG."""
    r = line.rating
    if r is None:
        return "<svg class=elo width=0 height=0></svg>"

    def x(v: float) -> float:
        return 6 + (width - 12) * (v - lo) / (hi - lo)

    zero = x(0.0)
    return (f'<svg class="elo" width="{width}" height="16" viewBox="0 0 {width} 16" '
            f'role="img" aria-label="Elo {r.elo:.0f} ± {r.error:.0f}">'
            f'<line class="zero" x1="{zero:.1f}" y1="0" x2="{zero:.1f}" y2="16"/>'
            f'<line class="err" x1="{x(r.elo - r.error):.1f}" y1="8" '
            f'x2="{x(r.elo + r.error):.1f}" y2="8"/>'
            f'<circle cx="{x(r.elo):.1f}" cy="8" r="4"/></svg>')


def _axis(lines: list[Line]) -> tuple[float, float]:
    rated = [ln.rating for ln in lines if ln.rating is not None]
    if not rated:
        return -1.0, 1.0
    lo = min(min(r.elo - r.error for r in rated), 0.0)
    hi = max(max(r.elo + r.error for r in rated), 0.0)
    if math.isclose(lo, hi):
        lo, hi = lo - 1, hi + 1
    return lo, hi


def standings_table(table: Table, *, link: str = "") -> str:
    lo, hi = _axis(table.lines)
    rows = []
    for rank, ln in enumerate(table.lines, 1):
        r = ln.rating
        elo = "" if r is None else f"{r.elo:+.0f} ± {r.error:.0f}"
        name = e(ln.bot) if not link else (
            f'<a href="{link}?{urlencode({"bot": ln.bot})}">{e(ln.bot)}</a>')
        rows.append(
            f'<tr data-bot="{e(ln.bot)}"><td>{rank}</td><td>{name}</td><td>{ln.matches}</td>'
            f"<td>{ln.wins}</td><td>{ln.losses}</td><td>{100 * ln.score:.0f}%</td>"
            f"<td class=num>{e(elo)}</td><td>{elo_interval(ln, lo, hi)}</td>"
            f"<td>{ln.points_for}</td><td>{ln.points_against}</td>"
            f"<td>{ln.faults}</td><td>{ln.forfeits}</td></tr>")
    return (f'<table class="standings" data-title="{e(table.title)}"><caption>{e(table.title)}'
            "</caption><thead><tr><th>#</th><th>bot</th><th>matches</th><th>won</th>"
            "<th>lost</th><th>win rate</th><th>Elo ± 95%</th>"
            f'<th>interval <small>[{lo:+.0f}, {hi:+.0f}]</small></th><th>points for</th>'
            "<th>against</th><th>faults</th><th>forfeits</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _cell(c: Cell | None) -> str:
    if c is None:
        return "<td class=none>—</td>"
    return (f'<td title="{c.wins}-{c.losses} of {c.matches}, points {c.points_for}-'
            f'{c.points_against}">{100 * c.score:.0f}%<br><small>{c.points_for}-'
            f"{c.points_against}</small></td>")


def crosstable_html(table: Table) -> str:
    bots = [ln.bot for ln in table.lines]
    if len(bots) < 2:
        return ""
    head = "".join(f"<th>{e(b)}</th>" for b in bots)
    body = "".join(
        f"<tr><th>{e(a)}</th>"
        + "".join("<td class=self></td>" if a == b else _cell(table.cross.get(a, {}).get(b))
                  for b in bots) + "</tr>"
        for a in bots)
    return (f'<table class="cross"><caption>{e(table.title)}: crosstable (row bot\'s win rate '
            f"and points against the column bot)</caption><thead><tr><th></th>{head}</tr>"
            f"</thead><tbody>{body}</tbody></table>")


def section_standings(tables: list[Table], *, link: str = "") -> str:
    return "".join(
        f'<section class="variant">{standings_table(t, link=link)}{crosstable_html(t)}</section>'
        for t in tables)


def faults_table(rows: list[dict[str, Any]], *, href: str = "/m/") -> str:
    """Matches that ended by a fault, naming the bot at fault."""
    bad = [r for r in rows if r["termination"] != "normal"]
    if not bad:
        return "<p>No match ended by a fault.</p>"
    body = "".join(
        f'<tr><td><a href="{href}{quote(r["id"], safe="")}">{e(r["id"])}</a></td>'
        f'<td>{e(r["termination"])}</td><td>{e(r["faulty_bot"] or "")}</td>'
        f'<td>{e(r["detail"])}</td></tr>' for r in bad)
    return ("<table class=list><thead><tr><th>match</th><th>termination</th><th>bot at fault"
            f"</th><th>detail</th></tr></thead><tbody>{body}</tbody></table>")


def matches_table(rows: list[dict[str, Any]], *, href: str = "/m/") -> str:
    if not rows:
        return "<p>No match.</p>"
    body = []
    for r in rows:
        winner = {0: r["bot0"], 1: r["bot1"]}.get(r["winner_bot"], "—")
        body.append(
            f'<tr><td><a href="{href}{quote(r["id"], safe="")}">{e(r["id"])}</a></td>'
            f'<td>{e(r["variant"])}</td><td>{e(r["bot0"])}</td><td>{e(r["bot1"])}</td>'
            f'<td>{r["points0"]}-{r["points1"]}</td><td>{e(winner)}</td>'
            f'<td>{e(r["termination"])}</td><td>{r["decisions"]}</td></tr>')
    return ("<table class=list><thead><tr><th>match</th><th>variant</th><th>team 0</th>"
            "<th>team 1</th><th>points</th><th>winner</th><th>termination</th>"
            f"<th>decisions</th></tr></thead><tbody>{''.join(body)}</tbody></table>")


def filter_form(action: str, bots: list[str], variants: list[str],
                chosen: dict[str, str]) -> str:
    def select(name: str, values: list[str] | tuple[str, ...]) -> str:
        opts = "".join(
            f'<option value="{e(v)}"{" selected" if chosen.get(name) == v else ""}>{e(v)}'
            "</option>" for v in values)
        return (f'<label>{name} <select name="{name}"><option value="">any</option>{opts}'
                "</select></label>")

    return (f'<form class="filters" method="get" action="{e(action)}">'
            f'{select("bot", bots)} {select("variant", variants)} '
            f'{select("termination", TERMINATIONS)} <button>filter</button></form>')


def ladder_ratings_html(ratings: LadderRatings) -> str:
    """A ladder service's own tables (OpenSkill), as `arena ladder show` prints them."""
    k = f"{ratings.k:g}"
    parts = [f'<h2>Ladder ratings</h2><p class="meta">the service\'s own OpenSkill '
             f"(Plackett-Luce) ratings, as <code>arena ladder show</code> prints them: ranked "
             f"by &mu; &minus; {e(k)}&sigma; once a bot has {ratings.min_games} games "
             "(&ndash;: not yet); the "
             "Elo tables below are over the same matches, another model</p>"]
    for title, table in ratings.tables.items():
        body = "".join(
            f'<tr data-bot="{e(r["bot"])}">'
            f'<td>{"&ndash;" if r["rank"] is None else r["rank"]}</td>'
            f'<td>{e(r["bot"])}</td><td class=num>{r["mu"]:.2f}</td>'
            f'<td class=num>{r["sigma"]:.2f}</td><td class=num>{r["conservative"]:.2f}</td>'
            f'<td>{r["games"]}</td><td>{r["won"]}</td><td>{r["lost"]}</td>'
            f'<td>{r["faults"]}</td><td>{"yes" if r["retired"] else ""}</td></tr>'
            for r in table)
        parts.append(
            f'<table class="ladder" data-title="{e(title)}"><caption>{e(title)}</caption>'
            "<thead><tr><th>#</th><th>bot</th><th>&mu;</th><th>&sigma;</th>"
            f"<th>&mu; &minus; {e(k)}&sigma;</th>"
            "<th>games</th><th>won</th><th>lost</th><th>faults</th><th>retired</th></tr>"
            f"</thead><tbody>{body}</tbody></table>")
    return "".join(parts)


def tournament_body(t: Tournament, p: Progress, tables: list[Table],
                    rows: list[dict[str, Any]], stats: list[BotStats],
                    ladder: LadderRatings | None = None) -> str:
    q = quote(t.name, safe="")
    pairs = ("pairs chosen by the ladder service as it goes" if t.ladder else
             f"{t.games} {'match' if t.games == 1 else 'matches'} a pair")
    return (f'<h1>{e(t.name)}</h1><p class="meta">started {e(when(t.started_at))} · '
            f'variants {e(", ".join(t.variants))} · {e(pairs)} · '
            f'<a href="/matches?{urlencode({"tournament": t.name})}">matches</a></p>'
            f'<div id="live" data-events="/api/t/{q}/events">{progress_bar(p)}</div>'
            + (ladder_ratings_html(ladder) if ladder is not None else "")
            + f'<div id="standings">{section_standings(tables)}</div>'
            f"<h2>Bots</h2>{bot_stats_table(stats)}<h2>Faults</h2>{faults_table(rows)}")


def replay_body(row: dict[str, Any], bots: list[str]) -> str:
    seats = "".join(f'<option value="{s}">seat {s} ({e(b)})</option>'
                    for s, b in enumerate(bots))
    return (f'<h1>{e(row["id"])}</h1><p class="meta">{e(row["variant"])} · '
            f'{e(row["bot0"])} vs {e(row["bot1"])} · {e(row["termination"])} · '
            f'{row["points0"]}-{row["points1"]}</p>'
            f'<div id="viewer" data-src="/api/m/{quote(row["id"], safe="")}/replay">'
            '<div class="controls"><button data-go="first" title="Home">«</button>'
            '<button data-go="prev" title="←">◀</button>'
            '<span id="pos"></span><button data-go="next" title="→">▶</button>'
            '<button data-go="last" title="End">»</button>'
            f'<label>seen by <select id="seat"><option value="all">all cards</option>{seats}'
            "</select></label></div>"
            '<div id="table"></div><ol id="log"></ol></div>')


def bot_stats_table(stats: list[BotStats]) -> str:
    if not stats:
        return "<p>No decision measured yet.</p>"
    body = "".join(
        f'<tr data-bot="{e(s.bot)}"><td>{e(s.bot)}</td><td>{s.decisions}</td>'
        f"<td>{s.p50_ms:.1f}</td><td>{s.p99_ms:.1f}</td><td>{s.faults}</td></tr>"
        for s in stats)
    return ('<table class="stats"><thead><tr><th>bot</th><th>decisions</th><th>latency p50 ms'
            "</th><th>latency p99 ms</th><th>faults</th></tr></thead>"
            f"<tbody>{body}</tbody></table>")


def rating_chart(table: Table, width: int = 640) -> str:
    """The table's Elo ratings with their 95 % error bars, one row a bot, as one SVG."""
    rated = [ln for ln in table.lines if ln.rating is not None]
    if not rated:
        return ""
    lo, hi = _axis(rated)
    left, right, row = 130, 20, 26
    height = 30 + row * len(rated)

    def x(v: float) -> float:
        return left + (width - left - right) * (v - lo) / (hi - lo)

    parts = [f'<svg class="chart" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="Elo of {e(table.title)}">',
             f'<line x1="{x(0):.1f}" y1="4" x2="{x(0):.1f}" y2="{height - 20}" stroke="#999" '
             'stroke-dasharray="3 3"/>']
    for tick in (lo, 0.0, hi):
        parts.append(f'<text x="{x(tick):.1f}" y="{height - 4}" font-size="11" '
                     f'text-anchor="middle">{tick:+.0f}</text>')
    for i, ln in enumerate(rated):
        r = ln.rating
        assert r is not None
        y = 16 + i * row
        parts.append(
            f'<g data-bot="{e(ln.bot)}"><text x="{left - 8}" y="{y + 4}" font-size="12" '
            f'text-anchor="end">{e(ln.bot)}</text>'
            f'<line x1="{x(r.elo - r.error):.1f}" y1="{y}" x2="{x(r.elo + r.error):.1f}" '
            f'y2="{y}" stroke="#1d5fa8" stroke-width="3"/>'
            f'<line x1="{x(r.elo - r.error):.1f}" y1="{y - 5}" x2="{x(r.elo - r.error):.1f}" '
            f'y2="{y + 5}" stroke="#1d5fa8"/><line x1="{x(r.elo + r.error):.1f}" y1="{y - 5}" '
            f'x2="{x(r.elo + r.error):.1f}" y2="{y + 5}" stroke="#1d5fa8"/>'
            f'<circle cx="{x(r.elo):.1f}" cy="{y}" r="4.5" fill="#c0392b"/>'
            f"<title>{e(ln.bot)}: {r.elo:+.0f} ± {r.error:.0f}</title></g>")
    parts.append("</svg>")
    return "".join(parts)
