"""The referee's match driver, in-process with trio's MockClock: no wire, no sleeping."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import structlog
import trio
import trio.testing
from structlog.testing import capture_logs

from arena.errors import BotDisconnected, ProtocolViolation
from arena.referee import (
    Answer,
    DecisionRequest,
    FaultPolicy,
    MatchReport,
    Termination,
    TimeControl,
    run_match,
)
from arena.referee.local import LocalLink, first_legal
from arena.referee.match import new_request_id
from arena.rules import Match
from arena.rules.views import HandSummary


def play(
    variant: str,
    policies: list[Callable[[DecisionRequest], Any]],
    *,
    seed: int = 1,
    policy: FaultPolicy | None = None,
    time_control: TimeControl | None = None,
    options: dict[str, Any] | None = None,
) -> tuple[MatchReport, list[LocalLink], float]:
    """Run one match on a MockClock; return the report, the links and the virtual time."""
    links = [LocalLink(f"bot{i}", p) for i, p in enumerate(policies)]
    out: dict[str, Any] = {}

    async def main() -> None:
        game = Match(variant, options or {"target": 15, "chicos": 1}
                     if variant.startswith("argentine") else options, seed)
        out["report"] = await run_match(
            "m", game, list(links), policy=policy, time_control=time_control
        )
        out["time"] = trio.current_time()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return out["report"], links, out["time"]


async def silent(request: DecisionRequest) -> Answer:
    await trio.sleep_forever()
    raise AssertionError("unreachable")


def answer_after(
    seconds: float, index: int = 0
) -> Callable[[DecisionRequest], Awaitable[Answer]]:
    async def policy(request: DecisionRequest) -> Answer:
        await trio.sleep(seconds)
        return Answer(action_index=index if index >= 0 else len(request.legal_actions) + index)

    return policy


def test_honest_match_ends_normally_with_the_engine_result() -> None:
    """Two honest seats: NORMAL termination, no strikes, the engine's winner and points."""
    report, _, _ = play("argentine-1v1", [first_legal, first_legal])
    o = report.outcome
    assert o.termination is Termination.NORMAL
    assert o.result is not None
    assert o.winner_team == o.result.winner_team
    assert o.strikes == (0, 0)
    assert max(o.points) >= 15
    assert len(report.decisions) == sum(len(h.moves) for h in report.record.hands)


def test_silent_seat_times_out_three_times_then_forfeits() -> None:
    """No answer by the deadline (and its grace) is a timeout; the referee plays the default
    action; the third strike forfeits the match with TIMEOUT naming the seat (default policy:
    3 strikes)."""
    report, _, elapsed = play(
        "argentine-1v1", [first_legal, silent],
        time_control=TimeControl(decision_ms=250, grace_ms=0),
    )
    o = report.outcome
    assert o.termination is Termination.TIMEOUT
    assert o.faulty_seat == 1
    assert o.winner_team == 0
    assert o.strikes == (0, 3)
    faults = [d for d in report.decisions if d.fault]
    assert [d.fault for d in faults] == ["timeout", "timeout"]  # the third ended the match
    assert all(d.seat == 1 and d.latency_ms == pytest.approx(250) for d in faults)
    assert elapsed == pytest.approx(0.75)


def test_forfeit_at_first_fault_policy() -> None:
    """With max_strikes = 1 the first fault ends the match."""
    report, _, _ = play(
        "mineiro-1v1", [silent, first_legal], policy=FaultPolicy(max_strikes=1)
    )
    assert report.outcome.termination is Termination.TIMEOUT
    assert report.outcome.faulty_seat == 0
    assert report.outcome.strikes == (1, 0)
    assert report.decisions == []


def test_out_of_range_index_is_an_illegal_action() -> None:
    """An index outside the legal list is ILLEGAL_ACTION; the default action is played."""
    report, _, _ = play("argentine-1v1", [first_legal, lambda r: Answer(action_index=99)])
    o = report.outcome
    assert o.termination is Termination.ILLEGAL_ACTION
    assert o.faulty_seat == 1
    faulted = [d for d in report.decisions if d.fault]
    assert len(faulted) == 2
    assert "out of range" in faulted[0].detail


