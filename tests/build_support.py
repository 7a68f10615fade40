"""Copies of the `arena` package with its optional mypyc build, for the tests of which build
an import picks (test_rules_build.py, test_wire_build.py): each case runs a fresh interpreter
on a copy, so it may edit sources and manifests without touching the checkout."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def compiled_package(top: Path, manifest: str) -> Path:
    """`top` with a copy of the `arena` package and its compiled build: the checkout's when
    it has `manifest` (e.g. ``rules/_compiled/manifest.json``), else one made in the copy
    with tools/compile_rules.py (mypyc and a C compiler are dev requirements)."""
    shutil.copytree(
        ROOT / "arena", top / "arena", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    if not (top / "arena" / manifest).is_file():
        shutil.copytree(ROOT / "tools", top / "tools")
        subprocess.run(
            [sys.executable, "tools/compile_rules.py"],
            cwd=top,
            check=True,
            capture_output=True,
            timeout=900,
        )
    return top


def copy_package(built: Path, into: Path) -> Path:
    """`into`, holding a copy of the package in `built` (a case's own to edit)."""
    shutil.copytree(built / "arena", into / "arena")
    return into
