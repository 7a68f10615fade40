"""Malformed configs are refused before anything runs (issue 9, finding 5).

Table-driven, through the real `arena tournament CONFIG` in a subprocess: each malformed
config must end with exit status 2 and ONE line on stderr that names the bad field (or the
bot), no traceback, nothing on stdout, and no file created next to the config (no arena.db,
no logs, no replays folder). Before this was built, 15 of these ended in a raw traceback
(some after the bots were launched), 5 were accepted and then forfeited every match, and
refused starts left an empty arena.db and log files behind.
"""

from __future__ import annotations

import contextlib
import os
import pty
import re
import resource
import select
import shlex
import socket
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_e2e_support import (
    ARENA,
    CLI_TIMEOUT,
    arena,
    bot_cmd,
    explain,
    stored_matches,
    write_config,
)

from arena.safe_text import printable
from arena.tournament.store import Store

BOTS = {"first": bot_cmd("first_legal"), "second": bot_cmd("first_legal")}


def _config(folder: Path, games: int = 1, concurrency: int = 4) -> Path:
    return write_config(folder, name="v", bots=BOTS, variants=["argentine-1v1"], games=games,
                        concurrency=concurrency, fixed_secret=False)


def _edit(path: Path, old: str, new: str) -> Path:
    text = path.read_text(encoding="utf-8")
    assert old in text, (old, text)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def _under(section: str, line: str) -> Callable[[Path], Path]:
    """Add `line` at the top of `[section]` (appending the section if it is not there)."""

    def edit(path: Path) -> Path:
        text = path.read_text(encoding="utf-8")
        if f"[{section}]\n" in text:
            return _edit(path, f"[{section}]\n", f"[{section}]\n{line}\n")
        path.write_text(f"{text}\n[{section}]\n{line}\n", encoding="utf-8")
        return path

    return edit


def _replace(old: str, new: str) -> Callable[[Path], Path]:
    return lambda path: _edit(path, old, new)


def _append(text: str) -> Callable[[Path], Path]:
    """Put `text` after everything (more [[bot]] tables)."""

    def edit(path: Path) -> Path:
        path.write_text(path.read_text(encoding="utf-8") + "\n" + text, encoding="utf-8")
        return path

    return edit


