"""Standings from stored matches: per variant and overall."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from arena.rules.variants import variant_names
from arena.tournament import latency as lat
from arena.tournament.ratings import Rating, elo_ratings
from arena.tournament.store import MatchRow


@dataclass
class Line:
    """One bot's line in a standings table."""

    bot: str
    matches: int = 0
    wins: int = 0
    losses: int = 0
    points_for: int = 0
    points_against: int = 0
    faults: int = 0
    forfeits: int = 0
    rating: Rating | None = None  # Elo from these matches (None: no match had a winner)
    # Its decisions' latency (a histogram added over matches, arena.tournament.latency) and
    # its faults by kind (timeout, illegal_action, disconnect, forfeit), from the matches
    # that kept them.
    latency: lat.Histogram = field(default_factory=dict)
    fault_kinds: dict[str, int] = field(default_factory=dict)

    @property
    def score(self) -> float:
        return self.wins / self.matches if self.matches else 0.0

    @property
    def decisions(self) -> int:
        """Decisions with a known latency."""
        return sum(self.latency.values())

    @property
    def p50_ms(self) -> float | None:
        """Median decision latency in ms (None: no latency stored)."""
        return lat.percentile(self.latency, 0.5)

    @property
    def p99_ms(self) -> float | None:
        return lat.percentile(self.latency, 0.99)


def standings(rows: Iterable[MatchRow], variant: str | None = None) -> list[Line]:
    """Lines sorted best first (win rate, then point difference), for one variant or all,
    each with its Elo rating from the same matches (`arena.tournament.ratings`)."""
    lines: dict[str, Line] = {}
    results: list[tuple[str, str]] = []
    for row in rows:
        if variant is not None and row.variant != variant:
            continue
        if row.winner_bot is not None and row.bot0 != row.bot1:
            winner = (row.bot0, row.bot1)[row.winner_bot]
            results.append((winner, row.bot1 if winner == row.bot0 else row.bot0))
        bots = (row.bot0, row.bot1)
        for team, bot in enumerate(bots):
            line = lines.setdefault(bot, Line(bot))
            _count(line, row, team)
            # Strikes per seat, credited to the bot in that seat.
            seat_bots = row.seat_bots or tuple(bots[i % 2] for i in range(len(row.strikes)))
            line.faults += sum(s for i, s in enumerate(row.strikes) if seat_bots[i] == bot)
            mine = [seat_bots[i] == bot and not (team and bot == bots[0])  # once in self-play
                    for i in range(len(seat_bots))]
            for seat, hist in enumerate(row.latency):
                if seat < len(mine) and mine[seat]:
                    lat.add(line.latency, hist)
            for seat, kinds in enumerate(row.faults):
                if seat < len(mine) and mine[seat]:
                    for kind, n in kinds.items():
                        line.fault_kinds[kind] = line.fault_kinds.get(kind, 0) + n
            if row.faulty_bot == bot and row.termination != "normal":
                line.forfeits += 1
    for bot, rating in elo_ratings(results).items():
        lines[bot].rating = rating
    return sorted(
        lines.values(),
        key=lambda x: (-x.score, -(x.points_for - x.points_against), x.bot),
    )


@dataclass
class Cell:
    """One bot's record against one opponent (a crosstable cell, from the row bot's side)."""

    matches: int = 0
    wins: int = 0
    losses: int = 0
    points_for: int = 0
    points_against: int = 0

    @property
    def score(self) -> float:
        """Wins per match, a match with no winner counting half."""
        if not self.matches:
            return 0.0
        return (self.wins + (self.matches - self.wins - self.losses) / 2) / self.matches


def crosstable(
    rows: Iterable[MatchRow], variant: str | None = None
) -> dict[str, dict[str, Cell]]:
    """Every bot's record against every opponent it met: `table[bot][opponent]`."""
    table: dict[str, dict[str, Cell]] = {}
    for row in rows:
        if (variant is not None and row.variant != variant) or row.bot0 == row.bot1:
            continue
        bots = (row.bot0, row.bot1)
        for side, bot in enumerate(bots):
            _count(table.setdefault(bot, {}).setdefault(bots[1 - side], Cell()), row, side)
    return table


def _count(record: Line | Cell, row: MatchRow, side: int) -> None:
    """Add one stored match to the record of the bot on `side` (0: bot0, 1: bot1)."""
    points = (row.points0, row.points1)
    record.matches += 1
    record.points_for += points[side]
    record.points_against += points[1 - side]
    if row.winner_bot == side:
        record.wins += 1
    elif row.winner_bot is not None:
        record.losses += 1


def variant_order(played: Iterable[str], preferred: Iterable[str] = ()) -> list[str]:
    """The variants of `played`, once each, in a stable order: those of `preferred` (a
    config's) in its order, then the rest in the rule book's, then any unknown by name.
    Every table of standings is listed in it (an outside walkthrough saw the web sort them by
    name while the CLI kept the config's, and a narrowed run print them in a new order on
    each run: set order under hash randomisation)."""
    first = list(dict.fromkeys(preferred))
    known = variant_names()

    def key(v: str) -> tuple[int, int, str]:
        return (first.index(v) if v in first else len(first),
                known.index(v) if v in known else len(known), v)

    return sorted(set(played), key=key)