def test_spelled_out_action_must_be_legal() -> None:
    """An action given by value is accepted when legal and a fault when not."""

    def by_value(request: DecisionRequest) -> Answer:
        return Answer(action=request.legal_actions[-1])

    report, _, _ = play("argentine-1v1", [by_value, first_legal])
    assert report.outcome.strikes[0] == 0

    def wrong(request: DecisionRequest) -> Answer:
        other = Match("argentine-1v1", seed=99).legal_actions()[0]  # some other card
        if other in request.legal_actions:
            return Answer(action_index=0)
        return Answer(action=other)

    report, _, _ = play("argentine-1v1", [wrong, first_legal], policy=FaultPolicy(1))
    assert report.outcome.termination is Termination.ILLEGAL_ACTION
    assert "is not a legal action" in report.outcome.detail


def test_malformed_answer_is_an_illegal_action() -> None:
    """A link reporting a protocol violation (e.g. an answer with no choice) is a fault."""

    def malformed(request: DecisionRequest) -> Answer:
        raise ProtocolViolation("the answer chose no action")

    report, _, _ = play("argentine-1v1", [malformed, first_legal], policy=FaultPolicy(1))
    assert report.outcome.termination is Termination.ILLEGAL_ACTION
    assert report.outcome.detail == "the answer chose no action"


def test_disconnect_forfeits_at_once() -> None:
    """A dropped connection ends the match with DISCONNECT naming the seat, no strikes."""
    calls = {"n": 0}

    def flaky(request: DecisionRequest) -> Answer:
        calls["n"] += 1
        if calls["n"] == 3:
            raise BotDisconnected("gone")
        return Answer(action_index=0)

    report, links, _ = play("argentine-2v2", [first_legal, flaky, first_legal, first_legal])
    o = report.outcome
    assert o.termination is Termination.DISCONNECT
    assert o.faulty_seat == 1
    assert o.winner_team == 0
    assert o.strikes == (0, 0, 0, 0)
    assert all(link.outcome == o for link in links)  # everyone is told


def test_late_answer_is_discarded_and_latency_recorded() -> None:
    """An answer after the deadline does not count (timeout, default action); answers in time
    record their latency."""
    report, links, _ = play(
        "mineiro-1v1",
        [answer_after(0.3), answer_after(1.5, index=-1)],
        time_control=TimeControl(decision_ms=1000),
        policy=FaultPolicy(max_strikes=100),
    )
    seat0 = [d for d in report.decisions if d.seat == 0]
    seat1 = [d for d in report.decisions if d.seat == 1]
    assert all(d.fault is None and d.latency_ms == pytest.approx(300) for d in seat0)
    assert all(d.fault == "timeout" for d in seat1)
    # The default action (never the last of several: that is a run, a decline, a raise or a
    # later card), not the late answer, was applied.
    for decision, request in zip(seat1, links[1].requests, strict=False):
        if len(request.legal_actions) > 1:
            assert decision.action != request.legal_actions[-1]


def test_time_bank_extends_the_deadline_and_is_consumed() -> None:
    """With a bank, a slow answer eats into it; once spent, the plain deadline applies."""
    report, links, _ = play(
        "mineiro-1v1",
        [answer_after(0.25), first_legal],
        time_control=TimeControl(decision_ms=100, bank_ms=500, increment_ms=0),
        policy=FaultPolicy(max_strikes=1),
    )
    # Each slow answer costs 150 ms of bank: the first three fit (600, 450, 300 allowed), the
    # fourth is allowed 100 + 50 = 150 ms and times out.
    allowed = [r.time_left_ms for r in links[0].requests]
    assert allowed[:4] == [600, 450, 300, 150]
    assert report.outcome.termination is Termination.TIMEOUT


