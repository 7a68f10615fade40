"""Replay files: one JSON-lines file per match, documented in docs/replay.md.

Written by the tournament from a `MatchReport`; read back by `load_replay` and checked by
`verify_replay`, which runs every recorded action through the rules engine again and fails
unless it reproduces every award and the result. `describe` renders a match for a person.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.errors import IllegalActionError, ReplayMismatchError
from arena.referee import MatchReport, TimeControl
from arena.rules import Action, ActionKind, Card, Match, Options, find_variant, parse_card
from arena.rules.cards import Deck
from arena.rules.signals import IllegalSignalError, Signal, SignalKind

FORMAT = 1


def _action_json(action: Action) -> dict[str, Any]:
    return {
        "kind": action.kind.name.lower(),
        "card": str(action.card) if action.card is not None else None,
        "slot": action.slot,
        "text": str(action),
    }


def _signal_json(signal: Signal) -> dict[str, Any]:
    return {"kind": signal.kind.name.lower(), "text": signal.text, "value": signal.value}


def _signal_from_json(data: dict[str, Any]) -> Signal:
    return Signal(SignalKind[data["kind"].upper()], data.get("text", ""), data.get("value"))


def _action_from_json(data: dict[str, Any], deck: Deck) -> Action:
    card = parse_card(data["card"], deck) if data.get("card") else None
    return Action(ActionKind[data["kind"].upper()], card=card, slot=data.get("slot"))


def report_lines(
    report: MatchReport, *, time_control: TimeControl | None = None
) -> Iterator[dict[str, Any]]:
    """The replay of a finished match, line by line."""
    record = report.record
    game = find_variant(report.variant)
    yield {
        "type": "match",
        "format": FORMAT,
        "match_id": report.match_id,
        "variant": report.variant,
        "options": record.options.as_dict(),
        "seed": report.seed,
        "first_dealer": record.first_dealer,
        "initial_scores": list(record.initial_scores),
        "seats": [
            {"seat": s, "team": game.accounts(record.options)[s], "bot": name}
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
        "started_at": report.started_at,
    }
    decisions = iter(report.decisions)
    hands: list[tuple[int, int, int, tuple[tuple[Card, ...], ...], Any]] = [
        (h.game_number, h.hand_number, h.dealer, h.deal, h) for h in record.hands
    ]
    if report.unfinished_deal is not None and report.unfinished_at is not None:
        g, n = report.unfinished_at
        hands.append((g, n, -1, report.unfinished_deal, None))
    for g, n, dealer, deal, hand in hands:
        yield {
            "type": "hand",
            "game": g,
            "hand": n,
            "dealer": dealer if hand is not None else None,
            "deal": [[str(c) for c in cards] for cards in deal],
        }
        moves = hand.moves if hand is not None else None
        count = len(moves) if moves is not None else None
        taken = 0
        while count is None or taken < count:
            decision = next(decisions, None)
            if decision is None:
                break
            taken += 1
            yield {
                "type": "action",
                "game": g,
                "hand": n,
                "seat": decision.seat,
                "action": _action_json(decision.action),
                "latency_ms": decision.latency_ms,
                "fault": decision.fault,
                **({"detail": decision.detail} if decision.detail else {}),
                **({"signal": _signal_json(decision.signal)} if decision.signal else {}),
            }
        if hand is None:
            continue
        for award in hand.awards:
            yield {
                "type": "award",
                "game": g,
                "hand": n,
                "team": award.team,
                "points": award.points,
                "reason": award.reason.name.lower(),
            }
        s = hand.summary
        yield {
            "type": "hand_end",
            "game": g,
            "hand": n,
            "ended_by": s.ended_by,
            "winner_team": s.winner_team,
            "scores": list(s.scores),
            "tricks": [
                {
                    "plays": [[p.seat, str(p.card)] for p in t.plays],
                    "winner": t.winner,
                }
                for t in s.tricks
            ],
            "revealed": [[seat, [str(c) for c in cards]] for seat, cards in s.revealed],
        }
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


def write_replay(path: Path, report: MatchReport, *, time_control: TimeControl | None) -> None:
    """Write the replay file atomically: a temporary file, flushed to disk, renamed into
    place. A failed write (a full disk) removes the temporary file and leaves any earlier
    file at `path` as it was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8") as out:
            for line in report_lines(report, time_control=time_control):
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


