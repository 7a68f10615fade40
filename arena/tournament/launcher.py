"""Launched bots: one process per seat, run in its jail (arena.tournament.sandbox), its output
capped, never orphaned.

The bot gets ARENA_SERVER, ARENA_BOT_NAME, ARENA_LAUNCHED=1 and ARENA_TOKEN_FD in its
environment: its one-off token is NOT in the environment (other processes could read it from
/proc/PID/environ) but in a pipe inherited at that file descriptor, to read once and close.
(ARENA_LAUNCHED tells the SDK not to wait for a referee that is not there: a bot whose
referee was killed must notice by itself.) stdout and stderr go into a pipe the referee
drains into the per-seat log file: the first `BotLimits.log_mb` MiB, then one marker line,
then only the last `TAIL_BYTES` of the rest, appended when the bot is done. When the seat is
done the process is asked to exit (it sees its stream end), then sent SIGTERM, then SIGKILL,
and everything left in its cgroup (setsid grandchildren included) is killed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

import structlog
import trio

from arena.errors import ConfigError
from arena.safe_text import printable
from arena.tournament.sandbox import BotLimits, Sandbox, SeatJail
from arena.tournament.socketcount import DESCRIPTOR_BUDGET, SocketCounter
from arena.tournament.spawn import ChildProcess, open_process

__all__ = [
    "TAIL_BYTES", "BotLimits", "SeatProcess", "own_folders", "program_dir", "program_file",
    "resolve_command", "shared_folders",
]

log = structlog.get_logger("arena.launcher")

TAIL_BYTES = 64 * 1024  # what is kept of a bot's output past its cap: the end of a crash


def resolve_command(command: tuple[str, ...], cwd: Path) -> list[str]:
    """The argv to run: `python` means this interpreter; the program must exist."""
    argv = list(command)
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    elif os.sep not in argv[0]:
        found = shutil.which(argv[0])
        if found is None:
            raise ConfigError(f"bot command {argv[0]!r} is not on PATH")
        argv[0] = found
    elif not _exists(cwd / argv[0]):
        raise ConfigError(f"bot command {argv[0]!r} does not exist (relative to {cwd})")
    return argv


def _exists(path: Path) -> bool:
    """Whether `path` exists; False where the system cannot even look it up (a name over
    NAME_MAX bytes, ENAMETOOLONG, which `Path.exists` raises)."""
    try:
        return path.exists()
    except OSError:
        return False


def _is_file(path: Path) -> bool:
    """Whether `path` is a file, as `_exists`: an argument too long to be a file name (the
    code of `python -c '...'`) is not one, and never an error."""
    try:
        return path.is_file()
    except OSError:
        return False


def program_file(command: Iterable[str], cwd: Path) -> Path | None:
    """The bot's program as its command names it (relative to `cwd`): the command itself
    (`./bot`), or, when that is an interpreter (`python`, or any program of the system such
    as /usr/bin/node, /usr/bin/java, /usr/bin/env), the file it runs (`python -u bot.py`,
    `node bot.js`, `java -jar b/bot.jar`, `env K=V python bot.py`), if that names a file
    outside the system; else None (`python -c CODE`, `sh -c ...`, `java -cp b Main`).

    Only the program chooses: a hostile review (round 5) named another bot's file, or the
    organizer's ~/.ssh/known_hosts, as an argument the program never ran (`python -c CODE
    alice/bot.py`), and the bot's folder, bound into its sandbox, became that one; round 6
    did it through an option's own argument (`python -X alice/data/w.txt -c CODE`). So an
    interpreter's options are read as that interpreter reads them (`_script_of`): every
    option before the program must be one known to take no argument, or carry its argument
    in the same word; anything else (an unknown option, code given inline) is no program.
    The path is made absolute without following a link: a link named as the program is not
    a door to where it points (the sandbox keeps links as links)."""
    argv = list(command)
    if not argv:
        return None
    system = (Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(),
              *(Path(p) for p in ("/usr", "/bin", "/sbin", "/lib", "/opt", "/etc")))

    def outside_system(path: Path) -> bool:
        return not any(path.is_relative_to(root) for root in system)

    first = argv[0]
    if os.sep in first:
        head = Path(os.path.abspath(cwd / first))
        if _is_file(head) and outside_system(_resolved(head)):
            return head  # the command is the program
    else:  # found on PATH: an interpreter, unless it is a program of its own outside the system
        found = shutil.which(first)
        if first not in ("python", "python3") and found is not None and outside_system(
                _resolved(Path(found))):
            return None
    name = Path(first).name
    if name == "env":  # env [-i] [NAME=VALUE]... COMMAND ARGS: the program is COMMAND's
        rest = argv[1:]
        while rest and (rest[0] in ("-i", "--ignore-environment", "-")
                        or ("=" in rest[0] and not rest[0].startswith("-"))):
            rest = rest[1:]
        if not rest or rest[0].startswith("-"):
            return None
        return program_file(rest, cwd)
    script = _script_of(name, argv[1:])
    if script is None:
        return None
    try:
        candidate = Path(os.path.abspath(cwd / script))
    except (OSError, ValueError):  # too long a name, a NUL: not a file
        return None
    if _is_file(candidate) and outside_system(_resolved(candidate.parent) / candidate.name):
        return candidate
    return None


_PYTHON_FLAGS = frozenset("bBdEhiIOPqsSuvVx?R3t")
"""CPython's one-letter options that take no argument (``-uB`` clusters them)."""
_PYTHON_ARGUMENT = frozenset("WX")  # take an argument: in the same word or the next
_PYTHON_NO_SCRIPT = frozenset("cm")  # code or a module follows: no program file
_PYTHON_LONG = {"--check-hash-based-pycs": True, "--help-env": False, "--help-xoptions": False,
                "--help-all": False, "--help": False, "--version": False}
"""CPython's long options, and whether each takes an argument (the next word)."""

_NODE_NO_SCRIPT = frozenset({"-e", "--eval", "-p", "--print", "-c", "--check", "-i",
                             "--interactive", "-v", "--version", "-h", "--help"})
_NODE_FLAGS = frozenset({"--expose-gc", "--no-warnings", "--enable-source-maps",
                         "--trace-warnings", "--trace-uncaught", "--no-deprecation",
                         "--throw-deprecation", "--harmony", "--jitless", "--no-addons",
                         "--preserve-symlinks", "--preserve-symlinks-main",
                         "--abort-on-uncaught-exception", "--experimental-vm-modules",
                         "--no-experimental-fetch", "--"})
"""Node options known to take no argument (any ``--option=value`` carries its own)."""

_JAVA_ARGUMENT = frozenset({"-cp", "-classpath", "--class-path", "-p", "--module-path",
                            "--upgrade-module-path", "--add-modules", "--limit-modules",
                            "--add-opens", "--add-exports", "--add-reads",
                            "--enable-native-access", "--patch-module"})
"""Java options whose argument is the next word."""


def _script_of(interpreter: str, args: list[str]) -> str | None:
    """The file `interpreter` runs given `args`, as it reads its options; None when it runs
    no file, or an option is not known (a word that might be an option's argument is never
    taken for the program)."""
    if interpreter.startswith("python") or interpreter == Path(sys.executable).name:
        return _python_script(args)
    if interpreter in ("node", "nodejs"):
        for i, arg in enumerate(args):
            if arg == "--":
                return args[i + 1] if i + 1 < len(args) else None
            if not arg.startswith("-") or arg == "-":
                return arg if arg != "-" else None
            if arg in _NODE_NO_SCRIPT:
                return None
            if (arg.startswith("--") and "=" in arg) or arg in _NODE_FLAGS:
                continue
            return None
        return None
    if interpreter == "java":
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "-jar":
                return args[i + 1] if i + 1 < len(args) else None
            if arg in _JAVA_ARGUMENT:
                i += 2
                continue
            if not arg.startswith("-"):
                return None  # a main class: no program file
            if not arg.startswith(("-D", "-X", "-ea", "-da", "-esa", "-dsa", "-server",
                                   "-client", "-verbose", "--enable-preview")) and "=" not in arg:
                return None
            i += 1
        return None
    # Any other interpreter (sh, bash, ruby, perl...): its program only as its first word.
    if args and not args[0].startswith("-"):
        return args[0]
    return None


def _python_script(args: list[str]) -> str | None:
    """The file CPython runs given `args` (``python [option...] file [arg...]``)."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return args[i + 1] if i + 1 < len(args) and args[i + 1] != "-" else None
        if not arg.startswith("-") or arg == "-":
            return arg if arg != "-" else None  # "-": the program comes on stdin
        if arg.startswith("--"):
            name, eq, _ = arg.partition("=")
            takes = _PYTHON_LONG.get(name)
            if takes is None:
                return None
            if not takes:  # --help, --version...: python runs no program
                return None
            i += 1 if eq else 2
            continue
        letters = arg[1:]
        j = 0
        while j < len(letters):
            letter = letters[j]
            if letter in _PYTHON_NO_SCRIPT:
                return None
            if letter in _PYTHON_ARGUMENT:
                if j + 1 == len(letters):  # its argument is the next word
                    i += 1
                break  # the rest of the word is its argument
            if letter not in _PYTHON_FLAGS:
                return None
            j += 1
        i += 1
    return None


def _resolved(path: Path) -> Path:
    """`path` with its links followed, or as it is where that fails (a loop, too long)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def program_dir(command: Iterable[str], cwd: Path) -> Path:
    """A bot's own directory by default: that of its `program_file`, else `cwd`."""
    program = program_file(command, cwd)
    return program.parent if program is not None else cwd.resolve()


def shared_folders(
    dirs: Mapping[str, Path], explicit: Collection[str] = (),
    owners: Collection[str] | None = None,
) -> list[tuple[str, str, Path]]:
    """Pairs `(a, b, folder)` of launched bots where `a` can read `b`'s files: their own
    folders are one (each one's sandbox shows the other's files: bots whose programs lie in
    one folder), or `a`'s folder, `folder`, lies inside `b`'s and `b` owns its folder (is
    in `owners`: its program's or its `dir`, not the config's folder it falls back to; the
    sandbox hides the inner folder from the outer bot, not the other way: a hostile review,
    round 6, took a subfolder of another entrant's for its own). Pairs where both bots name
    their folder (`explicit`: the organizer's `dir`, sharing on purpose) are left out.
    `owners` None: every bot owns its folder."""
    resolved = {name: _resolved(folder) for name, folder in dirs.items()}
    names = list(resolved)

    def owns(name: str) -> bool:
        return owners is None or name in owners

    pairs: list[tuple[str, str, Path]] = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if {a, b} <= set(explicit):
                continue
            fa, fb = resolved[a], resolved[b]
            if fa == fb or (fa.is_relative_to(fb) and owns(b)):
                pairs.append((a, b, fa))
            elif fb.is_relative_to(fa) and owns(a):
                pairs.append((b, a, fb))
    return pairs


def own_folders(bots: Iterable[tuple[str, Collection[str], Path, Path | None]]) -> set[str]:
    """The names, of `(name, command, cwd, dir)`, of the bots that own their folder: a
    `dir`, or a program file (`program_file`), not the config's folder they fall back to."""
    return {name for name, command, cwd, folder in bots
            if folder is not None or program_file(command, cwd) is not None}


class _CappedLog:
    """A log file that keeps the first `cap` bytes, a marker line, and the last TAIL_BYTES."""

    def __init__(self, path: Path, cap: int) -> None:
        self.path = path
        self.cap = cap
        self.written = 0
        self.dropped = 0
        self.tail = bytearray()
        self.file = path.open("ab")

    def write(self, data: bytes | bytearray) -> None:
        room = self.cap - self.written if self.cap else len(data)
        if room > 0:
            self.file.write(data[:room])
            self.written += min(room, len(data))
            data = data[room:]
            if not data:
                return
        if not self.dropped and not self.tail:
            self.file.write(
                f"\n[arena] output truncated after {self.written} bytes ([limits] log_mb); "
                f"only the last {TAIL_BYTES // 1024} KiB of the rest follow\n".encode()
            )
        self.tail += data
        if len(self.tail) > TAIL_BYTES:
            self.dropped += len(self.tail) - TAIL_BYTES
            del self.tail[:-TAIL_BYTES]

    def close(self) -> None:
        if self.tail:
            self.file.write(bytes(self.tail))
        self.file.close()


SOCKET_WATCH_S = 1.0
"""How often a seat's sockets are counted (`[limits] sockets`)."""


class SeatProcess:
    """A running bot process for one seat."""

    def __init__(self, process: ChildProcess, log_path: Path, jail: SeatJail) -> None:
        self.process = process
        self.log_path = log_path
        self.jail = jail
        self.drained = trio.Event()
        self.cleaned = False
        self.counter: SocketCounter | None = None  # `[limits] sockets`, when set
        self.killed_for: str | None = None  # why the referee killed it (`kill`), if it did
        self.limits = BotLimits()  # what it ran under (`start` sets them)
        self._sink: _CappedLog | None = None

    def ending(self) -> str:
        """How the seat's process ended, in words, once it has: its exit code, or the signal
        that killed it and, where the referee can tell, the limit behind it (an outside
        walkthrough's seats over memory_mb and cpu_seconds were "the client went away")."""
        code = self.process.returncode
        if code is None:
            return ""
        # A signal: -N from the process itself, 128+N through bwrap or a shell
        number = -code if code < 0 else code - 128 if 128 < code < 128 + 65 else 0
        try:
            sig = signal.Signals(number) if number else None
        except ValueError:
            sig = None
        words = f"was killed by {sig.name}" if sig is not None else f"exited with code {code}"
        oom = self.jail.cgroup.oom_kills() if self.jail.cgroup is not None else 0
        if oom:
            words += (f"; the kernel killed {oom} of its processes over its memory limit "
                      f"([limits] memory_mb = {self.limits.memory_mb})")
        elif sig is signal.SIGXCPU:
            words += f": over its CPU time ([limits] cpu_seconds = {self.limits.cpu_seconds})"
        return words + (f" ({self.killed_for})" if self.killed_for else "")

    @property
    def pid(self) -> int:
        """The pid of the seat's root process (the sandbox, or the bot itself): every process
        of the seat descends from it."""
        return self.process.pid

    @classmethod
    async def start(
        cls,
        argv: list[str],
        *,
        cwd: Path,
        server: str,
        token: str,
        bot_name: str,
        log_path: Path,
        nursery: trio.Nursery,
        limits: BotLimits | None = None,
        tls_ca: Path | None = None,
        sandbox: Sandbox | None = None,
        bot_dir: Path | None = None,
        env: Mapping[str, str] | None = None,
        others: Iterable[Path] = (),
        socket: Path | None = None,
    ) -> SeatProcess:
        """Start the bot in its jail; its output is drained by a task in `nursery`.
        `socket`: the seat's own door to the referee, for a sandbox to bind (`Sandbox.jail`)."""
        limits = limits or BotLimits()
        sandbox = sandbox or Sandbox("none")
        log_path.parent.mkdir(parents=True, exist_ok=True)
        token_read, token_write = os.pipe()
        try:
            os.write(token_write, token.encode())
        finally:
            os.close(token_write)
        seat_env = dict(env or {})
        seat_env.update(ARENA_SERVER=server, ARENA_BOT_NAME=bot_name, ARENA_LAUNCHED="1",
                        ARENA_TOKEN_FD=str(token_read))
        if tls_ca is not None:
            seat_env["ARENA_TLS_CA"] = str(tls_ca.resolve())  # the certificate to trust
        jail = sandbox.jail(argv, cwd=cwd, bot_dir=bot_dir, env=seat_env, limits=limits,
                            others=others, socket=socket)
        for note in jail.notes:
            log.warning("seat_jail", bot=bot_name, detail=note)
        try:
            # From the spawner thread, never a thread that may end before the seat does
            # (bwrap --die-with-parent: see arena/tournament/spawn.py).
            process = await open_process(
                jail.argv, cwd=jail.cwd, env=jail.env, pass_fds=(token_read, *jail.fds),
            )
        except BaseException:
            with trio.CancelScope(shield=True):
                await jail.cleanup()
            raise
        finally:
            os.close(token_read)
            jail.close_fds()
        seat = cls(process, log_path, jail)
        seat.limits = limits
        sink = seat._sink = _CappedLog(log_path, limits.log_mb * 1024 * 1024)
        nursery.start_soon(seat._drain, sink)
        if limits.sockets:
            seat.counter = SocketCounter(
                process.pid, limits.sockets, own_netns=jail.own_netns,
                referee_path=jail.referee_socket,
                members=jail.cgroup.pids if jail.cgroup is not None else None)
            nursery.start_soon(seat._watch_sockets, seat.counter, sink)
        return seat

    async def _watch_sockets(self, counter: SocketCounter, sink: _CappedLog) -> None:
        """Every `SOCKET_WATCH_S`, count the sockets the seat's processes hold; past `most`,
        kill the seat (its matches are then lost by disconnect, charged to it). A seat that
        holds connections by the thousand (a sandboxed one has no network: they are the
        referee's socket, shared by every launched seat) fills that listener's connection cap
        and keeps other matches' seats out. A count in the seat's own network namespace is two
        small reads (tens of microseconds): it runs here, on the referee's thread (a hop to a
        worker thread would cost that thread more); one over descriptors (up to
        `DESCRIPTOR_BUDGET` of them) runs in a worker thread. When the seat is done, what the
        counting cost is logged (`seat_sockets_counted`)."""
        try:
            await self._count_sockets(counter, sink)
        finally:
            log.info("seat_sockets_counted", pid=self.pid, how=counter.how, counts=counter.counts,
                     cpu_ms=round(counter.cpu_s * 1000, 3),
                     max_cpu_ms=round(counter.max_cpu_s * 1000, 3),
                     max_examined=counter.max_examined)
            counter.close()

    async def _count_sockets(self, counter: SocketCounter, sink: _CappedLog) -> None:
        most = counter.most
        while self.process.returncode is None:
            if counter.own_netns:
                found = counter.count()
            else:
                found = await trio.to_thread.run_sync(counter.count)
            if found.sockets > most or found.over_budget:
                held = found.sockets
                if found.over_budget:
                    note = (f"killed by the referee: the bot's processes held more than "
                            f"{DESCRIPTOR_BUDGET} descriptors, too many to count its sockets "
                            f"without a sandbox (at most {most}, [limits] sockets)")
                else:
                    note = (f"killed by the referee: the bot held {held} sockets "
                            f"(at most {most}, [limits] sockets)")
                log.warning("seat_socket_flood", pid=self.pid, sockets=held, most=most,
                            how=found.how, over_budget=found.over_budget,
                            log=str(self.log_path))
                await self.kill(note)
                return
            with trio.move_on_after(SOCKET_WATCH_S):
                await self.process.wait()

    async def kill(self, note: str) -> None:
        """Kill the seat now (SIGKILL, then its cgroup), for the reason `note`, which is
        written into its log and kept in `killed_for`."""
        self.killed_for = self.killed_for or note
        if self._sink is not None:
            with contextlib.suppress(OSError, ValueError):  # ValueError: closed
                self._sink.write(f"\n[arena] {note}\n".encode())
        self._signal(signal.SIGKILL)
        if self.jail.cgroup is not None:
            await self.jail.cgroup.kill()

    async def _drain(self, sink: _CappedLog) -> None:
        stream = self.process.stdout
        assert stream is not None
        writing = True
        try:
            while chunk := await stream.receive_some(65536):
                if writing:
                    try:
                        sink.write(chunk)
                    except OSError as exc:  # a full disk: keep draining, stop writing
                        log.warning("seat_log_write_failed", path=str(self.log_path),
                                    error=str(exc))
                        writing = False
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.close()
            self.drained.set()

    @property
    def exited(self) -> bool:
        return self.process.returncode is not None

    def tail(self, lines: int = 8) -> str:
        """The last lines the bot printed (for error reports), without escape sequences or
        control characters: the CLI shows them on the organizer's terminal."""
        try:
            with self.log_path.open("rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - TAIL_BYTES))
                text = f.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        text = "\n".join(printable(line) for line in text.splitlines())
        return "\n".join(text.strip().splitlines()[-lines:])

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    async def stop(self, grace: float = 2.0) -> int | None:
        """Wait up to `grace` for a clean exit, then SIGTERM, then SIGKILL the group, then
        everything left in the seat's cgroup; its output is drained and its jail removed."""
        with trio.move_on_after(grace):
            await self.process.wait()
        if self.process.returncode is None:
            self._signal(signal.SIGTERM)
            with trio.move_on_after(1.0):
                await self.process.wait()
        # Kill the whole group even after a clean exit: children must not outlive the bot.
        self._signal(signal.SIGKILL)
        with trio.CancelScope(shield=True):
            await self.process.wait()
            await self.cleanup()
        return self.process.returncode

    async def cleanup(self) -> None:
        """Kill what is left of the seat (its cgroup), let the output drain, drop the jail."""
        if self.cleaned:
            return
        self.cleaned = True
        with trio.CancelScope(shield=True):
            await self.jail.cleanup()
            with trio.move_on_after(5):
                await self.drained.wait()
            if self.process.stdout is not None and not self.drained.is_set():
                await self.process.stdout.aclose()  # a leftover we could not kill holds it
