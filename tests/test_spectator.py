"""The gRPC spectator feed (`arena.v1.Spectator`, arena/rpc/spectator.py), watched from the
outside: raw stubs generated from arena/v1 (no SDK), over a real port, while a real
`TournamentRunner` referees real bot processes.

- Property: every `SpectatorUpdate` a watcher receives, over many matches of every variant,
  holds only cards that were public at that moment — worked out from the engine's record of
  the match (the verified replay file), not from the feed's views: a card is public once it
  is played (face-down plays included; the argentine-gallo's discard never is). The update
  must also agree with the record on every move so far and on how many cards each seat holds,
  and never carry a sign, a hand, a discard or legal actions.
- The delay: no update shows a table sooner than `[spectators] delay_s` after the test itself
  saw that table in the runner's `live` map.
- Who may watch (`[spectators] token`), an unknown match id, and a watcher that stops reading
  (dropped with RESOURCE_EXHAUSTED, while the feed goes on).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from structlog.testing import capture_logs
from test_e2e_support import SAMPLE_BOTS, TEST_BOTS, stored_matches
from test_privacy_property import HandTruth, cards_in

from arena.errors import ConfigError
from arena.replay import load_replay, verify_replay
from arena.rpc import convert, spectator
from arena.rpc.server import Hub, serve_referee
from arena.rpc.spectator import LiveMatches, SpectatorFeed
from arena.rules import Match, MatchRecord, variant_names
from arena.rules.public import held, public_view
from arena.tournament.config import TournamentConfig, parse_config
from arena.tournament.runner import TournamentRunner
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

SHORT = {"target": 15, "chicos": 1}
TOKEN = "spectate-please"
BUFFER = 64  # a small buffer per watcher (a look may release one update per match: 30)


def _config(tmp_path: Path, name: str, *, games: int, ponder_ms: int, delay_s: float = 0,
            variants: tuple[str, ...] = variant_names(), token: str | None = None,
            ) -> TournamentConfig:
    spectators: dict[str, Any] = {"delay_s": delay_s}
    if token is not None:
        spectators["token"] = token
    return parse_config({
        "tournament": {"name": name, "games": games, "variants": list(variants),
                       "concurrency": 4, "database": "arena.db", "replays": "replays",
                       "logs": "logs"},
        "time_control": {"decision_ms": 3000},
        "options": {v: SHORT for v in variants if v.startswith("argentine")},
        "spectators": spectators,
        "executor": {"kind": "processes"},  # worker matches, seen through the coordinator
        "bot": [
            {"name": "ponder", "command": ["python", str(TEST_BOTS / "pondering.py"),
                                           str(ponder_ms)]},
            {"name": "random", "command": ["python", str(SAMPLE_BOTS / "random_bot.py")]},
        ],
    }, base=tmp_path)


class Watcher:
    """A raw-stub client in a thread of its own: `Watch(match_id)` on the referee, noting the
    time.monotonic() each update arrived and how the stream ended."""

    def __init__(self, address: str, match_id: str = "", token: str = "") -> None:
        self.channel = grpc.insecure_channel(address)
        self.stub = pb_grpc.SpectatorStub(self.channel)
        self.updates: list[tuple[float, pb.SpectatorUpdate]] = []
        self.status: grpc.StatusCode | None = None
        self.call = self.stub.Watch(pb.WatchRequest(match_id=match_id, token=token))
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for update in self.call:
                self.updates.append((time.monotonic(), update))
            self.status = grpc.StatusCode.OK
        except grpc.RpcError as exc:
            self.status = exc.code()

    def close(self) -> None:
        self.call.cancel()
        self.thread.join(10)
        self.channel.close()


def _play_watched(
    config: TournamentConfig, on_step: Callable[[TournamentRunner], None] | None = None,
) -> tuple[TournamentRunner, Watcher]:
    """Run the tournament with a raw-stub watcher of every match, subscribed as soon as the
    referee listens; `on_step` is called every 10 ms while it plays (in the trio thread)."""
    runner = TournamentRunner(config)
    box: list[Watcher] = []

    async def main() -> None:
        with trio.fail_after(240):
            async with trio.open_nursery() as nursery:

                async def subscribe(address: str) -> None:  # before the first match starts
                    box.append(Watcher(address))
                    deadline = time.monotonic() + 30
                    while runner.spectators is not None and not runner.spectators.watching:
                        assert time.monotonic() < deadline, "the watcher never subscribed"
                        await trio.sleep(0.01)

                runner.on_listening = subscribe

                async def play() -> None:
                    await runner.run()
                    nursery.cancel_scope.cancel()

                nursery.start_soon(play)
                while True:
                    if on_step is not None and box:
                        on_step(runner)
                    await trio.sleep(0.01)

    trio.run(main)
    watcher = box[0]
    watcher.close()
    return runner, watcher


def _records(config: TournamentConfig) -> dict[str, MatchRecord]:
    """The engine's record of every stored match: its replay file, replayed and verified."""
    rows = stored_matches(config.database)
    return {row["id"]: verify_replay(load_replay(Path(row["replay"]))).record()
            for row in rows if row["replay"]}


