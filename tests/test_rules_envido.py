"""Envido: calls, raises, points, ties, announcements, timing, envido va primero, and a chico
ending on envido points (RULES.md §4.1-§4.4). Argentine without flor.

Unless a test says otherwise: 1v1, dealer 1 so seat 0 is mano and the actor of the first trick.
"""

from __future__ import annotations

import pytest
from test_rules_support import award, card, kinds, run, stacked

from arena.errors import IllegalActionError
from arena.rules import ActionKind, AwardReason, EnvidoOutcome, Match, call, play

K = ActionKind
LOW = "4e 5b 6o"  # envido 6
HIGH = "7e 6e 4b"  # envido 33
CODES = {"E": K.ENVIDO, "R": K.REAL_ENVIDO, "F": K.FALTA_ENVIDO}

# RULES.md §4.4: (chain, accepted points, rejected points). Falta is the leading side's need.
CHAINS = [
    ("E", 2, 1),
    ("EE", 4, 2),
    ("R", 3, 1),
    ("ER", 5, 2),
    ("EER", 7, 4),
    ("F", None, 1),
    ("EF", None, 2),
    ("EEF", None, 4),
    ("RF", None, 3),
    ("ERF", None, 5),
    ("EERF", None, 7),
]
SCORES = (20, 12)  # team 0 leads: falta envido is worth 30 - 20 = 10
FALTA = 10


def _call_chain(chain: str) -> tuple[Match, int]:
    """Seat 0 calls the first envido of `chain`, the seats alternate raising; returns the match
    and the seat that must answer the last call."""
    match = stacked("argentine-1v1", LOW, HIGH, dealer=1, scores=SCORES)
    for i, code in enumerate(chain):
        run(match, f"{i % 2} {CODES[code].name.lower()}")
    return match, len(chain) % 2


@pytest.mark.parametrize(("chain", "accepted", "rejected"), CHAINS, ids=[c[0] for c in CHAINS])
def test_envido_chain_accepted(chain: str, accepted: int | None, rejected: int) -> None:
    """An accepted chain is worth the sum of its calls (E=2, R=3), or the falta value alone if it
    holds a falta envido (target - leader's score); the best envido scores it, and the actor
    acts again (RULES.md §4.4, §4.3)."""
    match, answerer = _call_chain(chain)
    run(match, f"{answerer} quiero")
    points = FALTA if accepted is None else accepted
    assert match.view(0).awards == (award(1, points, AwardReason.ENVIDO),)
    assert match.scores == [20, 12 + points]
    outcome = match.view(0).envido
    assert outcome is not None
    assert (outcome.accepted, outcome.winner, outcome.team, outcome.points) == (True, 1, 1, points)
    assert outcome.chain == tuple(CODES[c] for c in chain)
    assert match.to_act == 0
    assert K.ENVIDO not in kinds(match)


@pytest.mark.parametrize(("chain", "accepted", "rejected"), CHAINS, ids=[c[0] for c in CHAINS])
def test_envido_chain_rejected(chain: str, accepted: int | None, rejected: int) -> None:
    """A rejected first call scores 1 for the caller; a rejected raise scores the chain before
    it for the raiser's side (EE 2, ER 2, EER 4, EF 2, EEF 4, RF 3, ERF 5, EERF 7; RULES.md
    §4.4). Nothing is announced and the actor acts again."""
    match, answerer = _call_chain(chain)
    raiser_team = 1 - answerer
    run(match, f"{answerer} no_quiero")
    assert match.view(0).awards == (award(raiser_team, rejected, AwardReason.ENVIDO_REJECTED),)
    outcome = match.view(0).envido
    assert outcome == EnvidoOutcome(
        False, tuple(CODES[c] for c in chain), (), None, raiser_team, rejected
    )
    assert match.to_act == 0


