"""Which build of the rules engine `import arena.rules` picks (arena/rules/_native.py): the
mypyc build from `make compile` only when it was built from exactly the sources beside it,
the Python sources otherwise, and always with ARENA_PURE_RULES=1.

Each case imports the engine in a fresh interpreter from a copy of the package (with the
checkout's compiled build, or one built into the copy when the checkout has none), so a case
may edit sources and manifests without touching the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from build_support import compiled_package, copy_package

ROOT = Path(__file__).resolve().parent.parent
PROBE = (
    "import json, arena.rules, arena.rules.state as s, arena.rules._native as n\n"
    "from arena.rules import Match\n"
    "m = Match('argentine-1v1', seed=3)\n"
    "while not m.is_over: m.apply(m.legal_actions()[0])\n"
    "print(json.dumps({'engine': arena.rules.ENGINE, 'file': s.__file__, 'why': n.REASON,\n"
    "                  'hands': len(m.record().hands)}))\n"
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the `arena` package with a compiled rules engine (the checkout's, else built
    here with tools/compile_rules.py: mypyc and a C compiler are dev requirements)."""
    return compiled_package(tmp_path_factory.mktemp("engine"), "rules/_compiled/manifest.json")


def _probe(top: Path, **env: str) -> tuple[dict[str, object], str]:
    environ = {k: v for k, v in os.environ.items() if k != "ARENA_PURE_RULES"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=top,
        env={**environ, "PYTHONPATH": str(top), **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout), done.stderr


def _output(built: Path, script: str, pure: str, timeout: float) -> Any:
    """What `script` prints (JSON), run in a fresh interpreter on the package copy `built`,
    with ARENA_PURE_RULES=`pure` ("0": the compiled build, "1": the sources)."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=built,
        env={**os.environ, "ARENA_PURE_RULES": pure, "PYTHONPATH": str(built)},
        capture_output=True,
        text=True,
        check=True,
        timeout=timeout,
    )
    return json.loads(done.stdout)


def test_a_fresh_build_is_imported(built: Path) -> None:
    """With a build of exactly these sources, the submodules come from `_compiled/` (extension
    modules) and a match plays to its end."""
    seen, _ = _probe(built)
    assert seen["engine"] == "compiled"
    assert str(seen["file"]).startswith(str(built / "arena" / "rules" / "_compiled"))
    assert str(seen["file"]).endswith(".so")
    assert isinstance(seen["hands"], int)
    assert seen["hands"] > 0


def test_pure_env_imports_the_sources(built: Path) -> None:
    """ARENA_PURE_RULES=1 imports the .py sources even beside a fresh build."""
    seen, _ = _probe(built, ARENA_PURE_RULES="1")
    assert seen["engine"] == "pure"
    assert seen["file"] == str(built / "arena" / "rules" / "state.py")
    assert "ARENA_PURE_RULES" in str(seen["why"])


def test_a_stale_build_is_never_imported(built: Path, tmp_path: Path) -> None:
    """A source edited after the build (one comment line) makes the import use every source,
    with a warning that names the changed file and how to rebuild."""
    top = copy_package(built, tmp_path)
    state = top / "arena" / "rules" / "state.py"
    state.write_text(state.read_text() + "# edited after the build\n")
    seen, stderr = _probe(top)
    assert seen["engine"] == "pure"
    assert seen["file"] == str(state)
    assert "RuntimeWarning" in stderr
    assert "stale (state.py changed" in stderr
    assert "make compile" in stderr


def test_a_new_source_makes_the_build_stale(built: Path, tmp_path: Path) -> None:
    """A rules module added after the build (not in its manifest) also makes it stale."""
    top = copy_package(built, tmp_path)
    (top / "arena" / "rules" / "extra.py").write_text('"""Added after the build."""\n')
    seen, stderr = _probe(top)
    assert seen["engine"] == "pure"
    assert "extra.py" in stderr


def test_a_build_for_another_python_is_skipped(built: Path, tmp_path: Path) -> None:
    """A manifest written by another interpreter (its cache tag) is not this one's build."""
    top = copy_package(built, tmp_path)
    manifest = top / "arena" / "rules" / "_compiled" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["python"] = "cpython-39"
    manifest.write_text(json.dumps(data))
    seen, _ = _probe(top)
    assert seen["engine"] == "pure"
    assert "cpython-39" in str(seen["why"])


def test_without_a_build_the_sources_are_used_silently(built: Path, tmp_path: Path) -> None:
    """No `_compiled/` (a wheel, no C compiler): the sources, and nothing on stderr."""
    top = copy_package(built, tmp_path)
    shutil.rmtree(top / "arena" / "rules" / "_compiled")
    seen, stderr = _probe(top)
    assert seen["engine"] == "pure"
    assert stderr == ""


SIGNATURES = (
    "import dataclasses, inspect, json, re\n"
    "import arena.rules.views as views, arena.rules.record as record\n"
    "out = {}\n"
    "for module in (views, record):\n"
    "    for name, cls in vars(module).items():\n"
    "        init = vars(cls).get('__init__') if isinstance(cls, type) else None\n"
    "        code = getattr(init, '__code__', None)\n"
    "        if not (dataclasses.is_dataclass(cls) and code is not None\n"
    "                and code.co_filename == module.__file__):\n"
    "            continue  # not a dataclass, or dataclass's generated __init__\n"
    "        params = list(inspect.signature(cls.__init__).parameters.values())[1:]\n"
    "        out[name] = [\n"
    "            [[p.name, None if p.default is p.empty else repr(p.default), p.kind.name]\n"
    "             for p in params],\n"
    "            [[f.name, None if f.default is dataclasses.MISSING else repr(f.default),\n"
    "              'POSITIONAL_OR_KEYWORD'] for f in dataclasses.fields(cls)],\n"
    "            inspect.getsource(cls.__init__).count('_set(self, '),\n"
    "            sorted(re.findall(r'self\\.(\\w+) = \\1  # type: ignore\\[misc\\]',\n"
    "                              inspect.getsource(cls.__init__))),\n"
    "        ]\n"
    "print(json.dumps(out))\n"
)


def test_written_out_initializers_match_the_dataclass_fields() -> None:
    """The views' and records' hand-written `__init__` (compiled with the engine, for speed)
    take exactly the dataclass's fields, in order, with the same defaults, and set each one
    on both paths (`object.__setattr__` from the sources, a native store when compiled, see
    `arena.rules.views.NATIVE`): what dataclass would have generated (read from the sources)."""
    environ = {**os.environ, "ARENA_PURE_RULES": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SIGNATURES],
        env=environ,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    written = json.loads(done.stdout)
    assert {"SeatView", "Event", "Move", "HandSummary", "HandRecord", "PendingCall"} <= set(
        written
    )
    for name, (params, fields, sets, stores) in written.items():
        assert params == fields, name
        assert sets == len(fields), name
        assert stores == sorted(field[0] for field in fields), name


PLAYOUT = (
    "import json, random, arena.rules\n"
    "from arena.rules import Match, variant_names\n"
    "rng = random.Random(11)\n"
    "out = [arena.rules.ENGINE]\n"
    "for name in variant_names():\n"
    "    for seed in range(3):\n"
    "        m = Match(name, seed=seed)\n"
    "        while not m.is_over:\n"
    "            seat = m.to_act\n"
    "            view = m.view(seat)\n"
    "            out.append(repr(view))\n"
    "            out.append(repr(m.apply(rng.choice(view.legal_actions))))\n"
    "        out.append(repr(m.record()))\n"
    "print(json.dumps(out))\n"
)


def test_compiled_and_pure_engines_play_the_same_games(built: Path) -> None:
    """Two fresh interpreters, one on the compiled build and one on the sources, play the same
    seeded random matches of every variant: every view, every event and every game record is
    the same, character for character."""
    outputs = {}
    for pure in ("0", "1"):
        outputs[pure] = _output(built, PLAYOUT, pure, timeout=300)
    compiled, pure_run = outputs["0"], outputs["1"]
    assert compiled[0] == "compiled"
    assert pure_run[0] == "pure"
    assert len(compiled) > 1000
    assert compiled[1:] == pure_run[1:]


PICKLES = (
    "import json, pickle, random, arena.rules\n"
    "from arena.rules import Match\n"
    "m = Match('argentine-gallo', seed=1)\n"
    "rng = random.Random(1)\n"
    "values = []\n"
    "while not m.is_over:\n"
    "    values.append(m.view(m.to_act))\n"
    "    values.extend(m.apply(rng.choice(m.legal_actions())))\n"
    "values += [m.record(), m.result, m.options, m.variant]\n"
    "back = pickle.loads(pickle.dumps(values))\n"
    "print(json.dumps([arena.rules.ENGINE, len(values), back == values]))\n"
)


@pytest.mark.parametrize("pure", ["0", "1"], ids=["compiled", "pure"])
def test_records_views_and_events_pickle(built: Path, pure: str) -> None:
    """Every view, event, game record, result, options and variant of a match survives a
    pickle round trip on either build (a frozen dataclass compiled by mypyc would refuse its
    own unpickling; a process pool sends these between processes)."""
    engine, count, equal = _output(built, PICKLES, pure, timeout=120)
    assert engine == ("pure" if pure == "1" else "compiled")
    assert count > 50
    assert equal is True


FROZEN = (
    "import dataclasses, json, arena.rules, arena.rules.views as views\n"
    "from arena.rules import Match\n"
    "m = Match('argentine-2v2', seed=2)\n"
    "m.apply(m.legal_actions()[-2])\n"  # a truco: a PendingCall in the next view
    "view = m.view(m.to_act)\n"
    "refused = []\n"
    "for value, field in ((view, 'seat'), (view.pending, 'caller'), (view.moves[0], 'seat')):\n"
    "    try:\n"
    "        setattr(value, field, 9)\n"
    "    except dataclasses.FrozenInstanceError:\n"
    "        refused.append(field)\n"
    "print(json.dumps([arena.rules.ENGINE, views.NATIVE, refused, view.pending.caller]))\n"
)


@pytest.mark.parametrize("pure", ["0", "1"], ids=["compiled", "pure"])
def test_native_initializers_only_in_the_compiled_build(built: Path, pure: str) -> None:
    """`arena.rules.views.NATIVE` is true exactly in the compiled build (its written-out
    initializers then store fields natively), and the values it builds stay frozen there:
    assigning a field of a view, a pending call or a move still raises FrozenInstanceError."""
    engine, native, refused, caller = _output(built, FROZEN, pure, timeout=120)
    assert engine == ("pure" if pure == "1" else "compiled")
    assert native is (pure == "0")
    assert refused == ["seat", "caller", "seat"]
    assert caller == 0


FRESH_OBJECTS = (
    "import json, random, arena.rules\n"
    "from arena.rules import Action, Match, parse_card, variant_names\n"
    "from arena.rules.cards import Deck\n"
    "rng = random.Random(5)\n"
    "out = [arena.rules.ENGINE]\n"
    "def fresh(action, deck):\n"  # what a decoder builds: equal objects, never the engine's
    "    card = None if action.card is None else parse_card(str(action.card), deck)\n"
    "    return Action(action.kind, card=card, slot=action.slot)\n"
    "for name in variant_names():\n"
    "    first = Match(name, seed=9)\n"
    "    deck = first.variant.deck\n"
    "    stacked = {(0, 0): tuple(tuple(parse_card(str(c), deck) for c in cards)\n"
    "                             for cards in first.deal)}\n"
    "    m = Match(name, seed=9, deals=stacked)\n"
    "    while not m.is_over:\n"
    "        action = rng.choice(m.legal_actions())\n"
    "        out.append(repr(m.apply(fresh(action, deck))))\n"
    "    out.append(repr(m.record()))\n"
    "print(json.dumps(out))\n"
)


def test_equal_objects_from_outside_play_as_the_engines_own(built: Path) -> None:
    """A caller that never hands the engine its own objects (actions and cards rebuilt from
    their text, as a wire decoder does, and a stacked first deal of such cards) plays the same
    matches on the compiled build as on the sources: the identity-keyed lookups of the hot
    path (plays, trick strength, cards leaving a hand) fall back to equality."""
    outputs = {}
    for pure in ("0", "1"):
        outputs[pure] = _output(built, FRESH_OBJECTS, pure, timeout=300)
    assert outputs["0"][0] == "compiled"
    assert outputs["1"][0] == "pure"
    assert len(outputs["0"]) > 200
    assert outputs["0"][1:] == outputs["1"][1:]
