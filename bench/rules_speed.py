"""Rules engine speed: random-play hands per second for each variant, in-process, one core.

Each variant plays whole matches with random legal actions drawn from a seeded
`random.Random` (uniform over `legal_actions()`, applied with `apply`) for about 2 seconds of
CPU time (``BENCH_SECONDS`` overrides), and reports finished hands per CPU second. A second
figure also builds the acting seat's `view()` before every action, as the referee does.

    python -m bench.rules_speed          # prints the table for the engine this process imports
    bench.rules_speed.run()              # [(variant, hands per second), ...]

`python -m bench rules_speed` (`part`) measures three builds of the engine side by side, each
in its own process, interleaved per variant in ``BENCH_ROUNDS`` rounds (default 3; each round
goes through the builds in another order, each figure keeps its best round). The first run of
a variant plays for ``BENCH_SECONDS / BENCH_ROUNDS``; every later run plays exactly as many
matches, so every build is timed on the same games:

- ``base``: the engine as it was before issue 14 (commit `BASELINE`, or ``BENCH_BASELINE``),
  exported from git into a temporary folder (the column says n/a without git or that commit);
- ``pure``: this checkout's Python sources (``ARENA_PURE_RULES=1``);
- ``mypyc``: this checkout's compiled build (`make compile`; n/a when not built or stale).

Targets: at least 5,000 argentine-1v1 hands per second (issue "Rules engine"); at least 2x the
baseline in every variant (issue 14).
"""

from __future__ import annotations

import io
import json
import os
import platform
import random
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

DEFAULT_SECONDS = 2.0
ROOT = Path(__file__).resolve().parent.parent
BASELINE = "8635161"  # main before issue 14's engine work: the "today" of its 2x goal


def _seconds(seconds: float | None) -> float:
    if seconds is not None:
        return seconds
    return float(os.environ.get("BENCH_SECONDS", DEFAULT_SECONDS))


def measure(
    variant: str,
    seconds: float,
    *,
    with_views: bool = False,
    seed: int = 0,
    matches: int | None = None,
) -> dict[str, float]:
    """Play random matches of `variant` for `seconds` of this process's CPU time (one thread,
    so one core, and fair on a busy machine), or exactly `matches` matches when given (the
    same games as a timed run that played that many); return hands, actions and matches per
    second, and the number of matches played."""
    from arena.rules import Match

    rng = random.Random(seed)
    hands = actions = played = 0
    start = time.process_time()
    deadline = start + seconds
    match_seed = seed
    while True:
        match = Match(variant, seed=match_seed)
        match_seed += 1
        while not match.is_over:
            if with_views:
                seat = match.to_act
                assert seat is not None
                match.view(seat)
            match.apply(rng.choice(match.legal_actions()))
            actions += 1
        hands += len(match.record().hands)
        played += 1
        if played == matches or (matches is None and time.process_time() >= deadline):
            break
    elapsed = time.process_time() - start
    return {
        "hands/s": hands / elapsed,
        "actions/s": actions / elapsed,
        "matches/s": played / elapsed,
        "matches": played,
        "hands": hands,
    }


def run(seconds: float | None = None) -> list[tuple[str, float]]:
    """Random-play hands per second for every variant: [(variant, hands/s), ...]."""
    from arena.rules import variant_names

    per_variant = _seconds(seconds)
    return [(name, measure(name, per_variant)["hands/s"]) for name in variant_names()]


# ----------------------------------------------------------------- three builds side by side


def export_baseline(commit: str, into: Path) -> Path | None:
    """`arena/` of `commit` from this checkout's git, unpacked under `into`; None without git
    or that commit."""
    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", commit, "arena"],
            capture_output=True,
            check=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


