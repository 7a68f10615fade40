"""Which build of the wire encoder `arena.rpc` imports: compiled, or the Python sources.

`make compile` (tools/compile_rules.py) compiles `encode` and `wirecache` with mypyc in the
rules engine's group (native access to the engine's classes: a view's fields are read as C
struct fields), and puts their modules in `_compiled/` with a manifest of the SHA-256 of the
sources they were built from (`SOURCES`: those two and `convert`, whose names they bind).
Importing `arena.rpc` puts `_compiled/` in front of the package path only when

- the rules engine itself runs compiled (`arena.rules.ENGINE`; the compiled encoder lives in
  the engine's shared library and reads its classes natively),
- that manifest matches these sources byte for byte, this interpreter, and the engine build
  it was made with (a stale encoder is skipped with a RuntimeWarning naming the changed files),
- and neither `ARENA_PURE_RULES=1` (everything from the sources) nor `ARENA_PURE_WIRE=1` (the
  encoder alone from its sources, the engine still compiled) is set.

This reads files once, at import: the loader's business, not the wire's.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import sysconfig
import warnings
from pathlib import Path

import arena.rules

PURE_ENV = "ARENA_PURE_WIRE"
RULES_PURE_ENV = "ARENA_PURE_RULES"
HERE = Path(__file__).resolve().parent
COMPILED_DIR = HERE / "_compiled"
SOURCES = ("convert.py", "encode.py", "wirecache.py")
"""What the build depends on: the two compiled modules and `convert`, whose caches they use."""
ENGINE_MANIFEST = Path(arena.rules.__file__).resolve().parent / "_compiled" / "manifest.json"


def source_hashes(folder: Path = HERE) -> dict[str, str]:
    """SHA-256 of every source the compiled encoder was built from."""
    return {
        name: hashlib.sha256((folder / name).read_bytes()).hexdigest()
        for name in SOURCES
        if (folder / name).is_file()
    }


def engine_build_id(manifest: Path = ENGINE_MANIFEST) -> str:
    """SHA-256 of the engine's manifest: names the build the encoder was compiled into."""
    return hashlib.sha256(manifest.read_bytes()).hexdigest() if manifest.is_file() else ""


def choose(folder: Path = HERE, engine: str = arena.rules.ENGINE) -> tuple[str, str]:
    """("compiled", why) when `folder/_compiled` holds a build of exactly these sources for
    this interpreter and the engine build in use, else ("pure", why); a stale build warns."""
    for name in (RULES_PURE_ENV, PURE_ENV):
        if os.environ.get(name, "") not in ("", "0"):
            return "pure", f"{name} is set"
    manifest_file = folder / "_compiled" / "manifest.json"
    if not manifest_file.is_file():
        return "pure", "no compiled build (make compile)"
    if engine != "compiled":
        return "pure", "the rules engine runs from its sources (the encoder is built into it)"
    try:
        manifest = json.loads(manifest_file.read_text())
        built, engine_id = manifest["sources"], manifest["engine"]
        tag, suffix = manifest["python"], manifest["ext_suffix"]
    except (ValueError, KeyError, TypeError):
        return "pure", f"unreadable {manifest_file}"
    if (tag, suffix) != (sys.implementation.cache_tag, sysconfig.get_config_var("EXT_SUFFIX")):
        return "pure", f"compiled for {tag}, this is {sys.implementation.cache_tag}"
    if engine_id != engine_build_id():
        return "pure", "built with another build of the rules engine (make compile)"
    current = source_hashes(folder)
    changed = sorted(n for n in set(built) | set(current) if built.get(n) != current.get(n))
    if changed:
        why = (
            f"the compiled wire encoder in {folder / '_compiled'} is stale "
            f"({', '.join(changed)} changed since it was built): using the Python sources; "
            f"run `make compile` to rebuild it, or set {PURE_ENV}=1"
        )
        warnings.warn(why, RuntimeWarning, stacklevel=2)
        return "pure", why
    return "compiled", f"built from these sources ({folder / '_compiled'})"


ENCODER, REASON = choose()
if ENCODER == "compiled":
    # The package being imported (`arena.rpc`) looks for its submodules here first.
    sys.modules[__name__.rpartition(".")[0]].__path__.insert(0, str(COMPILED_DIR))
