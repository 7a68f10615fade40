"""Which build of the engine `arena.rules` imports: the compiled one, or the Python sources.

`make compile` (tools/compile_rules.py, run by `make install` when mypyc and a C compiler are
there) builds every rules module but this one and `__init__` with mypyc into `_compiled/`,
with a manifest of the SHA-256 of each source it compiled. Importing this module (the package
`__init__` does it first) puts `_compiled/` in front of the package path only when that
manifest matches the sources beside it byte for byte and this interpreter's ABI; so a stale
build is never imported against newer sources: it is skipped with a RuntimeWarning that says
how to rebuild. `ARENA_PURE_RULES=1` always imports the sources (`make test` runs the rules
tests that way too). Without a build (a wheel, no compiler) the sources are used silently.

This reads files once, at import: the loader's business, not the rules' (no I/O after it).
"""

from __future__ import annotations

import copyreg
import dataclasses
import hashlib
import json
import os
import sys
import sysconfig
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

PURE_ENV = "ARENA_PURE_RULES"
HERE = Path(__file__).resolve().parent
COMPILED_DIR = HERE / "_compiled"
NOT_COMPILED = frozenset({"__init__.py", "_native.py"})


def source_hashes(folder: Path = HERE) -> dict[str, str]:
    """SHA-256 of every compiled rules source (all modules but `__init__` and this one)."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.glob("*.py"))
        if p.name not in NOT_COMPILED
    }


def choose(folder: Path = HERE) -> tuple[str, str]:
    """("compiled", why) when `folder/_compiled` holds a build of exactly these sources for
    this interpreter, else ("pure", why); a stale build also warns."""
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        return "pure", f"{PURE_ENV} is set"
    manifest_file = folder / "_compiled" / "manifest.json"
    if not manifest_file.is_file():
        return "pure", "no compiled build (make compile)"
    try:
        manifest = json.loads(manifest_file.read_text())
        built = manifest["sources"]
        tag, suffix = manifest["python"], manifest["ext_suffix"]
    except (ValueError, KeyError, TypeError):
        return "pure", f"unreadable {manifest_file}"
    if (tag, suffix) != (sys.implementation.cache_tag, sysconfig.get_config_var("EXT_SUFFIX")):
        return "pure", f"compiled for {tag}, this is {sys.implementation.cache_tag}"
    current = source_hashes(folder)
    changed = sorted(n for n in set(built) | set(current) if built.get(n) != current.get(n))
    if changed:
        why = (
            f"the compiled rules engine in {folder / '_compiled'} is stale "
            f"({', '.join(changed)} changed since it was built): using the Python sources; "
            f"run `make compile` to rebuild it, or set {PURE_ENV}=1"
        )
        warnings.warn(why, RuntimeWarning, stacklevel=2)
        return "pure", why
    return "compiled", f"built from these sources ({folder / '_compiled'})"


ENGINE, REASON = choose()
if ENGINE == "compiled":
    # The package being imported (`arena.rules`) looks for its submodules here first.
    sys.modules[__name__.rpartition(".")[0]].__path__.insert(0, str(COMPILED_DIR))


def _reduce(value: Any) -> tuple[type, tuple[Any, ...]]:
    return type(value), tuple(getattr(value, f.name) for f in dataclasses.fields(value))


def make_picklable(modules: tuple[ModuleType, ...]) -> None:
    """Compiled frozen dataclasses unpickle through their constructor (copyreg): mypyc's own
    unpickling sets their attributes one by one, which a frozen class refuses. Records,
    results and views then cross process boundaries as they do from the sources."""
    for module in modules:
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and dataclasses.is_dataclass(value)
                and value.__module__ == module.__name__
            ):
                copyreg.pickle(value, _reduce)