def _child(
    root: Path, pure: bool, variant: str, seconds: float, matches: tuple[int, int] | None
) -> dict[str, object]:
    """One build's figures for `variant`, measured in a fresh process that imports `arena`
    from `root` (this file runs as a script there, so nothing else puts `arena` on its path):
    for `seconds`, or the same number of matches as a first timed run (`matches`: plain,
    with views)."""
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("ARENA_PURE_RULES", None)
    if pure:
        env["ARENA_PURE_RULES"] = "1"
    done = subprocess.run(
        [sys.executable, __file__, "--json", variant, str(seconds), *map(str, matches or ())],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60 + 4 * seconds,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def part(seconds: float) -> list[dict[str, object]]:
    """Rows for `python -m bench`: per variant, hands/s of the baseline, the pure sources and
    the compiled build, alone and with a view per action, and the speed-ups over the
    baseline (`seconds` per figure, split into rounds)."""
    from arena.rules import variant_names

    rounds = max(1, int(os.environ.get("BENCH_ROUNDS", "3")))
    per_round = seconds / rounds
    with tempfile.TemporaryDirectory(prefix="arena-bench-base-") as tmp:
        base_root = export_baseline(os.environ.get("BENCH_BASELINE", BASELINE), Path(tmp))
        builds: dict[str, tuple[Path, bool]] = {"pure": (ROOT, True), "mypyc": (ROOT, False)}
        if base_root is not None:
            builds = {"base": (base_root, True), **builds}
        rows: list[dict[str, object]] = []
        for variant in variant_names():
            best: dict[tuple[str, str], float] = {}
            engines: dict[str, object] = {}
            games: tuple[int, int] | None = None  # set by the first run: the same games after
            order = list(builds)
            for index in range(rounds):
                turn = order[index % len(order) :] + order[: index % len(order)]
                for name in turn:
                    root, pure = builds[name]
                    got = _child(root, pure, variant, per_round, games)
                    if games is None:
                        counts = got["matches"]
                        assert isinstance(counts, list)
                        games = (int(counts[0]), int(counts[1]))
                    engines[name] = got["engine"]
                    for key in ("plain", "views"):
                        figure = got[key]
                        assert isinstance(figure, float)
                        best[name, key] = max(best.get((name, key), 0.0), figure)
            rows.append(_row(variant, best, engines))
    return rows


def _row(
    variant: str, best: dict[tuple[str, str], float], engines: dict[str, object]
) -> dict[str, object]:
    def figure(name: str, key: str) -> float | str:
        if name not in engines or (name == "mypyc" and engines[name] != "compiled"):
            return "n/a"
        return best[name, key]

    def ratio(name: str, key: str) -> float | str:
        top, bottom = figure(name, key), figure("base", key)
        if isinstance(top, str) or isinstance(bottom, str):
            return "n/a"
        return top / bottom

    row: dict[str, object] = {"variant": variant}
    for key, label in (("plain", "hands/s"), ("views", "+views")):
        for name in ("base", "pure", "mypyc"):
            row[f"{name} {label}"] = figure(name, key)
        row[f"pure x ({label})"] = ratio("pure", key)
        row[f"mypyc x ({label})"] = ratio("mypyc", key)
    return row


def _json_child(variant: str, seconds: float, matches: list[int]) -> None:
    import arena.rules

    plain = measure(variant, seconds, matches=matches[0] if matches else None)
    views = measure(variant, seconds, with_views=True, matches=matches[1] if matches else None)
    engine = getattr(arena.rules, "ENGINE", "pure")  # the baseline predates ENGINE
    print(
        json.dumps(
            {
                "engine": engine,
                "plain": plain["hands/s"],
                "views": views["hands/s"],
                "matches": [plain["matches"], views["matches"]],
            }
        )
    )


def _count_child(variant: str, matches: int, with_views: bool) -> None:
    """Play exactly `matches` seeded random matches (none: only the imports) and print how
    many hands they had: what `bench.rules_instructions` runs under callgrind."""
    import arena.rules  # the imports alone, for the run with no match

    played = measure(variant, 0.0, with_views=with_views, matches=matches) if matches else None
    print(int(played["hands"]) if played else 0, getattr(arena.rules, "ENGINE", "pure"))


def main() -> None:
    if sys.argv[1:2] == ["--count"]:
        _count_child(sys.argv[2], int(sys.argv[3]), sys.argv[4] == "views")
        return
    if sys.argv[1:2] == ["--json"]:
        _json_child(sys.argv[2], float(sys.argv[3]), [int(a) for a in sys.argv[4:6]])
        return
    import arena.rules

    seconds = _seconds(None)
    print(
        f"rules engine ({getattr(arena.rules, 'ENGINE', 'pure')}), random play, python "
        f"{platform.python_version()}, one core, {seconds:g} s per variant (BENCH_SECONDS)"
    )
    header = ("variant", "hands/s", "actions/s", "hands/s with views")
    print(f"{header[0]:<20}{header[1]:>12}{header[2]:>14}{header[3]:>22}")
    for name in arena.rules.variant_names():
        plain = measure(name, seconds)
        viewed = measure(name, seconds, with_views=True)
        print(
            f"{name:<20}{plain['hands/s']:>12,.0f}{plain['actions/s']:>14,.0f}"
            f"{viewed['hands/s']:>22,.0f}"
        )


if __name__ == "__main__":
    main()