def test_the_grace_is_waited_for_but_never_announced() -> None:
    """An answer a little past the deadline, within the grace (lag compensation), counts, with
    its true latency; one past the grace is a timeout whose detail names both. Requests
    announce the deadline without the grace."""
    tc = TimeControl(decision_ms=200, grace_ms=50)
    report, links, _ = play("argentine-1v1", [answer_after(0.24), first_legal], time_control=tc)
    assert report.outcome.termination is Termination.NORMAL
    seat0 = [d for d in report.decisions if d.seat == 0]
    assert seat0
    assert all(d.fault is None and d.latency_ms == pytest.approx(240) for d in seat0)
    assert {r.time_left_ms for r in links[0].requests} == {200}
    report, _, elapsed = play("argentine-1v1", [answer_after(0.26), first_legal],
                              time_control=tc)
    assert report.outcome.termination is Termination.TIMEOUT
    assert report.outcome.detail == "no answer within 200 ms (and 50 ms of grace)"
    assert elapsed == pytest.approx(0.75)  # three timeouts of 200 + 50 ms


def test_the_increment_is_earned_only_in_time() -> None:
    """The increment is added to the bank after every decision answered in time, not after a
    timeout (proto TimeControl.increment_ms)."""
    report, links, _ = play(
        "mineiro-1v1",
        [answer_after(0.3), first_legal],
        time_control=TimeControl(decision_ms=100, bank_ms=250, increment_ms=40, grace_ms=0),
        policy=FaultPolicy(max_strikes=2),
    )
    # 350 allowed: answered at 300, bank 250 - 200 + 40 = 90; then 190 allowed: a timeout at
    # 190 spends the bank and earns nothing, so the next request allows the plain 100 ms.
    allowed = [r.time_left_ms for r in links[0].requests]
    assert allowed[:3] == [350, 190, 100]
    assert report.outcome.termination is Termination.TIMEOUT


def test_seats_are_told_only_their_own_cards() -> None:
    """Every request carries the asking seat's own view: its cards, never another seat's
    unplayed cards (RULES.md §4.8)."""
    report, links, _ = play("argentine-2v2", [first_legal] * 4, seed=5)
    deals = {(h.game_number, h.hand_number): h.deal for h in report.record.hands}
    checked = 0
    for seat, link in enumerate(links):
        for request in link.requests:
            view = request.view
            assert view.seat == seat == request.seat
            deal = deals[(view.game_number, view.hand_number)]
            assert set(view.hand) <= set(deal[seat])
            others = {c for s, cards in enumerate(deal) if s != seat for c in cards}
            played = {p.card for t in view.tricks for p in t.plays} | {
                p.card for p in view.current_trick
            }
            assert not (set(view.hand) & others)
            assert view.partner_cards == ()
            assert {p.card for t in view.tricks for p in t.plays} <= played
            checked += 1
    assert checked == len(report.decisions)


def test_events_reach_every_seat_and_hand_summaries_are_sent() -> None:
    """Every seat is told every public event and every hand summary."""
    report, links, _ = play("mineiro-2v2", [first_legal] * 4, seed=2)
    hands = len(report.record.hands)
    for link in links:
        summaries = [t for t in link.told if isinstance(t, HandSummary)]
        assert len(summaries) == hands
        assert link.started is not None
        assert link.outcome == report.outcome


def test_decisions_are_logged_with_match_and_seat_bound() -> None:
    """One structlog event per decision, with match_id, seat, game and hand; one per match."""
    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
        report, _, _ = play("argentine-1v1", [first_legal, first_legal])
    decisions = [e for e in logs if e["event"] == "decision"]
    assert len(decisions) == len(report.decisions)
    assert all(e["match_id"] == "m" and {"seat", "game", "hand"} <= e.keys() for e in decisions)
    ends = [e for e in logs if e["event"] == "match_end"]
    assert len(ends) == 1
    assert ends[0]["termination"] == "normal"


