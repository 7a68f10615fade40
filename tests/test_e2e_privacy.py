"""End to end: what goes over the wire to a seat never holds another seat's hidden cards.

A tournament of spy bots (tests/bots/spy.py) over every variant: every seat of every match is
a spy that records every ServerMessage it receives, byte for byte. The replay files hold the
truth (every deal, every action in order). Each recorded stream is then walked in order and
every message is pinned to the (game, hand) it belongs to and to how many actions of that hand
had been taken when it was sent:

- a decision's view names its game and hand, and its `moves` must be exactly the actions seen
  so far;
- a move event is the next action of the hand (checked against the replay);
- a hand_ended summary closes the hand it names; the next message belongs to the next hand of
  the replay.

Then every `Card` anywhere in the message must be one the seat may know at that moment:
its own dealt cards for that hand (not in a blind iron hand, where it plays face down), a
card already played in that hand, a partner's dealt card in a Mineiro hand of ten (when the
scores say the seat's side is at ten), or, in the hand_ended summary only, the cards revealed
by the envido winner (the seat that won the envido the stream was told about), and exactly the
cards that make its envido, no more. And no message may contain any match seed or the
tournament seed, in any encoding.
"""

from __future__ import annotations

import base64
import copy
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from test_e2e_support import (
    ALL_VARIANTS,
    SHORT,
    arena,
    bot_cmd,
    explain,
    read_replay,
    stored_matches,
    write_config,
)
from test_privacy_property import cards_in, varint

from arena.rpc import convert
from arena.rules import envido_cards, find_variant, parse_card
from arena.v1 import arena_pb2 as pb

pytestmark = pytest.mark.e2e  # every test here needs the spied tournament

TOURNAMENT_SEED = 7_350_418_236_519_804_201  # big: a leak of it cannot match by chance
AT_TEN = 10  # RULES.md §5.2


# ---------------------------------------------------------------------------------------------
# The truth, from a replay file


@dataclass
class HandTruth:
    """One hand as the replay has it."""

    game: int
    hand: int
    deal: list[list[str]]
    actions: list[dict[str, Any]] = field(default_factory=list)
    start_scores: tuple[int, ...] = (0, 0)
    hand_of_ten: int | None = None  # Mineiro: the one team at ten when the hand started
    blind: bool = False  # Mineiro blind iron hand: nobody sees their own cards

    def played(self, count: int) -> set[str]:
        """The cards played by the first `count` actions of the hand."""
        held = [list(cards) for cards in self.deal]
        played: set[str] = set()
        for line in self.actions[:count]:
            action, seat = line["action"], line["seat"]
            if action["kind"] == "play":
                held[seat].remove(action["card"])
                played.add(action["card"])
            elif action["kind"] == "play_face_down":
                played.add(held[seat].pop(action["slot"]))
        return played

    def visible(self, seat: int, team_of: list[int], count: int) -> set[str]:
        """Every card `seat` may know after `count` actions of this hand."""
        allowed = self.played(count)
        if not self.blind:
            allowed |= set(self.deal[seat])
        if self.hand_of_ten == team_of[seat]:
            for other, cards in enumerate(self.deal):
                if other != seat and team_of[other] == team_of[seat]:
                    allowed |= set(cards)
        return allowed


@dataclass
class MatchTruth:
    """A match from its replay file."""

    match_id: str
    variant: str
    seed: int
    team_of: list[int]
    hands: list[HandTruth]


def match_truth(path: Path) -> MatchTruth:
    lines = read_replay(path)
    header = lines[0]
    variant = find_variant(header["variant"])
    options = header["options"]
    hands: list[HandTruth] = []
    scores = tuple(header["initial_scores"])
    current: HandTruth | None = None
    for line in lines[1:]:
        if line["type"] == "hand":
            if hands and hands[-1].game != line["game"]:
                scores = (0,) * len(scores)  # a new game starts from zero
            current = HandTruth(line["game"], line["hand"], line["deal"], start_scores=scores)
            if variant.family == "mineiro":
                at_ten = [t for t, s in enumerate(scores) if s >= AT_TEN]
                if len(at_ten) == 1:
                    current.hand_of_ten = at_ten[0]
                elif len(at_ten) == len(scores):
                    current.blind = bool(options["blind_iron_hand"])
            hands.append(current)
        elif line["type"] == "action":
            assert current is not None
            current.actions.append(line)
        elif line["type"] == "hand_end":
            scores = tuple(line["scores"])
    return MatchTruth(
        header["match_id"], header["variant"], int(header["seed"]), list(variant.team_of), hands
    )


