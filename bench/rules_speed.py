"""Rules engine speed: random-play hands per second for each variant, in-process, one core.

Each variant plays whole matches with random legal actions drawn from a seeded
`random.Random` (uniform over `legal_actions()`, applied with `apply`) for about 2 seconds of
CPU time (``BENCH_SECONDS`` overrides), and reports finished hands per CPU second. A second
figure also builds the acting seat's `view()` before every action, as the referee does.

    python -m bench.rules_speed          # prints the table
    bench.rules_speed.run()              # [(variant, hands per second), ...]

Target (issue "Rules engine"): at least 5,000 argentine-1v1 hands per second.
"""

from __future__ import annotations

import os
import platform
import random
import time

from arena.rules import Match, variant_names

DEFAULT_SECONDS = 2.0


def _seconds(seconds: float | None) -> float:
    if seconds is not None:
        return seconds
    return float(os.environ.get("BENCH_SECONDS", DEFAULT_SECONDS))


def measure(
    variant: str, seconds: float, *, with_views: bool = False, seed: int = 0
) -> dict[str, float]:
    """Play random matches of `variant` for `seconds` of this process's CPU time (one thread,
    so one core, and fair on a busy machine); return hands, actions and matches per second."""
    rng = random.Random(seed)
    hands = actions = matches = 0
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
        matches += 1
        if time.process_time() >= deadline:
            break
    elapsed = time.process_time() - start
    return {
        "hands/s": hands / elapsed,
        "actions/s": actions / elapsed,
        "matches/s": matches / elapsed,
    }


def run(seconds: float | None = None) -> list[tuple[str, float]]:
    """Random-play hands per second for every variant: [(variant, hands/s), ...]."""
    per_variant = _seconds(seconds)
    return [(name, measure(name, per_variant)["hands/s"]) for name in variant_names()]


def part(seconds: float) -> list[dict[str, object]]:
    """Rows for `python -m bench`: one per variant, engine alone and with a view per action."""
    rows: list[dict[str, object]] = []
    for name in variant_names():
        plain = measure(name, seconds)
        viewed = measure(name, seconds, with_views=True)
        rows.append(
            {
                "variant": name,
                "hands/s": plain["hands/s"],
                "actions/s": plain["actions/s"],
                "hands/s with views": viewed["hands/s"],
            }
        )
    return rows


def main() -> None:
    seconds = _seconds(None)
    print(
        f"rules engine, random play, python {platform.python_version()}, one core, "
        f"{seconds:g} s per variant (BENCH_SECONDS)"
    )
    rows = part(seconds)
    header = ("variant", "hands/s", "actions/s", "hands/s with views")
    print(f"{header[0]:<20}{header[1]:>12}{header[2]:>14}{header[3]:>22}")
    for row in rows:
        print(
            f"{row['variant']!s:<20}{row['hands/s']:>12,.0f}{row['actions/s']:>14,.0f}"
            f"{row['hands/s with views']:>22,.0f}"
        )


if __name__ == "__main__":
    main()
