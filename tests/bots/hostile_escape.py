"""A hostile launched bot that tries to get out of its seat, then plays (if it still can).

    python hostile_escape.py CONFIG_FILE DATABASE MARKER

In order, each finding printed on stdout as one ``FOUND ...`` line (``SCAN DONE`` when the
scan is over), all BEFORE anything else:

1. every process it can see in /proc (``PROC self|other PID COMMAND LINE``), and any other
   process's environment or command line holding ``ARENA_TOKEN=``;
2. opening CONFIG_FILE and DATABASE (and DATABASE-wal, -shm) by their absolute paths;
3. the token of its own seat is read from ARENA_TOKEN_FD (allowed: it is its own);
4. a ``setsid`` grandchild that sleeps forever with MARKER in its argv;
5. a file in its private temp dir, named MARKER;
6. 50 MiB on stdout;
7. 4 GB allocated and touched, 256 MiB at a time, each step printed (``ALLOC n MiB``);
8. then it plays first-legal with the SDK.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

from arena.sdk import Bot, run


def scan(needles: list[bytes]) -> None:
    me = os.getpid()
    for proc in sorted(Path("/proc").iterdir(), key=lambda p: p.name):
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        text = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
        tag = "self" if int(proc.name) == me else "other"
        print(f"PROC {tag} {proc.name} {text[:200]}", flush=True)
        blobs = [cmdline]
        with contextlib.suppress(OSError):
            blobs.append((proc / "environ").read_bytes())
        for blob in blobs if tag == "other" else ():
            for needle in needles:
                if needle in blob:
                    print(f"FOUND {needle.decode()} in /proc/{proc.name}", flush=True)


def try_open(path: str) -> None:
    try:
        with open(path, "rb") as f:
            data = f.read(64)
        print(f"FOUND file {path} ({len(data)} bytes read)", flush=True)
    except OSError as exc:
        print(f"absent {path}: {type(exc).__name__}", flush=True)


class FirstLegal(Bot):
    def act(self, view: object, legal: tuple[object, ...]) -> int:
        return 0


def main() -> None:
    config, database, marker = sys.argv[1:4]
    scan([b"ARENA_TOKEN="])
    for path in (config, database, database + "-wal", database + "-shm"):
        try_open(path)
    print("SCAN DONE", flush=True)
    subprocess.Popen(
        [sys.executable, "-c", "import time\nwhile True: time.sleep(60)", marker],
        start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    home = Path(os.environ.get("HOME", "/tmp"))
    (home / marker).write_text("left behind?")
    chunk = b"flood " * 10922 + b"\n"  # 64 KiB
    for _ in range(50 * 16):
        sys.stdout.buffer.write(chunk)
    sys.stdout.flush()
    hog = []
    try:
        for step in range(16):
            block = bytearray(256 * 1024 * 1024)
            block[:: 4096] = b"x" * len(block[:: 4096])  # touch every page
            hog.append(block)
            print(f"ALLOC {(step + 1) * 256} MiB", flush=True)
    except MemoryError:
        print("ALLOC MemoryError", flush=True)
    del hog
    sys.exit(run(FirstLegal))


if __name__ == "__main__":
    main()
