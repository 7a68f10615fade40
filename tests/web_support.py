"""Helpers of the web tests: a real `arena web` process, a real short tournament, and the
engine's own answer to "which cards may this seat know at this step" (the oracle the viewer
is checked against)."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from test_e2e_support import ARENA, HEURISTIC_BOT, SAMPLE_BOTS, arena, explain, python_bot
from test_e2e_support import write_config as _write_config

from arena.replay import load_replay
from arena.rules import (
    Action,
    ActionKind,
    Card,
    Match,
    Options,
    Signal,
    SignalKind,
    find_variant,
    parse_card,
)

BOTS = {
    "random": python_bot(SAMPLE_BOTS / "random_bot.py"),
    "heuristic": python_bot(HEURISTIC_BOT),
}
# Variants whose privacy matters most: the gallo's private discard, partners' cards seen in
# a Mineiro hand of ten, señas to partners only.
VARIANTS = ("argentine-gallo", "argentine-2v2", "mineiro-2v2")
SHORT = {"target": 15, "chicos": 1}


def write_config(folder: Path, name: str, **kw: Any) -> Path:
    variants = kw.pop("variants", VARIANTS)
    options = {v: SHORT for v in variants if v.startswith("argentine")}
    if "argentine-2v2" in variants:
        options["argentine-2v2"] = {**SHORT, "signals": "leaky"}
    return _write_config(folder, name=name, bots=kw.pop("bots", BOTS), variants=variants,
                         options=options, **kw)


def play(folder: Path, name: str, **kw: Any) -> Path:
    """Run a real tournament to the end; return its database."""
    run = arena("tournament", write_config(folder, name, **kw), "--no-progress", cwd=folder)
    assert run.returncode == 0, explain(run)
    (folder / "tournament.err").write_text(run.stderr, encoding="utf-8")
    return folder / "arena.db"


@contextmanager
def web_server(database: Path, *extra: str) -> Iterator[str]:
    """`arena web` on a free port, as a separate process (its output in a file beside the
    database, so a full pipe never blocks it); yields its base URL."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    log = database.with_suffix(f".web{time.monotonic_ns()}.log")
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(ARENA), "web", "--database", str(database), "--listen", "127.0.0.1:0", *extra],
            stdout=out, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        deadline = time.monotonic() + 60
        while True:
            m = re.search(r"arena web: (http://\S+?)/ ", log.read_text())
            if m:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("arena web did not start:\n" + log.read_text())
            time.sleep(0.1)
        yield m.group(1)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def get(url: str) -> tuple[int, str]:
    """GET with a plain HTTP client: status and body (errors included)."""
    try:
        with urllib.request.urlopen(url, timeout=60) as res:
            return res.status, res.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def get_json(url: str) -> tuple[int, Any]:
    status, body = get(url)
    return status, json.loads(body)


def cards_in(obj: Any) -> set[Card]:
    """Every Card anywhere inside `obj` (dataclasses, tuples, lists, sets, dicts)."""
    found: set[Card] = set()
    stack = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, Card):
            found.add(x)
        elif dataclasses.is_dataclass(x) and not isinstance(x, type):
            stack.extend(getattr(x, f.name) for f in dataclasses.fields(x))
        elif isinstance(x, (tuple, list, set, frozenset)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
    return found


@dataclasses.dataclass
class Known:
    """What the engine says a seat may know after a step, and its own hand then."""

    allowed: set[str]
    own: set[str]
    game: int
    hand: int


def engine_steps(replay_path: Path, seat: int | None) -> list[Known]:
    """Step by step (0: the deal, k: after decision k): the cards `seat` may know — every card
    in `Match.view(seat)` and in the events of that decision whose audience holds the seat.
    `seat` None: every card of the deal (the all-cards view)."""
    replay = load_replay(replay_path)
    h = replay.header
    variant = find_variant(h["variant"])
    deals = {
        (line["game"], line["hand"]): tuple(
            tuple(parse_card(c, variant.deck) for c in cards) for cards in line["deal"])
        for line in replay.lines if line["type"] == "hand"
    }
    opts = {k: v for k, v in h["options"].items() if k in Options.__dataclass_fields__}
    match = Match(variant, Options(**opts), int(h["seed"]), dealer=h["first_dealer"],
                  scores=tuple(h["initial_scores"]), deals=deals)

    def known(events: tuple[Any, ...]) -> Known:
        if seat is None:
            every = {str(c) for deal in deals.values() for cards in deal for c in cards}
            return Known(every, set(), match.game_number, match.hand_number)
        view = match.view(seat)
        allowed = cards_in(view) | cards_in([e.body for e in events if seat in e.audience])
        return Known({str(c) for c in allowed}, {str(c) for c in view.hand},
                     view.game_number, view.hand_number)

    out = [known(())]
    for line in replay.lines:
        if line["type"] != "action":
            continue
        a = line["action"]
        action = Action(ActionKind[a["kind"].upper()],
                        card=parse_card(a["card"], variant.deck) if a.get("card") else None,
                        slot=a.get("slot"))
        s = line.get("signal")
        signal = Signal(SignalKind[s["kind"].upper()], s.get("text", ""), s.get("value")) if s \
            else None
        out.append(known(match.apply(action, signal)))
    return out


CARD_TOKEN = re.compile(r"(?<![A-Za-z0-9])(?:1[0-2]|[1-7]|[AJQK])[a-z](?![A-Za-z0-9])")


def card_tokens(text: str, deck: str) -> set[str]:
    """Every card written in `text` in the deck's notation."""
    from arena.rules.cards import Deck

    d = Deck(deck)
    out = set()
    for token in CARD_TOKEN.findall(text):
        try:
            out.add(str(parse_card(token, d)))
        except ValueError:
            continue
    return out