def test_request_ids_are_fresh_and_unpredictable_in_form() -> None:
    """Request ids are 24 hex digits, never repeated, and share no visible structure (a keyed
    hash of a counter: consecutive ids differ in about half their bits)."""
    ids = [new_request_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 24 and int(i, 16) >= 0 for i in ids)
    flips = [bin(int(a, 16) ^ int(b, 16)).count("1") for a, b in pairwise(ids)]
    assert 40 < sum(flips) / len(flips) < 56


def test_same_seed_same_match() -> None:
    """Determinism: same seed and deterministic bots give the same decisions and result."""
    a, _, _ = play("argentine-2v2", [first_legal] * 4, seed=11)
    b, _, _ = play("argentine-2v2", [first_legal] * 4, seed=11)
    assert [(d.seat, d.action) for d in a.decisions] == [(d.seat, d.action) for d in b.decisions]
    assert a.outcome == b.outcome


class Reconnecting(LocalLink):
    """Drops on its `drop_at`-th request; comes back after `back_after` seconds (or never)."""

    def __init__(self, drop_at: int, back_after: float | None) -> None:
        super().__init__("flaky", first_legal)
        self.drop_at = drop_at
        self.back_after = back_after
        self.reconnects = 0

    async def ask(self, request: DecisionRequest) -> Answer:
        if len(self.requests) + 1 == self.drop_at and self.reconnects == 0:
            self.requests.append(request)
            raise BotDisconnected("dropped")
        return await super().ask(request)

    async def reconnect(self) -> None:
        if self.back_after is None:
            await trio.sleep_forever()
        await trio.sleep(self.back_after)
        self.reconnects += 1


def run_links(links: list[Any], policy: FaultPolicy) -> tuple[MatchReport, float]:
    out: dict[str, Any] = {}

    async def main() -> None:
        game = Match("argentine-1v1", {"target": 15, "chicos": 1}, 3)
        out["report"] = await run_match("m", game, links, policy=policy)
        out["time"] = trio.current_time()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return out["report"], out["time"]


def test_reconnect_within_the_window_continues_the_match() -> None:
    """A seat that drops and comes back within reconnect_ms, and within its decision's time,
    is asked the same decision again, with only what is left of that time (its clock ran
    while it was away), and the match ends normally."""
    flaky = Reconnecting(drop_at=3, back_after=0.4)
    report, elapsed = run_links(
        [LocalLink("a", first_legal), flaky], FaultPolicy(reconnect_ms=5000)
    )
    assert report.outcome.termination is Termination.NORMAL
    assert flaky.reconnects == 1
    first, again = flaky.requests[2], flaky.requests[3]
    assert first.view == again.view  # the same decision, re-asked
    assert first.request_id != again.request_id
    assert again.time_left_ms <= first.time_left_ms - 400
    assert again.deadline_unix_ms <= first.deadline_unix_ms + 50  # the clock did not restart
    assert elapsed >= 0.4
    assert not any(d.fault for d in report.decisions)


def test_a_seat_back_after_its_time_ran_out_is_struck_for_that_decision() -> None:
    """A seat that drops during a decision and comes back within reconnect_ms but after the
    decision's time (1 s) is not asked it again with a fresh deadline (a remote bot dropped
    its stream 150 ms before the deadline, thought 7 s more and answered in time, with no
    strike: hostile review round 3): the decision is a timeout (a strike, the default action
    played), charged all the time since it was first asked, and the match goes on."""
    flaky = Reconnecting(drop_at=3, back_after=2.0)
    report, _ = run_links(
        [LocalLink("a", first_legal), flaky], FaultPolicy(reconnect_ms=5000, max_strikes=3)
    )
    assert report.outcome.termination is Termination.NORMAL
    assert flaky.reconnects == 1
    mine = [d for d in report.decisions if d.seat == 1]
    struck = [d for d in mine if d.fault]
    assert len(struck) == 1
    assert struck[0].fault == "timeout"
    assert struck[0].latency_ms >= 2000
    assert "connection was lost" in struck[0].detail
    assert report.outcome.strikes[1] == 1
    assert flaky.requests[2].view != flaky.requests[3].view  # not asked again


