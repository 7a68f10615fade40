"""What `arena tournament` and `arena serve` show while they play.

On a terminal: a rich `Live` view of the standings so far (top bots ranked as the final table
ranks them, W/D/L, points, Elo with its 95 % error bar) above the progress bar with its ETA,
redrawn as matches finish. Not on a terminal (CI, pipes): one plain line per finished match
(`match_line`), nothing redrawn. Both come from the finished matches' reports as they arrive,
not from the database (the storage worker may still be writing it); a resumed run starts from
the matches stored before it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from arena.tournament.standings import Line, standings
from arena.tournament.store import MatchRow

TOP = 10  # bots shown in the live standings


class LiveStandings:
    """The standings of the matches finished so far; a rich renderable (a table of the top
    `top` bots, best first).

    Its lines come from `arena.tournament.standings.standings`, the function that makes the
    final table, fed one `MatchRow` per finished match with the winner and points that the
    store records for it (`arena.tournament.store.bot_results`): the live table ranks bots as
    the final one does (win rate, a match with no winner counting as played but not won,
    then point difference), and once every match is in, the two are the same table."""

    def __init__(self, title: str, *, top: int = TOP) -> None:
        self.title = title
        self.top = top
        self._rows: list[MatchRow] = []

    def add(self, bots: tuple[str, str], winner: int | None, points: tuple[int, int]) -> None:
        """One finished match between `bots`: the winner's index (None: a draw, or nobody
        won) and each bot's points, as `bot_results` gives them."""
        self._rows.append(MatchRow(
            id=f"live-{len(self._rows)}", variant="", bot0=bots[0], bot1=bots[1],
            termination="normal", winner_bot=winner, faulty_bot=None, points0=points[0],
            points1=points[1], strikes=()))

    def add_stored(self, rows: Iterable[MatchRow]) -> None:
        """Matches stored before this run (a resumed tournament), counted like finished ones."""
        self._rows.extend(rows)

    def lines(self) -> list[Line]:
        """Every bot's line, best first: `standings()` of the matches so far."""
        return standings(self._rows)

    def table(self) -> Table:
        """The standings table now."""
        lines = self.lines()
        shown = lines[: self.top]
        more = len(lines) - len(shown)
        table = Table(title=f"{self.title}: standings so far"
                      + (f" (top {len(shown)} of {len(lines)})" if more else ""),
                      title_justify="left")
        for name in ("#", "bot", "played", "W", "D", "L", "win%", "pts+", "pts-", "Elo",
                     "±95%"):
            table.add_column(name, justify="left" if name == "bot" else "right",
                             no_wrap=name == "bot")
        for rank, line in enumerate(shown, 1):
            rating = line.rating
            table.add_row(
                str(rank), escape(line.bot), str(line.matches), str(line.wins),
                str(line.matches - line.wins - line.losses), str(line.losses),
                f"{100 * line.score:.0f}", str(line.points_for), str(line.points_against),
                f"{rating.elo:+.0f}" if rating else "-",
                f"{rating.error:.0f}" if rating else "-",
            )
        if not shown:
            table.add_row("", "no match finished yet", *[""] * 9)
        return table

    def __rich__(self) -> RenderableType:
        return self.table()


def match_line(n: int, total: int, match_id: str, termination: str, winner: str,
               bots: tuple[str, str], points: tuple[int, int], eta_s: float) -> str:
    """The plain line of one finished match (not on a terminal): its count, id, how it ended,
    the bot that won it ("nobody"), the score as "bot points-points bot" (the bots in the
    order the results store them, which alternates between a pair's matches, so each number
    is named), and the ETA of the run."""
    return (f"[{n}/{total}] {match_id}: {termination}, won by {winner}, "
            f"{bots[0]} {points[0]}-{points[1]} {bots[1]}; ETA {eta_s:.0f} s")


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
