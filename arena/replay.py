"""Replay files: one JSON-lines file per match, documented in docs/replay.md (format 2; the
schema of every line kind is docs/replay.schema.json).

Written by the tournament from a `MatchReport`. The writer walks the referee's decisions
through a fresh engine (`Match`, with the recorded deals) and writes, after each action, what
that action settled: envido and flor showdowns, awards, the end of a duel, a hand, a chico.
That makes a file a third party can re-score from the file alone, a match cut short by a
fault included (its last hand's awards are there too).

`load_replay` reads formats 1 and 2. `verify_replay` runs every recorded action through the
rules engine again and fails unless it reproduces the file: for format 2 every line but the
header and the result is regenerated and compared, for format 1 the awards and the result.
`describe` renders a match for a person.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.errors import IllegalActionError, ReplayMismatchError
from arena.referee import MatchReport, TimeControl
from arena.rules import (
    Action,
    ActionKind,
    Card,
    EnvidoOutcome,
    FlorOutcome,
    Match,
    Options,
    find_variant,
    parse_card,
)
from arena.rules.cards import Deck
from arena.rules.signals import IllegalSignalError, Signal, SignalKind
from arena.rules.views import (
    DuelEndEvent,
    EnvidoEvent,
    FlorEvent,
    GameEndEvent,
    HandEndEvent,
    MoveEvent,
    SignalEvent,
)

FORMAT = 2
FORMATS = (1, 2)  # what load_replay reads
# Awards that pay the hand's truco part: the side they go to won the hand.
_HAND_REASONS = frozenset({"hand", "truco_rejected", "fold", "hand_of_ten_declined", "iron_hand"})
_TIMES = ("latency_ms", "started_at", "finished_at")


def _action_json(action: Action) -> dict[str, Any]:
    return {
        "kind": action.kind.name.lower(),
        "card": str(action.card) if action.card is not None else None,
        "slot": action.slot,
        "text": str(action),
    }


def _legal_json(action: Action) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": action.kind.name.lower()}
    if action.card is not None:
        out["card"] = str(action.card)
    if action.slot is not None:
        out["slot"] = action.slot
    return out


def _signal_json(signal: Signal) -> dict[str, Any]:
    return {"kind": signal.kind.name.lower(), "text": signal.text, "value": signal.value}


def _signal_from_json(data: dict[str, Any]) -> Signal:
    return Signal(SignalKind[data["kind"].upper()], data.get("text", ""), data.get("value"))


def _action_from_json(data: dict[str, Any], deck: Deck) -> Action:
    card = parse_card(data["card"], deck) if data.get("card") else None
    return Action(ActionKind[data["kind"].upper()], card=card, slot=data.get("slot"))


def _kinds(chain: Iterable[ActionKind]) -> list[str]:
    return [kind.name.lower() for kind in chain]


@dataclass(frozen=True, slots=True)
class _Step:
    """One decision to replay: who, what was applied, and what the file says about it."""

    seat: int
    action: Action
    signal: Signal | None
    latency_ms: float
    fault: str | None
    detail: str


def _header(
    report: MatchReport, time_control: TimeControl | None, legal: bool
) -> dict[str, Any]:
    record = report.record
    game = find_variant(report.variant)
    accounts = game.accounts(record.options)
    return {
        "type": "match",
        "format": FORMAT,
        "match_id": report.match_id,
        "variant": report.variant,
        "options": record.options.as_dict(),
        "seed": str(report.seed),
        "first_dealer": record.first_dealer,
        "initial_scores": list(record.initial_scores),
        "accounts": max(accounts) + 1,
        "seats": [
            {"seat": s, "team": accounts[s], "bot": name}
            for s, name in enumerate(report.seat_names)
        ],
        "time_control": (
            {
                "decision_ms": time_control.decision_ms,
                "bank_ms": time_control.bank_ms,
                "increment_ms": time_control.increment_ms,
                "grace_ms": time_control.grace_ms,
            }
            if time_control
            else None
        ),
        "legal": legal,
        "started_at": report.started_at,
    }


class _Writer:
    """Walks steps through `match` and yields every line after the header, in order."""

    def __init__(self, match: Match, *, legal: bool) -> None:
        self.match = match
        self.legal = legal
        self.new_hand = True  # the next step opens a hand: write its `hand` line first
        self.awards_seen = 0  # the current hand's awards already written
        self.side_of: tuple[int, ...] = ()
        self.duel: int | None = None  # the pico a pico duel being played

    def where(self) -> dict[str, int]:
        return {"game": self.match.game_number, "hand": self.match.hand_number}

    def hand_line(self) -> Iterator[dict[str, Any]]:
        match = self.match
        view = match.view(0)
        self.new_hand = False
        self.awards_seen = 0
        self.side_of = view.side_of
        if view.hand_of_ten is not None:
            kind = "hand_of_ten"
        elif view.iron_hand:
            kind = "iron_hand"
        elif view.duel is not None:
            kind = "pico_a_pico"
        else:
            kind = "normal"
        yield {
            "type": "hand",
            **self.where(),
            "dealer": view.dealer,
            "mano": view.mano,
            "kind": kind,
            "at_ten": view.hand_of_ten,
            "blind": view.iron_hand and match.options.blind_iron_hand,
            "gallo": view.gallo,
            "side_of": list(view.side_of),
            "scores": list(view.scores),
            "deal": [[str(c) for c in cards] for cards in match.deal],
        }
        yield from self.duel_line()

    def duel_line(self) -> Iterator[dict[str, Any]]:
        duel = self.match.view(0).duel
        self.duel = None if duel is None else duel.index
        if duel is not None:
            yield {
                "type": "duel", **self.where(), "index": duel.index, "of": duel.of,
                "seats": list(duel.seats),
            }

    def step(self, step: _Step, line: int | None = None) -> Iterator[dict[str, Any]]:
        match = self.match
        at = f"line {line}: " if line is not None else ""
        if match.is_over:
            raise ReplayMismatchError(f"{at}an action after the end of the match")
        if self.new_hand:
            yield from self.hand_line()
        where = self.where()
        if match.to_act != step.seat:
            raise ReplayMismatchError(
                f"{at}game {where['game']} hand {where['hand']}: seat {step.seat} acted but "
                f"seat {match.to_act} was to act"
            )
        legal = [_legal_json(a) for a in match.legal_actions()] if self.legal else None
        try:
            events = match.apply(step.action, step.signal)
        except (IllegalActionError, IllegalSignalError) as exc:
            raise ReplayMismatchError(
                f"{at}game {where['game']} hand {where['hand']}: {exc}"
            ) from exc
        bodies = [event.body for event in events]
        action_line: dict[str, Any] = {
            "type": "action",
            **where,
            "seat": step.seat,
            "action": _action_json(step.action),
            "latency_ms": step.latency_ms,
            "fault": step.fault,
        }
        if step.detail:
            action_line["detail"] = step.detail
        for event in events:
            body = event.body
            if isinstance(body, MoveEvent) and body.card is not None:
                action_line["face_down_card"] = str(body.card)
            elif isinstance(body, SignalEvent) and step.signal is not None:
                action_line["signal"] = {
                    **_signal_json(step.signal), "seen_by": sorted(event.audience),
                }
        if legal is not None:
            action_line["legal"] = legal
        yield action_line
        for body in bodies:
            if isinstance(body, EnvidoEvent):
                yield self.envido_line(where, body.outcome)
            elif isinstance(body, FlorEvent):
                yield self.flor_line(where, body.outcome)
        hand_end = next((b for b in bodies if isinstance(b, HandEndEvent)), None)
        if any(isinstance(b, (EnvidoEvent, FlorEvent, DuelEndEvent)) for b in bodies) or hand_end:
            awards = hand_end.summary.awards if hand_end else match.view(0).awards
            for award in awards[self.awards_seen:]:
                yield {
                    "type": "award", **where, "team": award.team, "points": award.points,
                    "reason": award.reason.name.lower(),
                }
            self.awards_seen = len(awards)
        for body in bodies:
            if isinstance(body, DuelEndEvent):
                s = body.summary
                yield {
                    "type": "duel_end", **where, "index": s.duel.index,
                    "seats": list(s.duel.seats), "ended_by": s.ended_by,
                    "winner_team": self.hand_winner(s.awards, s.winner_team),
                }
                if hand_end is None:
                    yield from self.duel_line()
            elif isinstance(body, HandEndEvent):
                yield self.hand_end_line(where, body)
            elif isinstance(body, GameEndEvent):
                r = body.result
                yield {
                    "type": "game_end", "game": r.game_number, "winner_team": r.winner_team,
                    "scores": list(r.scores), "games_won": list(match.games_won),
                }

    def hand_winner(self, awards: Iterable[Any], tricks_winner: int | None) -> int | None:
        """The side that took the hand's (or duel's) truco part, however it was decided."""
        for award in awards:
            if award.reason.name.lower() in _HAND_REASONS:
                team_of = self.match.team_of
                return next(
                    self.side_of[s] for s in range(len(team_of)) if team_of[s] == award.team
                )
        return tricks_winner

    def envido_line(self, where: dict[str, int], o: EnvidoOutcome) -> dict[str, Any]:
        return {
            "type": "envido", **where, "duel": self.duel, "accepted": o.accepted,
            "chain": _kinds(o.chain), "announced": [list(a) for a in o.announcements],
            "winner": o.winner, "side": o.team, "points": o.points,
        }

    def flor_line(self, where: dict[str, int], o: FlorOutcome) -> dict[str, Any]:
        return {
            "type": "flor", **where, "duel": self.duel, "chain": _kinds(o.chain),
            "payout": o.payout, "singer": o.singer, "winner": o.winner, "side": o.team,
            "points": o.points,
        }

    def hand_end_line(self, where: dict[str, int], event: HandEndEvent) -> dict[str, Any]:
        s = event.summary
        self.new_hand = True
        pico = bool(s.duels)
        return {
            "type": "hand_end",
            **where,
            "ended_by": s.ended_by,
            "winner_team": None if pico else self.hand_winner(s.awards, s.winner_team),
            "tricks_winner": s.winner_team,
            "scores": list(s.scores),
            "tricks": [
                {"plays": [[p.seat, str(p.card)] for p in t.plays], "winner": t.winner}
                for t in s.tricks
            ],
            "revealed": [[seat, [str(c) for c in cards]] for seat, cards in s.revealed],
            "flor_revealed": [
                [seat, [str(c) for c in cards]] for seat, cards in s.flor_revealed
            ],
        }


def report_lines(
    report: MatchReport, *, time_control: TimeControl | None = None, legal: bool = False
) -> Iterator[dict[str, Any]]:
    """The replay of a finished match, line by line. With `legal`, every action line also
    lists the legal actions the seat chose from."""
    record = report.record
    yield _header(report, time_control, legal)
    deals = {(h.game_number, h.hand_number): h.deal for h in record.hands}
    if report.unfinished_deal is not None and report.unfinished_at is not None:
        deals[report.unfinished_at] = report.unfinished_deal
    match = Match(
        report.variant, record.options, report.seed, dealer=record.first_dealer,
        scores=record.initial_scores, deals=deals,
    )
    writer = _Writer(match, legal=legal)
    for d in report.decisions:
        yield from writer.step(_Step(d.seat, d.action, d.signal, d.latency_ms, d.fault, d.detail))
    if report.unfinished_deal is not None and writer.new_hand and not match.is_over:
        yield from writer.hand_line()  # cut short before the hand's first action
    o = report.outcome
    yield {
        "type": "result",
        "termination": o.termination.name.lower(),
        "winner_team": o.winner_team,
        "faulty_seat": o.faulty_seat,
        "detail": o.detail,
        "points": list(o.points),
        "games_won": list(o.games_won),
        "strikes": list(o.strikes),
        "finished_at": report.finished_at,
    }


def write_replay(
    path: Path, report: MatchReport, *, time_control: TimeControl | None, legal: bool = False
) -> None:
    """Write the replay file atomically: a temporary file, flushed to disk, renamed into
    place. A failed write (a full disk) removes the temporary file and leaves any earlier
    file at `path` as it was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8") as out:
            for line in report_lines(report, time_control=time_control, legal=legal):
                out.write(json.dumps(line, separators=(",", ":")) + "\n")
            out.flush()
            os.fsync(out.fileno())
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@dataclass
class Replay:
    """A loaded replay file: the header, the lines, and the result line."""

    header: dict[str, Any]
    lines: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] | None = None
    at: int = field(default=1, compare=False)  # the file line being read (1: the header)

    @property
    def format(self) -> int:
        return int(self.header.get("format", 1))

    @property
    def seed(self) -> int:
        """The match seed (a number in format 1, a string of digits in format 2)."""
        return int(self.header["seed"])