def test_no_reconnect_within_the_window_is_a_disconnect() -> None:
    """A seat that does not come back within reconnect_ms forfeits with DISCONNECT."""
    report, elapsed = run_links(
        [LocalLink("a", first_legal), Reconnecting(drop_at=2, back_after=None)],
        FaultPolicy(reconnect_ms=3000),
    )
    assert report.outcome.termination is Termination.DISCONNECT
    assert report.outcome.faulty_seat == 1
    assert elapsed == pytest.approx(3.0)


def test_signals_reach_partners_only() -> None:
    """A signal sent with an answer reaches the sender's partner as a SignalEvent and never
    an opponent (RULES.md §4.9, signals "team")."""
    from arena.rules.signals import Signal, SignalKind
    from arena.rules.views import SignalEvent

    def signalling(request: DecisionRequest) -> Answer:
        return Answer(action_index=0, signal=Signal(SignalKind.TRES, "tengo"))

    report, links, _ = play("argentine-2v2", [signalling, first_legal, first_legal, first_legal])
    assert report.outcome.termination is Termination.NORMAL
    sent = [d for d in report.decisions if d.seat == 0 and d.signal is not None]
    assert sent
    for seat, link in enumerate(links):
        got = [t.body for t in link.told if not isinstance(t, HandSummary)
               and isinstance(t.body, SignalEvent)]
        if seat in (0, 2):
            assert len(got) == len(sent)
            assert all(e.seat == 0 and e.signal.kind is SignalKind.TRES for e in got)
        else:
            assert got == []
    # The partner's views carry the signals too; the opponents' never do.
    assert any(r.view.signals for r in links[2].requests)
    assert not any(r.view.signals for r in links[1].requests + links[3].requests)


def test_a_refused_signal_is_a_strike_and_the_action_goes_ahead() -> None:
    """With signals "off" a signal is refused: a strike (illegal_action) for the seat, and the
    action it came with is still applied, unsigned."""
    from arena.rules.signals import Signal, SignalKind

    def signalling(request: DecisionRequest) -> Answer:
        return Answer(action_index=0, signal=Signal(SignalKind.NADA))

    report, _, _ = play(
        "argentine-2v2", [signalling, first_legal, first_legal, first_legal],
        options={"target": 15, "chicos": 1, "signals": "off"},
    )
    o = report.outcome
    assert o.termination is Termination.ILLEGAL_ACTION
    assert o.faulty_seat == 0
    faulted = [d for d in report.decisions if d.fault]
    assert len(faulted) == 2
    assert all("signal refused" in d.detail and d.signal is None for d in faulted)


def test_an_answer_read_but_never_handed_on_is_not_waited_for_forever() -> None:
    """A wire that reports an answer as read (`received_at`) but never hands it on (a
    conversion that raised, as a hostile bot's card text "⁷e" once made it: review round 5,
    the match hung and the tournament with it) is waited for a bounded time: `_ask_fairly`
    gives up by t0 + 2 budgets + UNSENT_LIMIT_S with no answer (a timeout)."""
    import time

    from arena.referee.links import Interrupted
    from arena.referee.match import UNSENT_LIMIT_S, _ask_fairly

    class Stuck:
        def __init__(self) -> None:
            now = time.monotonic()
            self.handed_at = self.sent_at = now
            self.received_at: float | None = now  # read off the wire ...
            self.abandoned = False
            self._wake = trio.Event()

        def unread_since(self) -> float | None:
            return None

        async def wait(self) -> Any:  # ... and never handed on
            await self._wake.wait()
            self._wake = trio.Event()
            raise Interrupted

        def interrupt(self) -> None:
            self._wake.set()

        def abandon(self) -> None:
            self.abandoned = True

    budget = 1.0
    outcome: list[Any] = []

    async def main() -> None:
        stuck = Stuck()
        t0 = trio.current_time()
        with trio.move_on_after(3600):  # the bug: it never returned
            outcome.append(await _ask_fairly(stuck, t0, budget))
        outcome.append(trio.current_time() - t0)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert len(outcome) == 2, "no result within an hour of virtual time"
    assert outcome[0] == (None, None)
    assert outcome[1] <= 2 * budget + UNSENT_LIMIT_S + 1e-6