# ---------------------------------------------------------------------------------------------
# The checker


def seed_needles(seed: int) -> tuple[list[bytes], list[str]]:
    """How a seed could show up: in the wire bytes, and in the message as text."""
    raw = [varint(seed), seed.to_bytes(8, "little"), seed.to_bytes(8, "big")]
    return raw, [str(seed), f"{seed:x}", f"{seed:X}"]


def check_stream(
    raw_messages: list[bytes], truths: dict[str, MatchTruth], seeds: list[int]
) -> Counter[str]:
    """Check one seat's recorded stream; raise AssertionError at the first leak. Returns what
    the stream held, by kind (to show that a run exercised the interesting cases)."""
    seen: Counter[str] = Counter()
    messages = [pb.ServerMessage.FromString(raw) for raw in raw_messages]
    needles = [seed_needles(seed) for seed in seeds]
    for raw, message in zip(raw_messages, messages, strict=True):
        text = json_format.MessageToJson(message) + str(message)
        for seed, (in_bytes, in_text) in zip(seeds, needles, strict=True):
            assert not any(n in raw for n in in_bytes), f"seed {seed} in the bytes of {message}"
            assert not any(n in text for n in in_text), f"seed {seed} in {message}"
    assert messages[0].WhichOneof("body") == "welcome"
    assert messages[1].WhichOneof("body") == "game_started"
    started = messages[1].game_started
    truth = truths[started.match_id]
    seat, deck = started.seat, convert.deck_of(truth.variant)
    team_of = truth.team_of
    index, count = 0, 0  # the hand being played, and how many of its actions were seen
    envido_winner: int | None = None
    for position, message in enumerate(messages[2:], 2):
        body = message.WhichOneof("body")
        seen[body] += 1
        assert body in ("decision", "event", "hand_ended", "game_over"), message
        inner = getattr(message, body)
        assert (inner.match_id, inner.seat) == (started.match_id, seat), message
        hand = truth.hands[index] if index < len(truth.hands) else None
        where = f"{truth.match_id} seat {seat} message {position}"
        allowed = hand.visible(seat, team_of, count) if hand is not None else set()
        if body == "decision":
            view = inner.view
            assert hand is not None, f"{where}: a decision after the last hand"
            assert (view.game_number, view.hand_number) == (hand.game, hand.hand), where
            assert len(view.moves) == count, f"{where}: the view has moves nobody was told of"
            assert view.seat == seat, where
            seen["partner_cards"] += bool(view.partner_cards)
            seen["blind_decision"] += hand.blind
        elif body == "event":
            which = inner.WhichOneof("event")
            seen[which] += 1
            if which == "move":
                assert hand is not None, where
                assert count < len(hand.actions), f"{where}: more moves than the replay has"
                expected = hand.actions[count]
                assert inner.move.move.seat == expected["seat"], where
                kind = pb.ActionKind.Name(inner.move.move.action.kind)
                assert kind == "ACTION_KIND_" + expected["action"]["kind"].upper(), where
                count += 1
                allowed = hand.visible(seat, team_of, count)
                seen["face_down"] += inner.move.HasField("card")
            elif which == "envido" and inner.envido.outcome.HasField("winner"):
                envido_winner = inner.envido.outcome.winner
        elif body == "hand_ended":
            summary = inner.summary
            assert hand is not None, where
            assert (summary.game_number, summary.hand_number) == (hand.game, hand.hand), where
            assert count == len(hand.actions), f"{where}: the stream missed moves of the hand"
            for shown in summary.revealed:
                assert shown.seat == envido_winner, f"{where}: cards of a seat that won no envido"
                cards = {str(convert.card_from_proto(c, deck)) for c in shown.cards}
                dealt = [parse_card(c, deck) for c in hand.deal[shown.seat]]
                envido = {str(c) for c in envido_cards(dealt)}
                assert cards == envido, f"{where}: {cards} revealed, not the envido {envido}"
                allowed |= cards
                seen["revealed"] += 1
        elif body == "game_over":
            assert index == len(truth.hands), f"{where}: game over before the last hand"
            assert position == len(messages) - 1, f"{where}: messages after game over"
        shown_cards = {str(convert.card_from_proto(c, deck)) for c in cards_in(message)}
        leaked = shown_cards - allowed
        assert not leaked, (
            f"{where} ({body}, game {hand and hand.game} hand {hand and hand.hand}, after "
            f"{count} actions) shows {sorted(leaked)} that seat {seat} may not know:\n{message}"
        )
        if body == "hand_ended":
            index, count, envido_winner = index + 1, 0, None
    assert messages[-1].WhichOneof("body") == "game_over", "the stream ended before game over"
    return seen


