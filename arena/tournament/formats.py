"""Standings and crosstables as data: JSON, CSV and Markdown (`arena standings --format`).

Each table is a list of plain rows (dicts with the same keys in the same order), so the three
formats say the same thing; JSON keeps numbers as numbers and the rating as null when no match
had a winner. A standings row ends with the bot's faults by kind (timeouts, illegal actions,
disconnects; `faults` counts strikes) and its decision latency p50 / p99 in ms (null when no
stored match kept latency), from the histograms stored with each match.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from arena.tournament.standings import Cell, Line

FORMATS = ("table", "json", "csv", "markdown")


def standings_rows(lines: Sequence[Line]) -> list[dict[str, Any]]:
    """One row per bot, best first, with its rank."""
    rows = []
    for rank, line in enumerate(lines, 1):
        rating = line.rating
        rows.append({
            "rank": rank,
            "bot": line.bot,
            "played": line.matches,
            "won": line.wins,
            "lost": line.losses,
            "win_rate": round(line.score, 4),
            "elo": round(rating.elo, 1) if rating else None,
            "elo_error95": round(rating.error, 1) if rating else None,
            "points_for": line.points_for,
            "points_against": line.points_against,
            "faults": line.faults,
            "forfeits": line.forfeits,
            "timeouts": line.fault_kinds.get("timeout", 0),
            "illegal_actions": line.fault_kinds.get("illegal_action", 0),
            "disconnects": line.fault_kinds.get("disconnect", 0),
            "latency_p50_ms": _ms(line.p50_ms),
            "latency_p99_ms": _ms(line.p99_ms),
        })
    return rows


def _ms(value: float | None) -> float | None:
    """A latency for the tables: 0.01 ms steps (finer than the histograms' 2 %), None when
    no decision was timed."""
    return None if value is None else round(value, 2)


def crosstable_rows(
    table: dict[str, dict[str, Cell]], order: Sequence[str]
) -> list[dict[str, Any]]:
    """One row per (bot, opponent) pair that met, in standings order."""
    rows = []
    for bot in order:
        for opponent in order:
            cell = table.get(bot, {}).get(opponent)
            if cell is None:
                continue
            rows.append({
                "bot": bot,
                "opponent": opponent,
                "played": cell.matches,
                "won": cell.wins,
                "lost": cell.losses,
                "score": round(cell.score, 4),
                "points_for": cell.points_for,
                "points_against": cell.points_against,
            })
    return rows


def crosstable_grid(table: dict[str, dict[str, Cell]], order: Sequence[str]) -> list[list[str]]:
    """The square crosstable: a header row, then per bot its score against each opponent
    (`wins-losses`, blank where they never met, `x` on the diagonal)."""
    grid = [["bot", *order]]
    for bot in order:
        row = [bot]
        for opponent in order:
            cell = table.get(bot, {}).get(opponent)
            row.append("x" if bot == opponent else "" if cell is None
                       else f"{cell.wins}-{cell.losses}")
        grid.append(row)
    return grid


def to_json(tables: dict[str, dict[str, list[dict[str, Any]]]]) -> str:
    """`{table title: {"standings": rows, "crosstable": rows}}` as indented JSON."""
    return json.dumps(tables, indent=2, ensure_ascii=False) + "\n"


def to_csv(title: str, rows: Sequence[dict[str, Any]]) -> str:
    """One CSV table, preceded by a `# title` line (several tables go one after another)."""
    buffer = io.StringIO()
    buffer.write(f"# {title}\n")
    if rows:
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: _csv_cell(v) for k, v in row.items()} for row in rows)
    return buffer.getvalue()


def _csv_cell(value: Any) -> Any:
    """A cell a spreadsheet reads as the text it is: text starting with = + - @ (or a tab or
    carriage return) is a formula to a spreadsheet, so it gets a leading ' (OWASP's advice
    against CSV injection: a bot named =HYPERLINK(...) became a live link, hostile review
    round 5). Numbers stay numbers."""
    if value is None:
        return ""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def _md_cell(value: Any) -> str:
    """A Markdown table cell: `|` escaped and line breaks made spaces (a name holding a line
    break and a `|` added a forged row, hostile review round 5)."""
    text = "" if value is None else str(value)
    return " ".join(text.replace("|", "\\|").split())


def to_markdown(title: str, rows: Sequence[dict[str, Any]]) -> str:
    """One Markdown table under a `### title` heading."""
    if not rows:
        return f"### {title}\n\n(no matches)\n"
    keys = list(rows[0])
    lines = [f"### {title}", "", "| " + " | ".join(keys) + " |",
             "|" + "|".join("---:" if isinstance(rows[0][k], int | float) else "---"
                            for k in keys) + "|"]
    lines += ["| " + " | ".join(_md_cell(row[k]) for k in keys) + " |" for row in rows]
    return "\n".join(lines) + "\n"
