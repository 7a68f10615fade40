"""What `arena tournament` and `arena serve` show while they play.

On a terminal: a rich `Live` view of the standings so far (top bots by score, W/D/L, points,
Elo with its 95 % error bar) above the progress bar with its ETA, redrawn as matches finish.
Not on a terminal (CI, pipes): one plain line per finished match (`match_line`), nothing
redrawn. Both come from the finished matches' reports as they arrive, not from the database
(the storage worker may still be writing it).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from arena.tournament.ratings import elo_ratings

TOP = 10  # bots shown in the live standings


@dataclass
class _Tally:
    bot: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    points_for: int = 0
    points_against: int = 0

    @property
    def played(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """Wins plus half the draws, per match played."""
        return (self.wins + self.draws / 2) / self.played if self.played else 0.0


class LiveStandings:
    """The standings of the matches finished so far; a rich renderable (a table of the top
    `top` bots, best first)."""

    def __init__(self, title: str, *, top: int = TOP) -> None:
        self.title = title
        self.top = top
        self._tally: dict[str, _Tally] = {}
        self._results: list[tuple[str, str]] = []  # (winner, loser), for the Elo fit

    def add(self, bots: tuple[str, str], winner: int | None, points: tuple[int, int]) -> None:
        """One finished match between `bots`: the winner's index (None: a draw, or nobody
        won) and each bot's points."""
        for i, bot in enumerate(bots):
            t = self._tally.setdefault(bot, _Tally(bot))
            t.points_for += points[i]
            t.points_against += points[1 - i]
            if winner is None:
                t.draws += 1
            elif winner == i:
                t.wins += 1
            else:
                t.losses += 1
        if winner is not None:
            self._results.append((bots[winner], bots[1 - winner]))

    def table(self) -> Table:
        """The standings table now."""
        ratings = elo_ratings(self._results) if self._results else {}
        lines = sorted(self._tally.values(), key=lambda t: (
            -t.score, -(ratings[t.bot].elo if t.bot in ratings else 0.0),
            -(t.points_for - t.points_against), t.bot))
        shown = lines[: self.top]
        more = len(lines) - len(shown)
        table = Table(title=f"{self.title}: standings so far"
                      + (f" (top {len(shown)} of {len(lines)})" if more else ""),
                      title_justify="left")
        for name in ("#", "bot", "played", "W", "D", "L", "win%", "pts+", "pts-", "Elo",
                     "±95%"):
            table.add_column(name, justify="left" if name == "bot" else "right",
                             no_wrap=name == "bot")
        for rank, t in enumerate(shown, 1):
            rating = ratings.get(t.bot)
            table.add_row(
                str(rank), escape(t.bot), str(t.played), str(t.wins), str(t.draws),
                str(t.losses), f"{100 * t.score:.0f}", str(t.points_for),
                str(t.points_against), f"{rating.elo:+.0f}" if rating else "-",
                f"{rating.error:.0f}" if rating else "-",
            )
        if not shown:
            table.add_row("", "no match finished yet", *[""] * 9)
        return table

    def __rich__(self) -> RenderableType:
        return self.table()


def match_line(n: int, total: int, match_id: str, termination: str, winner: str,
               points: tuple[int, int], eta_s: float) -> str:
    """The plain line of one finished match (not on a terminal): its count, id, how it ended,
    the bot that won it ("nobody"), the points of the match id's two bots in that order, and
    the ETA of the run."""
    return (f"[{n}/{total}] {match_id}: {termination}, won by {winner}, "
            f"{points[0]}-{points[1]}; ETA {eta_s:.0f} s")


@contextmanager
def live_view(console: Console, bar: Progress, standings: LiveStandings, *,
              enabled: bool) -> Iterator[None]:
    """Show the standings above the progress bar, redrawn live, while the block runs (when
    `enabled`: on a terminal); otherwise nothing is drawn."""
    if not enabled:
        yield
        return
    with Live(Group(standings, bar), console=console, refresh_per_second=4,
              transient=False, redirect_stdout=False, redirect_stderr=False):
        yield
