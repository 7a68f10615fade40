"""`arena check`: the conformance check a bot author runs against their own bot.

The candidate bot plays real matches, through the real referee and tournament runner, against
the sample random bot (sample_bots/random_bot.py) over the chosen variants. What the runner
stores — a row per match (arena/tournament/store.py), a replay file per match
(docs/replay.md), each launched seat's output and the referee's log — is then read back for
the candidate's seats, and seven checks are judged:

    connects and says hello               no `forfeit` with the candidate at fault
    answers every decision in time        no timeout strike on its seats
    only legal answers                    no illegal_action strike on its seats
    stays connected to the end            no `disconnect` with the candidate at fault
    every match reached its natural end   termination `normal` (the overall pass)
    answers are the bot's own             no `FALLBACK_MARK` line in its output: the Python
                                          SDK answered for it because `act()` raised
    sends nothing the referee refuses     no message answered with an in-band error and
                                          ignored: an unknown or already answered request
                                          id, a reply for a seat or match it was not asked
                                          for, a second hello, an empty message
                                          (`messages_refused` in the referee's log; late
                                          answers are the timeouts', unreadable ones strikes)

Everything here but `sample_bot`, `check_config` and `load_matches` is a pure function over
`MatchRow`s and `Replay`s, so the judging is tested without playing a match. For information
it also collects the candidate's decision latency and the kinds of action it chose (and those
it was offered but never chose), so an author sees which situations were exercised, and the
signs (señas) it sent and received.
"""

from __future__ import annotations

import enum
import glob
import json
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.table import Table

import arena
from arena.errors import ArenaError, ConfigError
from arena.replay import Replay, load_replay
from arena.rules import Action, ActionKind, Match, Options, find_variant, parse_card
from arena.sdk import FALLBACK_MARK
from arena.stdio.lines import BAD_LINE_MARK
from arena.tournament.config import BotSpec, TournamentConfig, parse_config
from arena.tournament.runner import bot_logs, file_stem, replay_path
from arena.tournament.store import MatchRow, Store

CANDIDATE = "candidate"
OPPONENT = "opponent"


class Verdict(enum.Enum):
    """The result of one check."""

    PASS = "PASS"
    FAIL = "FAIL"
    UNTESTED = "n/a"  # no match got that far (the bot never connected, say)


@dataclass(frozen=True, slots=True)
class Check:
    """One of the checks: its key, its name for people, and its short column label."""

    key: str
    title: str
    label: str


CHECKS: tuple[Check, ...] = (
    Check("hello", "connects and says hello", "hello"),
    Check("in_time", "answers every decision in time", "in time"),
    Check("legal", "only legal answers", "legal"),
    Check("connected", "stays connected to the end", "connected"),
    Check("natural_end", "every match reached its natural end", "natural end"),
    Check("own_answers", "answers are the bot's own (no SDK fallback)", "own"),
    Check("clean", "sends nothing the referee refuses", "clean"),
)
_NATURAL_END = 4  # index of "natural_end" in CHECKS: the overall pass


@dataclass(frozen=True, slots=True)
class Finding:
    """One check over one match, or over every match of a variant.

    `detail` and `where` describe the first problem (the stored detail, e.g. "no answer
    within 1000 ms", and the match, game and hand); `faults` counts the candidate's faults of
    that kind (strikes, or the ending fault); `failed` counts the matches that failed it."""

    verdict: Verdict
    detail: str = ""
    where: str = ""
    faults: int = 0
    failed: int = 0


@dataclass(frozen=True, slots=True)
class MatchCheck:
    """What one stored match says about the candidate."""

    match_id: str
    variant: str
    seats: tuple[int, ...]  # the candidate's seats
    findings: tuple[Finding, ...]  # one per check, in CHECKS order
    strikes: int  # the candidate's strikes, from the stored row
    decisions: int  # the decisions it was asked for, faults included
    latencies_ms: tuple[float, ...]  # of every decision it answered (timeouts left out)
    chosen: tuple[str, ...]  # the action kinds it chose, in order (faults left out)
    offered: frozenset[str]  # every action kind that was legal at one of its decisions
    signs_sent: int = 0  # signs the candidate sent with its actions (recorded by the referee)
    signs_received: int = 0  # signs its seats received from a partner seat
    fallbacks: int = 0  # answers the SDK made for it because act() raised
    refused: int = 0  # its messages the referee refused in-band (late answers left out)