def _top(text: str) -> Callable[[Path], Path]:
    """Put `text` before every table (a top-level key)."""

    def edit(path: Path) -> Path:
        path.write_text(text + "\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
        return path

    return edit


def _section_as(section: str, value: str) -> Callable[[Path], Path]:
    """Drop every `[section...]` table and set `section = value` at the top instead."""

    def edit(path: Path) -> Path:
        blocks = path.read_text(encoding="utf-8").split("\n\n")
        kept = [b for b in blocks if not b.lstrip().startswith(f"[{section}")]
        path.write_text(f"{section} = {value}\n" + "\n\n".join(kept), encoding="utf-8")
        return path

    return edit


def _one_bot(path: Path) -> Path:
    text = path.read_text(encoding="utf-8")
    second = text.index("[[bot]]", text.index("[[bot]]") + 1)
    path.write_text(text[:second], encoding="utf-8")
    return path


def _non_utf8(path: Path) -> Path:
    path.write_bytes(path.read_bytes().replace(b'name = "v"', b'name = "v\xe9\xff"', 1))
    return path


def _database_is_folder(path: Path) -> Path:
    (path.parent / "arena.db").mkdir()
    return path


def _database_is_garbage(path: Path) -> Path:
    (path.parent / "arena.db").write_bytes(b"this is not a database, just some bytes\n" * 4)
    return path


def _command_is_folder(path: Path) -> Path:
    (path.parent / "botdir").mkdir()
    return _edit(path, 'command = ["python", ', f'command = ["{path.parent / "botdir"}", ')


def _not_executable(path: Path) -> Path:
    program = path.parent / "bot.sh"
    program.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    program.chmod(0o644)
    return _edit(path, 'command = ["python", ', f'command = ["{program}", ')


def _syntax_error(path: Path) -> Path:
    script = path.parent / "broken_bot.py"
    script.write_text("def play(:\n", encoding="utf-8")
    text = path.read_text(encoding="utf-8")
    first = text.index('command = ["python", ')
    end = text.index("]", first)
    path.write_text(
        text[:first] + f'command = ["python", "{script}"' + text[end:], encoding="utf-8"
    )
    return path


def _missing_script(path: Path) -> Path:
    text = path.read_text(encoding="utf-8")
    first = text.index('command = ["python", ')
    end = text.index("]", first)
    path.write_text(
        text[:first] + 'command = ["python", "no_such_bot.py"' + text[end:], encoding="utf-8"
    )
    return path


def _unclosed_quote(path: Path) -> Path:
    text = path.read_text(encoding="utf-8")
    first = text.index('command = ["python", ')
    end = text.index("\n", first)
    path.write_text(text[:first] + "command = \"python 'first_legal.py\"" + text[end:],
                    encoding="utf-8")
    return path


def _env(line: str) -> Callable[[Path], Path]:
    """Give the first bot an `env` table."""
    return _replace('name = "first"\n', f'name = "first"\nenv = {line}\n')


def _database_damaged(path: Path) -> Path:
    """An SQLite header, then bytes that are no database."""
    (path.parent / "arena.db").write_bytes(b"SQLite format 3\0" + b"not a page" * 500)
    return path


def _secret_file_is_folder(path: Path) -> Path:
    (path.parent / "keys").mkdir()
    return _under("tournament", 'secret_file = "keys"')(path)


# (case id, how to break a valid config, words the error line must contain)
CASES: list[tuple[str, Callable[[Path], Path], list[str]]] = [
    ("decision_ms over int32", _replace("decision_ms = 1000", "decision_ms = 2147483648"),
     ["time_control.decision_ms", "at most 2147483647"]),
    ("bank_ms over int32", _under("time_control", "bank_ms = 4294967296"),
     ["time_control.bank_ms", "at most"]),
    ("huge memory_mb", _under("limits", "memory_mb = 99999999999999"), ["limits.memory_mb"]),
    ("memory_mb = 1", _under("limits", "memory_mb = 1"),
     ["limits.memory_mb", "at least 64", "cannot even start"]),
    ("open_files = 1", _under("limits", "open_files = 1"), ["limits.open_files", "at least 16"]),
    ("tmp_mb = 0", _under("limits", "tmp_mb = 0"), ["limits.tmp_mb", "at least 1"]),
    ("sockets = -1", _under("limits", "sockets = -1"), ["limits.sockets", "at least 0"]),
    ("connect_ms = 1", _replace("[faults]\n", "[faults]\nconnect_ms = 1\n"),
     ["faults.connect_ms", "at least 100", "forfeit"]),
    ("300-char bot name", _replace('name = "first"', f'name = "{"b" * 300}"'),
     ["bot[0].name", "at most 64"]),
    ("bot name with a control character", _replace('name = "first"', 'name = "a\\u0007b"'),
     ["bot[0].name", "printable"]),
    ("300-char tournament name", _replace('name = "v"', f'name = "{"t" * 300}"'),
     ["tournament.name", "at most 64"]),
    ("time_control a number", _section_as("time_control", "5"),
     ["time_control: must be a table"]),
    ("limits a string", _top('limits = "none"'), ["limits: must be a table"]),
    ("tls a list", _top("tls = [1, 2]"), ["tls: must be a table"]),
    ("storage a string", _top('storage = "x"'), ["storage: must be a table"]),
    ("spectators a number", _section_as("spectators", "5"), ["spectators: must be a table"]),
    ("executor a list", _section_as("executor", "[1]"), ["executor: must be a table"]),
    ("sandbox a string", _section_as("sandbox", '"strict"'), ["sandbox: must be a table"]),
    ("faults a boolean", _section_as("faults", "true"), ["faults: must be a table"]),
    ("options a number", _section_as("options", "7"), ["options: must be a table"]),
    ("non-UTF-8 file", _non_utf8, ["not UTF-8"]),
    ("variant twice", _replace('variants = ["argentine-1v1"]',
                               'variants = ["argentine-1v1", "argentine-1v1"]'),
     ["tournament.variants", "twice"]),
    ("database is a folder", _database_is_folder, ["tournament.database", "folder"]),
    ("database is not SQLite", _database_is_garbage, ["tournament.database", "not an SQLite"]),
    ("listen without a port", _under("tournament", 'listen = "localhost"'),
     ["tournament.listen", "host:port"]),
    ("listen port too big", _under("tournament", 'listen = "127.0.0.1:70000"'),
     ["tournament.listen"]),
    ("listen on an unknown host", _under("tournament", 'listen = "no-such-host.invalid:0"'),
     ["tournament.listen", "no-such-host.invalid"]),
    ("missing script", _missing_script, ["bot[0].command", "'first'", "no_such_bot.py"]),
    ("command is a folder", _command_is_folder, ["bot[0].command", "'first'", "folder"]),
    ("program not executable", _not_executable, ["bot[0].command", "not executable"]),
    ("script does not compile", _syntax_error, ["bot[0].command", "does not compile"]),
    ("secret_file is a folder", _secret_file_is_folder, ["tournament.secret_file", "folder"]),
    ("one bot only (brackets kept)", _one_bot, ["at least two [[bot]] tables"]),
    ("command with an unclosed quote", _unclosed_quote,
     ["bot[0].command", "'first'", "No closing quotation"]),
    ("TOML nested too deeply", _top("deep = " + "[" * 1000 + "]" * 1000),
     ["v.toml", "not valid TOML", "nested too deeply"]),
    ("env value with a NUL", _env('{X = "a\\u0000b"}'), ["bot[0].env", "'X'", "NUL"]),
    ("env name with =", _env('{"A=B" = "x"}'), ["bot[0].env", "'A=B'", "'='"]),
    ("env name with a NUL", _env('{"A\\u0000" = "x"}'), ["bot[0].env", "NUL"]),
    ("env name empty", _env('{"" = "x"}'), ["bot[0].env", "empty"]),
    ("pass_env name with =", _replace("pass_env = [", 'pass_env = ["A=B", '),
     ["sandbox.pass_env", "'A=B'", "'='"]),
    ("pass_env name with a NUL", _replace("pass_env = [", 'pass_env = ["A\\u0000", '),
     ["sandbox.pass_env", "NUL"]),
    ("database is /dev/null", _replace('database = "arena.db"', 'database = "/dev/null"'),
     ["tournament.database", "/dev/null", "not a regular file"]),
    ("database damaged after its header", _database_damaged,
     ["tournament.database", "arena.db", "not a database"]),
    # a copied line: one connection played both remote bots' seats (hostile review, round 4)
    ("two remote bots with one token", _append(
        '[[bot]]\nname = "alice"\ntoken = "same-token-0123456789"\n\n'
        '[[bot]]\nname = "bob"\ntoken = "same-token-0123456789"\n'),
     ["bot[3].token", "'bob'", "the same token as bot 'alice'"]),
]


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def _assert_refused(run: subprocess.CompletedProcess[str], words: list[str]) -> None:
    assert run.returncode == 2, explain(run)
    assert "Traceback" not in run.stderr, explain(run)
    assert run.stdout == "", explain(run)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, explain(run)
    assert lines[0].startswith("error: "), explain(run)
    for word in words:
        assert word in lines[0], (word, explain(run))


@pytest.mark.parametrize(("case", "breaks", "words"), CASES, ids=[c[0] for c in CASES])
def test_a_malformed_config_is_refused_in_one_line_and_creates_nothing(
    tmp_path: Path, case: str, breaks: Callable[[Path], Path], words: list[str]
) -> None:
    """Each malformed config: exit 2, one error line naming the field (or the bot) and
    saying what is wrong, no traceback, and no file created next to the config (no
    arena.db, logs or replays): nothing runs until every check passed."""
    path = breaks(_config(tmp_path))
    before = _files(tmp_path)
    run = arena("tournament", path, "--no-progress", cwd=tmp_path)
    _assert_refused(run, words)
    assert _files(tmp_path) == before, f"{case}: files created by a refused start"


def test_a_database_in_a_folder_that_cannot_be_made_is_one_error_line(tmp_path: Path) -> None:
    """A database under a folder the checks cannot foresee failing (/proc accepts the access
    check, then refuses the folder, even to root): exit 2 and one line naming the database
    and why, no traceback; and nothing left behind (the logs folder was made, empty)."""
    path = _edit(_config(tmp_path), 'database = "arena.db"', 'database = "/proc/nope/arena.db"')
    before = _files(tmp_path)
    run = arena("tournament", path, "--no-progress", cwd=tmp_path)
    _assert_refused(run, ["database", "/proc/nope/arena.db", "cannot create"])
    assert _files(tmp_path) == before


FIRST_LEGAL = shlex.join(bot_cmd("first_legal"))


@pytest.mark.parametrize(("args", "words"), [
    (("match", "argentine-1v1", "python 'first_legal.py", FIRST_LEGAL),
     ["bot 1", "No closing quotation"]),
    (("match", "argentine-1v1", FIRST_LEGAL, 'b=python "x.py'), ["bot 2", "No closing quotation"]),
    (("check", "python 'first_legal.py"), ["COMMAND", "No closing quotation"]),
], ids=["match bot 1", "match bot 2", "check"])
def test_a_bot_argument_with_an_unclosed_quote_is_one_error_line(
    tmp_path: Path, args: tuple[str, ...], words: list[str]
) -> None:
    """`arena match` / `arena check` with a bot command whose quote is never closed: exit 2
    and one line naming the argument and the shell-splitting reason (it was a ValueError
    traceback from shlex), nothing created."""
    run = arena(*args, cwd=tmp_path)
    _assert_refused(run, words)
    assert _files(tmp_path) == set()


def test_a_ladder_s_unclosed_quote_or_deep_nesting_is_one_error_line(tmp_path: Path) -> None:
    """The ladder's own entry points: `arena ladder add --command` with an unclosed quote,
    and `arena ladder serve` of a config nested too deeply, each exit 2 with one line (a
    ValueError and a RecursionError traceback before)."""
    from arena.tournament.ladder_book import LadderBook

    book = LadderBook(tmp_path / "arena.db")
    book.save_settings("main", {"k": 3})
    book.close()
    deep = tmp_path / "deep.toml"
    deep.write_text('[ladder]\nname = "main"\nx = ' + "[" * 1000 + "]" * 1000 + "\n",
                    encoding="utf-8")
    add = arena("ladder", "add", "bot", "--command", "python 'b.py", "--database",
                tmp_path / "arena.db", cwd=tmp_path)
    _assert_refused(add, ["bot.command", "No closing quotation"])
    serve = arena("ladder", "serve", deep, cwd=tmp_path)
    _assert_refused(serve, ["deep.toml", "not valid TOML", "nested too deeply"])


def test_a_remote_bot_argument_is_shown_as_written_not_as_an_emoji(tmp_path: Path) -> None:
    """`remote:x:` (a remote bot without a token) is refused in one line that quotes it as
    written: rich no longer turns `:x:` into an emoji (it printed `remote❌`)."""
    run = arena("match", "argentine-1v1", "remote:x:", FIRST_LEGAL, cwd=tmp_path)
    _assert_refused(run, ["bot 1", "remote:NAME:TOKEN", "'remote:x:'"])
    assert "\u274c" not in run.stderr, explain(run)


CONTROLS = ("\x1b", "\x07", "\x08", "\x9b")  # ESC, BEL, backspace, 8-bit CSI


def test_a_crashing_bot_cannot_write_escape_codes_to_the_terminal(tmp_path: Path) -> None:
    """A bot that prints a window title, cursor moves, erase-line, colours and other control
    characters, then exits before connecting (tests/bots/crash_escapes.py): the fault detail
    stored in the database keeps its words without any control character, and neither
    `arena match` nor `arena check` writes one to stdout or stderr (the raw sequences went to
    the organizer's terminal); an emoji code is shown as written."""
    crash = shlex.join(bot_cmd("crash_escapes"))
    match = arena("match", "argentine-1v1", crash, FIRST_LEGAL, "--database", "m.db",
                  cwd=tmp_path)
    assert match.returncode == 1, explain(match)
    check = arena("check", crash, "--variant", "argentine-1v1", "--matches-per-pair", "1",
                  "--keep", "kept", cwd=tmp_path)
    assert check.returncode == 1, explain(check)
    for run in (match, check):
        shown = run.stdout + run.stderr
        assert "exited with code 3 before connecting" in shown, explain(run)
        for words in ("RED", "end-of-crash", ":white_check_mark:"):
            assert words in shown, (words, explain(run))
        for control in CONTROLS:
            assert control not in shown, (control, explain(run))
    for database in (tmp_path / "m.db", tmp_path / "kept" / "check.db"):
        details = [row["detail"] for row in stored_matches(database)]
        assert any("RED" in d and "end-of-crash" in d for d in details), details
        for control in CONTROLS:
            assert not any(control in d for d in details), (control, details)


@pytest.mark.parametrize(("raw", "shown"), [
    ("\x1b[31mRED\x1b[0m plain", "RED plain"),  # colours
    ("\x1b[2K\x1b[1Aup", "up"),  # erase line, cursor up
    ("\x1b]0;title\x07after", "after"),  # window title ended by BEL
    ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),  # hyperlink ended by ST
    ("\x1bPq#0\x1b\\x", "x"),  # DCS (sixel)
    ("\x1bcreset \x1b(0box", "reset box"),  # full reset, character set
    ("\x9b2Jgone", "gone"),  # 8-bit CSI
    ("a\x00b\x07c\x08d\re\x7ff\x85g", "abcdefg"),  # other C0, DEL, C1
    ("tab\tand\nnewline kept, ñandú ✓", "tab\tand\nnewline kept, ñandú ✓"),
])
def test_printable_drops_escape_sequences_and_controls_only(raw: str, shown: str) -> None:
    """`printable` removes whole escape sequences (CSI, OSC, DCS, two-byte escapes, 8-bit CSI)
    and every other control character, and keeps the words, tabs, newlines and non-ASCII
    letters."""
    assert printable(raw) == shown


