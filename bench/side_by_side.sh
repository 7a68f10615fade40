#!/usr/bin/env bash
# Alternate whole runs of one bench part between an older commit and this checkout, twice
# each, as the README's side-by-side tables were measured:
#
#     bench/side_by_side.sh 7c4040b                  # referee_path, both sides compiled
#     BENCH_STREAMS=16,64 bench/side_by_side.sh 7c4040b referee_path
#
# REV is checked out in a temporary worktree; its rules engine is compiled there when it has
# tools/compile_rules.py (else it runs on its sources, and the table says "pure"). Each side
# imports `arena` from its own tree through PYTHONPATH and runs this checkout's .venv python.
# The usual BENCH_* variables pass through (defaults here: BENCH_MODES=thread,
# BENCH_ROUNDS=2, BENCH_SECONDS=3).
set -euo pipefail
rev=${1:?usage: bench/side_by_side.sh REV [PART]}
part=${2:-referee_path}
here=$(cd "$(dirname "$0")/.." && pwd)
py=$here/.venv/bin/python
export BENCH_MODES=${BENCH_MODES:-thread} BENCH_ROUNDS=${BENCH_ROUNDS:-2} \
    BENCH_SECONDS=${BENCH_SECONDS:-3}
tmp=$(mktemp -d)
trap 'git -C "$here" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$here" worktree add --detach -q "$tmp/base" "$rev"
if [ -f "$tmp/base/tools/compile_rules.py" ]; then
    PYTHONPATH="$tmp/base" "$py" "$tmp/base/tools/compile_rules.py" >/dev/null 2>&1 \
        || echo "note: $rev's rules engine did not compile; it runs on its sources"
fi
for round in 1 2; do
    for side in base now; do
        root=$here
        [ "$side" = base ] && root=$tmp/base
        engine=$(cd "$root" && PYTHONPATH="$root" "$py" -c \
            'import arena.rules as r; print(getattr(r, "ENGINE", "pure"))')
        echo "== $side ($([ "$side" = base ] && echo "$rev" || echo HEAD), $engine engine)," \
            "run $round, $(date +%T), load $(cut -d' ' -f1 /proc/loadavg)"
        (cd "$root" && PYTHONPATH="$root" "$py" -m bench "$part" | tail -n +3)
    done
done
