"""The layering written at the top of `arena/__init__.py` (STYLE.md "layers that only look
down"): the pure rules engine pulls in no concurrency, wire or logging library."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ("trio", "grpc", "structlog")


def test_importing_rules_pulls_in_no_trio_grpc_or_structlog() -> None:
    """`import arena.rules` in a fresh interpreter leaves trio, grpc and structlog (and any of
    their submodules) out of sys.modules (STYLE.md "Architecture")."""
    code = (
        "import json, sys\n"
        "import arena.rules\n"
        f"forbidden = {FORBIDDEN!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules\n"
        "    if m.split('.')[0] in forbidden)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(done.stdout) == []


def test_rules_submodules_import_alone() -> None:
    """Each rules module imports on its own in a fresh interpreter (no import cycle hides behind
    the package `__init__`), still without trio, grpc or structlog (STYLE.md "Architecture")."""
    modules = ("cards", "actions", "variants", "deal", "seeding", "views", "state", "record")
    for name in modules:
        code = (
            "import json, sys\n"
            f"import arena.rules.{name}\n"
            f"forbidden = {FORBIDDEN!r}\n"
            "print(json.dumps(sorted(m for m in sys.modules\n"
            "    if m.split('.')[0] in forbidden)))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
        )
        assert json.loads(done.stdout) == [], name


def test_the_command_line_imports_no_optional_driver_until_it_needs_one() -> None:
    """`import arena.cli` (every `arena` command) in a fresh interpreter leaves the optional
    PostgreSQL driver (psycopg) and Ray unimported: they load only when a PostgreSQL URL is
    opened or the Ray executor chosen. (Asking for psycopg's error classes at import time
    cost every command ~150 ms of its ~800, in this suite's hundred-odd `arena` runs too.)"""
    code = (
        "import json, sys\n"
        "import arena.cli\n"
        "print(json.dumps(sorted(m for m in sys.modules\n"
        "    if m.split('.')[0] in ('psycopg', 'psycopg_binary', 'ray'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(done.stdout) == []