class _Timed(LocalLink):
    """A seat that notes the (virtual) time of everything it is told or asked."""

    def __init__(self, name: str, policy: Callable[[DecisionRequest], Any]) -> None:
        super().__init__(name, policy)
        self.seen: list[float] = []

    def tell(self, item: Any) -> None:
        self.seen.append(trio.current_time())
        super().tell(item)

    async def ask(self, request: DecisionRequest) -> Answer:
        self.seen.append(trio.current_time())
        return await super().ask(request)


@pytest.mark.parametrize("fixed_pace", [False, True])
def test_fixed_pace_hides_how_long_a_seat_thought(fixed_pace: bool) -> None:
    """A covert channel (hostile review, round 6): seat 0 of a 2v2 waits 10-300 ms before
    each answer, by a code its partner, seat 2, reads from when it is told of the move or
    asked next (5 bits a decision, ~100 % right, with signals off). With `fixed_pace`, all
    any other seat sees of a decision happens `decision_ms` after it was asked, whatever
    the seat's own time: every gap seat 2 observes is a whole number of decisions; without,
    the gaps carry seat 0's delays."""
    delays = iter([0.01, 0.3, 0.07, 0.22, 0.15, 0.04, 0.28, 0.11] * 100)

    async def coder(request: DecisionRequest) -> Answer:
        await trio.sleep(next(delays))
        return Answer(action_index=0)

    links = [_Timed("coder", coder), _Timed("other", first_legal),
             _Timed("partner", first_legal), _Timed("other2", first_legal)]

    async def main() -> MatchReport:
        game = Match("argentine-2v2", {"target": 15, "chicos": 1, "signals": "off"}, 3)
        return await run_match("m", game, list(links), time_control=TimeControl(
            decision_ms=500, fixed_pace=fixed_pace))

    report = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert report.outcome.termination is Termination.NORMAL
    assert len(report.decisions) > 20
    moments = links[2].seen
    assert len(moments) > 20
    # in units of the decision time, from the first moment
    units = [(t - moments[0]) / 0.5 for t in moments]
    off_grid = [u for u in units if abs(u - round(u)) > 1e-6]
    if fixed_pace:
        assert off_grid == []
    else:
        assert len(off_grid) > len(units) // 4, units


def test_fixed_pace_is_read_from_the_config_and_resume_keeps_it(tmp_path: Path) -> None:
    """`[time_control] fixed_pace = true` reaches the time control the referee plays with; a
    value that is not a boolean is one error naming the key; and it is one of the rules a
    resumed tournament must keep (`decisive`: a table never mixes paced and unpaced)."""
    from test_e2e_support import write_config

    from arena.errors import ConfigError
    from arena.tournament.config import decisive, load_config

    config = write_config(tmp_path, name="paced", variants=["argentine-1v1"],
                          bots={"a": ["python", "a.py"], "b": ["python", "b.py"]})
    text = config.read_text(encoding="utf-8")
    assert load_config(config).time_control.fixed_pace is False
    config.write_text(text.replace("[time_control]\n", "[time_control]\nfixed_pace = true\n"),
                      encoding="utf-8")
    loaded = load_config(config)
    assert loaded.time_control.fixed_pace is True
    assert decisive(loaded, "none")["time_control.fixed_pace"] is True
    config.write_text(text.replace("[time_control]\n", '[time_control]\nfixed_pace = "on"\n'),
                      encoding="utf-8")
    with pytest.raises(ConfigError, match=r"^time_control\.fixed_pace: must be true or false"):
        load_config(config)