# ---------------------------------------------------------------------------------------------
# The run


@dataclass
class Spied:
    streams: dict[tuple[str, int], list[bytes]]  # (match id, seat) -> every message, raw
    truths: dict[str, MatchTruth]
    seeds: list[int]  # every match seed and the tournament seed
    rows: list[dict[str, Any]]


# Matches per variant (both sides of one seed): the seeded spies and deals meet a Mineiro 2v2
# hand of ten and blind iron hands within them (the property test asserts that it did).
GAMES = 2


@pytest.fixture(scope="module")
def spied(tmp_path_factory: pytest.TempPathFactory) -> Spied:
    folder = tmp_path_factory.mktemp("privacy")
    dumps = folder / "spy"
    dumps.mkdir()
    options: dict[str, dict[str, Any]] = {
        "argentine-1v1": SHORT,
        "argentine-2v2": SHORT,
        "mineiro-1v1": {"blind_iron_hand": True},
        "mineiro-2v2": {"blind_iron_hand": True},
    }
    config = write_config(
        folder,
        name="spied",
        bots={"spy-a": bot_cmd("spy"), "spy-b": bot_cmd("spy")},
        variants=ALL_VARIANTS,
        options=options,
        games=GAMES,
        concurrency=4,
        seed=TOURNAMENT_SEED,
        writable=["spy"],
    )
    run = arena("tournament", config, "--no-progress", cwd=folder, env={"SPY_DUMP_DIR": str(dumps)})
    assert run.returncode == 0, explain(run)
    rows = stored_matches(folder / "arena.db")
    streams: dict[tuple[str, int], list[bytes]] = {}
    for path in sorted(dumps.iterdir()):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        raw = [base64.b64decode(line["b64"]) for line in lines]
        started = pb.ServerMessage.FromString(raw[1]).game_started
        key = (started.match_id, started.seat)
        assert key not in streams, f"two spies recorded {key}"
        streams[key] = raw
    truths = {row["id"]: match_truth(Path(row["replay"])) for row in rows}
    seeds = [t.seed for t in truths.values()] + [TOURNAMENT_SEED]
    return Spied(streams, truths, seeds, rows)


def test_every_seat_of_every_match_was_recorded(spied: Spied) -> None:
    """The spies heard every seat of every match (2 or 4 per match, one process each), and
    every match was played to its end."""
    assert len(spied.rows) == len(ALL_VARIANTS) * GAMES
    expected = {
        (row["id"], seat)
        for row in spied.rows
        for seat in range(find_variant(row["variant"]).num_seats)
    }
    assert set(spied.streams) == expected
    assert all(row["termination"] == "normal" for row in spied.rows)


def test_no_seat_is_sent_a_card_it_may_not_know_nor_any_seed(spied: Spied) -> None:
    """Every message of every seat, checked as the module docstring says. The run must also
    have exercised what makes the check meaningful: decisions and events in every variant,
    envido cards revealed at a hand's end, partners' cards in a Mineiro hand of ten, and
    blind iron hands with face-down plays. (The spies and the deals are seeded: the same
    games every run, so these counts do not depend on luck.)"""
    total: Counter[str] = Counter()
    by_variant: dict[str, Counter[str]] = {v: Counter() for v in ALL_VARIANTS}
    for (match_id, _seat), raw in spied.streams.items():
        seen = check_stream(raw, spied.truths, spied.seeds)
        total.update(seen)
        by_variant[spied.truths[match_id].variant].update(seen)
    for variant, counts in by_variant.items():
        assert counts["decision"] > 0, variant
        assert counts["move"] > 0, variant
        assert counts["hand_ended"] > 0, variant
    assert total["revealed"] > 0, total
    assert by_variant["mineiro-2v2"]["partner_cards"] > 0, by_variant["mineiro-2v2"]
    assert total["blind_decision"] > 0, total
    assert total["face_down"] > 0, total


# ---------------------------------------------------------------------------------------------
# The checker catches leaks (so the test above can fail)


