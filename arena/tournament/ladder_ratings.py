"""The ladder's ratings: OpenSkill (Plackett-Luce), recomputed from stored matches.

Each side of a Truco match is one bot (it fills every seat of its side), so a match rates two
one-player teams: a win ranks the winner first, a match without a winner ranks both equal.
A bot is ranked by the conservative mu - k*sigma once it has `min_games`. A new version may
start from its predecessor's rating, mu kept and sigma widened. Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from arena.tournament.pairing_policy import MODEL
from arena.tournament.store import MatchRow

SIGMA_WIDENING = MODEL.sigma / 2
"""Added (in quadrature) to a predecessor's sigma when a new version inherits its rating."""


@dataclass
class LadderLine:
    """One bot's place in a ladder table."""

    bot: str
    mu: float = MODEL.mu
    sigma: float = MODEL.sigma
    games: int = 0
    wins: int = 0
    losses: int = 0
    faults: int = 0

    def conservative(self, k: float) -> float:
        """mu - k*sigma: what the bot is very probably at least worth."""
        return self.mu - k * self.sigma


def rate(
    rows: Sequence[MatchRow],
    *,
    variant: str | None = None,
    predecessors: dict[str, str] | None = None,
) -> dict[str, LadderLine]:
    """Every bot's OpenSkill rating after `rows` in id order (of `variant`, or all). With
    `predecessors`, a version's first rating is its predecessor's at that moment, its sigma
    widened by `SIGMA_WIDENING` (at most the default sigma)."""
    lines: dict[str, LadderLine] = {}
    for row in sorted(rows, key=lambda r: r.id):
        if variant is not None and row.variant != variant:
            continue
        a, b = line_of(lines, row.bot0, predecessors), line_of(lines, row.bot1, predecessors)
        record(a, b, row.winner_bot)
        for bot in (a, b):
            bot.faults += sum(
                s for seat, s in enumerate(row.strikes)
                if seat < len(row.seat_bots) and row.seat_bots[seat] == bot.bot
            )
    return lines


def line_of(lines: dict[str, LadderLine], bot: str, predecessors: dict[str, str] | None
            ) -> LadderLine:
    """`bot`'s line in `lines`, created at its first match: the default prior, or its
    predecessor's rating with sigma widened."""
    if bot not in lines:
        new = LadderLine(bot)
        before = lines.get((predecessors or {}).get(bot, ""))
        if before is not None:
            new.mu = before.mu
            new.sigma = min(math.hypot(before.sigma, SIGMA_WIDENING), MODEL.sigma)
        lines[bot] = new
    return lines[bot]


def record(a: LadderLine, b: LadderLine, winner: int | None) -> None:
    """Rate one match of `a` (bot0) against `b` (bot1); `winner` 0, 1 or None (no winner)."""
    ranks: list[float] = [1, 1] if winner is None else [1, 2] if winner == 0 else [2, 1]
    [[ra], [rb]] = MODEL.rate(
        [[MODEL.rating(mu=a.mu, sigma=a.sigma)], [MODEL.rating(mu=b.mu, sigma=b.sigma)]],
        ranks=ranks,
    )
    a.mu, a.sigma, b.mu, b.sigma = ra.mu, ra.sigma, rb.mu, rb.sigma
    a.games += 1
    b.games += 1
    if winner is not None:
        (a if winner == 0 else b).wins += 1
        (b if winner == 0 else a).losses += 1


def table_rows(lines: Iterable[LadderLine], k: float, min_games: int) -> list[dict[str, Any]]:
    """The ladder table as rows: ranked bots by mu - k*sigma, then those with too few games."""
    ordered = sorted(lines, key=lambda x: (x.games < min_games, -x.conservative(k), x.bot))
    rows = []
    rank = 0
    for line in ordered:
        ranked = line.games >= min_games
        rank += ranked
        rows.append({
            "rank": rank if ranked else None,
            "bot": line.bot,
            "mu": round(line.mu, 2),
            "sigma": round(line.sigma, 2),
            "conservative": round(line.conservative(k), 2),
            "games": line.games,
            "won": line.wins,
            "lost": line.losses,
            "faults": line.faults,
        })
    return rows


def predecessors_of(entries: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each version's predecessor: the same name's version entered just before it, from
    (name, identity) pairs in the order they were entered."""
    last: dict[str, str] = {}
    found: dict[str, str] = {}
    for name, ident in entries:
        if name in last:
            found[ident] = last[name]
        last[name] = ident
    return found


def ladder_tables(
    rows: Sequence[MatchRow], variants: Sequence[str], settings: dict[str, Any],
    predecessors: dict[str, str], retired: set[str], *, overall: bool = True,
) -> dict[str, list[dict[str, Any]]]:
    """The ladder's tables (what `arena ladder show` and the web print), by title: each
    variant of `variants` played, then overall; each row as `table_rows`, plus `retired`."""
    k = float(settings.get("k", 3.0))
    min_games = int(settings.get("min_games", 10))
    inherit = predecessors if settings.get("inherit", True) else {}
    titles: list[tuple[str, str | None]] = [(v, v) for v in variants]
    if overall:
        titles.append(("overall", None))
    tables: dict[str, list[dict[str, Any]]] = {}
    for title, variant in titles:
        table = table_rows(rate(rows, variant=variant, predecessors=inherit).values(), k,
                           min_games)
        for line in table:
            line["retired"] = line["bot"] in retired
        tables[title] = table
    return tables