def load_replay(path: Path | str | os.PathLike[str]) -> Replay:
    """Read a replay file (format 1 or 2), given as a path or a string; raise
    `ReplayMismatchError` if it is not one."""
    path = Path(path)
    lines: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as src:
        number = 0
        try:
            for number, text in enumerate(src, 1):
                if not text.strip():
                    continue
                try:
                    line = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise ReplayMismatchError(f"{path}:{number}: not JSON: {exc}") from None
                except RecursionError:
                    raise ReplayMismatchError(
                        f"{path}:{number}: not a replay line: JSON nested too deeply") from None
                if not isinstance(line, dict) or not isinstance(line.get("type"), str):
                    raise ReplayMismatchError(
                        f"{path}:{number}: every line is a JSON object with a \"type\" "
                        f"(docs/replay.md), this one is {type(line).__name__}"
                        + (" without a type" if isinstance(line, dict) else ""))
                lines.append(line)
        except UnicodeDecodeError as exc:
            raise ReplayMismatchError(
                f"{path}:{number + 1}: not UTF-8 text ({exc.reason} at byte {exc.start}): "
                "a replay is JSON lines") from None
    if not lines or lines[0].get("type") != "match":
        raise ReplayMismatchError(f"{path}: the first line must be the 'match' header")
    version = lines[0].get("format")
    if version not in FORMATS:
        raise ReplayMismatchError(
            f"{path}: format: replay format {version!r} is not one this arena reads "
            f"({', '.join(map(str, FORMATS))})"
        )
    result = next((line for line in lines if line.get("type") == "result"), None)
    return Replay(header=lines[0], lines=lines[1:], result=result)