def _first_decision(spied: Spied, variant: str) -> tuple[tuple[str, int], int, pb.ServerMessage]:
    for key, raw in sorted(spied.streams.items()):
        if spied.truths[key[0]].variant != variant:
            continue
        for position, data in enumerate(raw):
            message = pb.ServerMessage.FromString(data)
            if message.WhichOneof("body") == "decision":
                return key, position, message
    raise AssertionError(f"no decision in {variant}")


def _with(raw: list[bytes], position: int, message: pb.ServerMessage) -> list[bytes]:
    changed = copy.copy(raw)
    changed[position] = message.SerializeToString()
    return changed


def _unplayed_card_of_another_seat(
    spied: Spied, key: tuple[str, int], message: pb.ServerMessage
) -> str:
    truth = spied.truths[key[0]]
    view = message.decision.view
    hand = next(h for h in truth.hands if (h.game, h.hand) == (view.game_number, view.hand_number))
    played = hand.played(len(view.moves))
    other = (key[1] + 1) % len(truth.team_of)
    return next(c for c in hand.deal[other] if c not in played)


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_checker_flags_an_opponents_unplayed_card(spied: Spied, variant: str) -> None:
    """A recorded stream with one opponent's unplayed card slipped into a decision's view (as
    if it were in the seat's hand) fails the check; the untouched stream passes."""
    key, position, message = _first_decision(spied, variant)
    raw = spied.streams[key]
    check_stream(raw, spied.truths, spied.seeds)
    leak = _unplayed_card_of_another_seat(spied, key, message)
    deck = convert.deck_of(variant)
    message.decision.view.hand.append(convert.card_to_proto(parse_card(leak, deck)))
    with pytest.raises(AssertionError, match=f"shows \\['{leak}'\\]"):
        check_stream(_with(raw, position, message), spied.truths, spied.seeds)


def test_checker_flags_partner_cards_outside_a_hand_of_ten(spied: Spied) -> None:
    """A partner's cards in a 2v2 view of a hand that is not a Mineiro hand of ten (an
    Argentine hand) fail the check."""
    key, position, message = _first_decision(spied, "argentine-2v2")
    truth = spied.truths[key[0]]
    view = message.decision.view
    hand = next(h for h in truth.hands if (h.game, h.hand) == (view.game_number, view.hand_number))
    partner = (key[1] + 2) % 4
    deck = convert.deck_of("argentine-2v2")
    played = hand.played(len(view.moves))
    cards = [
        convert.card_to_proto(parse_card(c, deck)) for c in hand.deal[partner] if c not in played
    ]
    view.partner_cards.append(pb.SeatCards(seat=partner, cards=cards))
    with pytest.raises(AssertionError, match="may not know"):
        check_stream(_with(spied.streams[key], position, message), spied.truths, spied.seeds)


def test_checker_flags_own_cards_in_a_blind_iron_hand(spied: Spied) -> None:
    """In a blind iron hand a seat does not see its own cards: one of them in its view's hand
    fails the check, although the same card is fine in any other hand."""
    for key, raw in sorted(spied.streams.items()):
        truth = spied.truths[key[0]]
        for position, data in enumerate(raw):
            message = pb.ServerMessage.FromString(data)
            if message.WhichOneof("body") != "decision":
                continue
            view = message.decision.view
            hand = next(
                h for h in truth.hands if (h.game, h.hand) == (view.game_number, view.hand_number)
            )
            if not hand.blind:
                continue
            assert len(view.hand) == 0
            own = next(c for c in hand.deal[key[1]] if c not in hand.played(len(view.moves)))
            deck = convert.deck_of(truth.variant)
            view.hand.append(convert.card_to_proto(parse_card(own, deck)))
            with pytest.raises(AssertionError, match=f"shows \\['{own}'\\]"):
                check_stream(_with(raw, position, message), spied.truths, spied.seeds)
            return
    raise AssertionError("no decision in a blind iron hand")


@pytest.mark.parametrize("where", ["session_id", "request_id"])
def test_checker_flags_a_seed(spied: Spied, where: str) -> None:
    """A match seed anywhere in a message (here in a string field) fails the check."""
    key, position, message = _first_decision(spied, "mineiro-1v1")
    seed = spied.truths[key[0]].seed
    raw = spied.streams[key]
    if where == "session_id":
        position = 0
        message = pb.ServerMessage(welcome=pb.Welcome(session_id=f"s{seed}"))
    else:
        message.decision.request_id = f"{seed:x}"
    with pytest.raises(AssertionError, match=f"seed {seed}"):
        check_stream(_with(raw, position, message), spied.truths, spied.seeds)