@pytest.mark.parametrize(
    ("chain", "allowed"),
    [
        ("", [K.ENVIDO, K.REAL_ENVIDO, K.FALTA_ENVIDO]),
        ("E", [K.ENVIDO, K.REAL_ENVIDO, K.FALTA_ENVIDO]),
        ("EE", [K.REAL_ENVIDO, K.FALTA_ENVIDO]),
        ("R", [K.FALTA_ENVIDO]),
        ("ER", [K.FALTA_ENVIDO]),
        ("EER", [K.FALTA_ENVIDO]),
        ("F", []),
        ("EF", []),
        ("RF", []),
        ("EERF", []),
    ],
)
def test_envido_raises_never_step_down(chain: str, allowed: list[ActionKind]) -> None:
    """Arena ruling RULES.md §4.4: at most two envidos, then at most one real envido, then at
    most one falta envido, which cannot be raised. The answer set is exactly the allowed raises
    then quiero / no quiero (no fold, no card)."""
    if chain:
        match, _ = _call_chain(chain)
        assert kinds(match) == [*allowed, K.QUIERO, K.NO_QUIERO]
    else:
        match = stacked("argentine-1v1", LOW, HIGH, dealer=1)
        assert [k for k in kinds(match) if k in CODES.values()] == allowed


@pytest.mark.parametrize(
    ("chain", "illegal"),
    [
        ("R", K.ENVIDO),  # real envido then envido steps down
        ("R", K.REAL_ENVIDO),  # two real envidos
        ("EE", K.ENVIDO),  # three envidos
        ("F", K.ENVIDO),  # nothing after falta envido
        ("F", K.REAL_ENVIDO),
        ("F", K.FALTA_ENVIDO),
        ("ER", K.ENVIDO),
        ("E", K.PLAY),  # an answer is owed: no card
        ("E", K.FOLD),  # folding is not an answer
        ("E", K.TRUCO),
    ],
)
def test_illegal_envido_chains_raise(chain: str, illegal: ActionKind) -> None:
    """Chains outside the ruling (RULES.md §4.4) and non-answers to a pending envido (§4.2)
    raise IllegalActionError naming the action."""
    match, _ = _call_chain(chain)
    action = play(card("4e")) if illegal is K.PLAY else call(illegal)
    with pytest.raises(IllegalActionError, match=str(action)):
        match.apply(action)


def test_falta_envido_is_the_leaders_need_with_target_15() -> None:
    """Falta envido is worth target - the leading side's score when settled, here 15 - 9 = 6
    with option target=15, even though the trailing side wins it (RULES.md §4.4, §4.1)."""
    match = stacked("argentine-1v1", HIGH, LOW, dealer=1, scores=(3, 9), options={"target": 15})
    run(match, "0 falta_envido", "1 quiero")
    assert match.view(0).awards == (award(0, 6, AwardReason.ENVIDO),)
    assert match.scores == [9, 9]


def test_envido_tie_goes_to_mano_1v1() -> None:
    """Equal envido values: the player nearer to mano wins (RULES.md §4.4). Seat 1 is mano."""
    match = stacked("argentine-1v1", "7e 12e 4b", "7o 10o 5b", dealer=0)  # 27 each
    run(match, "1 envido", "0 quiero")
    outcome = match.view(0).envido
    assert outcome is not None
    assert (outcome.winner, outcome.team) == (1, 1)
    assert outcome.announcements == ((1, 27), (0, None))  # a tie cannot beat: son buenas
    assert match.view(1).awards == (award(1, 2, AwardReason.ENVIDO),)


@pytest.mark.parametrize(("dealer", "winner"), [(1, 3), (3, 0), (2, 3)])
def test_envido_tie_goes_to_the_seat_nearer_mano_2v2(dealer: int, winner: int) -> None:
    """2v2: seats 0 and 3 both hold 33; whichever is nearer to mano in turn order wins
    (RULES.md §4.4), and its team scores."""
    hands = ("7e 6e 4b", "4o 5c 12b", "4e 5o 12c", "7o 6o 4c")
    match = stacked("argentine-2v2", *hands, dealer=dealer)
    mano = (dealer + 1) % 4
    run(match, f"{mano} envido", f"{(mano + 1) % 4} quiero")
    outcome = match.view(0).envido
    assert outcome is not None
    assert outcome.winner == winner
    assert match.view(0).awards == (award(winner % 2, 2, AwardReason.ENVIDO),)


