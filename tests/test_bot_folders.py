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
import tempfile
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


def test_a_file_named_as_an_argument_opens_no_folder(tmp_path: Path) -> None:
    """mallory's command runs its own code (a `python -c` program of over 255 bytes, which
    crashed the referee once: now a bot like any other) and names, as arguments, alice's
    program and a private host file (0600, in a 0700 folder, as ~/.ssh). Neither folder is
    bound into its sandbox: its own folder is the config's, where alice's is hidden, so it
    reads nothing of either and cannot even run alice's bot (it forfeits). The only warning
    is that the two thieves share the config's folder: nobody shares alice's. Before, the
    first existing file named anywhere chose the bot's
    folder (hostile review round 5: alice's opening book, then the organizer's key, came out
    in the replay's sign texts)."""
    alice, bob = _folders(tmp_path)
    vault = Path(tempfile.mkdtemp(prefix="arena-vault-", dir="/var/tmp"))
    try:
        vault.chmod(0o700)
        (vault / "book.txt").write_text("ORGANIZER-PRIVATE-KEY", encoding="utf-8")
        (vault / "book.txt").chmod(0o600)
        config = write_config(tmp_path, name="peek", variants=["argentine-1v1"], bots={
            "alice": ["python", str(alice / "bot.py")],
            "bob": ["python", str(bob / "bot.py")],
            "mallory": ["python", "-c", PEEKER, str(alice / "bot.py")],
            "vaulter": ["python", "-c", PEEKER, str(vault / "book.txt")],
        })
        run = arena("tournament", config, "--no-progress", cwd=tmp_path)
        assert run.returncode == 0, explain(run)
        warnings = [line for line in run.stderr.splitlines() if line.startswith("warning:")]
        assert len(warnings) == 1, run.stderr
        assert f"bots mallory and vaulter share the folder {tmp_path.resolve()}," in warnings[0]
        for thief in ("mallory", "vaulter"):
            peeks = _peeks(tmp_path, thief)
            assert peeks, thief
            assert all(p.startswith("NOPEEK") for p in peeks), (thief, peeks)
        rows = stored_matches(tmp_path / "arena.db")
        assert len(rows) == 6, rows
        honest = [r for r in rows if {r["bot0"], r["bot1"]} == {"alice", "bob"}]
        assert [r["termination"] for r in honest] == ["normal"], honest
    finally:
        shutil.rmtree(vault, ignore_errors=True)


def test_a_long_python_c_program_is_a_bot_like_any_other(tmp_path: Path) -> None:
    """A bot given as `python -c PROGRAM`, the program longer than a file name may be (an
    argument the referee once looked up as a file: OSError, a traceback at every start of
    `arena tournament` and `arena ladder serve`), plays its matches to their end."""
    alice, _ = _folders(tmp_path)
    code = ("from arena.sdk import Bot, main\n"
            "class First(Bot):\n"
            "    def act(self, view, legal):\n"
            "        return 0\n"
            "main(First)\n" + "#" * 300 + "\n")
    config = write_config(tmp_path, name="longc", variants=["argentine-1v1"], bots={
        "alice": ["python", str(alice / "bot.py")], "inline": ["python", "-c", code]})
    run = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    rows = stored_matches(tmp_path / "arena.db")
    assert [r["termination"] for r in rows] == ["normal"], rows


