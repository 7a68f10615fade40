"""The stdio line protocol (docs/stdio.md), version 1: engine values to lines, and back.

Pure functions over the engine's value objects (arena.rules): no I/O, no clock. A line is a
message kind, then `name=value` fields separated by single spaces. A value is a list of items
separated by `,`; an item is a list of parts separated by `:`. Free text (names, details, a
sign's text) is percent-encoded: every byte outside `A-Z a-z 0-9 _ .` becomes `%XX`. "None" is
`-`. So a bot in C splits on spaces, then at `=`, then on `,` and `:`, with libc only.
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from arena.errors import ArenaError, NotationError
from arena.rules import (
    Action,
    ActionKind,
    Award,
    Card,
    Deck,
    EnvidoOutcome,
    FlorOutcome,
    GameResult,
    HandSummary,
    MatchResult,
    Move,
    Options,
    PendingCall,
    Play,
    SeatView,
    Signal,
    SignalKind,
    Trick,
    parse_card,
)
from arena.rules.views import (
    Duel,
    DuelEndEvent,
    DuelSummary,
    EnvidoEvent,
    EventBody,
    FlorEvent,
    GameEndEvent,
    HandEndEvent,
    MoveEvent,
    SignalEvent,
    TrickEvent,
)

BAD_LINE_MARK = "[arena.stdio] bad line from the bot: "
"""How the adapter starts the stderr line (the seat's log) for a bot line that is not a reply:
`arena check` quotes these lines when the check fails (a stdio bot's debug output on stdout)."""

VERSION = 1
NONE = "-"
_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.")


class BadLine(ArenaError):
    """A line from the bot that is not a well-formed reply; the message says what to write."""


def pct(text: str) -> str:
    """Percent-encode free text: every UTF-8 byte outside A-Z a-z 0-9 _ . becomes %XX."""
    return "".join(chr(b) if b in _SAFE else f"%{b:02X}" for b in text.encode("utf-8"))


def unpct(text: str) -> str:
    """Decode `pct`; a malformed escape is a `BadLine`."""
    out = bytearray()
    i = 0
    raw = text.encode("utf-8")
    while i < len(raw):
        if raw[i] == ord("%"):
            digits = raw[i + 1 : i + 3]
            if len(digits) != 2 or not all(chr(d) in string.hexdigits for d in digits):
                raise BadLine(f"bad percent escape in {text!r}: write %XX (two hex digits)")
            out.append(int(digits, 16))
            i += 3
        else:
            out.append(raw[i])
            i += 1
    return out.decode("utf-8", errors="replace")


def _opt(value: int | None) -> str:
    return NONE if value is None else str(value)


def _kind(kind: ActionKind) -> str:
    return kind.name.lower()


def action_token(action: Action) -> str:
    """`play:1e`, `play_face_down:2`, `envido`: an action as one item."""
    if action.card is not None:
        return f"{_kind(action.kind)}:{action.card}"
    if action.slot is not None:
        return f"{_kind(action.kind)}:{action.slot}"
    return _kind(action.kind)


def _cards(cards: Iterable[Card]) -> str:
    return ",".join(str(c) for c in cards)


def _ints(values: Iterable[int]) -> str:
    return ",".join(str(v) for v in values)


def _play(play: Play) -> str:
    return f"{play.seat}:{play.card}"


def _trick(trick: Trick) -> str:
    """`leader:winner:winner_side:seat:card:seat:card...` (winner `-` for a parda)."""
    plays = "".join(f":{p.seat}:{p.card}" for p in trick.plays)
    return f"{trick.leader}:{_opt(trick.winner)}:{_opt(trick.winner_team)}{plays}"


def _move(move: Move) -> str:
    return f"{move.seat}:{action_token(move.action)}"


def _award(award: Award) -> str:
    return f"{award.team}:{award.points}:{award.reason.name.lower()}"


def _pending(pending: PendingCall | None) -> str:
    if pending is None:
        return NONE
    return f"{_kind(pending.kind)}:{pending.caller}:{pending.responder}"


def _seat_cards(pairs: Iterable[tuple[int, tuple[Card, ...]]]) -> str:
    return ",".join(":".join([str(seat), *(str(c) for c in cards)]) for seat, cards in pairs)


def _flor(outcome: FlorOutcome) -> str:
    chain = "".join(f":{_kind(k)}" for k in outcome.chain)
    return f"{outcome.singer}:{_opt(outcome.winner)}:{outcome.team}:{outcome.points}{chain}"


def _duel(duel: Duel | None) -> str:
    if duel is None:
        return NONE
    return f"{duel.index}:{duel.of}:{duel.seats[0]}:{duel.seats[1]}"


def _duel_fields(duels: Sequence[DuelSummary]) -> list[str]:
    """A hand's finished duels as three flat fields: the duels, their tricks, their awards."""
    return [
        "duels=" + ",".join(
            f"{_duel(d.duel)}:{_opt(d.winner_team)}:{d.ended_by}" for d in duels
        ),
        "duel_tricks=" + ",".join(f"{d.duel.index}:{_trick(t)}" for d in duels for t in d.tricks),
        "duel_awards=" + ",".join(f"{d.duel.index}:{_award(a)}" for d in duels for a in d.awards),
    ]


def _envido_fields(outcome: EnvidoOutcome | None) -> list[str]:
    if outcome is None:
        return ["envido=-", "envido_chain=", "envido_said="]
    return [
        f"envido={int(outcome.accepted)}:{outcome.team}:{outcome.points}:{_opt(outcome.winner)}",
        "envido_chain=" + ",".join(_kind(k) for k in outcome.chain),
        "envido_said=" + ",".join(f"{seat}:{_opt(value)}" for seat, value in outcome.announcements),
    ]


def _signal(seat: int, move: int, signal: Signal) -> str:
    return f"{seat}:{move}:{signal.kind.name.lower()}:{_opt(signal.value)}:{pct(signal.text)}"


# --------------------------------------------------------------------------- server -> bot


def hello_line(name: str) -> str:
    """The first line a bot reads: the protocol version."""
    return f"hello version={VERSION} name={pct(name)}"


def match_line(
    *,
    match_id: str,
    variant: str,
    seat: int,
    team: int,
    names: Sequence[str],
    teams: Sequence[int],
    options: Options,
    time_control: dict[str, int],
) -> str:
    """A match starts for this bot: who it is, who plays, the options and the clock."""
    fields = [
        "match", f"id={pct(match_id)}", f"variant={variant}", f"seat={seat}", f"team={team}",
        f"seats={len(names)}", "names=" + ",".join(pct(n) for n in names),
        f"teams={_ints(teams)}",
    ]
    for key, value in options.as_dict().items():
        shown = int(value) if isinstance(value, bool) else value
        fields.append(f"{key}={shown}")
    fields += [f"{key}={value}" for key, value in time_control.items()]
    return " ".join(fields)


def decision_line(n: int, view: SeatView, legal: Sequence[Action], time_left_ms: int) -> str:
    """The bot must act: decision number `n` of its match, the legal actions (answer with an
    index into `legal`), its time, and everything its seat may know (the view)."""
    return " ".join(
        [
            "decision", f"n={n}", f"time_left_ms={time_left_ms}",
            "legal=" + ",".join(action_token(a) for a in legal),
            *view_fields(view),
        ]
    )


def view_fields(view: SeatView) -> list[str]:
    """Every field of a `SeatView` as `name=value` tokens (docs/stdio.md, "The view")."""
    return [
        f"seat={view.seat}", f"team={view.team}", f"side={view.side}",
        f"teams={_ints(view.team_of)}", f"sides={_ints(view.side_of)}",
        f"game={view.game_number}", f"hand={view.hand_number}", f"dealer={view.dealer}",
        f"mano={view.mano}", f"to_act={_opt(view.to_act)}", f"target={view.target}",
        f"scores={_ints(view.scores)}", f"games_won={_ints(view.games_won)}",
        f"value={view.hand_value}", f"cards={_cards(view.hand)}", f"ncards={view.hand_size}",
        f"partner_cards={_seat_cards(view.partner_cards)}",
        "tricks=" + ",".join(_trick(t) for t in view.tricks),
        "current=" + ",".join(_play(p) for p in view.current_trick),
        "moves=" + ",".join(_move(m) for m in view.moves),
        f"pending={_pending(view.pending)}",
        *_envido_fields(view.envido),
        "flor=" + ",".join(_flor(f) for f in view.flor),
        f"folded={_ints(view.folded)}", f"hand_of_ten={_opt(view.hand_of_ten)}",
        f"iron_hand={int(view.iron_hand)}",
        "awards=" + ",".join(_award(a) for a in view.awards),
        f"gallo={_opt(view.gallo)}",
        f"discard={NONE if view.discard is None else view.discard}",
        f"duel={_duel(view.duel)}",
        *_duel_fields(view.duels),
        "signals=" + ",".join(_signal(s.seat, s.move, s.signal) for s in view.signals),
    ]


def _game_result(result: GameResult) -> str:
    return f"game={result.game_number} winner={result.winner_team} scores={_ints(result.scores)}"


def hand_end_line(summary: HandSummary) -> str:
    """A hand ended: what every player is told."""
    return " ".join(
        [
            "hand_end", f"game={summary.game_number}", f"hand={summary.hand_number}",
            f"dealer={summary.dealer}", f"mano={summary.mano}",
            f"winner={_opt(summary.winner_team)}", f"ended_by={summary.ended_by}",
            f"scores={_ints(summary.scores)}",
            "awards=" + ",".join(_award(a) for a in summary.awards),
            "tricks=" + ",".join(_trick(t) for t in summary.tricks),
            f"revealed={_seat_cards(summary.revealed)}",
            f"flor_revealed={_seat_cards(summary.flor_revealed)}",
            f"gallo={_opt(summary.gallo)}",
            *_duel_fields(summary.duels),
        ]
    )


def event_line(body: EventBody) -> str:
    """One event this seat may see, as one line."""
    if isinstance(body, MoveEvent):
        card = NONE if body.card is None else str(body.card)
        return f"move seat={body.move.seat} action={action_token(body.move.action)} card={card}"
    if isinstance(body, TrickEvent):
        return f"trick index={body.index} trick={_trick(body.trick)}"
    if isinstance(body, EnvidoEvent):
        return " ".join(["envido_end", *_envido_fields(body.outcome)])
    if isinstance(body, FlorEvent):
        return f"flor_end flor={_flor(body.outcome)}"
    if isinstance(body, DuelEndEvent):
        s = body.summary
        return " ".join(
            [
                "duel_end", f"duel={_duel(s.duel)}", f"winner={_opt(s.winner_team)}",
                f"ended_by={s.ended_by}", "awards=" + ",".join(_award(a) for a in s.awards),
                "tricks=" + ",".join(_trick(t) for t in s.tricks),
            ]
        )
    if isinstance(body, SignalEvent):
        return f"signal signal={_signal(body.seat, body.move, body.signal)}"
    if isinstance(body, GameEndEvent):
        return f"game_end {_game_result(body.result)}"
    if isinstance(body, HandEndEvent):
        return hand_end_line(body.summary)
    raise TypeError(f"no line for event {body!r} (the match's end is `gameover_line`)")


def match_result_fields(result: MatchResult | None) -> str:
    """The result part of `gameover` (empty lists when the match did not finish)."""
    if result is None:
        return "games_won= points="
    return f"games_won={_ints(result.games_won)} points={_ints(result.points)}"


def gameover_line(
    *,
    termination: str,
    winner_team: int | None,
    faulty_seat: int | None,
    strikes: Sequence[int],
    result: MatchResult | None,
    detail: str,
) -> str:
    """The match ended (the last line about it): how, who won, and the faults."""
    return (
        f"gameover termination={termination} winner={_opt(winner_team)} "
        f"faulty_seat={_opt(faulty_seat)} strikes={_ints(strikes)} "
        f"{match_result_fields(result)} detail={pct(detail)}"
    )


def error_line(
    code: str,
    message: str,
    *,
    n: int | None = None,
    strikes: int | None = None,
    max_strikes: int | None = None,
    line: str | None = None,
) -> str:
    """Something the bot did was refused (or a fault was counted): which decision, why."""
    text = (
        f"error code={code} n={_opt(n)} strikes={_opt(strikes)} "
        f"max_strikes={_opt(max_strikes)} message={pct(message)}"
    )
    return text if line is None else f"{text} line={pct(line)}"


# --------------------------------------------------------------------------- bot -> server


@dataclass(frozen=True, slots=True)
class Reply:
    """A bot's answer to its oldest unanswered decision."""

    choice: int | Action  # an index into the decision's legal actions, or an action
    signal: Signal | None = None
    bad_sign: str = ""  # why the sign on the line could not be read (the action stands)


@dataclass(frozen=True, slots=True)
class LogLine:
    """`log TEXT`: for the seat's log, not the referee."""

    text: str


def parse_bot_line(line: str, deck: Deck | None) -> Reply | LogLine | None:
    """Read one line from the bot: a `Reply`, a `LogLine`, or None for an empty line.
    Anything else raises `BadLine` saying what to write instead."""
    text = line.strip()
    if not text:
        return None
    word, _, rest = text.partition(" ")
    if word == "log":
        return LogLine(rest)
    if word != "action":
        raise BadLine(
            f"unknown message {word[:40]!r}: answer a decision with 'action <index>' "
            "(or 'log <text>' for your log)"
        )
    tokens = rest.split()
    if not tokens:
        raise BadLine("'action' needs the index of a legal action: 'action 0'")
    choice = _choice(tokens[0], deck)
    fields: dict[str, str] = {}
    for token in tokens[1:]:
        name, eq, value = token.partition("=")
        if not eq or name not in ("sign", "value", "text"):
            raise BadLine(
                f"unknown field {token[:40]!r} after the action: only sign=KIND, value=N, "
                "text=PERCENT_ENCODED"
            )
        fields[name] = value
    try:
        return Reply(choice, _sign(fields))
    except BadLine as exc:  # a malformed sign is refused alone, as over gRPC: the action goes
        return Reply(choice, None, bad_sign=str(exc))


def _digits(text: str) -> bool:
    """Whether `text` is a whole number of at most 9 ASCII digits: `str.isdigit` also takes
    "⁷" and "①", and `int` refuses those, and more than 4,300 digits, with a ValueError
    instead of a `BadLine`."""
    return len(text) <= 9 and text.isascii() and text.isdigit()


def _choice(token: str, deck: Deck | None) -> int | Action:
    number = token.removeprefix("-")
    if number.isascii() and number.isdigit():
        if not _digits(number):
            raise BadLine(f"index {token[:20]} is out of range: count the items of legal=")
        return int(token)
    kind_text, _, arg = token.partition(":")
    try:
        kind = ActionKind[kind_text.upper()]
    except KeyError:
        raise BadLine(
            f"{token[:40]!r} is neither an index nor an action: write 'action 0' "
            "(an index into legal=) or an action as listed there (play:1e)"
        ) from None
    if not arg:
        return Action(kind)
    if kind is ActionKind.PLAY_FACE_DOWN:
        if not _digits(arg):
            raise BadLine(f"{token!r}: play_face_down takes a slot number (play_face_down:0)")
        return Action(kind, slot=int(arg))
    if deck is None:
        raise BadLine(f"{token!r}: no match is running, so no card can be read")
    try:
        return Action(kind, card=parse_card(arg, deck))
    except NotationError as exc:
        raise BadLine(f"{token!r}: {exc}") from None


def _sign(fields: dict[str, Any]) -> Signal | None:
    if "sign" not in fields:
        if fields:
            raise BadLine("value= and text= belong to a sign: add sign=KIND")
        return None
    try:
        kind = SignalKind[str(fields["sign"]).upper()]
    except KeyError:
        kinds = ", ".join(k.name.lower() for k in SignalKind)
        raise BadLine(f"sign={fields['sign'][:40]!r} is not one of {kinds}") from None
    value: int | None = None
    if "value" in fields:
        if not _digits(str(fields["value"])):
            raise BadLine(f"value={fields['value'][:40]!r}: a whole number (the envido, 0-33)")
        value = int(fields["value"])
    return Signal(kind, unpct(fields.get("text", "")), value)
