"""An independent re-scorer of replay files (format 2, docs/replay.md): the proof that a third
party can score a match from the file alone.

It imports nothing from `arena` (tests/test_replay.py checks that) and knows only what the
docs say: the line kinds, and the scoring tables of RULES.md (envido chains, flor payout rows,
falta, the Mineiro hand of ten and iron hand, chico targets). It sums the `award` lines and
checks every score the file states against that sum: the scores before each hand, after each
hand, at each chico's end (a chico ends at the first award that reaches the target, and the
next hand starts the next chico from zero), and the `result` line, for a match cut short by a
fault too.

    python tests/rescore.py REPLAY.jsonl...   # prints one summary per file, exit 1 on error
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENVIDO_POINTS = {"envido": 2, "real_envido": 3}


def envido_value(cards: list[str]) -> int:
    """The envido of the best three of `cards` in the Spanish deck's notation ("7o", "12e"):
    two of a suit score their values + 20, else the best single value; 10-12 count 0
    (RULES.md §4.4). With a fourth card (the gallo before discarding) the best three."""
    def one(card: str) -> tuple[int, str]:
        rank = int(card[:-1])
        return (rank if rank <= 7 else 0), card[-1]

    parsed = [one(c) for c in cards]
    best = max((v for v, _ in parsed), default=0)
    for suit in {s for _, s in parsed}:
        values = sorted((v for v, s in parsed if s == suit), reverse=True)
        if len(values) >= 2:
            best = max(best, 20 + values[0] + values[1])
    return best
FLOR_PAYOUTS = {  # RULES.md §4.5; al_resto_quiero is the falta, computed below
    "unopposed": 3,
    "flor_quiero": 4,
    "flor_achico": 3,
    "contraflor_quiero": 6,
    "contraflor_achico": 4,
    "al_resto_achico": 4,
    "al_resto_achico_after_contraflor": 6,
}
FLOR_CLOSERS = {"quiero": "con_flor_quiero", "achico": "con_flor_me_achico"}
PICO_FALTA = 6  # RULES.md §4.7
HAND_REASONS = {"hand", "truco_rejected", "fold", "hand_of_ten_declined", "iron_hand"}
AFTER_TARGET = {"award", "duel_end", "hand_end", "game_end", "result"}


class RescoreError(Exception):
    """The file contradicts itself (or the rule book's scoring tables)."""


@dataclass
class Rescored:
    """What the re-scorer found: the totals it summed and what it checked."""

    path: str
    variant: str
    termination: str
    points: list[int]
    games_won: list[int]
    hands: int = 0
    awards: int = 0
    envidos: int = 0
    flors: int = 0
    chicos: int = 0
    cut_short: bool = False  # the last hand has no hand_end (a fault ended the match)
    reasons: set[str] = field(default_factory=set)


def _fail(number: int, why: str) -> None:
    raise RescoreError(f"line {number}: {why}")


def rescore(path: Path) -> Rescored:
    """Re-score one replay file; raise RescoreError at the first inconsistency."""
    lines = [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines() if text]
    if not lines or lines[0].get("type") != "match":
        raise RescoreError("line 1: the first line must be the match header")
    head = lines[0]
    if head.get("format") != 2:
        raise RescoreError(f"line 1: format {head.get('format')!r}: this re-scorer reads 2")
    if not (isinstance(head["seed"], str) and head["seed"].isdigit()):
        raise RescoreError(f"line 1: seed {head['seed']!r} is not a string of digits")
    n = head["accounts"]
    seats = head["seats"]
    team_of = [s["team"] for s in seats]
    target = head["options"]["target"]
    needed = head["options"]["chicos"] // 2 + 1
    scores = list(head["initial_scores"])
    if len(scores) != n or sorted(set(team_of)) != list(range(n)):
        raise RescoreError("line 1: initial_scores and seat teams must cover the accounts")
    out = Rescored(str(path), head["variant"], "", [0] * n, [0] * n)
    game, next_hand = 0, 0
    hand: dict[str, Any] | None = None  # the hand being played
    expect: list[tuple[int, int, str]] = []  # awards an envido / flor line announced
    ended = True  # the previous hand ended (or none started)
    chico_over = False  # a score reached the target: the chico ends with this hand
    result: dict[str, Any] | None = None
    discarded: set[str] = set()
    for number, line in enumerate(lines[1:], 2):
        kind = line["type"]
        if result is not None:
            _fail(number, "a line after the result")
        if expect and kind != "award":
            _fail(number, f"awards {expect} announced by the envido/flor line are missing")
        if chico_over and kind not in AFTER_TARGET:
            _fail(number, f"a {kind} line after the chico was won (scores {scores})")
        in_hand = kind in ("hand", "action", "award", "envido", "flor", "duel", "duel_end",
                           "hand_end")
        if in_hand and (line["game"], line["hand"]) != (game, next_hand):
            _fail(number, f"game {line['game']} hand {line['hand']}, expected game "
                  f"{game} hand {next_hand}")
        if in_hand and kind != "hand" and hand is None:
            _fail(number, f"a {kind} line outside a hand")
        if kind == "hand":
            if not ended:
                _fail(number, "a hand starts before the previous one ended")
            if line["scores"] != scores:
                _fail(number, f"scores before the hand {line['scores']} != summed {scores}")
            if line["mano"] != (line["dealer"] + 1) % len(seats):
                _fail(number, f"mano {line['mano']} is not the seat after dealer {line['dealer']}")
            at_ten = [a for a in range(n) if scores[a] >= 10]
            if head["variant"].startswith("mineiro"):
                want = ("hand_of_ten" if len(at_ten) == 1 else
                        "iron_hand" if len(at_ten) == n else "normal")
                if line["kind"] != want or (want == "hand_of_ten") != (line["at_ten"] is not None):
                    _fail(number, f"a {line['kind']} hand at scores {scores} (expected {want})")
                if want == "hand_of_ten" and line["at_ten"] != at_ten[0]:
                    _fail(number, f"at_ten {line['at_ten']} but account {at_ten[0]} is at ten")
            hand = line
            discarded: set[str] = set()  # the gallo's discard leaves its envido
            ended = False
            out.hands += 1
        elif kind == "envido":
            chain = line["chain"]
            if line["accepted"]:
                if "falta_envido" in chain:
                    want = PICO_FALTA if line["duel"] is not None else target - max(scores)
                else:
                    want = sum(ENVIDO_POINTS[k] for k in chain)
                # Announcements only ever beat the best so far (RULES.md §4.4), but the
                # envido goes to the best value at the table: a player silent because its
                # side was ahead may hold more than the last announcement (docs/RULINGS.md
                # R1). So the winner's own value, from the dealt cards it kept, must reach
                # every announced value, and the line's side must be the winner's.
                said = [(s, v) for s, v in line["announced"] if v is not None]
                if not said or [v for _, v in said] != sorted({v for _, v in said}):
                    _fail(number, f"announcements {line['announced']} must rise strictly")
                assert hand is not None
                if hand["side_of"][line["winner"]] != line["side"]:
                    _fail(number, f"envido winner seat {line['winner']} is not on side "
                          f"{line['side']}")
                kept = [c for c in hand["deal"][line["winner"]] if c not in discarded]
                value = envido_value(kept)
                if value < said[-1][1]:
                    _fail(number, f"envido winner seat {line['winner']} holds {value}, less "
                          f"than the announced {said[-1]}")
                reason = "envido"
            else:
                want = 1 if len(chain) == 1 else sum(ENVIDO_POINTS[k] for k in chain[:-1])
                reason = "envido_rejected"
            if line["points"] != want:
                _fail(number, f"envido {chain} pays {want}, the line says {line['points']}")
            expect = _accounts_of(hand, team_of, line["side"], want, reason)
            out.envidos += 1
        elif kind == "flor":
            payout, chain = line["payout"], line["chain"]
            if payout == "al_resto_quiero":
                want = target - max(scores)
                want = min(want, PICO_FALTA) if line["duel"] is not None else want
            elif payout in FLOR_PAYOUTS:
                want = FLOR_PAYOUTS[payout]
            else:
                _fail(number, f"unknown flor payout {payout!r}")
            closer = FLOR_CLOSERS["quiero" if "quiero" in payout else "achico"]
            if payout != "unopposed" and chain[-1] != closer:
                _fail(number, f"payout {payout} does not close the chain {chain}")
            if line["points"] != want:
                _fail(number, f"flor payout {payout} pays {want}, the line says {line['points']}")
            expect = _accounts_of(hand, team_of, line["side"], want, "flor")
            out.flors += 1
        elif kind == "award":
            team, points, reason = line["team"], line["points"], line["reason"]
            if expect:
                if (team, points, reason) != expect[0]:
                    _fail(number, f"award {(team, points, reason)} != announced {expect[0]}")
                expect.pop(0)
            if not 0 <= team < n or points <= 0:
                _fail(number, f"award of {points} to account {team}")
            scores[team] += points
            out.points[team] += points
            out.awards += 1
            out.reasons.add(reason)
            assert hand is not None
            if reason == "iron_hand" and (hand["kind"] != "iron_hand" or scores[team] != target):
                _fail(number, f"iron hand award leaves account {team} at {scores[team]}")
            if reason == "hand_of_ten_declined" and (hand["kind"] != "hand_of_ten"
                                                     or points != 2 or team == hand["at_ten"]):
                _fail(number, "a declined hand of ten pays 2 to the other side")
            if max(scores) >= target:
                chico_over = True
        elif kind == "hand_end":
            assert hand is not None
            if line["scores"] != scores:
                _fail(number, f"scores after the hand {line['scores']} != summed {scores}")
            ended, hand = True, None
            next_hand += 1
        elif kind == "game_end":
            if not ended or not chico_over:
                _fail(number, f"a chico ends at scores {scores} (target {target})")
            if line["scores"] != scores or scores[line["winner_team"]] != max(scores):
                _fail(number, f"chico end {line['scores']} winner {line['winner_team']} != "
                      f"summed {scores}")
            out.games_won[line["winner_team"]] += 1
            if line["games_won"] != out.games_won:
                _fail(number, f"games won {line['games_won']} != counted {out.games_won}")
            game, next_hand, scores, chico_over = game + 1, 0, [0] * n, False
            out.chicos += 1
        elif kind == "result":
            if chico_over:
                _fail(number, f"the chico was won (scores {scores}) but no game_end line "
                      "follows its hand")
            result = line
        elif kind == "action":
            if line["action"]["kind"] == "discard":
                discarded.add(line["action"]["card"])
        elif kind not in ("duel", "duel_end"):
            _fail(number, f"unknown line type {kind!r}")
    if result is None:
        raise RescoreError("no result line")
    if result["points"] != out.points:
        raise RescoreError(f"result points {result['points']} != summed awards {out.points}")
    if result["games_won"] != out.games_won:
        raise RescoreError(f"result games {result['games_won']} != counted {out.games_won}")
    if len(result["strikes"]) != len(seats):
        raise RescoreError("result strikes must have one entry per seat")
    out.termination = result["termination"]
    if out.termination == "normal":
        if not ended or hand is not None:
            raise RescoreError("a normal ending with a hand still open")
        winner = result["winner_team"]
        if winner is None or out.games_won[winner] < needed:
            raise RescoreError(f"winner {winner} has {out.games_won} chicos, needs {needed}")
    else:
        if chico_over and ended:
            raise RescoreError("a chico was won but no game_end line follows the hand")
        out.cut_short = not ended
    return out


def _accounts_of(
    hand: dict[str, Any] | None, team_of: list[int], side: int, points: int, reason: str
) -> list[tuple[int, int, str]]:
    """The awards a side's win pays: one per account of its seats this hand (R4)."""
    assert hand is not None
    accounts = sorted({team_of[s] for s, sd in enumerate(hand["side_of"]) if sd == side})
    return [(a, points, reason) for a in accounts]


def main(argv: list[str]) -> int:
    status = 0
    for name in argv:
        try:
            r = rescore(Path(name))
        except (RescoreError, KeyError, ValueError) as exc:
            print(f"{name}: FAIL {exc}")
            status = 1
            continue
        print(f"{name}: OK {r.termination}, points {r.points}, chicos {r.games_won}, "
              f"{r.hands} hands, {r.awards} awards" + (" (cut short)" if r.cut_short else ""))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