@pytest.mark.parametrize(
    ("hand1", "announced"),
    [
        ("7o 1o 12b", ((0, 25), (1, 28))),  # 28 beats 25: announced
        ("5o 12o 4c", ((0, 25), (1, None))),  # 25 ties: son buenas (ties go to mano)
        ("4o 12o 1b", ((0, 25), (1, None))),  # 24: son buenas
    ],
)
def test_announcements_1v1(hand1: str, announced: tuple[tuple[int, int | None], ...]) -> None:
    """Arena ruling RULES.md §4.4: mano announces; the next player announces only a value that
    beats it strictly, otherwise says son buenas (None). Announced values are public: both
    seats' views carry the same announcements."""
    match = stacked("argentine-1v1", "5e 12e 4b", hand1, dealer=1)
    run(match, "0 envido", "1 quiero")
    for seat in (0, 1):
        outcome = match.view(seat).envido
        assert outcome is not None
        assert outcome.announcements == announced


def test_announcements_2v2_partner_of_the_leader_stays_silent() -> None:
    """Arena ruling RULES.md §4.4, 2v2 in turn order from mano: a player whose team is ahead
    says son buenas even with a better value; a player whose team is behind announces only a
    strictly better value. The single pass can end with the best value unannounced: the envido
    still goes to the best value (seat 2's 30 here, docs/RULINGS.md R1) and the winner's envido
    cards are revealed in the hand summary."""
    hands = ("5e 12e 4b", "4o 5c 12b", "7o 3o 12c", "7c 1c 4e")  # 25, 5, 30, 28
    match = stacked("argentine-2v2", *hands, dealer=3)
    run(match, "0 envido", "1 quiero")
    outcome = match.view(3).envido
    assert outcome is not None
    assert outcome.announcements == ((0, 25), (1, None), (2, None), (3, 28))
    assert (outcome.winner, outcome.team) == (2, 0)
    run(match, "0 fold", "1 fold", "2 fold")
    assert match.record().hands[-1].summary.revealed == ((2, match.record().hands[-1].deal[2][:2]),)


def test_announcements_2v2_each_better_value_is_announced() -> None:
    """RULES.md §4.4: announcements go round from mano; each player behind announces a better
    value, players already ahead stay silent."""
    hands = ("4e 12e 4b", "5o 12o 1b", "7c 12c 4o", "2e 3b 4c")  # 24, 25, 27, 4
    match = stacked("argentine-2v2", *hands, dealer=3)
    run(match, "0 envido", "1 quiero")
    outcome = match.view(1).envido
    assert outcome is not None
    assert outcome.announcements == ((0, 24), (1, 25), (2, 27), (3, None))
    assert outcome.winner == 2


def test_rejected_envido_announces_nothing_and_reveals_nothing() -> None:
    """A rejected envido scores without a showdown: nothing announced, no cards revealed at the
    end of the hand (RULES.md §4.4)."""
    match = stacked("argentine-1v1", LOW, HIGH, dealer=1)
    run(match, "0 envido", "1 no_quiero", "0 fold")
    hand = match.record().hands[-1]
    assert hand.summary.revealed == ()
    assert hand.awards == (
        award(0, 1, AwardReason.ENVIDO_REJECTED),
        award(1, 1, AwardReason.FOLD),
    )


def test_envido_winner_cards_revealed_at_hand_end() -> None:
    """The envido winner's envido cards are shown to all at the end of the hand (RULES.md §4.4,
    §4.8)."""
    match = stacked("argentine-1v1", LOW, "7e 6e 1b", dealer=1)
    run(match, "0 envido", "1 quiero", "0 4e", "1 1b", "1 7e", "0 5b")
    hand = match.record().hands[-1]
    assert hand.summary.revealed[0][0] == 1
    assert set(hand.summary.revealed[0][1]) == set(hand.deal[1][:2])


def test_envido_only_before_the_seat_has_played_1v1() -> None:
    """Envido is open to the actor only in the first trick and before the actor has played
    (RULES.md §4.2): mano loses it by playing, the other seat keeps it until it plays, and
    nobody has it in the second trick."""
    match = stacked("argentine-1v1", "4e 5e 6e", "4b 5b 6b", dealer=1)
    assert K.ENVIDO in kinds(match)
    run(match, "0 4e")
    assert kinds(match)[3:6] == [K.ENVIDO, K.REAL_ENVIDO, K.FALTA_ENVIDO]
    run(match, "1 5b")  # seat 1 wins the first trick and leads the second
    assert not {K.ENVIDO, K.REAL_ENVIDO, K.FALTA_ENVIDO} & set(kinds(match))
    run(match, "1 4b")
    assert not {K.ENVIDO, K.REAL_ENVIDO, K.FALTA_ENVIDO} & set(kinds(match))
    with pytest.raises(IllegalActionError, match="illegal action envido"):
        match.apply(call(K.ENVIDO))


