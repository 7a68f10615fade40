"""Worker matches cost the coordinator nothing per decision unless someone watches them.

The `processes` executor's workers keep each match's moves and send them to the
coordinator's copy of the match (`runner.live`, what spectators read) only while someone
watches that match: a gRPC `Watch` of it or of every match, a web live page of it, or a
spectator delay (then every table is noted for later watchers). These tests count the frames
that cross the pipes with a counting `FrameReader` put in place of the executor's own (the
same count works on any version of the executor), while a real `TournamentRunner` plays real
bot processes in real worker processes, and watchers are raw-stub gRPC clients (no SDK) or
plain HTTP readers of the web's live feed.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
import trio
from test_e2e_support import (
    SAMPLE_BOTS,
    TEST_BOTS,
    python_bot,
    tournament_with_web,
    write_config,
)
from test_spectator import Watcher, _records, check_update

from arena.rpc import convert
from arena.tournament import executors, frames
from arena.tournament.config import TournamentConfig, parse_config
from arena.tournament.executors import ProcessExecutor
from arena.tournament.runner import TournamentRunner

SHORT = {"target": 15, "chicos": 1}


class Tally:
    """What the coordinator received from its workers: frames by tag, and for each match the
    (first index, count) of every batch of its moves."""

    def __init__(self) -> None:
        self.tags: Counter[str] = Counter()
        self.batches: dict[str, list[tuple[int, int]]] = defaultdict(list)

    def note(self, frame: tuple[Any, ...]) -> None:
        self.tags[frame[0]] += 1
        if frame[0] == "move":  # one move per frame (the executor before batches)
            self.batches[frame[1]].append((-1, 1))
        elif frame[0] == "moves":
            for match_id, first, moves in frame[1]:
                self.batches[match_id].append((first, len(moves)))

    def moves(self, match_id: str) -> int:
        return sum(count for _first, count in self.batches.get(match_id, []))


@pytest.fixture
def tally(monkeypatch: pytest.MonkeyPatch) -> Tally:
    """Count every frame a worker sends, as the coordinator reads it."""
    seen = Tally()

    class CountingReader(frames.FrameReader):
        async def receive(self) -> tuple[Any, ...] | None:
            frame = await super().receive()
            if frame is not None:
                seen.note(frame)
            return frame

    monkeypatch.setattr(executors, "FrameReader", CountingReader)
    return seen


def _config(tmp_path: Path, *, games: int, ponder_ms: int, short: bool,
            calm: bool = False) -> TournamentConfig:
    return parse_config({
        "tournament": {"name": "watched", "games": games, "variants": ["argentine-1v1"],
                       "concurrency": 4, "database": "arena.db", "replays": "replays",
                       "logs": "logs"},
        "time_control": {"decision_ms": 3000},
        "options": {"argentine-1v1": SHORT if short else {}},
        "executor": {"kind": "processes", "workers": 1},
        "bot": [
            {"name": "ponder", "command": ["python", str(TEST_BOTS / "pondering.py"),
                                           str(ponder_ms)] + (["calm"] if calm else [])},
            {"name": "random", "command": ["python", str(SAMPLE_BOTS / "random_bot.py")]},
        ],
    }, base=tmp_path)


def test_with_nobody_watching_no_move_crosses_the_pipe(tmp_path: Path, tally: Tally) -> None:
    """Four matches in a worker process, nobody watching (no gRPC watcher, no web page, no
    delay): the worker sends no move at all — per match only its two `live` frames (it
    starts, it ends) and its `done`; every match is still stored, and the coordinator's
    live map is empty at the end."""
    config = _config(tmp_path, games=4, ponder_ms=0, short=True)
    runner = TournamentRunner(config)
    executor = ProcessExecutor(1)
    runner.executor = executor
    done: list[str] = []
    runner.on_match_done = lambda pairing, _report: done.append(pairing.match_id)
    trio.run(runner.run)
    runner.store.close()
    assert len(done) == 4
    assert tally.tags["move"] == 0, tally.tags
    assert tally.tags["moves"] == 0, tally.tags
    assert dict(tally.batches) == {}
    assert tally.tags["live"] == 2 * 4
    assert tally.tags["done"] == 4
    assert executor.received["move"] == 0
    assert runner.live == {}


def test_a_watcher_who_joins_mid_match_sees_it_in_step_from_then_on(
    tmp_path: Path, tally: Tally
) -> None:
    """A raw-stub gRPC client starts watching one worker-played match (three chicos, one
    calm bot thinking 40 ms a move: at least 14 of its moves whatever the deal, over 100 in
    practice) half a second after it started. From then on every table it receives agrees
    with the engine's record of that match (tests/test_spectator.py's check: no card before
    it is public, the moves so far, the cards held), never goes back, and the last one is
    the end with the stored result. The worker sent that match's moves once each, from the
    first, in order (the moves made before the watcher came in one batch) —
    and not one move of the match nobody watched."""
    config = _config(tmp_path, games=2, ponder_ms=40, short=False, calm=True)
    runner = TournamentRunner(config)
    runner.executor = ProcessExecutor(1)
    first_seen: dict[str, float] = {}
    box: dict[str, Watcher] = {}

    async def main() -> None:
        with trio.fail_after(240):
            async with trio.open_nursery() as nursery:
                async def play() -> None:
                    await runner.run()
                    nursery.cancel_scope.cancel()

                nursery.start_soon(play)
                while True:
                    now = time.monotonic()
                    for match_id in list(runner.live):
                        first_seen.setdefault(match_id, now)
                    if not box:
                        ripe = sorted(m for m, t in first_seen.items()
                                      if now - t > 0.5 and m in runner.live)
                        if ripe:
                            box[ripe[0]] = Watcher(runner.address, ripe[0])
                    await trio.sleep(0.01)

    trio.run(main)
    runner.store.close()
    assert box, "no match lasted half a second: the watcher never joined"
    [(watched, watcher)] = box.items()
    watcher.thread.join(30)
    watcher.close()
    records = _records(config)
    assert set(records) == set(first_seen)
    assert len(records) == 2
    record = records[watched]
    updates = [update for _at, update in watcher.updates]
    assert len(updates) >= 3, updates
    progress = []
    for update in updates:
        assert update.match.match_id == watched
        check_update(update, record)
        table = update.table
        progress.append((table.game_number, table.hand_number, len(table.moves)))
    hands = [(h.game_number, h.hand_number) for h in record.hands]
    ranks = [(hands.index(p[:2]) if p[:2] in hands else len(hands), p[2]) for p in progress]
    assert ranks == sorted(ranks), f"the table went back: {progress}"
    assert [u.step for u in updates] == sorted({u.step for u in updates})
    assert updates[-1].ended
    assert record.result is not None
    assert updates[-1].result == convert.result_to_proto(record.result)
    assert ranks[-1] == (len(hands) - 1, len(record.hands[-1].moves))
    # The moves crossed once each, from the first, in order; the joiner's history at once.
    decisions = sum(len(h.moves) for h in record.hands)
    batches = tally.batches[watched]
    assert [first for first, _count in batches] == [
        sum(count for _first, count in batches[:i]) for i in range(len(batches))]
    assert tally.moves(watched) == decisions
    assert batches[0][1] > 1, "the moves before the watcher came did not come at once"
    [other] = set(records) - {watched}
    assert tally.moves(other) == 0


def test_a_web_live_page_is_a_watcher(tmp_path: Path) -> None:
    """`arena tournament --web` with worker processes and no delay: a plain HTTP reader of
    the live feed (/api/live/ID/events) of a worker match (three chicos, one calm bot
    thinking 40 ms a move: at least 14 of its moves) gets the table as it moves on, hand
    after hand, because its page counts as a watcher of that match (without it the
    coordinator's copy would stay at the deal, and the page would show the deal until the
    run ends)."""
    bots = {"ponder": python_bot(TEST_BOTS / "pondering.py", "40", "calm"),
            "random": python_bot(SAMPLE_BOTS / "random_bot.py")}
    config = write_config(tmp_path, name="webwatch", bots=bots, variants=("argentine-1v1",),
                          options={"argentine-1v1": {}}, games=1, concurrency=1,
                          extra='\n[executor]\nkind = "processes"\nworkers = 1\n')
    with tournament_with_web(tmp_path, config, "webwatch") as (proc, base, _log):
        while not (live := re.search(r'href="/live/([^"]+)"',
                                     urllib.request.urlopen(f"{base}/live", timeout=30)
                                     .read().decode())):
            assert proc.poll() is None, "no match was ever listed as live"
            time.sleep(0.1)
        states = []
        with urllib.request.urlopen(f"{base}/api/live/{live.group(1)}/events",
                                    timeout=60) as feed:
            for raw in feed:
                line = raw.decode().strip()
                if line.startswith("data: "):
                    states.append(json.loads(line[6:])["state"])
                    if len(states) == 6:
                        break
    assert "worker" in "".join(p.name for p in (tmp_path / "logs").iterdir())
    # How many states a page gets depends on the machine (the feed sends the latest table
    # at each look, so a loaded machine skips some): at least two, and the later one on.
    assert len(states) >= 2, states
    where = [(state["game"], state["hand_number"]) for state in states]
    assert where == sorted(where), where
    assert where[-1] > where[0], f"the table never moved on from the deal: {where}"


def test_a_copy_that_cannot_follow_stops_where_it_was_and_says_so() -> None:
    """The coordinator's copy of a worker match (for spectators only) given moves it cannot
    follow — a batch that starts past what it has, or a move its engine refuses — stays at
    its last good table, logs one `spectator_copy_stuck` line, and ignores what comes
    after; nothing is raised into the executor (the match is the worker's)."""
    from structlog.testing import capture_logs

    from arena.rules import Match
    from arena.tournament.executors import _Copy, _Pool

    played = Match("argentine-1v1", {}, seed=5)
    moves = []
    for _ in range(6):
        action = played.legal_actions()[0]
        played.apply(action)
        moves.append((action, None))
    gap = _Copy(Match("argentine-1v1", {}, seed=5))
    _Pool._apply(gap, 0, moves[:2])
    with capture_logs() as logs:
        _Pool._apply(gap, 4, moves[4:])  # moves 2 and 3 never came
        _Pool._apply(gap, 2, moves[2:])  # too late: it is stuck
    assert gap.applied == 2
    assert gap.stuck
    two = Match("argentine-1v1", {}, seed=5)
    for action, _signal in moves[:2]:
        two.apply(action)
    assert gap.game.record() == two.record()
    assert [e["event"] for e in logs] == ["spectator_copy_stuck"]
    refused = _Copy(Match("argentine-1v1", {}, seed=6))  # another deal: other legal moves
    with capture_logs() as logs:
        _Pool._apply(refused, 0, moves)
    assert refused.stuck
    assert refused.applied < len(moves)
    assert [e["event"] for e in logs] == ["spectator_copy_stuck"]