def _start(replay: Replay) -> Match:
    """The match of the replay's header, dealing from its seed: the file's `deal` lines are
    checked against the deals the engine makes, never played as given (a hostile review,
    round 4, changed a card of a deal and the check said OK)."""
    h = replay.header
    variant = find_variant(h["variant"])
    try:
        return Match(
            variant, Options(**h["options"]), replay.seed, dealer=h["first_dealer"],
            scores=tuple(h["initial_scores"]),
        )
    except ValueError as exc:
        raise ReplayMismatchError(f"the header cannot start a match: {exc}") from exc


_MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError)
"""What reading a line that is not shaped as docs/replay.md says raises (a key missing, a
string for a number, an unknown action kind...)."""


def malformed(replay: Replay, exc: BaseException) -> ReplayMismatchError:
    """`exc`, raised while reading the line at `replay.at`, as a one-line error."""
    what = f"no {exc}" if isinstance(exc, KeyError) else str(exc)
    return ReplayMismatchError(
        f"line {replay.at}: not a line docs/replay.md describes ({type(exc).__name__}: "
        f"{what})")


def verify_replay(replay: Replay) -> Match:
    """Replay every action through the engine; raise `ReplayMismatchError` at the first
    difference (a deal, a seat out of turn, an illegal action, an award, a score, the result)
    or at the first line that is not shaped as docs/replay.md says."""
    replay.at = 1
    try:
        return _verify_v1(replay) if replay.format == 1 else _verify_v2(replay)
    except ReplayMismatchError:
        raise
    except _MALFORMED as exc:
        raise malformed(replay, exc) from None


