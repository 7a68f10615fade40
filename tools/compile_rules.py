"""Compile the rules engine (arena/rules) with mypyc: ``python tools/compile_rules.py``.

Optional and local (`make compile`, which `make install` runs when mypyc and a C compiler are
there): the engine stays pure Python source, and `arena.rules` imports these extension
modules only when they were built from exactly the sources beside them (`arena/rules/_native.py`
checks a SHA-256 of every compiled source; `ARENA_PURE_RULES=1` always picks the sources).

The extension modules go to ``arena/rules/_compiled/`` (git-ignored), never beside the .py
files, so Python's own import never finds them: only `arena.rules` adds that folder to its
package path, after the check. Every module but the package ``__init__`` is compiled, in one
group (calls between modules stay native).

The wire encoder (`arena/rpc/encode.py` and its caches, `arena/rpc/wirecache.py`) is compiled
into the same group: it reads every field of a view, and only in the engine's own group are
those native struct reads and its classes' methods direct C calls (from another group or a
Python module, each is a generic attribute lookup). Their modules go to
``arena/rpc/_compiled/`` with a manifest of their own (`arena/rpc/_native.py` checks it, and
that the engine build is the one they were compiled into). Should the encoder not compile,
the engine is built alone, with a note: the encoder then runs from its sources.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "arena" / "rules"
OUT = RULES / "_compiled"
GROUP = "arena.rules._engine"  # the shared library: arena/rules/_engine__mypyc.<abi>.so
RPC = ROOT / "arena" / "rpc"
WIRE_OUT = RPC / "_compiled"
WIRE = ("encode.py", "wirecache.py")  # compiled with the engine
WIRE_SOURCES = ("convert.py", *WIRE)  # what the wire manifest covers (arena/rpc/_native.py)


# Not compiled: the package `__init__` and `_native` (they choose the build), and `signals`
# (off the hot path; its `Signal.check` must see a raw int kind to refuse it with a clear
# error, where a compiled dataclass would raise a TypeError in its constructor).
NOT_COMPILED = ("__init__.py", "_native.py", "signals.py")


def sources() -> list[Path]:
    """The modules compiled: every rules module but those in `NOT_COMPILED`."""
    return sorted(p for p in RULES.glob("*.py") if p.name not in NOT_COMPILED)


def all_sources() -> list[Path]:
    """The sources the manifest covers: every rules module but the two that choose the build
    (a compiled module depends on the types of the ones left as Python, like `signals`)."""
    return sorted(p for p in RULES.glob("*.py") if p.name not in ("__init__.py", "_native.py"))


def build(wire: bool = True) -> Path:
    """Build into a temporary folder, then replace ``_compiled/`` with the result and its
    manifest (written last: a half-copied build has no manifest and is never imported); with
    `wire`, the encoder too, into ``arena/rpc/_compiled/``."""
    from mypyc.build import mypycify
    from setuptools import setup

    shutil.rmtree(WIRE_OUT, ignore_errors=True)  # no encoder of an older build survives
    files = sources() + ([RPC / name for name in WIRE] if wire else [])
    manifest = {
        "python": sys.implementation.cache_tag,
        "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX"),
        "sources": {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in all_sources()},
        "compiled": [p.stem for p in files if p.parent == RULES],
    }
    with tempfile.TemporaryDirectory(prefix="arena-mypyc-") as tmp:
        work = Path(tmp)
        cwd = os.getcwd()
        os.chdir(ROOT)  # mypyc names modules from paths relative to the project root
        try:
            extensions = mypycify(
                [str(p.relative_to(ROOT)) for p in files],
                opt_level="3",
                target_dir=str(work / "c"),
                group_name=GROUP,
            )
            setup(
                name="arena-rules-compiled",
                ext_modules=extensions,
                script_args=[
                    "--quiet",
                    "build_ext",
                    "--build-lib",
                    str(work / "lib"),
                    "--build-temp",
                    str(work / "tmp"),
                ],
            )
        finally:
            os.chdir(cwd)
        built = work / "lib" / "arena" / "rules"
        shutil.rmtree(OUT, ignore_errors=True)
        OUT.mkdir()
        for so in built.iterdir():
            shutil.copy2(so, OUT / so.name)
        engine_manifest = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
        (OUT / "manifest.json").write_text(engine_manifest)
        if wire:
            WIRE_OUT.mkdir()
            for so in (work / "lib" / "arena" / "rpc").iterdir():
                shutil.copy2(so, WIRE_OUT / so.name)
            wire_manifest = {
                "python": manifest["python"],
                "ext_suffix": manifest["ext_suffix"],
                "engine": hashlib.sha256(engine_manifest.encode()).hexdigest(),
                "sources": {
                    name: hashlib.sha256((RPC / name).read_bytes()).hexdigest()
                    for name in WIRE_SOURCES
                },
                "compiled": [name.removesuffix(".py") for name in WIRE],
            }
            (WIRE_OUT / "manifest.json").write_text(
                json.dumps(wire_manifest, indent=1, sort_keys=True) + "\n"
            )
    return OUT


def main() -> int:
    try:
        out = build(wire=True)
    except (Exception, SystemExit) as err:  # setuptools reports a failed compile as SystemExit
        print(
            f"note: the wire encoder (arena/rpc/{', arena/rpc/'.join(WIRE)}) did not compile "
            f"({type(err).__name__}: {str(err)[:200]}); building the rules engine alone, "
            "arena.rpc uses the encoder's Python sources",
            file=sys.stderr,
        )
        out = build(wire=False)
        print(f"compiled {len(sources())} rules modules into {out.relative_to(ROOT)}")
        return 0
    print(
        f"compiled {len(sources())} rules modules into {out.relative_to(ROOT)} and the wire "
        f"encoder ({', '.join(WIRE)}) into {WIRE_OUT.relative_to(ROOT)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