def load_replay(path: Path) -> Replay:
    """Read a replay file; raise `ReplayMismatchError` if it is not one."""
    lines: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as src:
        for number, text in enumerate(src, 1):
            if not text.strip():
                continue
            try:
                lines.append(json.loads(text))
            except json.JSONDecodeError as exc:
                raise ReplayMismatchError(f"{path}:{number}: not JSON: {exc}") from None
    if not lines or lines[0].get("type") != "match":
        raise ReplayMismatchError(f"{path}: the first line must be the 'match' header")
    result = next((line for line in lines if line.get("type") == "result"), None)
    return Replay(header=lines[0], lines=lines[1:], result=result)


def verify_replay(replay: Replay) -> Match:
    """Replay every action through the engine; raise `ReplayMismatchError` at the first
    difference (a deal, a seat out of turn, an illegal action, an award, the result)."""
    h = replay.header
    variant = find_variant(h["variant"])
    deals = {
        (line["game"], line["hand"]): tuple(
            tuple(parse_card(c, variant.deck) for c in cards) for cards in line["deal"]
        )
        for line in replay.lines
        if line["type"] == "hand"
    }
    match = Match(
        variant,
        Options(**h["options"]),
        h["seed"],
        dealer=h["first_dealer"],
        scores=tuple(h["initial_scores"]),
        deals=deals,
    )
    awards: dict[tuple[int, int], list[tuple[int, int, str]]] = {}
    for line in replay.lines:
        kind = line["type"]
        where = f"game {line.get('game')} hand {line.get('hand')}"
        if kind == "action":
            if match.to_act != line["seat"]:
                raise ReplayMismatchError(
                    f"{where}: seat {line['seat']} acted but seat {match.to_act} was to act"
                )
            signal = _signal_from_json(line["signal"]) if line.get("signal") else None
            try:
                match.apply(_action_from_json(line["action"], variant.deck), signal)
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
        if match.result is None:
            raise ReplayMismatchError("the recorded actions do not finish the match")
        if list(match.points) != replay.result["points"]:
            raise ReplayMismatchError(
                f"replayed points {list(match.points)} != recorded {replay.result['points']}"
            )
        if match.result.winner_team != replay.result["winner_team"]:
            raise ReplayMismatchError("the replayed winner differs from the recorded one")
    return match


def describe(replay: Replay) -> Iterator[str]:
    """The match as lines a person can follow."""
    h = replay.header
    names = {s["seat"]: s["bot"] for s in h["seats"]}
    yield f"{h['match_id']}: {h['variant']} {h['options']} seed {h['seed']}"
    yield "seats: " + ", ".join(
        f"{s['seat']}={s['bot']} (team {s['team']})" for s in h["seats"]
    )
    for line in replay.lines:
        kind = line["type"]
        if kind == "hand":
            yield ""
            dealer = line["dealer"]
            yield f"== game {line['game']} hand {line['hand']}" + (
                f", dealer seat {dealer}" if dealer is not None else ""
            )
            for seat, cards in enumerate(line["deal"]):
                yield f"   seat {seat} {names.get(seat, '?'):>12}: {' '.join(cards)}"
        elif kind == "action":
            fault = f"  [{line['fault']}: {line.get('detail', '')}]" if line["fault"] else ""
            yield (
                f"   seat {line['seat']} {line['action']['text']:<16}"
                f" {line['latency_ms']:8.1f} ms{fault}"
            )
        elif kind == "award":
            yield f"   -> team {line['team']} +{line['points']} ({line['reason']})"
        elif kind == "hand_end":
            yield f"   scores {line['scores']} (hand ended by {line['ended_by']})"
        elif kind == "result":
            winner = line["winner_team"]
            yield ""
            yield (
                f"result: {line['termination']}, winner team {winner}, points {line['points']},"
                f" games {line['games_won']}, strikes {line['strikes']}"
                + (f", faulty seat {line['faulty_seat']}: {line['detail']}"
                   if line["faulty_seat"] is not None else "")
            )