def check_update(update: pb.SpectatorUpdate, record: MatchRecord) -> int:
    """Check one update against the engine's record of its match; return how many cards it
    shows. Raises AssertionError naming a leak or a disagreement with the record."""
    table = update.table
    assert (table.seat, table.team, table.side) == (-1, -1, -1), table
    assert not table.hand, table
    assert not table.partner_cards, table
    assert not table.legal_actions, table
    assert not table.signals, table
    assert not table.HasField("discard"), table
    hand = next((h for h in record.hands
                 if (h.game_number, h.hand_number) == (table.game_number, table.hand_number)),
                None)
    if hand is None:  # the hand the match ended in (cut short): nothing of it is checkable
        assert not cards_in(update), f"cards of an unrecorded hand: {update}"
        return 0
    side_of = tuple(table.side_of) or tuple(update.match.team_of)
    truth = HandTruth(hand.deal, tuple(update.match.team_of), None, False, side_of)
    n = len(table.moves)
    assert n <= len(hand.moves), f"{n} moves shown, the hand had {len(hand.moves)}"
    for shown, move in zip(table.moves, hand.moves[:n], strict=True):
        assert shown.seat == move.seat, (shown, move)
        assert shown.action.kind == move.action.kind.value, (shown, move)
        truth.act(move.seat, move.action)
    assert list(update.held) == [len(cards) for cards in truth.held], (update.held, truth.held)
    public = truth.played  # the cards played so far: nothing else is ever public on the table
    shown_cards = cards_in(update)
    for card in shown_cards:
        key = (card.suit, card.rank, card.text)
        assert key in public, (f"{card.text} is shown to spectators before it is public, in "
                               f"{update.match.match_id} game {table.game_number} hand "
                               f"{table.hand_number} after {n} moves")
    return len(shown_cards)