def _verify_v2(replay: Replay) -> Match:
    match = _start(replay)
    deck = match.variant.deck
    writer = _Writer(match, legal=bool(replay.header.get("legal")))
    body = [line for line in replay.lines if line["type"] != "result"]
    expected: list[dict[str, Any]] = []
    for number, line in enumerate(body, 2):
        replay.at = number
        if line["type"] != "action":
            continue
        signal = _signal_from_json(line["signal"]) if line.get("signal") else None
        step = _Step(
            line["seat"], _action_from_json(line["action"], deck), signal,
            line["latency_ms"], line["fault"], line.get("detail", ""),
        )
        try:
            expected.extend(writer.step(step, number))
        except ReplayMismatchError:
            _first_difference(expected, body)  # an earlier line that differs (a deal) says more
            raise
    if body and body[-1]["type"] == "hand" and writer.new_hand and not match.is_over:
        expected.extend(writer.hand_line())
    _first_difference(expected, body)
    if len(expected) != len(body):
        raise ReplayMismatchError(
            f"the engine writes {len(expected)} lines between the header and the result, "
            f"the file has {len(body)}"
        )
    replay.at = len(replay.lines) + 1
    _check_result(replay, match)
    _check_faults(replay, match)
    return match


def _first_difference(expected: list[dict[str, Any]], body: list[dict[str, Any]]) -> None:
    """Raise `ReplayMismatchError` at the first line the engine writes otherwise than the
    file (line 1 is the header)."""
    for number, (mine, theirs) in enumerate(zip(expected, body, strict=False), 2):
        if mine != theirs:
            raise ReplayMismatchError(
                f"line {number}: the engine writes {json.dumps(mine)}, the file has "
                f"{json.dumps(theirs)}"
            )