@dataclass(frozen=True, slots=True)
class Refused:
    """The messages of the candidate the referee refused in one match, by error code
    (``UNKNOWN_REQUEST``, ...), and the first text of each (`count_refused`)."""

    counts: Mapping[str, int]
    first: Mapping[str, str]

    def describe(self) -> str:
        """A line with the total, then a line per code: how many, and the first's text."""
        lines = [f"the referee refused {plural(sum(self.counts.values()), 'message')} of "
                 "the bot, answering each with an Error that says why:"]
        lines.extend(
            f"{code} x{n}: {self.first.get(code, '')}"
            for code, n in sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        return "\n".join(lines)


NOT_REFUSALS = frozenset({"LATE_ANSWER"})
"""Refusals `arena check` does not count: a late answer is the consequence of a timeout,
which the "in time" check reports."""


@dataclass(frozen=True, slots=True)
class VariantCheck:
    """The checks over every match of one variant, and what the candidate did there."""

    variant: str
    matches: int
    findings: tuple[Finding, ...]  # one per check, in CHECKS order
    strikes: int
    decisions: int
    latencies_ms: tuple[float, ...]
    chosen: tuple[tuple[str, int], ...]  # (kind, times), most chosen first
    never_chosen: tuple[str, ...]  # kinds offered to it but never chosen, sorted
    signs_sent: int = 0
    signs_received: int = 0

    @property
    def passed(self) -> bool:
        return all(f.verdict is not Verdict.FAIL for f in self.findings) and (
            self.findings[_NATURAL_END].verdict is Verdict.PASS
        )

    @property
    def latency_median_ms(self) -> float | None:
        return statistics.median(self.latencies_ms) if self.latencies_ms else None

    @property
    def latency_max_ms(self) -> float | None:
        return max(self.latencies_ms) if self.latencies_ms else None


def candidate_seats(row: MatchRow, replay: Replay, candidate: str = CANDIDATE) -> tuple[int, ...]:
    """The seats the candidate held: from the stored row, else from the replay's header."""
    names = row.seat_bots or tuple(s["bot"] for s in replay.header.get("seats", ()))
    return tuple(seat for seat, name in enumerate(names) if name == candidate)


def _where(match_id: str, line: dict[str, Any]) -> str:
    """Where a recorded decision was: match, game, hand and seat."""
    return f"{match_id}, game {line['game']} hand {line['hand']}, seat {line['seat']}"


def _strike_finding(
    fault: str, row: MatchRow, actions: list[dict[str, Any]], ending: dict[str, Any] | None,
    reached: bool,
) -> Finding:
    """A check on strikes of one kind ("timeout" or "illegal_action"): the faults recorded on
    the candidate's decisions, plus the fault that ended the match (not a recorded decision)."""
    faulty = [line for line in actions if line["fault"] == fault]
    ended = ending is not None and row.termination == fault
    count = len(faulty) + ended
    if not count:
        return Finding(Verdict.PASS if reached else Verdict.UNTESTED)
    if faulty:
        first = faulty[0]
        return Finding(Verdict.FAIL, first.get("detail", ""), _where(row.id, first), count, 1)
    assert ending is not None
    return Finding(Verdict.FAIL, ending.get("detail", ""), row.id, count, 1)


def signs(replay: Replay, seats: Sequence[int]) -> tuple[int, int]:
    """(sent, received): the signs `seats` sent with their actions, and the signs they
    received from a partner (another seat of the same team; signals "team" delivers every
    sign to every partner), as the replay's action lines record them."""
    team_of = {s["seat"]: s.get("team") for s in replay.header.get("seats", ())}
    sent = received = 0
    for line in replay.lines:
        if line.get("type") != "action" or not line.get("signal"):
            continue
        sender = line["seat"]
        sent += sender in seats
        received += sum(
            1 for seat in seats
            if seat != sender and team_of.get(seat) is not None
            and team_of.get(seat) == team_of.get(sender)
        )
    return sent, received


def check_match(
    row: MatchRow, replay: Replay, candidate: str = CANDIDATE, fallbacks: int = 0,
    refused: Refused | None = None,
) -> MatchCheck:
    """Judge every check on one stored match and its replay, for the candidate's seats;
    `fallbacks` is how many answers the SDK made for it (`count_fallbacks`), `refused` what
    of its messages the referee refused (`count_refused`)."""
    seats = candidate_seats(row, replay, candidate)
    result = replay.result or {}
    at_fault = row.faulty_bot == candidate
    ending = result if at_fault else None
    started = row.termination != "forfeit"
    actions = [
        line for line in replay.lines if line.get("type") == "action" and line["seat"] in seats
    ]
    detail = str(result.get("detail", ""))
    if row.termination == "forfeit" and at_fault:
        hello = Finding(Verdict.FAIL, detail, row.id, 1, 1)
    else:
        hello = Finding(Verdict.PASS if started else Verdict.UNTESTED)
    # The fault that ends a match by strikes is not a recorded decision; count it too.
    struck = at_fault and row.termination in ("timeout", "illegal_action")
    reached = bool(actions) or struck
    in_time = _strike_finding("timeout", row, actions, ending, reached)
    legal = _strike_finding("illegal_action", row, actions, ending, reached)
    if row.termination == "disconnect" and at_fault:
        connected = Finding(Verdict.FAIL, detail, row.id, 1, 1)
    else:
        connected = Finding(Verdict.PASS if started else Verdict.UNTESTED)
    if row.termination == "normal":
        natural = Finding(Verdict.PASS)
    else:
        who = row.faulty_bot or "nobody"
        seat = result.get("faulty_seat")
        how = f"{row.termination} by {who}" + (f" (seat {seat})" if seat is not None else "")
        natural = Finding(Verdict.FAIL, f"{how}: {detail}" if detail else how, row.id, 0, 1)
    if fallbacks:
        own = Finding(
            Verdict.FAIL,
            f"act() raised {plural(fallbacks, 'time')}; the SDK answered the first legal "
            "action instead (the traceback is in the bot's output)",
            row.id, fallbacks, 1,
        )
    else:
        own = Finding(Verdict.PASS if reached else Verdict.UNTESTED)
    counted = {code: n for code, n in (refused.counts if refused else {}).items()
               if code not in NOT_REFUSALS and n > 0}
    if counted and refused is not None:
        shown = Refused(counted, refused.first)
        clean = Finding(Verdict.FAIL, shown.describe(), row.id, sum(counted.values()), 1)
    else:
        clean = Finding(Verdict.PASS if started else Verdict.UNTESTED)
    sent, received = signs(replay, seats)
    return MatchCheck(
        match_id=row.id,
        variant=row.variant,
        seats=seats,
        findings=(hello, in_time, legal, connected, natural, own, clean),
        strikes=sum(row.strikes[s] for s in seats if s < len(row.strikes)),
        decisions=len(actions) + struck,
        latencies_ms=tuple(
            float(line["latency_ms"]) for line in actions if line["fault"] != "timeout"
        ),
        chosen=tuple(line["action"]["kind"] for line in actions if line["fault"] is None),
        offered=offered_kinds(replay, seats),
        signs_sent=sent,
        signs_received=received,
        fallbacks=fallbacks,
        refused=sum(counted.values()),
    )


def offered_kinds(replay: Replay, seats: Sequence[int]) -> frozenset[str]:
    """Every action kind that was legal at one of the decisions of `seats`: the replay's
    actions are run through the rules engine again to see the legal sets. (Stops quietly at
    anything that does not replay; `arena replay` is the place to check a replay.)"""
    h = replay.header
    try:
        variant = find_variant(h["variant"])
        deals = {
            (line["game"], line["hand"]): tuple(
                tuple(parse_card(c, variant.deck) for c in cards) for cards in line["deal"]
            )
            for line in replay.lines
            if line.get("type") == "hand"
        }
        match = Match(
            variant, Options(**h["options"]), int(h["seed"]), dealer=h["first_dealer"],
            scores=tuple(h["initial_scores"]), deals=deals,
        )
    except (ArenaError, ValueError, KeyError, TypeError):
        return frozenset()
    offered: set[str] = set()
    for line in replay.lines:
        if line.get("type") != "action":
            continue
        if match.is_over or match.to_act != line["seat"]:
            break
        if line["seat"] in seats:
            offered.update(a.kind.name.lower() for a in match.legal_actions())
        data = line["action"]
        card = parse_card(data["card"], variant.deck) if data.get("card") else None
        try:
            match.apply(Action(ActionKind[data["kind"].upper()], card=card, slot=data.get("slot")))
        except (ArenaError, ValueError, KeyError):
            break
    return frozenset(offered)


def _combine(findings: Sequence[Finding]) -> Finding:
    """One check over several matches: failed if any failed, with the first problem."""
    failed = [f for f in findings if f.verdict is Verdict.FAIL]
    faults = sum(f.faults for f in findings)
    if failed:
        first = failed[0]
        return Finding(Verdict.FAIL, first.detail, first.where, faults, len(failed))
    if any(f.verdict is Verdict.PASS for f in findings):
        return Finding(Verdict.PASS)
    return Finding(Verdict.UNTESTED)


def check_variant(variant: str, matches: Sequence[MatchCheck]) -> VariantCheck:
    """Every check over the matches of one variant (in the order given)."""
    chosen = Counter(kind for m in matches for kind in m.chosen)
    offered = frozenset().union(*(m.offered for m in matches))
    return VariantCheck(
        variant=variant,
        matches=len(matches),
        findings=tuple(
            _combine([m.findings[i] for m in matches]) if matches
            else Finding(Verdict.UNTESTED)
            for i in range(len(CHECKS))
        ),
        strikes=sum(m.strikes for m in matches),
        decisions=sum(m.decisions for m in matches),
        latencies_ms=tuple(ms for m in matches for ms in m.latencies_ms),
        chosen=tuple(sorted(chosen.items(), key=lambda kv: (-kv[1], kv[0]))),
        never_chosen=tuple(sorted(offered - set(chosen))),
        signs_sent=sum(m.signs_sent for m in matches),
        signs_received=sum(m.signs_received for m in matches),
    )


def analyse(
    matches: Iterable[tuple[MatchRow, Replay]],
    variants: Sequence[str],
    candidate: str = CANDIDATE,
    fallbacks: dict[str, int] | None = None,
    refused: Mapping[str, Refused] | None = None,
) -> list[VariantCheck]:
    """The checks per variant, in the order of `variants`, from stored rows and replays (and
    the SDK fallbacks counted per match id, `count_fallbacks`, and the refused messages,
    `count_refused`)."""
    per_variant: dict[str, list[MatchCheck]] = {v: [] for v in variants}
    for row, replay in sorted(matches, key=lambda pair: pair[0].id):
        per_variant.setdefault(row.variant, []).append(
            check_match(row, replay, candidate, (fallbacks or {}).get(row.id, 0),
                        (refused or {}).get(row.id))
        )
    return [check_variant(v, checks) for v, checks in per_variant.items()]


def failed_checks(reports: Sequence[VariantCheck]) -> list[Check]:
    """The checks that failed in at least one variant, in CHECKS order."""
    return [
        check for i, check in enumerate(CHECKS)
        if any(r.findings[i].verdict is Verdict.FAIL for r in reports)
    ]


# --------------------------------------------------------------------------- running it


def sample_bot() -> Path:
    """The sample random bot, the opponent: sample_bots/random_bot.py beside the package."""
    path = Path(arena.__file__).resolve().parent.parent / "sample_bots" / "random_bot.py"
    if not path.is_file():
        raise ConfigError(
            f"the opponent, the sample random bot, is not at {path}: `arena check` needs the "
            "repository checkout it was installed from (pip install -e .)"
        )
    return path


def check_config(
    candidate: BotSpec,
    *,
    name: str,
    folder: Path,
    variants: Sequence[str],
    games: int,
    decision_ms: int,
    seed: int,
    pass_env: Sequence[str] = (),
    writable: Sequence[Path] = (),
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> TournamentConfig:
    """The tournament of a check: the candidate against the sample random bot, `games`
    matches per variant with default options (or `options`, by variant) and fault policy,
    one match at a time (so the latency measured is the bot's, not a busy machine's),
    everything written in `folder`. The candidate's command runs in its own folder
    (`candidate.cwd`), in the same sandbox as a tournament's bots, with the variables
    `pass_env` and the folders `writable`."""
    if not candidate.launched:
        raise ConfigError("the bot to check must be a command the referee launches")
    raw: dict[str, Any] = {
        "tournament": {
            "name": name, "seed": seed, "games": games, "variants": list(variants),
            "concurrency": 1, "database": str(folder / "check.db"),
            "replays": str(folder / "replays"), "logs": str(folder / "logs"),
        },
        "options": {v: dict(o) for v, o in (options or {}).items()},
        "time_control": {"decision_ms": decision_ms},
        "sandbox": {"pass_env": list(pass_env),
                    "writable": [str(w.resolve()) for w in writable]},
        "bot": [
            {"name": CANDIDATE, "command": list(candidate.command),
             "protocol": candidate.protocol},
            {"name": OPPONENT, "command": ["python", str(sample_bot())]},
        ],
    }
    # Absolute folders: relative to `base` only the candidate's command is.
    return parse_config(raw, base=candidate.cwd)


def load_matches(store: Store, config: TournamentConfig) -> list[tuple[MatchRow, Replay]]:
    """Every stored match of the check, with its replay file."""
    return [
        (row, load_replay(replay_path(config, row.id))) for row in store.matches(config.name)
    ]




def fallback_lines(text: str) -> int:
    """How many SDK fallback lines (`arena.sdk.FALLBACK_MARK`) a bot's output holds."""
    return sum(1 for line in text.splitlines() if line.startswith(FALLBACK_MARK))


def count_fallbacks(config: TournamentConfig, match_ids: Iterable[str]) -> dict[str, int]:
    """Per match id, the SDK fallback lines in the candidate's output files (one per seat,
    `bot_logs(config)`). A bot that does not use the Python SDK never prints them."""
    folder = bot_logs(config)
    counts: dict[str, int] = {}
    for match_id in match_ids:
        safe = file_stem(match_id)  # as the runner names the files
        counts[match_id] = sum(
            fallback_lines(path.read_text(encoding="utf-8", errors="replace"))
            for path in folder.glob(f"{glob.escape(safe)}.seat*.{CANDIDATE}.log")
        )
    return counts


def count_refused(log_file: Path, candidate: str = CANDIDATE) -> dict[str, Refused]:
    """Per match id, the candidate's messages the referee refused, from the
    ``messages_refused`` lines of the referee's log (one per connection that had any, as it
    ended; a launched seat's connection plays one match). A line that is not JSON, or not
    such an event, is skipped."""
    counts: dict[str, Counter[str]] = {}
    first: dict[str, dict[str, str]] = {}
    try:
        text = log_file.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return {}
    for line in text.splitlines():
        if '"messages_refused"' not in line:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict) or event.get("event") != "messages_refused" or (
                event.get("bot") != candidate):
            continue
        matches, got, texts = event.get("matches"), event.get("counts"), event.get("first")
        if not isinstance(matches, list) or not matches or not isinstance(got, dict):
            continue
        match_id = str(matches[0])
        counter = counts.setdefault(match_id, Counter())
        for code, n in got.items():
            if isinstance(n, int):
                counter[str(code)] += n
        if isinstance(texts, dict):
            for code, said in texts.items():
                first.setdefault(match_id, {}).setdefault(str(code), str(said))
    return {m: Refused(dict(c), first.get(m, {})) for m, c in counts.items()}


def stdio_bad_lines(config: TournamentConfig, match_ids: Iterable[str]) -> tuple[int, str]:
    """How many lines the stdio adapter refused in the candidate's output files (a line on
    the bot's stdout that is not a reply: `arena.stdio.lines.BAD_LINE_MARK`), and the first,
    as the adapter wrote it. Zero and "" for a gRPC bot."""
    folder = bot_logs(config)
    count, first = 0, ""
    for match_id in match_ids:
        safe = file_stem(match_id)
        for path in sorted(folder.glob(f"{glob.escape(safe)}.seat*.{CANDIDATE}.log")):
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith(BAD_LINE_MARK):
                    count += 1
                    first = first or line.removeprefix(BAD_LINE_MARK)
    return count, first


# --------------------------------------------------------------------------- the report

_FAULTS = {"in_time": "timeout", "legal": "illegal answer", "own_answers": "fallback answer",
           "clean": "refused message"}
_STYLE = {Verdict.PASS: "green", Verdict.FAIL: "bold red", Verdict.UNTESTED: "dim"}


def plural(n: int, word: str, many: str = "") -> str:
    """`n word` or `n words` (or `n many`)."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def report_table(reports: Sequence[VariantCheck]) -> Table:
    """One row per variant: each check's verdict, then the candidate's decisions, strikes
    and latency."""
    table = Table(title="arena check", title_justify="left")
    table.add_column("variant", no_wrap=True)
    for check in CHECKS:
        table.add_column(check.label, justify="center", no_wrap=True)
    table.add_column("decisions", justify="right")
    table.add_column("strikes", justify="right")
    table.add_column("latency ms\nmedian / max", justify="right", no_wrap=True)
    table.add_column("signs\nsent/recv", justify="right", no_wrap=True)
    for r in reports:
        median, longest = r.latency_median_ms, r.latency_max_ms
        table.add_row(
            r.variant,
            *(f"[{_STYLE[f.verdict]}]{f.verdict.value}[/]" for f in r.findings),
            str(r.decisions),
            str(r.strikes),
            f"{median:.1f} / {longest:.1f}" if median is not None and longest is not None
            else "-",
            f"{r.signs_sent}/{r.signs_received}",
        )
    return table


def check_lines(reports: Sequence[VariantCheck]) -> list[str]:
    """Every check by name with its verdict over all variants; under a failed one, the first
    problem in each variant where it failed (the stored detail, and where it happened)."""
    lines = ["checks:"]
    for i, check in enumerate(CHECKS):
        findings = [(r, r.findings[i]) for r in reports]
        verdicts = {f.verdict for _, f in findings}
        verdict = (
            Verdict.FAIL if Verdict.FAIL in verdicts
            else Verdict.PASS if Verdict.PASS in verdicts
            else Verdict.UNTESTED
        )
        lines.append(f"  {verdict.value:<4}  {check.title}")
        for r, f in findings:
            if f.verdict is not Verdict.FAIL:
                continue
            counted = f"{f.failed} of {plural(r.matches, 'match', 'matches')}"
            if check.key in _FAULTS:
                counted = f"{plural(f.faults, _FAULTS[check.key])} in {counted}"
            else:
                counted = f"in {counted}"
            detail = f.detail.strip() or "(no detail)"
            first, *rest = detail.splitlines()
            lines.append(f"        {r.variant}: {first}")
            lines.extend(f"            {more}" for more in rest)
            lines.append(f"          ({counted}; first: {f.where})")
    return lines


def action_lines(reports: Sequence[VariantCheck]) -> list[str]:
    """Per variant, the kinds of action the candidate chose (faults left out), and the kinds
    it was offered but never chose: which situations the check exercised."""
    lines = ["actions chosen (how often), and offered but never chosen:"]
    for r in reports:
        if not r.decisions:
            lines.append(f"  {r.variant}: no decisions")
            continue
        chosen = ", ".join(f"{kind} {n}" for kind, n in r.chosen) or "none (all faults)"
        never = ", ".join(r.never_chosen) or "none"
        lines.append(f"  {r.variant}: {chosen}; never chosen: {never}")
    lines.append("signs (señas) sent with actions, and received from partners:")
    lines.extend(
        f"  {r.variant}: sent {r.signs_sent}, received {r.signs_received}" for r in reports
    )
    return lines


def summary(reports: Sequence[VariantCheck]) -> str:
    """The verdict in one line."""
    matches = sum(r.matches for r in reports)
    failed = failed_checks(reports)
    if not failed and all(r.passed for r in reports):
        return (
            f"PASS: every check passed in {plural(len(reports), 'variant')} "
            f"({plural(matches, 'match', 'matches')}, "
            f"{plural(sum(r.decisions for r in reports), 'decision')})"
        )
    bad = [r.variant for r in reports if not r.passed]
    return (
        f"FAIL: {len(failed)} of {len(CHECKS)} checks failed "
        f"({', '.join(c.title for c in failed)}) in {plural(len(bad), 'variant')} "
        f"({', '.join(bad)})"
    )