def test_envido_open_to_each_seat_until_it_plays_2v2() -> None:
    """2v2: during the first trick every seat that has not played may call envido on its turn
    (RULES.md §4.2); after the first trick nobody may."""
    match = stacked("argentine-2v2", "4e 5e 6e", "4b 5b 6b", "4o 5o 6o", "4c 5c 6c", dealer=3)
    for seat, text in ((0, "4e"), (1, "4b"), (2, "4o"), (3, "5c")):
        assert K.ENVIDO in kinds(match), seat
        run(match, f"{seat} {text}")
    assert match.to_act == 3
    assert K.ENVIDO not in kinds(match)


def test_envido_responder_is_the_next_opponent_2v2() -> None:
    """The envido answer is asked of the first opponent after the caller; a raise is itself a
    call answered by the first opponent after the raiser (RULES.md §4.4)."""
    match = stacked("argentine-2v2", "4e 5e 6e", "4b 5b 6b", "4o 5o 6o", "4c 5c 6c", dealer=3)
    run(match, "0 4e", "1 envido")
    pending = match.view(2).pending
    assert pending is not None
    assert (pending.caller, pending.responder) == (1, 2)
    run(match, "2 real_envido")
    assert match.to_act == 3
    run(match, "3 quiero")
    assert match.to_act == 1  # seat 1 was the actor when it called


def test_no_second_envido_in_a_hand() -> None:
    """Once an envido was called and settled, nobody may call another in the hand (RULES.md
    §4.2)."""
    match = stacked("argentine-1v1", LOW, HIGH, dealer=1)
    run(match, "0 envido", "1 no_quiero")
    assert K.ENVIDO not in kinds(match)
    run(match, "0 4e")
    assert not {K.ENVIDO, K.REAL_ENVIDO, K.FALTA_ENVIDO} & set(kinds(match))


def test_no_envido_after_truco_accepted() -> None:
    """Once a truco is accepted no envido may be called (RULES.md §4.2), by either side."""
    match = stacked("argentine-1v1", LOW, HIGH, dealer=1)
    run(match, "0 truco", "1 quiero")
    assert K.ENVIDO not in kinds(match)
    run(match, "0 4e")
    assert match.to_act == 1
    assert not {K.ENVIDO, K.REAL_ENVIDO, K.FALTA_ENVIDO} & set(kinds(match))


def test_envido_va_primero() -> None:
    """Envido va primero (RULES.md §4.3): truco is pending, the answering seat (first trick, not
    played, no envido yet) answers with envido; the envido is settled first; then the same seat
    is asked the truco again, now without envido; then the actor plays on."""
    match = stacked("argentine-1v1", LOW, HIGH, dealer=1)
    run(match, "0 truco")
    assert kinds(match) == [K.ENVIDO, K.REAL_ENVIDO, K.FALTA_ENVIDO, K.QUIERO, K.NO_QUIERO]
    run(match, "1 envido")
    pending = match.view(0).pending
    assert pending is not None
    assert (pending.kind, pending.caller, pending.responder) == (K.ENVIDO, 1, 0)
    run(match, "0 quiero")
    assert match.view(0).awards == (award(1, 2, AwardReason.ENVIDO),)
    pending = match.view(0).pending
    assert pending is not None
    assert (pending.kind, pending.caller, pending.responder) == (K.TRUCO, 0, 1)
    assert kinds(match) == [K.QUIERO, K.NO_QUIERO]
    run(match, "1 quiero")
    assert match.to_act == 0
    assert match.view(0).hand_value == 2


def test_envido_va_primero_with_raises_then_truco_rejected() -> None:
    """Envido va primero with a raised chain (RULES.md §4.3, §4.4): ER rejected scores 2 for the
    real envido's side, then the truco asked again is rejected: 1 for the truco caller, and the
    hand ends there."""
    match = stacked("argentine-1v1", LOW, HIGH, dealer=1)
    run(match, "0 truco", "1 envido", "0 real_envido", "1 no_quiero", "1 no_quiero")
    hand = match.record().hands[-1]
    assert hand.awards == (
        award(0, 2, AwardReason.ENVIDO_REJECTED),
        award(0, 1, AwardReason.TRUCO_REJECTED),
    )
    assert hand.summary.ended_by == "rejected"