def _read_terminal(leader: int, until: Callable[[str], bool], timeout: float) -> str:
    """What a program wrote to its pseudo-terminal until `until(text)` or `timeout` s."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the terminal closed
                break
            if not data:
                break
            chunks.append(data)
            if until(b"".join(chunks).decode("utf-8", "replace")):
                break
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_web_visitor_cannot_write_escape_codes_to_the_terminal(tmp_path: Path) -> None:
    """`arena web` on a terminal logs a request for a missing page with its path: a visitor
    asking for a path holding a window-title sequence (OSC) and a bell gets its words logged
    without them (the console log renderer printed them raw)."""
    Store(tmp_path / "arena.db").close()
    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen(
        [str(ARENA), "web", "--database", "arena.db", "--listen", "127.0.0.1:0"],
        cwd=tmp_path, env=env, stdin=follower, stdout=follower, stderr=follower,
        close_fds=True,
    )
    os.close(follower)
    try:
        seen = _read_terminal(leader, lambda t: "Ctrl-C" in t, CLI_TIMEOUT)
        url = re.search(r"arena web: (http://127\.0\.0\.1:\d+)/", seen)
        assert url, seen
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(url.group(1) + "/t/pwned%1B%5D0%3Btitle%07here", timeout=30)
        caught.value.close()
        assert caught.value.code == 404
        seen += _read_terminal(leader, lambda t: "here" in t, 30)
    finally:
        proc.send_signal(2)  # Ctrl-C
        proc.wait(CLI_TIMEOUT)
        os.close(leader)
    for words in ("web_error", "pwned", "here"):
        assert words in seen, (words, seen)
    for control in ("\x1b]", "\x07"):  # the log's own colours are CSI sequences: kept
        assert control not in seen, (control, repr(seen))


@contextlib.contextmanager
def _listening() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_a_port_in_use_is_refused_before_anything_starts(tmp_path: Path) -> None:
    """`listen` on a port another program listens on: exit 2, one line naming
    tournament.listen, no bot launched and no file created."""
    with _listening() as port:
        path = _under("tournament", f'listen = "127.0.0.1:{port}"')(_config(tmp_path))
        before = _files(tmp_path)
        run = arena("tournament", path, "--no-progress", cwd=tmp_path)
    _assert_refused(run, ["tournament.listen", f"127.0.0.1:{port}", "in use"])
    assert _files(tmp_path) == before


def test_a_web_port_in_use_is_refused_before_anything_starts(tmp_path: Path) -> None:
    """`arena tournament --web PORT` and `arena web --listen` on a port in use: exit 2, one
    line naming the option, no file created (it was a traceback once the tournament row was
    written: outside walkthrough)."""
    path = _config(tmp_path)
    with _listening() as port:
        before = _files(tmp_path)
        run = arena("tournament", path, "--no-progress", "--web", f"127.0.0.1:{port}",
                    cwd=tmp_path)
        _assert_refused(run, ["--web", f"127.0.0.1:{port}", "in use"])
        assert _files(tmp_path) == before
        (tmp_path / "arena.db").write_bytes(b"")
        run = arena("web", "--database", tmp_path / "arena.db", "--listen",
                    f"127.0.0.1:{port}", cwd=tmp_path)
    _assert_refused(run, ["--listen", f"127.0.0.1:{port}", "in use"])


@contextlib.contextmanager
def _read_only(folder: Path) -> Iterator[None]:
    """`folder` read-only: a read-only tmpfs mounted on it as root (root may write into a
    0555 folder), its mode 0555 otherwise."""
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)],
        capture_output=True, text=True, check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a read-only tmpfs here: {mounted.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@pytest.mark.parametrize("field", ["logs", "replays"])
def test_a_read_only_logs_or_replays_folder_is_refused(tmp_path: Path, field: str) -> None:
    """A logs or replays folder nobody may write to: exit 2, one line naming the field,
    and no database created."""
    path = _config(tmp_path)
    with _read_only(tmp_path / field):
        before = _files(tmp_path)
        run = arena("tournament", path, "--no-progress", cwd=tmp_path)
        _assert_refused(run, [f"tournament.{field}", "not writable"])
        assert _files(tmp_path) == before


def test_a_huge_schedule_is_played_lazily_with_progress(tmp_path: Path) -> None:
    """`games = 100000000` (10^8 matches): the referee starts playing at once in little
    memory (the schedule is not materialised), prints how many matches there are to play,
    and a resumed run counts the stored matches without listing the schedule."""
    path = _config(tmp_path, games=100_000_000, concurrency=2)
    process = subprocess.Popen(
        [str(ARENA), "tournament", str(path), "--no-progress"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        # A referee that materialised the schedule would take the shared machine's memory:
        # cap its address space so it fails fast instead.
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30)),
    )
    peak = 0
    try:
        deadline = time.monotonic() + CLI_TIMEOUT
        stored = 0
        while stored < 3:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "no match stored"
            status = Path(f"/proc/{process.pid}/status").read_text()
            rss = int(next(ln for ln in status.splitlines() if ln.startswith("VmRSS")).split()[1])
            peak = max(peak, rss)
            db = tmp_path / "arena.db"
            if db.exists():
                reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
                with contextlib.closing(reader), contextlib.suppress(sqlite3.OperationalError):
                    stored = reader.execute("SELECT count(*) FROM matches").fetchone()[0]
            time.sleep(0.2)
    finally:
        os.killpg(process.pid, 2)  # Ctrl-C
        _out, err = process.communicate(timeout=CLI_TIMEOUT)
    assert peak < 300_000, f"the referee grew to {peak} kB for a lazy schedule"
    assert "v: 100000000 matches to play" in err, err
    with contextlib.closing(sqlite3.connect(tmp_path / "arena.db")) as c:
        ids = [row[0] for row in c.execute("SELECT id FROM matches")]
    first_three = sum(i.rsplit(":", 1)[1] in ("0", "1", "2") for i in ids)
    assert first_three >= 2, ids  # two at a time: at most one of the first three was cut
    again = arena("tournament", path, "--no-progress", "--games", "3", cwd=tmp_path)
    assert again.returncode == 0, explain(again)
    assert (
        f"resuming v: {first_three} matches already stored, {3 - first_three} to play"
    ) in again.stderr, explain(again)
