"""What `arena tournament` shows while it plays (arena/terminal.py): live standings above the
progress bar on a terminal, one plain line per finished match elsewhere."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time
from io import StringIO
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from test_e2e_support import (
    ARENA,
    SAMPLE_BOTS,
    arena,
    explain,
    python_bot,
    stored_matches,
    write_config,
)

from arena.terminal import LiveStandings, live_view
from arena.tournament.standings import standings
from arena.tournament.store import MatchRow

ANSI = re.compile(r"\x1b\[")
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # whole control sequences


def _render(standings: LiveStandings) -> str:
    out = StringIO()
    Console(force_terminal=True, file=out, width=120, color_system=None).print(standings)
    return out.getvalue()


def _rows(text: str) -> list[list[str]]:
    """The body rows of a rendered standings table, top to bottom, as cell texts."""
    return [cells for cells in ([c.strip() for c in line.split("│")[1:-1]]
                                for line in text.splitlines())
            if len(cells) == 11 and cells[0].isdigit()]


def test_live_standings_rank_the_bots_with_wdl_points_and_elo() -> None:
    """The live table ranks bots as the final table does (wins per match played, a draw
    counting as played and not won), shows each bot's played, W, D, L, points for and
    against and an Elo with its 95 % error bar (a Bradley-Terry fit of the decided matches),
    and only the top bots when asked."""
    standings = LiveStandings("cup", top=2)
    assert "no match finished yet" in _render(standings)
    standings.add(("alpha", "beta"), 0, (15, 7))
    standings.add(("alpha", "gamma"), 0, (15, 3))
    standings.add(("beta", "gamma"), None, (9, 9))
    standings.add(("beta", "alpha"), 0, (15, 11))
    text = _render(standings)
    rows = {cells[1]: cells for cells in _rows(text)}
    assert "cup: standings so far (top 2 of 3)" in " ".join(text.split())
    assert set(rows) == {"alpha", "beta"}  # gamma, last, is cut
    # rank, bot, played, W, D, L, win%, pts+, pts-, Elo, ±95%
    assert rows["alpha"][:9] == ["1", "alpha", "3", "2", "0", "1", "67", "41", "25"]
    assert rows["beta"][:9] == ["2", "beta", "3", "1", "1", "1", "33", "31", "35"]
    assert int(rows["alpha"][9]) > int(rows["beta"][9])
    assert all(int(rows[b][10]) > 0 for b in rows)


def test_the_live_order_is_the_final_tables_order_where_a_draw_tally_would_differ() -> None:
    """The live table's order is `standings()`'s, the final table's, on results where the
    former live tally (draws as half a win, then Elo, then point difference) ranks otherwise:
    "drawer" drew all three matches (half a win each: 50 %) and "loser" won two of five
    (40 %), but in the final table a draw is not a win (drawer 0 %); "close" (beat the strong
    ace, -14 points) and "rout" (beat the weak loser, +14) each won one of two: the old tally
    put close first on Elo, the final table puts rout first on point difference."""
    results = [
        (("drawer", "wall"), None, (12, 12)),
        (("drawer", "wall"), None, (10, 10)),
        (("wall", "drawer"), None, (14, 14)),
        (("loser", "ace"), 0, (15, 14)),
        (("ace", "loser"), 0, (15, 2)),
        (("ace", "loser"), 0, (15, 1)),
        (("close", "ace"), 0, (15, 14)),
        (("ace", "close"), 0, (15, 0)),
        (("rout", "loser"), 0, (15, 0)),
        (("loser", "rout"), 0, (15, 14)),
    ]
    live = LiveStandings("cup", top=10)
    rows = []
    for n, (bots, winner, points) in enumerate(results):
        live.add(bots, winner, points)
        rows.append(MatchRow(f"m{n}", "argentine-1v1", bots[0], bots[1], "normal", winner,
                             None, points[0], points[1], ()))
    final = [line.bot for line in standings(rows)]
    shown = [cells[1] for cells in _rows(_render(live))]
    assert shown == final
    # The case discriminates (the old tally's order: ace, close, drawer, wall, rout, loser).
    assert final.index("loser") < final.index("drawer")
    assert final.index("rout") < final.index("close")
    by_bot = {cells[1]: cells for cells in _rows(_render(live))}
    assert by_bot["drawer"][2:7] == ["3", "0", "3", "0", "0"]  # played, W, D, L, win%


def test_the_live_view_draws_standings_above_the_bar_only_on_a_terminal() -> None:
    """On a terminal the live view draws the standings table and, under it, the progress bar
    with its ETA, redrawing both as matches finish; when not enabled it draws nothing."""
    for enabled in (True, False):
        out = StringIO()
        console = Console(force_terminal=True, file=out, width=100)
        bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TextColumn("ETA"), TimeRemainingColumn(), console=console)
        task = bar.add_task("cup", total=2)
        standings = LiveStandings("cup")
        with live_view(console, bar, standings, enabled=enabled):
            standings.add(("alpha", "beta"), 0, (15, 7))
            bar.advance(task)
            time.sleep(0.6)  # a refresh or two (4 a second)
        text = ANSI.sub("", out.getvalue())
        if enabled:
            assert "standings so far" in text
            last = text[text.rindex("standings so far"):]
            assert "alpha" in last
            assert "1/2" in last
            assert last.index("alpha") < last.index("ETA")
        else:
            assert text == ""


def test_not_on_a_terminal_a_real_tournament_prints_one_plain_line_per_match(
    tmp_path: Path,
) -> None:
    """`arena tournament` with stderr a pipe: one plain line per finished match (its count,
    id, how it ended, the winner, each bot's name beside its points as stored, an ETA), no
    escape codes and no live table; the final standings follow."""
    config = write_config(tmp_path, name="plain", variants=("argentine-1v1",), games=3,
                          bots={"r1": python_bot(SAMPLE_BOTS / "random_bot.py"),
                                "r2": python_bot(SAMPLE_BOTS / "random_bot.py")})
    run = arena("tournament", config, cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    assert not ANSI.search(run.stderr), explain(run)
    assert "standings so far" not in run.stderr
    rows = {r["id"]: r for r in stored_matches(tmp_path / "arena.db")}
    lines = [ln for ln in run.stderr.splitlines() if ln.startswith("[")]
    assert len(lines) == len(rows) == 3, explain(run)
    for n, line in enumerate(lines, 1):
        m = re.fullmatch(
            r"\[(\d+)/3\] (\S+): (\w+), won by (\S+), (\S+) (\d+)-(\d+) (\S+); ETA \d+ s",
            line)
        assert m, line
        row = rows[m.group(2)]
        assert int(m.group(1)) == n
        assert m.group(3) == row["termination"]
        assert m.group(4) == {0: row["bot0"], 1: row["bot1"]}.get(row["winner_bot"], "nobody")
        assert (m.group(5), m.group(8)) == (row["bot0"], row["bot1"])
        assert (int(m.group(6)), int(m.group(7))) == (row["points0"], row["points1"])
    assert "played 3 matches" in run.stderr


def test_on_a_terminal_a_real_tournament_draws_the_live_standings(tmp_path: Path) -> None:
    """`arena tournament` on a pseudo-terminal draws the live standings table and the progress
    bar with its ETA (not the plain per-match lines); its last live table ranks the bots as
    the final overall table does."""
    config = write_config(tmp_path, name="tty", variants=("argentine-1v1",), games=2,
                          bots={"r1": python_bot(SAMPLE_BOTS / "random_bot.py"),
                                "r2": python_bot(SAMPLE_BOTS / "random_bot.py")})
    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40",
           "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([str(ARENA), "tournament", str(config)], cwd=tmp_path, env=env,
                            stdin=follower, stdout=follower, stderr=follower, close_fds=True)
    os.close(follower)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1)
        if ready:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the terminal closed: the run is over
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(leader)
    assert proc.wait(30) == 0
    text = ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))
    assert "tty: standings so far" in text, text
    assert "ETA" in text
    assert not re.search(r"\[\d+/2\] ", text), text
    assert len(stored_matches(tmp_path / "arena.db")) == 2
    # The last live table (both matches in) ranks the bots as the final overall table does,
    # with the same played, won and lost.
    plain = ESCAPES.sub("", b"".join(chunks).decode("utf-8", "replace"))
    live, final = plain[plain.rindex("standings so far"):].split("tty: overall", 1)
    last_live = _rows(live.split("tty: argentine-1v1", 1)[0])
    overall = [cells for cells in ([c.strip() for c in line.split("│")[1:-1]]
                                   for line in final.splitlines())
               if len(cells) > 5 and cells[0].isdigit()]
    assert [c[1] for c in last_live] == [c[1] for c in overall] != [], plain
    # played, won, lost, win%
    assert [[c[2], c[3], c[5], c[6]] for c in last_live] == [c[2:6] for c in overall], plain
