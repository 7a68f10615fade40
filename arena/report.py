"""`arena report NAME -o report.html`: one self-contained HTML file with a tournament's results.

Everything is inline — the CSS, the SVG card faces and charts, the replay viewer's JS and the
embedded replays (their all-cards steps, computed by `arena.web.replaydata` from the rules
engine) — so the file can be published anywhere and opened without a server. It reuses the
web pages' HTML (`arena.web.pages`) and reads the database read-only (`arena.web.data`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import structlog

from arena.errors import ArenaError
from arena.replay import load_replay
from arena.tournament.backend import Target
from arena.web import pages, replaydata
from arena.web.data import Database, Tournament, bot_stats

STATIC = Path(__file__).parent / "web" / "static"

log = structlog.get_logger("arena.report")


class ReportError(ArenaError):
    """The report cannot be made (an unknown tournament, say)."""


def _inline_script() -> str:
    """cards.js and replay.js as one inline module (no import: nothing to fetch)."""
    cards = (STATIC / "cards.js").read_text(encoding="utf-8").replace("export function",
                                                                       "function")
    viewer = re.sub(r"^import .*$", "", (STATIC / "replay.js").read_text(encoding="utf-8"),
                    flags=re.MULTILINE)
    return cards + "\n" + viewer


def _json_for_script(data: Any) -> str:
    """`data` as JSON to put inside a <script> element: no <, > or & at all (JSON's \\u
    escapes), since a bot's text in a replay may hold `<!--<script>`, which in HTML's script
    parsing swallows the closing tag and blanks the page (a hostile review, round 4)."""
    text = json.dumps(data, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def replays_held(t: Tournament) -> bool:
    """Whether `t`'s replays (every seat's hidden cards) are kept back: while it is played,
    bots' authors would study their opponents' hands, as the web holds them (a ladder never
    ends: its replays are shown at once)."""
    return t.finished_at is None and not t.ladder


def build_report(database: Target, tournament: str, *, replays: int = 20,
                 missing: list[str] | None = None, while_playing: bool = False) -> str:
    """The report's HTML; the ids of the matches whose replay file could not be read are
    added to `missing`. No replay is embedded while the tournament is played unless
    `while_playing` (the organizer's choice, as `arena web --replays-while-playing`)."""
    db = Database(database)
    t = db.tournament(tournament)
    if t is None:
        known = ", ".join(x.name for x in db.tournaments()) or "none"
        raise ReportError(f"tournament: no tournament named {tournament!r} in {database} "
                          f"(tournaments there: {known})")
    tables = db.tables(t.name)
    rows = db.matches(t.name, limit=1_000_000)
    embedded: dict[str, Any] = {}
    if replays_held(t) and not while_playing:
        replays = 0
    for row in rows[:replays]:
        path = db.replay_path(row)
        if path is None or not path.is_file():
            if missing is not None:
                missing.append(row["id"])
            continue
        try:
            rec = replaydata.recorded(load_replay(path))
            embedded[row["id"]] = {"header": replaydata.header(rec), "seat": None,
                                   "steps": replaydata.steps(rec, None)}
        except (ArenaError, PermissionError) as exc:
            log.warning("report_replay_skipped", match_id=row["id"], error=str(exc))
            if missing is not None:
                missing.append(row["id"])
    overall = tables[-1]
    links = "".join(
        f'<li><a href="#m={quote(mid, safe="")}&amp;d=0">{pages.e(mid)}</a></li>'
        for mid in embedded)
    viewer = (
        '<div id="viewer"><h3 id="title"></h3><div class="controls">'
        '<button data-go="first">«</button><button data-go="prev">◀</button>'
        '<span id="pos"></span><button data-go="next">▶</button>'
        '<button data-go="last">»</button><select id="seat" hidden>'
        '<option value="all">all cards</option></select></div>'
        '<div id="table"></div><ol id="log"></ol></div>')
    p = db.progress(t)
    body = (
        f'<h1>{pages.e(t.name)}</h1><p class="meta">{pages.progress_text(p)} · started '
        f'{pages.e(pages.when(t.started_at))} · variants {pages.e(", ".join(t.variants))}</p>'
        f"<h2>Ratings</h2>{pages.rating_chart(overall)}"
        f"<h2>Standings</h2>{pages.section_standings(tables)}"
        f"<h2>Bots</h2>{pages.bot_stats_table(bot_stats(db, t.name))}"
        f'<h2>Faults</h2>{pages.faults_table(rows, href="#m=")}'
        f"<h2>Matches</h2>{pages.matches_table(rows, href='#m=')}"
        f"<h2>Replays</h2><ul class=replays>{links}</ul>{viewer}")
    css = (STATIC / "app.css").read_text(encoding="utf-8")
    inline = (f"<style>{css}</style>"
              f'<script type="application/json" id="arena-replays">{_json_for_script(embedded)}'
              "</script>")
    html = pages.page(f"report: {t.name}", body, inline=inline)
    script = f'<script type="module">{_inline_script()}</script>'
    return html.replace("</body>", script + "</body>")


def write_report(database: Target, tournament: str, output: Path, *, replays: int = 20,
                 missing: list[str] | None = None, while_playing: bool = False) -> int:
    """Write the report to `output`; return its size in bytes (see `build_report` for
    `missing` and `while_playing`)."""
    html = build_report(database, tournament, replays=replays, missing=missing,
                        while_playing=while_playing)
    output.parent.mkdir(parents=True, exist_ok=True)
    data = html.encode()
    output.write_bytes(data)
    # (debug: `arena report` says so in its own line; a JSON line on stderr beside it is noise)
    log.debug("report_written", tournament=tournament, path=str(output), bytes=len(data))
    return len(data)