def test_envido_va_primero_2v2() -> None:
    """2v2: the truco's answering seat may answer with envido, which the next opponent after it
    answers; then the truco is asked again of the same seat (RULES.md §4.3)."""
    hands = ("4e 5e 6e", "4b 5b 6b", "4o 5o 6o", "4c 5c 6c")
    match = stacked("argentine-2v2", *hands, dealer=3)
    run(match, "0 truco", "1 envido", "2 quiero")
    pending = match.view(1).pending
    assert pending is not None
    assert (pending.kind, pending.responder) == (K.TRUCO, 1)
    assert kinds(match) == [K.QUIERO, K.NO_QUIERO]
    run(match, "1 quiero")
    assert match.to_act == 0


def test_no_envido_va_primero_once_the_answerer_has_played() -> None:
    """The truco's answering seat cannot answer with envido if it has played a card (RULES.md
    §4.3): mano plays, the other seat calls truco, mano may only accept or reject."""
    match = stacked("argentine-1v1", LOW, HIGH, dealer=1)
    run(match, "0 4e", "1 truco")
    assert kinds(match) == [K.QUIERO, K.NO_QUIERO]


def test_no_envido_va_primero_after_an_envido() -> None:
    """Envido va primero needs no envido called yet this hand (RULES.md §4.3)."""
    match = stacked("argentine-1v1", LOW, HIGH, dealer=1)
    run(match, "0 envido", "1 quiero", "0 truco")
    assert kinds(match) == [K.QUIERO, K.NO_QUIERO]


@pytest.mark.parametrize("chicos", [3, 1])
def test_chico_ends_mid_hand_on_envido(chicos: int) -> None:
    """Points count as soon as decided and the chico ends at once, mid-hand (RULES.md §4.1,
    arena ruling): the hand stops with no truco points; best of three goes on with a fresh
    chico from 0-0, one chico ends the match."""
    options = {"chicos": chicos}
    match = stacked("argentine-1v1", LOW, HIGH, dealer=1, scores=(0, 28), options=options)
    run(match, "0 envido", "1 quiero")
    hand = match.record().hands[-1]
    assert hand.awards == (award(1, 2, AwardReason.ENVIDO),)
    assert hand.summary.ended_by == "target"
    assert hand.summary.scores == (0, 30)
    assert match.games[0].winner_team == 1
    assert match.games[0].scores == (0, 30)
    if chicos == 3:
        assert not match.is_over
        assert (match.game_number, match.hand_number) == (1, 0)
        assert match.scores == [0, 0]
        assert match.games_won == [0, 1]
    else:
        assert match.is_over
        assert match.result is not None
        assert match.result.winner_team == 1
        assert match.to_act is None
        assert match.legal_actions() == ()


def test_chico_ends_on_envido_while_truco_waits() -> None:
    """Envido va primero reaching the target: the chico ends, the waiting truco is never
    answered and scores nothing (RULES.md §4.1, §4.3)."""
    match = stacked("argentine-1v1", LOW, HIGH, dealer=1, scores=(0, 27), options={"chicos": 1})
    run(match, "0 truco", "1 real_envido", "0 quiero")
    assert match.is_over
    hand = match.record().hands[-1]
    assert hand.awards == (award(1, 3, AwardReason.ENVIDO),)
    assert hand.summary.ended_by == "target"


def test_rejected_envido_can_end_the_chico() -> None:
    """A rejected envido's point also counts at once and can end the chico (RULES.md §4.1)."""
    match = stacked("argentine-1v1", LOW, HIGH, dealer=1, scores=(29, 0), options={"chicos": 1})
    run(match, "0 envido", "1 no_quiero")
    assert match.result is not None
    assert match.result.winner_team == 0
    assert match.result.games[0].scores == (30, 0)


def test_falta_envido_won_ends_the_chico() -> None:
    """A falta envido won by the leading side gives it exactly what it needs (RULES.md §4.4)."""
    match = stacked("argentine-1v1", HIGH, LOW, dealer=1, scores=(17, 4), options={"chicos": 1})
    run(match, "0 falta_envido", "1 quiero")
    assert match.result is not None
    assert match.result.games[0].scores == (30, 4)