def test_spectators_never_see_a_card_before_it_is_public(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Property over every variant (gallo discards, Mineiro face-down plays and hands of ten,
    flor, pico a pico): each update a raw-stub watcher of every match receives shows only
    cards already played at that point of the record, agrees with the record's moves and
    card counts, and carries no hand, discard, legal action or sign; every match is seen
    from its start to its `ended` update (with the result). The feed looks every 5 ms here
    (20 times a second by default), to check nearly every decision's table."""
    monkeypatch.setattr(spectator, "SAMPLE_S", 0.005)
    config = _config(tmp_path, "spy", games=2, ponder_ms=4)
    _runner, watcher = _play_watched(config)
    records = _records(config)
    assert len(records) == 2 * len(variant_names())
    by_match: dict[str, list[pb.SpectatorUpdate]] = {}
    for _at, update in watcher.updates:
        by_match.setdefault(update.match.match_id, []).append(update)
    assert set(by_match) == set(records)
    cards = 0
    for match_id, updates in by_match.items():
        steps = [u.step for u in updates]
        assert steps == sorted(set(steps)), f"{match_id}: steps out of order {steps}"
        for update in updates:
            cards += check_update(update, records[match_id])
        assert updates[-1].ended, updates[-1]
        assert updates[-1].HasField("result"), updates[-1]
        assert updates[0].step == 0, updates[0]  # seen from its start (even a short one)
    total = sum(map(len, by_match.values()))
    print(f"{len(by_match)} matches, {total} updates, {cards} cards checked")
    assert total >= 5 * len(by_match)
    assert cards > 200  # the property was exercised on real tables, not on empty ones


def test_the_property_check_catches_a_leak() -> None:
    """The check has teeth: at the same moment of an argentine-gallo match (after the gallo's
    discard), the honest public update passes, while a seat's own view (its hand in it) and
    the public view with a card still in a hand planted on the table are refused."""
    record = _finish(Match("argentine-gallo", SHORT, seed=11))
    table = Match("argentine-gallo", SHORT, seed=11)
    for _ in range(3):
        table.apply(table.legal_actions()[0])
    info = pb.LiveMatch(match_id="m", variant=table.variant.name, bots=["a", "b", "c"],
                        team_of=table.team_of)

    def update(view: pb.View) -> pb.SpectatorUpdate:
        return pb.SpectatorUpdate(match=info, table=view, held=held(table))

    honest = convert.view_to_proto(public_view(table))
    assert check_update(update(honest), record) >= 0
    gallo = table.view(0).gallo
    assert gallo is not None
    assert table.view(gallo).discard is not None
    with pytest.raises(AssertionError):
        check_update(update(convert.view_to_proto(table.view(gallo))), record)
    hidden = table.view(gallo).hand[0]  # in the gallo's hand: not played yet
    planted = convert.view_to_proto(public_view(table))
    planted.current_trick.add(seat=gallo, card=convert.card_to_proto(hidden))
    with pytest.raises(AssertionError, match="before it is public"):
        check_update(update(planted), record)


def _finish(match: Match) -> MatchRecord:
    """Play `match` to its end (first legal action each time) and return its record."""
    while not match.is_over:
        match.apply(match.legal_actions()[0])
    return match.record()


def test_the_delay_holds(tmp_path: Path) -> None:
    """With `[spectators] delay_s = 1`, no update shows a table (game, hand, moves so far)
    sooner than 1 s after the test saw that table in the runner's live map; and ListMatches
    says the delay."""
    delay = 1.0
    # Six games: the updates checked (those of tables the test also saw) were 19 to 25 of
    # 4 games' worth, and a floor of 20 failed at random.
    config = _config(tmp_path, "late", games=6, ponder_ms=30, delay_s=delay,
                     variants=("argentine-1v1", "mineiro-1v1"))
    first_seen: dict[tuple[str, int, int, int], float] = {}
    listed: list[pb.ListMatchesResponse] = []
    asked: list[threading.Thread] = []

    def look(runner: TournamentRunner) -> None:
        now = time.monotonic()
        for match_id, (_bots, match) in list(runner.live.items()):
            v = public_view(match)
            first_seen.setdefault((match_id, v.game_number, v.hand_number, len(v.moves)), now)
        if not asked and runner.address:  # from a thread: the referee serves on this one
            asked.append(threading.Thread(target=ask, args=(runner.address,)))
            asked[0].start()

    def ask(address: str) -> None:
        with grpc.insecure_channel(address) as channel:
            listed.append(pb_grpc.SpectatorStub(channel).ListMatches(
                pb.ListMatchesRequest(), timeout=5))

    _runner, watcher = _play_watched(config, look)
    asked[0].join(10)
    assert listed
    assert listed[0].delay_s == delay
    checked = 0
    for received, update in watcher.updates:
        t = update.table
        key = (update.match.match_id, t.game_number, t.hand_number, len(t.moves))
        if key in first_seen and not update.ended:
            # The test looks every 10 ms: it may see a table up to a look later than the feed.
            assert received >= first_seen[key] + delay - 0.1, (
                f"{key} shown {received - first_seen[key]:.2f} s after it happened")
            checked += 1
    assert checked >= 20, (checked, len(watcher.updates), len(first_seen))


async def _feed_server(feed: SpectatorFeed, test: Callable[[str], Any]) -> None:
    """A real referee gRPC server serving `feed`, on a free port; runs `test(address)` in a
    thread and returns its result."""
    feed.sample()
    async with serve_referee(Hub(), "127.0.0.1:0", spectators=feed) as server:
        return await trio.to_thread.run_sync(test, f"127.0.0.1:{server.port}")


def test_a_token_guards_the_feed_and_unknown_matches_are_named() -> None:
    """With a spectator token, a request without it or with a wrong one is UNAUTHENTICATED
    (saying which field); with it, ListMatches lists the live match; watching a match that is
    not live is NOT_FOUND naming the match_id."""
    match = Match("argentine-1v1", SHORT, seed=3)
    feed = SpectatorFeed(lambda: {"t:m": (("a", "b"), match)}, token=TOKEN)

    def test(address: str) -> list[Any]:
        with grpc.insecure_channel(address) as channel:
            stub = pb_grpc.SpectatorStub(channel)
            out: list[Any] = []
            for token in ("", "wrong-token"):
                with pytest.raises(grpc.RpcError) as refused:
                    stub.ListMatches(pb.ListMatchesRequest(token=token), timeout=5)
                out.append((refused.value.code(), refused.value.details()))
                with pytest.raises(grpc.RpcError) as refused:
                    next(stub.Watch(pb.WatchRequest(token=token), timeout=5))
                out.append((refused.value.code(), refused.value.details()))
            out.append(stub.ListMatches(pb.ListMatchesRequest(token=TOKEN), timeout=5))
            with pytest.raises(grpc.RpcError) as missing:
                next(stub.Watch(pb.WatchRequest(token=TOKEN, match_id="nope"), timeout=5))
            out.append((missing.value.code(), missing.value.details()))
            first = next(stub.Watch(pb.WatchRequest(token=TOKEN, match_id="t:m"), timeout=5))
            out.append(first)
            return out

    out = trio.run(_feed_server, feed, test)
    for code, details in out[:4]:
        assert code == grpc.StatusCode.UNAUTHENTICATED
        assert details.startswith("token:"), details
    assert [m.match_id for m in out[4].matches] == ["t:m"]
    assert list(out[4].matches[0].bots) == ["a", "b"]
    assert out[5][0] == grpc.StatusCode.NOT_FOUND
    assert "match_id" in out[5][1]
    assert out[6].match.match_id == "t:m"
    assert out[6].step == 0
    assert not out[6].table.hand


def _wait_for(condition: Callable[[], bool], timeout: float = 30) -> None:
    """Poll `condition` until it holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.005)


def test_a_watcher_that_stops_reading_is_dropped_and_the_match_never_waits() -> None:
    """A raw client opens Watch on every match and reads nothing while 30 matches are played
    to their end, one look of the feed per round of actions: every look returns at once (the
    feed never waits for a watcher), the idle watcher is dropped (RESOURCE_EXHAUSTED naming
    its buffer, a `spectator_dropped` log event, no watcher left in the feed), and a second
    watcher that reads gets every update of every match to its end, even when the server's
    loop fell behind and got several looks' updates at once."""
    matches = {f"t:m{i}": (("a", "b"), Match("argentine-1v1", SHORT, seed=i))
               for i in range(30)}
    live = dict(matches)
    feed = SpectatorFeed(lambda: live, buffer=BUFFER)
    slowest: list[float] = []

    def act() -> None:  # in the trio thread, as the referee acts: between two looks
        for match_id, (_bots, match) in list(live.items()):
            if match.is_over:
                del live[match_id]
            else:
                match.apply(match.legal_actions()[0])

    def test(address: str) -> dict[str, Any]:
        # No BDP probing: the client's window stays small, as a real stalled reader's does.
        channel = grpc.insecure_channel(address, options=[("grpc.http2.bdp_probe", 0)])
        reader = Watcher(address)
        _wait_for(lambda: feed.watching == 1)
        (mine,) = feed._watchers  # the reader's queue on the server
        idle = pb_grpc.SpectatorStub(channel).Watch(pb.WatchRequest(), timeout=90)  # unread
        _wait_for(lambda: feed.watching == 2)
        rounds = 0
        while live:
            rounds += 1
            if rounds == 3:
                # The server's gRPC loop falls behind (a loaded machine): it is held for a
                # while, and the hand-overs of the next four looks (~120 updates, over the
                # reader's buffer) reach it back to back before its writer runs. A reader
                # that reads everything is not dropped for the server's lag.
                mine.loop.call_soon_threadsafe(time.sleep, 1.5)
                time.sleep(0.1)
            trio.from_thread.run_sync(act)
            began = time.monotonic()
            trio.from_thread.run_sync(feed.sample)
            slowest.append(time.monotonic() - began)
            if 3 <= rounds < 7:
                continue
            # The reader keeps up, however loaded the machine: the next round waits until the
            # gRPC loop took this look's hand-over (a round trip through it, in order) and the
            # reader's queue is written (the idle watcher's is never read).
            asyncio.run_coroutine_threadsafe(asyncio.sleep(0), mine.loop).result(60)
            _wait_for(lambda: not mine.queue)
        # Every match's last update, not just any last one: on a loaded machine the reader
        # can trail far behind the feed, with some early match's end as its latest update.
        deadline = time.monotonic() + 120
        while (sum(u.ended for _t, u in list(reader.updates)) < len(matches)
               and time.monotonic() < deadline):
            time.sleep(0.1)
        got = []
        with pytest.raises(grpc.RpcError) as dropped:
            got.extend(idle)
        channel.close()
        return {"dropped": dropped.value, "idle_got": len(got),
                "updates": [u for _t, u in reader.updates], "watchers": len(feed._watchers)}

    with capture_logs() as logs:
        out = trio.run(_feed_server, feed, test)
    actions = sum(len(h.moves) for _b, m in matches.values() for h in m.record().hands)
    assert len(out["updates"]) == actions + 2 * len(matches)  # the start, every action, the end
    assert sum(u.ended for u in out["updates"]) == len(matches)
    assert out["dropped"].code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert f"more than {BUFFER} updates unread" in out["dropped"].details()
    assert out["idle_got"] < len(out["updates"])
    assert out["watchers"] == 1  # the reader, still open on the server; the idle one is gone
    assert any(e["event"] == "spectator_dropped" for e in logs)
    assert max(slowest) < 5  # generous: a look never blocks on a watcher


@pytest.mark.parametrize("token", [123, "short", "x" * 201])
def test_a_bad_spectator_token_is_refused_naming_the_field(tmp_path: Path, token: Any) -> None:
    """`[spectators] token` must be a string of 8..200 characters; anything else is a
    one-line error naming `spectators.token`."""
    with pytest.raises(ConfigError, match=r"^spectators\.token: must be a string of 8\.\.200"):
        _config(tmp_path, "bad", games=1, ponder_ms=1, token=token)


def test_the_sample_spectator_script_watches_a_match_to_its_end() -> None:
    """sample_bots/spectator.py (the README's raw-stub client), run as its own process against
    a real referee server, lists the live match and prints its updates to the `ended` one;
    reflection lists the Spectator service (for grpcurl)."""
    match = Match("argentine-1v1", SHORT, seed=8)
    live = LiveMatches()
    feed = SpectatorFeed(live)

    def test(address: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
        trio.from_thread.run_sync(live.__setitem__, "t:m", (("a", "b"), match))
        script = subprocess.Popen(
            [sys.executable, str(SAMPLE_BOTS / "spectator.py"), address, "t:m"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # The script's Watch must be open before the match ends (a loaded machine can take
        # seconds to start it): wait until the feed counts it.
        _wait_for(lambda: feed.watching == 1, timeout=120)
        while not match.is_over:
            trio.from_thread.run_sync(match.apply, match.legal_actions()[0])
        trio.from_thread.run_sync(live.pop, "t:m")
        out, err = script.communicate(timeout=60)
        with grpc.insecure_channel(address) as channel:
            replies = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5)
            services = [s.name for r in replies for s in r.list_services_response.service]
        return subprocess.CompletedProcess(script.args, script.returncode, out, err), services

    run, services = trio.run(_feed_server, feed, test)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "live: t:m (a vs b)"
    assert lines[1].startswith("t:m #0 game 0 hand 0 scores [0, 0] trick -")
    assert lines[-1].endswith(" ended")
    assert f"scores {list(match.scores)}" in lines[-1]
    assert "arena.v1.Spectator" in services


def test_an_unwatched_feed_without_delay_does_not_look_at_the_tables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With nobody watching and no delay, a look of the feed builds no view of a match that
    is already known (the feed costs the referee nothing while a match is played): only its
    start is noted, which ListMatches lists; with a delay, every look builds one."""
    calls = [0]
    real = spectator.witness_view

    def counted(match: Match) -> Any:
        calls[0] += 1
        return real(match)

    monkeypatch.setattr(spectator, "witness_view", counted)

    async def main(delay_s: float) -> tuple[int, list[str]]:
        match = Match("argentine-1v1", SHORT, seed=2)
        feed = SpectatorFeed(lambda: {"t:m": (("a", "b"), match)}, delay_s=delay_s)
        calls[0] = 0
        for _ in range(10):
            match.apply(match.legal_actions()[0])
            feed.sample()
        return calls[0], [m.match_id for m in feed.listed()]

    assert trio.run(main, 0.0) == (1, ["t:m"])
    assert trio.run(main, 5.0)[0] == 10


def test_a_failing_look_is_logged_and_stops_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault while the feed looks at a table (here: building the view raises) is a
    `spectator_look_failed` log event naming the match; the look returns normally, so
    neither the referee's server (which runs the feed) nor the match is stopped."""

    def broken(match: Match) -> Any:
        raise RuntimeError("no view today")

    monkeypatch.setattr(spectator, "witness_view", broken)

    async def main() -> None:
        match = Match("argentine-1v1", SHORT, seed=2)
        SpectatorFeed(lambda: {"t:m": (("a", "b"), match)}, delay_s=1).sample()

    with capture_logs() as logs:
        trio.run(main)
    failed = [e for e in logs if e["event"] == "spectator_look_failed"]
    assert len(failed) == 1
    assert failed[0]["match_id"] == "t:m"
    assert "no view today" in failed[0]["error"]


def test_the_launched_bots_socket_serves_no_spectator(tmp_path: Path) -> None:
    """The unix socket bound into launched bots' sandboxes refuses ListMatches and Watch
    (PERMISSION_DENIED, saying where spectators connect), while the listen address serves
    them: a sandboxed bot watched the twin of its duplicate-pair match live through it (no
    spectator token by default) and saw the other side's cards of its own deal."""
    match = Match("argentine-1v1", SHORT, seed=3)
    feed = SpectatorFeed(lambda: {"t:m": (("a", "b"), match)})
    socket_path = tmp_path / "referee.sock"

    async def main() -> list[Any]:
        feed.sample()
        async with serve_referee(Hub(), "127.0.0.1:0", spectators=feed,
                                 local_addresses=(f"unix:{socket_path}",)) as server:

            def test() -> list[Any]:
                out: list[Any] = []
                with grpc.insecure_channel(f"unix:{socket_path}") as channel:
                    stub = pb_grpc.SpectatorStub(channel)
                    with pytest.raises(grpc.RpcError) as refused:
                        stub.ListMatches(pb.ListMatchesRequest(), timeout=5)
                    out.append((refused.value.code(), refused.value.details()))
                    with pytest.raises(grpc.RpcError) as refused:
                        next(stub.Watch(pb.WatchRequest(match_id="t:m"), timeout=5))
                    out.append((refused.value.code(), refused.value.details()))
                with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                    stub = pb_grpc.SpectatorStub(channel)
                    out.append(stub.ListMatches(pb.ListMatchesRequest(), timeout=5))
                return out

            return await trio.to_thread.run_sync(test)

    *refusals, listed = trio.run(main)
    for code, details in refusals:
        assert code == grpc.StatusCode.PERMISSION_DENIED
        assert "listen address" in details
    assert [m.match_id for m in listed.matches] == ["t:m"]


def test_watchers_are_bounded_per_host_and_in_all(tmp_path: Path) -> None:
    """A hostile review (round 4) opened 1,000 `Watch("")` streams with no token (250
    connections x 4, within the per-connection caps) and honest bots of 5 matches in 6 lost
    by timeout. From a raw-stub client over a real port: one host holds at most
    `WATCHERS_PER_HOST` (8) watchers, each served its first update; the next is refused at
    once (RESOURCE_EXHAUSTED, saying the bound) and the refusal logged; and the feed admits at
    most `WATCHERS_IN_ALL` (64) from every host together (here hosts given to `subscribe`
    directly: a test client has one address)."""
    match = Match("argentine-1v1", SHORT, seed=3)
    feed = SpectatorFeed(lambda: {"t:m": (("a", "b"), match)})

    async def main() -> tuple[list[Any], Any]:
        feed.sample()
        async with serve_referee(Hub(), "127.0.0.1:0", spectators=feed) as server:

            def test() -> tuple[list[Any], Any]:
                # separate connections (4 streams at most on one), one host
                channels = [grpc.insecure_channel(f"127.0.0.1:{server.port}", options=[
                    ("grpc.use_local_subchannel_pool", 1), ("arena.test.channel", i)])
                    for i in range(3)]
                try:
                    streams = [pb_grpc.SpectatorStub(channels[i % 3]).Watch(
                        pb.WatchRequest(match_id=""), timeout=30) for i in range(8)]
                    firsts = [next(stream) for stream in streams]
                    with pytest.raises(grpc.RpcError) as refused:
                        next(pb_grpc.SpectatorStub(channels[0]).Watch(
                            pb.WatchRequest(match_id="t:m"), timeout=30))
                    for stream in streams:
                        stream.cancel()
                    return firsts, refused.value
                finally:
                    for channel in channels:
                        channel.close()

            return await trio.to_thread.run_sync(test)

    with capture_logs() as logs:
        firsts, refused = trio.run(main)
    assert [u.match.match_id for u in firsts] == ["t:m"] * 8
    assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "at most 8 at once from one host" in refused.details()
    assert [e["refused"] for e in logs if e["event"] == "spectator_refused"] == [1]
    loop = asyncio.new_event_loop()
    try:
        fresh = SpectatorFeed(lambda: {})
        admitted = []
        for n in range(70):
            try:
                admitted.append(fresh.subscribe("", loop, f"ipv4:10.0.0.{n}"))
            except spectator.WatchersFull as exc:
                refusal = str(exc)
    finally:
        loop.close()
    assert len(admitted) == spectator.WATCHERS_IN_ALL
    assert refusal == "watchers: at most 64 at once on this referee"


def test_the_sample_spectator_script_says_why_it_is_refused_in_one_line() -> None:
    """sample_bots/spectator.py with a wrong token: one line, the status and the referee's
    reason, exit 1 (an outside walkthrough got a 15-line gRPC traceback)."""
    match = Match("argentine-1v1", SHORT, seed=8)
    feed = SpectatorFeed(lambda: {"t:m": (("a", "b"), match)}, token=TOKEN)

    def test(address: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(SAMPLE_BOTS / "spectator.py"), address, "t:m", "wrong-token"],
            capture_output=True, text=True, timeout=60)

    run = trio.run(_feed_server, feed, test)
    assert run.returncode == 1, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("error: UNAUTHENTICATED: "), lines
    assert "token" in lines[0]
