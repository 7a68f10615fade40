"""Each launched bot's own folder, from the outside (hostile review round 5, "dirpeek" and
"longc"): a real `arena tournament`, sandboxed bots.

A bot's own folder — bound read-only into its sandbox, hidden from every other bot's — is by
default the folder of the first file its command names. A command can name a file of another
bot's folder without running it (`python -c CODE alice/bot.py`: the path is only
`sys.argv[1]`), and so read that bot's files. The referee cannot tell that from a folder two
bots of one author share on purpose, so it says so before the first match; and an argument
too long to be a file name (the code of `python -c`) is not a file, never a crash."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_e2e_support import (
    SAMPLE_BOTS,
    arena,
    explain,
    stored_matches,
    write_config,
)

pytestmark = pytest.mark.e2e

# Reads a file of the folder its first argument names (to stderr: the seat log), then plays
# as the program there. Padded past NAME_MAX (255 bytes): a `python -c` bot with a long
# program is a bot, not an error (it made `arena tournament` and `arena ladder serve` crash
# with an OSError traceback).
PEEKER = (
    "import os, runpy, sys\n"
    "folder = os.path.dirname(sys.argv[1])\n"
    "try:\n"
    "    print('PEEK', open(os.path.join(folder, 'book.txt')).read(), file=sys.stderr)\n"
    "except OSError as exc:\n"
    "    print('NOPEEK', exc, file=sys.stderr)\n"
    "target = sys.argv[1]\n"
    "sys.argv[1:] = []\n"
    "runpy.run_path(target, run_name='__main__')\n"
    + "#" * 300 + "\n"
)


def _folders(tmp_path: Path) -> tuple[Path, Path]:
    """alice's and bob's folders, each with the sample random bot and a private file."""
    made = []
    for name in ("alice", "bob"):
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(SAMPLE_BOTS / "random_bot.py", folder / "bot.py")
        (folder / "book.txt").write_text(f"{name.upper()}-PRIVATE-BOOK", encoding="utf-8")
        made.append(folder)
    return made[0], made[1]


def _peeks(tmp_path: Path, bot: str) -> list[str]:
    return [line for log in sorted((tmp_path / "logs").rglob(f"*.{bot}.log"))
            for line in log.read_text(encoding="utf-8").splitlines()
            if line.startswith(("PEEK", "NOPEEK"))]


def test_a_command_naming_another_bots_file_is_warned_before_any_match(tmp_path: Path) -> None:
    """mallory's command runs its own code and names alice's program as an argument: its
    own folder is alice's. The referee warns before the first match, naming both bots and
    the folder (the tournament then runs: the organizer may have meant it); bob, in a folder
    of his own, is named in no warning; and the long `python -c` program plays like any
    bot."""
    alice, bob = _folders(tmp_path)
    config = write_config(tmp_path, name="peek", variants=["argentine-1v1"], bots={
        "alice": ["python", str(alice / "bot.py")],
        "bob": ["python", str(bob / "bot.py")],
        "mallory": ["python", "-c", PEEKER, str(alice / "bot.py")],
    })
    run = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    warnings = [line for line in run.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, run.stderr
    assert f"bots alice and mallory share the folder {alice.resolve()}" in warnings[0]
    assert "set [[bot]] dir on both" in warnings[0]
    assert run.stderr.index("warning:") < run.stderr.index("matches to play")
    rows = stored_matches(tmp_path / "arena.db")
    assert len(rows) == 3, rows
    assert {r["termination"] for r in rows} == {"normal"}, rows
    peeks = _peeks(tmp_path, "mallory")
    assert peeks
    assert set(peeks) == {"PEEK ALICE-PRIVATE-BOOK"}, peeks


def test_bots_that_name_their_folders_are_not_warned_and_others_stay_hidden(
    tmp_path: Path,
) -> None:
    """The same bots, each with `[[bot]] dir` (mallory's its own, empty folder): no warning,
    and mallory's sandbox no longer shows alice's folder — it cannot read her book, nor run
    her program (so every one of its seats fails to connect and forfeits)."""
    alice, bob = _folders(tmp_path)
    own = tmp_path / "mallory"
    own.mkdir()
    config = write_config(tmp_path, name="named", variants=["argentine-1v1"], bots={
        "alice": ["python", str(alice / "bot.py")],
        "bob": ["python", str(bob / "bot.py")],
        "mallory": ["python", "-c", PEEKER, str(alice / "bot.py")],
    })
    text = config.read_text(encoding="utf-8")
    for name, folder in (("alice", alice), ("bob", bob), ("mallory", own)):
        text = text.replace(f'name = "{name}"\n', f'name = "{name}"\ndir = "{folder}"\n', 1)
    config.write_text(text, encoding="utf-8")
    run = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    assert "warning:" not in run.stderr, run.stderr
    peeks = _peeks(tmp_path, "mallory")
    assert peeks
    assert all(p.startswith("NOPEEK") for p in peeks), peeks
    rows = stored_matches(tmp_path / "arena.db")
    mallory = [r for r in rows if "mallory" in (r["bot0"], r["bot1"])]
    assert len(mallory) == 2, rows
    assert {r["termination"] for r in mallory} == {"forfeit"}, mallory