def _check_result(replay: Replay, match: Match) -> None:
    result = replay.result
    if result is None:
        raise ReplayMismatchError("the replay has no 'result' line")
    if list(match.points) != result["points"]:
        raise ReplayMismatchError(
            f"replayed points {list(match.points)} != recorded {result['points']}"
        )
    if list(match.games_won) != result["games_won"]:
        raise ReplayMismatchError(
            f"replayed games won {list(match.games_won)} != recorded {result['games_won']}"
        )
    if result["termination"] == "normal":
        if match.result is None:
            raise ReplayMismatchError("the recorded actions do not finish the match")
        if match.result.winner_team != result["winner_team"]:
            raise ReplayMismatchError("the replayed winner differs from the recorded one")


def _check_faults(replay: Replay, match: Match) -> None:
    """A result's strikes, faulty seat and winner agree with the action lines: each fault
    written there is a strike of its seat; a match ended by a strike (timeout, illegal
    action) has one more for the faulty seat, the one that ended it (not written as an
    action); with two sides, the side of the faulty seat loses; a forfeit of both bots
    (neither took its place) names no faulty seat, no winner and no hand. (A hostile review,
    round 4, flipped a timeout loss onto the other seat and the check said OK.)"""
    result = replay.result
    assert result is not None
    counted = [0] * match.num_seats
    for line in replay.lines:
        if line["type"] == "action" and line["fault"]:
            counted[line["seat"]] += 1
    termination, faulty = result["termination"], result["faulty_seat"]
    if termination == "normal":
        if faulty is not None:
            raise ReplayMismatchError("a match ended normally names a faulty seat")
    elif termination == "forfeit" and faulty is None:
        # Both bots failed to take their places: nobody wins, nothing was played.
        if result["winner_team"] is not None:
            raise ReplayMismatchError("a forfeit with no faulty seat (neither bot managed to "
                                      "start) has no winner")
        if any(line["type"] in ("hand", "action") for line in replay.lines):
            raise ReplayMismatchError("a forfeit with no faulty seat (neither bot managed to "
                                      "start) has no hand")
    else:
        if not isinstance(faulty, int) or not 0 <= faulty < match.num_seats:
            raise ReplayMismatchError(f"a {termination} ending must name a faulty seat, "
                                      f"not {faulty!r}")
        if termination in ("timeout", "illegal_action"):
            counted[faulty] += 1  # the strike that ended it
        loser = match.team_of[faulty]
        winner = 1 - loser if match.num_teams == 2 else None
        if result["winner_team"] != winner:
            raise ReplayMismatchError(
                f"faulty seat {faulty} (team {loser}) ended it, so the winner is team "
                f"{winner}, not {result['winner_team']}")
    if list(result["strikes"]) != counted:
        raise ReplayMismatchError(
            f"the action lines give strikes {counted}, the result says {result['strikes']}")


