"""What the replay viewer shows, computed from a replay file and the rules engine.

The only place that reads replay lines for the web: `recorded` takes the fields the viewer
needs from a `arena.replay.load_replay` result (formats 1 and 2 share them: the header, one
`hand` line with the deal per hand, one `action` line per decision, the `result` line), and
`steps` replays the decisions through `arena.rules.Match`.

A seat's steps hold exactly what that seat knew: `Match.view(seat)` after each decision (the
view the bot was sent) and the events of that decision whose audience holds the seat — never
another seat's unplayed cards. The all-cards view (seat None) is only for a match that ended.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from arena.errors import ReplayMismatchError
from arena.replay import Replay
from arena.rules import (
    Action,
    ActionKind,
    Card,
    EnvidoOutcome,
    FlorOutcome,
    Match,
    Options,
    SeatView,
    Signal,
    SignalKind,
    Trick,
    find_variant,
    parse_card,
)
from arena.rules.views import (
    DuelEndEvent,
    EnvidoEvent,
    Event,
    FlorEvent,
    GameEndEvent,
    HandEndEvent,
    MatchEndEvent,
    MoveEvent,
    SignalEvent,
    TrickEvent,
)

_OPTION_NAMES = {f.name for f in fields(Options)}


@dataclass(frozen=True, slots=True)
class Decision:
    """One recorded decision: who acted, what, and how long it took."""

    seat: int
    action: dict[str, Any]
    signal: dict[str, Any] | None
    latency_ms: float
    fault: str | None


@dataclass(frozen=True, slots=True)
class Recorded:
    """The parts of a replay file the viewer replays."""

    match_id: str
    variant: str
    options: dict[str, Any]
    seed: int
    first_dealer: int
    initial_scores: tuple[int, ...]
    bots: tuple[str, ...]  # the bot in each seat
    deals: dict[tuple[int, int], list[list[str]]]
    decisions: tuple[Decision, ...]
    result: dict[str, Any] | None

    @property
    def finished(self) -> bool:
        return self.result is not None


def recorded(replay: Replay) -> Recorded:
    """The viewer's parts of a loaded replay (format 1 or 2); a clear error if one is missing."""
    h = replay.header
    try:
        deals: dict[tuple[int, int], list[list[str]]] = {}
        decisions: list[Decision] = []
        for line in replay.lines:
            kind = line.get("type")
            if kind == "hand":
                deals[(line["game"], line["hand"])] = line["deal"]
            elif kind == "action":
                decisions.append(Decision(
                    line["seat"], line["action"], line.get("signal"),
                    float(line.get("latency_ms") or 0.0), line.get("fault"),
                ))
        return Recorded(
            match_id=h["match_id"],
            variant=h["variant"],
            options={k: v for k, v in h["options"].items() if k in _OPTION_NAMES},
            seed=int(h["seed"]),  # format 2 writes seeds as strings
            first_dealer=h["first_dealer"],
            initial_scores=tuple(h["initial_scores"]),
            bots=tuple(s["bot"] for s in sorted(h["seats"], key=lambda s: s["seat"])),
            deals=deals,
            decisions=tuple(decisions),
            result=replay.result,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ReplayMismatchError(f"replay of unexpected shape: missing or bad {exc}") from None


def _card(card: Card | None) -> str | None:
    return None if card is None else str(card)


def _plays(trick: Trick) -> list[list[Any]]:
    return [[p.seat, str(p.card)] for p in trick.plays]


def _envido(o: EnvidoOutcome) -> dict[str, Any]:
    said = ", ".join(
        f"seat {s} {'son buenas' if v is None else v}" for s, v in o.announcements
    )
    chain = " + ".join(k.name.lower().replace("_", " ") for k in o.chain)
    verdict = (f"seat {o.winner} wins" if o.winner is not None else "rejected")
    return {
        "t": "envido", "accepted": o.accepted, "announced": [list(a) for a in o.announcements],
        "winner": o.winner, "side": o.team, "points": o.points,
        "text": f"{chain}: {said + '; ' if said else ''}{verdict}, side {o.team} +{o.points}",
    }


def _flor(o: FlorOutcome) -> dict[str, Any]:
    chain = " + ".join(k.name.lower().replace("_", " ") for k in o.chain)
    return {
        "t": "flor", "singer": o.singer, "winner": o.winner, "side": o.team, "points": o.points,
        "text": f"{chain} (seat {o.singer} sang): side {o.team} +{o.points}",
    }


def event_json(event: Event) -> dict[str, Any]:
    """One engine event as the viewer shows it (cards in notation, and a sentence)."""
    b = event.body
    if isinstance(b, MoveEvent):
        out = {"t": "move", "seat": b.move.seat, "text": f"seat {b.move.seat}: {b.move.action}"}
        if b.move.action.card is not None:
            out["card"] = str(b.move.action.card)
        if b.card is not None:
            out["card"] = str(b.card)
        return out
    if isinstance(b, TrickEvent):
        who = "parda" if b.trick.winner is None else f"seat {b.trick.winner} wins"
        return {"t": "trick", "plays": _plays(b.trick), "winner": b.trick.winner,
                "text": f"trick {b.index + 1}: {who}"}
    if isinstance(b, EnvidoEvent):
        return _envido(b.outcome)
    if isinstance(b, FlorEvent):
        return _flor(b.outcome)
    if isinstance(b, SignalEvent):
        return {"t": "signal", "seat": b.seat, "text": f"seat {b.seat} signs: {b.signal}"}
    if isinstance(b, DuelEndEvent):
        d = b.summary
        return {"t": "duel_end", "seats": list(d.duel.seats), "winner_side": d.winner_team,
                "text": f"duel {d.duel.index + 1}/{d.duel.of} ({d.ended_by})"}
    if isinstance(b, HandEndEvent):
        s = b.summary
        return {
            "t": "hand_end", "scores": list(s.scores), "ended_by": s.ended_by,
            "tricks": [_plays(t) for t in s.tricks],
            "revealed": [[seat, [str(c) for c in cards]] for seat, cards in s.revealed],
            "flor_revealed": [[seat, [str(c) for c in cards]] for seat, cards in s.flor_revealed],
            "awards": [str(a) for a in s.awards],
            "text": f"hand over ({s.ended_by}): scores {list(s.scores)}",
        }
    if isinstance(b, GameEndEvent):
        g = b.result
        return {"t": "game_end", "winner_team": g.winner_team, "scores": list(g.scores),
                "text": f"game {g.game_number + 1} to team {g.winner_team} {list(g.scores)}"}
    if isinstance(b, MatchEndEvent):
        m = b.result
        return {"t": "match_end", "winner_team": m.winner_team, "points": list(m.points),
                "text": f"match to team {m.winner_team}: games {list(m.games_won)}"}
    raise TypeError(f"unknown event {b!r}")  # pragma: no cover - the union is closed


def view_json(v: SeatView) -> dict[str, Any]:
    """A seat's view as plain data: every field the viewer draws, nothing else."""
    return {
        "seat": v.seat, "game": v.game_number, "hand_number": v.hand_number,
        "dealer": v.dealer, "mano": v.mano, "scores": list(v.scores),
        "games_won": list(v.games_won), "target": v.target, "hand_value": v.hand_value,
        "hand": [str(c) for c in v.hand], "hand_size": v.hand_size,
        "partner_cards": [[s, [str(c) for c in cards]] for s, cards in v.partner_cards],
        "tricks": [{"plays": _plays(t), "winner": t.winner} for t in v.tricks],
        "current_trick": [[p.seat, str(p.card)] for p in v.current_trick],
        "moves": [f"seat {m.seat}: {m.action}" for m in v.moves],
        "pending": None if v.pending is None else {
            "kind": v.pending.kind.name.lower().replace("_", " "),
            "caller": v.pending.caller, "responder": v.pending.responder},
        "envido": None if v.envido is None else _envido(v.envido),
        "flor": [_flor(f) for f in v.flor],
        "folded": list(v.folded), "hand_of_ten": v.hand_of_ten, "iron_hand": v.iron_hand,
        "awards": [str(a) for a in v.awards], "to_act": v.to_act,
        "legal": [str(a) for a in v.legal_actions], "side_of": list(v.side_of),
        "gallo": v.gallo, "discard": _card(v.discard),
        "duel": None if v.duel is None else {"index": v.duel.index, "of": v.duel.of,
                                             "seats": list(v.duel.seats)},
        "signals": [[s.seat, s.move, str(s.signal)] for s in v.signals],
    }


def _action(data: dict[str, Any], variant: str) -> Action:
    deck = find_variant(variant).deck
    card = parse_card(data["card"], deck) if data.get("card") else None
    return Action(ActionKind[data["kind"].upper()], card=card, slot=data.get("slot"))


def _signal(data: dict[str, Any] | None) -> Signal | None:
    if not data:
        return None
    return Signal(SignalKind[data["kind"].upper()], data.get("text", ""), data.get("value"))


def _start(rec: Recorded) -> Match:
    deck = find_variant(rec.variant).deck
    deals = {
        key: tuple(tuple(parse_card(c, deck) for c in cards) for cards in deal)
        for key, deal in rec.deals.items()
    }
    return Match(rec.variant, Options(**rec.options), rec.seed, dealer=rec.first_dealer,
                 scores=rec.initial_scores, deals=deals)


def _state(match: Match, seat: int | None) -> dict[str, Any]:
    """The table as `seat` knows it (None: every card, for a finished match)."""
    seats = range(match.num_seats)
    views = [match.view(s) for s in seats]
    if seat is None:
        state = view_json(views[match.to_act if match.to_act is not None else 0])
        state["seat"] = None
        state["legal"] = []
        # Every unplayed card, the blind iron hand's too (its seats' views hide their own
        # cards, and the all-cards view drew only backs: an outside walkthrough).
        state["hands"] = [[str(c) for c in match.hand.held[s]] for s in seats]
        gallo = views[0].gallo
        state["discard"] = _card(views[gallo].discard) if gallo is not None else None
        seen = {(s.seat, s.move, str(s.signal)) for v in views for s in v.signals}
        state["signals"] = [list(s) for s in sorted(seen)]
        state["partner_cards"] = []
    else:
        state = view_json(views[seat])
        state["hands"] = [state["hand"] if s == seat else None for s in seats]
    state["held"] = [v.hand_size for v in views]  # how many cards each seat holds: public
    return state


def steps(rec: Recorded, seat: int | None) -> list[dict[str, Any]]:
    """Step 0 is the first deal; step k is the table after decision k, with that decision
    (as `seat` saw it) and the events it caused that `seat` was told."""
    if seat is None and not rec.finished:
        raise PermissionError("the all-cards view is only for a finished match")
    match = _start(rec)
    if seat is not None and not 0 <= seat < match.num_seats:
        raise ValueError(f"seat: {seat} is not a seat of this match (0..{match.num_seats - 1})")
    out: list[dict[str, Any]] = [
        {"step": 0, "decision": None, "events": [], "state": _state(match, seat)}]
    for k, d in enumerate(rec.decisions, 1):
        actor = match.to_act
        if actor != d.seat:
            raise ReplayMismatchError(f"decision {k}: seat {d.seat} acted, seat {actor} was to")
        events = match.apply(_action(d.action, rec.variant), _signal(d.signal))
        seen = [event_json(e) for e in events if seat is None or seat in e.audience]
        if seat is None:
            seen = _without_redacted_copies(seen)
        out.append({
            "step": k,
            "decision": {"seat": d.seat, "latency_ms": round(d.latency_ms, 2), "fault": d.fault},
            "events": seen,
            "state": _state(match, seat),
        })
    return out


def _without_redacted_copies(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The all-cards view's events: a move some seats were told without its card (the
    gallo's discard, a face-down play) is also there as the seat that made it saw it, card
    and all; keep only the latter (an outside walkthrough saw each such move twice)."""

    def redacted(short: dict[str, Any], full: dict[str, Any]) -> bool:
        return (short.get("t") == full.get("t") == "move" and short.get("seat") == full.get("seat")
                and "card" not in short and "card" in full
                and str(full.get("text", "")).startswith(str(short.get("text", ""))))

    return [e for e in events if not any(redacted(e, other) for other in events)]


def header(rec: Recorded) -> dict[str, Any]:
    """The public facts of the match."""
    variant = find_variant(rec.variant)
    return {
        "match_id": rec.match_id, "variant": rec.variant, "options": rec.options,
        "deck": variant.deck.value, "seats": variant.num_seats, "bots": list(rec.bots),
        "team_of": list(variant.accounts(Options(**rec.options))),
        "finished": rec.finished, "result": rec.result,
    }
