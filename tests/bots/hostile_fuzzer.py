"""A bot below the SDK that answers every decision with a seeded random mix of right and wrong
replies, and sends junk between them: what no other test bot anticipates.

Each decision gets one reply, echoing its ids, whose choice is drawn from: a legal index; an
index out of range (negative, huge); a legal action spelled out, its card written as suit and
rank, as text (in odd but valid spellings) or both; the same action mangled (an unknown kind
number, a card of the other deck, suit and text that disagree, a slot where none belongs, a
card text of odd Unicode, controls or 300 characters); or no choice at all. A sign rides on
about a third of the replies, right or wrong (an unknown kind, 41 characters, a value on a
kind that takes none, a value out of range). Before some replies it sends junk: an answer to
a request that does not exist, one for another seat, an empty message, a second hello;
after some, its answer again. The referee must refuse each in-band, strike what is a
fault, play on, and never fail itself.

The random generator is seeded by argv[1], the match id and the seat, so a run is the same
every time: a failure found here comes back.
"""

from __future__ import annotations

import random
import sys

from _wire import Wire, reply

from arena.v1 import arena_pb2 as pb

ODD_TEXTS = (
    "", " ", "1", "e", "1e1e", "0e", "13e", "-1e", "+1e", "1 e", "1\te", "\u2077e", "\u0661e",
    "\uff11e", "1\u0301e", "1\x00e", "1\ne", "\U0001f0a1", "1E", "1espadas", "\u202e1e",
    "7" * 300, "1e\u200b",
)
"""Card texts no deck has (or, the last ones, odd spellings some readers accept)."""


def spell(card: pb.Card, rng: random.Random) -> pb.Card:
    """The same card, as suit and rank, as text, or both."""
    how = rng.randrange(3)
    if how == 0 or not card.text:
        return pb.Card(suit=card.suit, rank=card.rank)
    if how == 1:
        return pb.Card(text=card.text)
    return pb.Card(suit=card.suit, rank=card.rank, text=card.text)


def mangle(action: pb.Action, rng: random.Random) -> pb.Action:
    """A copy of `action`, wrong in one way."""
    wrong = pb.Action()
    wrong.CopyFrom(action)
    how = rng.randrange(7)
    if how == 0:
        wrong.kind = rng.choice((0, 35, 99, 2**31 - 1, -1))  # proto3 enums are open
    elif how == 1:
        wrong.card.CopyFrom(pb.Card(text=rng.choice(ODD_TEXTS)))
    elif how == 2:
        wrong.card.CopyFrom(pb.Card(suit=rng.choice((0, 5, -3, 2**31 - 1)),
                                    rank=rng.choice((0, 8, 9, 13, -1, 2**31 - 1))))
    elif how == 3:  # suit and text that disagree
        wrong.card.CopyFrom(pb.Card(suit=pb.SUIT_SWORDS, rank=1, text="4c"))
    elif how == 4:
        wrong.slot = rng.choice((0, 2, -1, 2**31 - 1))
    elif how == 5:
        wrong.ClearField("card")
    else:
        wrong.card.CopyFrom(pb.Card(suit=pb.SUIT_CUPS, rank=rng.choice((1, 4, 7, 12)),
                                    text=rng.choice(("1c", "4o", "12b", "7e"))))
    return wrong


def signal(rng: random.Random) -> pb.Signal:
    """A sign, right or wrong."""
    how = rng.randrange(6)
    if how == 0:
        return pb.Signal(kind=rng.randrange(1, 10))
    if how == 1:
        return pb.Signal(kind=pb.SIGNAL_KIND_TEXT, text=rng.choice(("ok", "x" * 41, "\x1b[2J",
                                                                    "<b>", "\u202e", "a\nb")))
    if how == 2:
        return pb.Signal(kind=rng.choice((0, 10, 99, -5, 2**31 - 1)))
    if how == 3:
        return pb.Signal(kind=pb.SIGNAL_KIND_TEXT, value=rng.choice((0, 33, -1)))
    return pb.Signal(kind=pb.SIGNAL_KIND_ENVIDO, value=rng.choice((0, 7, 33, 34, -1, 2**31 - 1)))


def junk(decision: pb.DecisionRequest, rng: random.Random) -> pb.BotMessage:
    """A message the referee must refuse and ignore."""
    how = rng.randrange(4)
    if how == 0:
        return pb.BotMessage(action=pb.ActionReply(
            request_id=decision.request_id + "x", match_id=decision.match_id,
            seat=decision.seat, action_index=0))
    if how == 1:
        return pb.BotMessage(action=pb.ActionReply(
            request_id=decision.request_id, match_id=decision.match_id,
            seat=decision.seat + rng.choice((1, -1, 2**20)), action_index=0))
    if how == 2:
        return pb.BotMessage()
    return pb.BotMessage(hello=pb.Hello(bot_name="again", token="t", protocol_version=1))


def answer(decision: pb.DecisionRequest, rng: random.Random) -> pb.BotMessage:
    """This decision's reply: a choice (right, wrong or none) and maybe a sign."""
    legal = list(decision.legal_actions)
    how = rng.random()
    if how < 0.45:
        message = reply(decision, action_index=rng.randrange(len(legal)))
    elif how < 0.55:
        message = reply(decision, action_index=rng.choice((-1, len(legal), 2**31 - 1,
                                                           -(2**31))))
    elif how < 0.8:
        action = pb.Action()
        action.CopyFrom(rng.choice(legal))
        if action.HasField("card"):
            action.card.CopyFrom(spell(action.card, rng))
        message = reply(decision, action=action)
    elif how < 0.97:
        message = reply(decision, action=mangle(rng.choice(legal), rng))
    else:
        message = reply(decision)  # no choice: MALFORMED
    if rng.random() < 0.35:
        message.action.signal.CopyFrom(signal(rng))
    return message


def main() -> None:
    seed = sys.argv[1] if len(sys.argv) > 1 else "1"
    rng = random.Random(seed)
    wire = Wire.from_env()
    for message in wire:
        body = message.WhichOneof("body")
        if body == "game_started":  # each seat of each match draws its own sequence
            started = message.game_started
            rng = random.Random(f"{seed}:{started.match_id}:{started.seat}")
        if body != "decision":
            continue
        decision = message.decision
        if rng.random() < 0.2:
            wire.send(junk(decision, rng))
        reply_message = answer(decision, rng)
        wire.send(reply_message)
        if rng.random() < 0.1:
            wire.send(reply_message)  # DUPLICATE_ANSWER


if __name__ == "__main__":
    main()