def _verify_v1(replay: Replay) -> Match:
    """Format 1: run the actions through the engine, compare the awards and a normal result
    (format 1 has no award lines for a hand cut short, so its points are not compared)."""
    match = _start(replay)
    deck = match.variant.deck
    awards: dict[tuple[int, int], list[tuple[int, int, str]]] = {}
    for number, line in enumerate(replay.lines, 2):
        replay.at = number
        kind = line["type"]
        where = f"game {line.get('game')} hand {line.get('hand')}"
        if kind == "action":
            if match.to_act != line["seat"]:
                raise ReplayMismatchError(
                    f"{where}: seat {line['seat']} acted but seat {match.to_act} was to act"
                )
            signal = _signal_from_json(line["signal"]) if line.get("signal") else None
            try:
                match.apply(_action_from_json(line["action"], deck), signal)
            except (IllegalActionError, IllegalSignalError) as exc:
                raise ReplayMismatchError(f"{where}: {exc}") from exc
        elif kind == "award":
            key = (line["game"], line["hand"])
            awards.setdefault(key, []).append((line["team"], line["points"], line["reason"]))
    replayed = {
        (r.game_number, r.hand_number): [
            (a.team, a.points, a.reason.name.lower()) for a in r.awards
        ]
        for r in match.record().hands
    }
    for key, expected in awards.items():
        if replayed.get(key) != expected:
            raise ReplayMismatchError(
                f"game {key[0]} hand {key[1]}: replayed awards {replayed.get(key)} "
                f"!= recorded {expected}"
            )
    if replay.result is not None and replay.result["termination"] == "normal":
        _check_result(replay, match)
    return match


def _cards(cards: Iterable[Card | str]) -> str:
    return " ".join(map(str, cards))


def describe(replay: Replay) -> Iterator[str]:
    """The match as lines a person can follow (formats 1 and 2); `ReplayMismatchError` at a
    line that is not shaped as docs/replay.md says."""
    replay.at = 1
    try:
        yield from _describe(replay)
    except _MALFORMED as exc:
        raise malformed(replay, exc) from None


def _describe(replay: Replay) -> Iterator[str]:
    h = replay.header
    names = {s["seat"]: s["bot"] for s in h["seats"]}
    yield (
        f"{h['match_id']}: {h['variant']} {h['options']} seed {h['seed']}"
        f" (replay format {replay.format})"
    )
    yield "seats: " + ", ".join(
        f"{s['seat']}={s['bot']} (team {s['team']})" for s in h["seats"]
    )
    for number, line in enumerate(replay.lines, 2):
        replay.at = number
        kind = line["type"]
        if kind == "hand":
            yield ""
            dealer = line["dealer"]
            extra = ""
            if "mano" in line:
                extra = f", mano seat {line['mano']}, scores {line['scores']}"
                if line["kind"] != "normal":
                    extra += f", {line['kind'].replace('_', ' ')}"
                if line.get("blind"):
                    extra += " (blind)"
            yield f"== game {line['game']} hand {line['hand']}" + (
                f", dealer seat {dealer}" if dealer is not None else ""
            ) + extra
            for seat, cards in enumerate(line["deal"]):
                yield f"   seat {seat} {names.get(seat, '?'):>12}: {_cards(cards)}"
        elif kind == "duel":
            yield f"   -- duel {line['index'] + 1} of {line['of']}: seats {line['seats']}"
        elif kind == "action":
            fault = f"  [{line['fault']}: {line.get('detail', '')}]" if line["fault"] else ""
            shown = f" ({line['face_down_card']})" if "face_down_card" in line else ""
            yield (
                f"   seat {line['seat']} {line['action']['text'] + shown:<16}"
                f" {line['latency_ms']:8.1f} ms{fault}"
            )
        elif kind == "envido":
            said = ", ".join(
                f"seat {seat}: {'son buenas' if value is None else value}"
                for seat, value in line["announced"]
            )
            yield (
                f"   envido {'-'.join(line['chain'])} "
                f"{'accepted' if line['accepted'] else 'rejected'}"
                + (f" ({said}), seat {line['winner']} wins" if line["accepted"] else "")
            )
        elif kind == "flor":
            yield f"   flor {'-'.join(line['chain'])}: {line['payout'].replace('_', ' ')}"
        elif kind == "award":
            yield f"   -> team {line['team']} +{line['points']} ({line['reason']})"
        elif kind == "hand_end":
            yield f"   scores {line['scores']} (hand ended by {line['ended_by']})"
        elif kind == "game_end":
            yield f"== game {line['game']} won by team {line['winner_team']}: {line['scores']}"
        elif kind == "result":
            winner = line["winner_team"]
            yield ""
            yield (
                f"result: {line['termination']}, winner team {winner}, points {line['points']},"
                f" games {line['games_won']}, strikes {line['strikes']}"
                + (f", faulty seat {line['faulty_seat']}: {line['detail']}"
                   if line["faulty_seat"] is not None else "")
            )