def test_bots_sharing_a_folder_are_warned_unless_both_name_it(tmp_path: Path) -> None:
    """Two bots whose programs lie in one folder read each other's files: the referee warns
    before the first match, naming both and the folder; with `[[bot]] dir` on both (sharing
    on purpose, as sample_bots/tournament.toml does) it does not."""
    alice, bob = _folders(tmp_path)
    shutil.copy(alice / "bot.py", alice / "carol.py")
    bots = {"alice": ["python", str(alice / "bot.py")],
            "bob": ["python", str(bob / "bot.py")],
            "carol": ["python", str(alice / "carol.py")]}
    config = write_config(tmp_path, name="shared", variants=["argentine-1v1"], bots=bots)
    run = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    warnings = [line for line in run.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, run.stderr
    assert f"bots alice and carol share the folder {alice.resolve()}" in warnings[0]
    assert run.stderr.index("warning:") < run.stderr.index("matches to play")
    named = write_config(tmp_path, name="named", variants=["argentine-1v1"], bots=bots)
    text = named.read_text(encoding="utf-8")
    for name in ("alice", "carol"):
        text = text.replace(f'name = "{name}"\n', f'name = "{name}"\ndir = "{alice}"\n', 1)
    named.write_text(text, encoding="utf-8")
    run = arena("tournament", named, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    assert "warning:" not in run.stderr, run.stderr


LIMITED = (
    "import sys, time\n"
    "from arena.sdk import Bot, main\n"
    "MODE = sys.argv.pop(1)  # the SDK reads the rest\n"
    "class Greedy(Bot):\n"
    "    def act(self, view, legal):\n"
    "        if MODE == 'memory':\n"
    "            hog = [bytearray(16 << 20) for _ in range(64)]  # 1 GiB, touched\n"
    "        else:\n"
    "            while True:\n"
    "                pass\n"
    "        return 0\n"
    "main(Greedy)\n"
)


@pytest.mark.parametrize(("mode", "words"), [
    ("memory", "over its memory limit ([limits] memory_mb = 128)"),
    ("cpu", "killed by SIGXCPU: over its CPU time ([limits] cpu_seconds = 1)"),
])
def test_a_seat_killed_by_a_limit_says_which(tmp_path: Path, mode: str, words: str) -> None:
    """A bot that allocates past `[limits] memory_mb`, or computes past `cpu_seconds`, is
    killed by the kernel; its match's stored detail says which limit (an outside
    walkthrough saw only "the client went away" and raw signal numbers in the seat log)."""
    alice, _ = _folders(tmp_path)
    greedy = tmp_path / "greedy"
    greedy.mkdir()
    (greedy / "bot.py").write_text(LIMITED, encoding="utf-8")
    config = write_config(
        tmp_path, name="limits", variants=["argentine-1v1"], decision_ms=60_000,
        bots={"alice": ["python", str(alice / "bot.py")],
              "greedy": ["python", str(greedy / "bot.py"), mode]},
        extra="\n[limits]\nmemory_mb = 128\ncpu_seconds = 1\n")
    run = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    rows = stored_matches(tmp_path / "arena.db")
    assert len(rows) == 1, rows
    assert rows[0]["faulty_bot"] == "greedy", rows
    assert words in rows[0]["detail"], rows[0]["detail"]


def test_an_options_argument_opens_no_folder_and_a_folder_inside_anothers_is_named(
    tmp_path: Path,
) -> None:
    """Round 6 of the hostile review: `python -X alice/data/book.txt -c CODE` — `-X` takes
    an argument, which the folder finder took for the program, so mallory's sandbox held
    alice's data folder, and, being inside alice's, no warning said so. Now options are
    read as Python reads them: mallory has no program file, its folder is the config's
    (where alice's is hidden) and it reads nothing. And a bot whose program lies inside
    another bot's folder (`inner`, run from alice/data) is named before the first match:
    it can read alice's files there."""
    alice, bob = _folders(tmp_path)
    data = alice / "data"
    data.mkdir()
    (data / "book.txt").write_text("ALICE-DATA-BOOK", encoding="utf-8")
    shutil.copy(SAMPLE_BOTS / "random_bot.py", data / "inner.py")
    code = (f"import sys\ntry:\n    print('PEEK', open({str(data / 'book.txt')!r}).read(), "
            "file=sys.stderr)\nexcept OSError as exc:\n    print('NOPEEK', exc, file=sys.stderr)\n")
    config = write_config(tmp_path, name="xopt", variants=["argentine-1v1"], bots={
        "alice": ["python", str(alice / "bot.py")],
        "bob": ["python", str(bob / "bot.py")],
        "mallory": ["python", "-X", str(data / "book.txt"), "-c", code],
        "inner": ["python", str(data / "inner.py")],
    })
    run = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    warnings = [" ".join(line.split()) for line in run.stderr.split("warning:")[1:]]
    assert len(warnings) == 1, run.stderr
    assert (f"bot inner's folder {data.resolve()} is inside bot alice's, so inner can read "
            "alice's files there") in warnings[0], warnings
    peeks = _peeks(tmp_path, "mallory")
    assert peeks, run.stderr
    assert all(p.startswith("NOPEEK") for p in peeks), peeks


def test_a_bot_whose_folder_lies_in_the_logs_is_not_started(tmp_path: Path) -> None:
    """The referee's own paths (logs, replays, database, config, secret, TLS key) are hidden
    from every seat, whatever folder a bot names. They were not when the bot's own folder
    lay inside one: the sandbox left the logs folder visible, live, and a hostile review
    (round 6) read its own match's seed from the log's match_start line and computed every
    hand. Now such a seat is not started: its matches are lost by forfeit, saying why,
    and the others play on."""
    alice, bob = _folders(tmp_path)
    (tmp_path / "logs").mkdir()
    shutil.copy(SAMPLE_BOTS / "random_bot.py", tmp_path / "logs" / "bot.py")
    config = write_config(tmp_path, name="inlogs", variants=["argentine-1v1"], bots={
        "alice": ["python", str(alice / "bot.py")],
        "bob": ["python", str(bob / "bot.py")],
        "seer": ["python", str(tmp_path / "logs" / "bot.py")],
    })
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('name = "seer"\n', f'name = "seer"\ndir = "{tmp_path}/logs"\n'),
                      encoding="utf-8")
    run = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    rows = stored_matches(tmp_path / "arena.db")
    assert len(rows) == 3, rows
    for row in rows:
        if "seer" in (row["bot0"], row["bot1"]):
            assert row["termination"] == "forfeit", row
            assert row["faulty_bot"] == "seer", row
            assert "lies in" in row["detail"], row
            assert "which no bot may see" in row["detail"], row
        else:
            assert row["termination"] == "normal", row
