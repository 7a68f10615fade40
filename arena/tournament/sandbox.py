"""The sandbox of a launched seat: the one door between the launcher and isolation.

The launcher asks `Sandbox.jail` for "a command line that runs this seat isolated" and gets
a `SeatJail`: the argv, the environment, the working directory, and an async `cleanup`. The
referee never knows whether a seat is sandboxed. Two modes:

``bubblewrap`` (bwrap, as Flatpak uses it) — per seat process tree:
  - ``--unshare-all`` (its own PID, network, IPC, UTS, cgroup and user namespace: it sees no
    other process and has no network), ``--die-with-parent``, ``--new-session``,
    ``--cap-drop ALL``, uid/gid 65534 inside its user namespace when the kernel allows it;
  - its own ``/proc``, read-only (so its ``oom_score_adj``, below, stays where it was put);
  - a mount view built by WHITELIST: the system directories read-only (``/usr``, ``/bin``,
    ``/lib*``, ``/sbin``, a few files of ``/etc``), ``--proc /proc``, ``--dev /dev``, the
    bot's own directory read-only, the interpreter when the command is ``python`` (and the
    installed ``arena`` package so SDK bots import it), the wire contract (``proto/``), the
    program's directory when it lies outside the system, a fresh private writable ``/tmp``
    (HOME): a tmpfs of `TMP_MB` MiB (it fills up with ENOSPC, never the referee's disk; its
    pages count against the seat's memory cgroup, and it is gone with the seat), and the
    referee's Unix socket at /run/arena/referee.sock (the seat's own when the jail is given
    one, `Sandbox.jail`'s ``socket``: the runner opens a door per seat).
    What must stay hidden (the config file, the database and its -wal/-shm, replays, logs,
    other bots' directories) is left out: a bound directory that contains one of them is
    bound entry by entry, without it, so a file created there later is not visible either;
  - ``--clearenv``, then PATH, LANG/LC_*, TZ, HOME=/tmp, the ARENA_* variables of the seat,
    ``[sandbox] pass_env`` and ``[[bot]] env``;
  - a seccomp filter (``--seccomp FD``, `arena.tournament.seccomp`): file locks (``flock``,
    ``fcntl`` lock and lease commands) and inotify/fanotify fail with EPERM, since every
    sandbox shares read-only inodes (its program, ``/usr/bin/sh``) and a lock or a watch on
    one is a channel between seats.

``none`` — the bot runs as a plain process with the same cleared environment and a private
temp dir as HOME, on the host's disk, deleted afterwards (no isolation of files, processes or
network, no cap on that dir, no seccomp filter).

In both modes: a cgroup per seat when one is writable (memory limited by real use, a pids
limit, every process killed at cleanup, setsid or not — see `arena.tournament.cgroups`),
otherwise RLIMIT_AS at `AS_FALLBACK_FACTOR` times memory_mb (with a warning); RLIMIT_CPU and
RLIMIT_NOFILE set by util-linux ``prlimit`` before the bot's program is exec'd; and
``oom_score_adj`` `SEAT_OOM_SCORE_ADJ` (1000, inherited by the seat's children) while the
referee lowers its own to `REFEREE_OOM_SCORE_ADJ`: when the seats' limits together exceed the
machine, the kernel's OOM killer takes the seats' processes before the referee.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import site
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import structlog

import arena
from arena.errors import ArenaError, ConfigError
from arena.tournament.cgroups import CgroupRoots, SeatCgroup, find_cgroups
from arena.tournament.seccomp import lock_filter

log = structlog.get_logger("arena.sandbox")

MODES = ("auto", "bubblewrap", "none")
SOCKET_IN_SANDBOX = "/run/arena/referee.sock"
NOBODY = 65534
# Without a writable cgroup, memory can only be capped by address space, which runtimes
# reserve far beyond what they use (a stock JVM reserves GBs): allow this many times more.
AS_FALLBACK_FACTOR = 4
# A sandboxed seat's /tmp (HOME) is a tmpfs of this size (its pages are charged to the seat's
# memory cgroup). The default of `[limits] tmp_mb`.
TMP_MB = 256
# The OOM killer picks the process with the highest score: every process of a seat gets the
# highest adjustment (a process may raise its own; a sandboxed one cannot lower it again: its
# /proc is read-only), the referee a low one (when it may: CAP_SYS_RESOURCE).
SEAT_OOM_SCORE_ADJ = 1000
REFEREE_OOM_SCORE_ADJ = -800
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
    "bubblewrap), or set [sandbox] allow_unsandboxed = true to run bots without a sandbox"
)
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "timezone",
    "passwd", "group", "nsswitch.conf", "hosts", "host.conf", "ssl", "ca-certificates",
    "mime.types", "locale.alias", "gai.conf", "protocols", "services",
)
_ENV_KEEP = ("LANG", "LANGUAGE", "TZ")


class SandboxUnavailable(ArenaError):
    """The sandbox was asked for (or "auto" found none) and cannot run here."""


@dataclass(frozen=True, slots=True)
class BotLimits:
    """Resource limits of each launched seat (0 = no limit)."""

    cpu_seconds: int = 300  # CPU time of the bot's process (one seat of one match)
    memory_mb: int = 2048  # real memory of the seat's cgroup (fallback: 4x as address space)
    open_files: int = 256  # file descriptors
    log_mb: int = 10  # stdout + stderr kept per seat per match, then truncated
    processes: int = 512  # tasks (processes and threads) in the seat's cgroup
    tmp_mb: int = TMP_MB  # the seat's private /tmp (its HOME), a tmpfs (bubblewrap only)
    sockets: int = 64  # sockets its processes may hold together; past it the seat is killed


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """The config's ``[sandbox]`` table."""

    mode: str = "auto"  # "auto" | "bubblewrap" | "none"
    allow_unsandboxed: bool = False  # "auto" without a working bubblewrap: go on, loudly
    pass_env: tuple[str, ...] = ()  # variables of the referee's environment bots also get
    writable: tuple[Path, ...] = ()  # extra folders bound read-write (organizer's choice)


@dataclass
class SeatJail:
    """How to run one seat, and what to undo afterwards."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    # The seat's private temp dir (HOME) on the host, deleted by `cleanup`; None when
    # sandboxed (its /tmp is a tmpfs of its own, gone with the seat).
    temp: Path | None
    cgroup: SeatCgroup | None = None
    sandboxed: bool = False
    notes: list[str] = field(default_factory=list)
    # Descriptors the seat's process must inherit (the seccomp filter's pipe): the launcher
    # passes them and calls `close_fds` once the process is started.
    fds: list[int] = field(default_factory=list)
    # Every process of the seat lives in one network namespace of its own and can make no
    # other (bwrap --unshare-all --disable-userns): its sockets are that namespace's
    # (`arena.tournament.socketcount`), among them the referee's ends of its connections to
    # `referee_socket`.
    own_netns: bool = False
    referee_socket: str | None = None

    def close_fds(self) -> None:
        """Close the referee's copy of the descriptors passed to the seat (idempotent)."""
        while self.fds:
            with contextlib.suppress(OSError):
                os.close(self.fds.pop())

    async def cleanup(self) -> None:
        """Kill whatever is left of the seat, remove its cgroup and its temp dir."""
        self.close_fds()
        if self.cgroup is not None:
            if not await self.cgroup.kill():
                log.warning("seat_cgroup_not_empty", cgroup=str(self.cgroup.dirs[0]),
                            pids=self.cgroup.pids())
            self.cgroup.remove()
        if self.temp is not None:
            try:
                shutil.rmtree(self.temp, ignore_errors=True)
            except RecursionError:  # folders nested deeper than Python recurses: rm does not
                subprocess.run(["rm", "-rf", "--one-file-system", "--", str(self.temp)],
                               check=False, capture_output=True)


def _tmp_and_proc(tmp_mb: int = TMP_MB) -> list[str]:
    """/proc, read-only: a seat's process may not write its oom_score_adj back down (without
    CAP_SYS_RESOURCE the referee cannot forbid it otherwise); /dev, read-only but for its
    devices, and /dev/shm and /tmp, each a tmpfs of `tmp_mb` MiB ([limits] tmp_mb). bwrap's
    /dev is a tmpfs of half the host's memory, and was writable: a hostile review (round 6)
    wrote 600 MiB each to /dev and /dev/shm past a full /tmp, until the memory cgroup
    killed the seat — a confusing end, and no bound at all without a cgroup."""
    size = str(tmp_mb * 1024 * 1024)
    return ["--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev",
            "--size", size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
            "--size", size, "--tmpfs", "/tmp"]


def _base_flags(userns: bool, *, disable_userns: bool | None = None) -> list[str]:
    flags = ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if userns:
        flags += ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY)]
        if disables_userns() if disable_userns is None else disable_userns:
            # No nested user namespace, hence no nested network namespace: every socket of
            # the seat is in its own one, where the referee counts them in two reads.
            flags.append("--disable-userns")
    return flags


@functools.cache
def disables_userns() -> bool:
    """Whether bwrap runs here with ``--disable-userns`` (bubblewrap 0.8.0 and later, and a
    kernel that lets it make the nested user namespace it locks), once per process."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False
    argv = [bwrap, *_base_flags(True, disable_userns=True), *_system_binds(), *_tmp_and_proc(),
            "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def probe_bubblewrap() -> tuple[bool, bool, str]:
    """Whether bwrap runs here (once per process): (works, with a user namespace, why not)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False, False, "bwrap (bubblewrap) is not installed"
    why = ""
    for userns in (True, False):
        argv = [bwrap, *_base_flags(userns, disable_userns=False), *_system_binds(),
                *_tmp_and_proc(), "--", "true"]
        try:
            done = subprocess.run(argv, capture_output=True, timeout=20, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, False, f"bwrap could not run: {exc}"
        if done.returncode == 0:
            return True, userns, ""
        last = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["?"]
        why = f"bwrap fails here: {last[0]}"
    return False, False, why


def choose_mode(policy: SandboxPolicy) -> str:
    """The mode to run in: "bubblewrap" or "none"; raise `SandboxUnavailable` when the
    policy forbids running without the sandbox it cannot have."""
    if policy.mode == "none":
        return "none"
    works, _, why = probe_bubblewrap()
    if works:
        return "bubblewrap"
    if policy.mode == "bubblewrap":
        raise SandboxUnavailable(f"[sandbox] mode = \"bubblewrap\" but {why}; {INSTALL_HINT}")
    if not policy.allow_unsandboxed:
        raise SandboxUnavailable(f"no sandbox for launched bots: {why}; {INSTALL_HINT}")
    return "none"


def _system_binds() -> list[str]:
    args: list[str] = []
    for path in _SYSTEM:
        if os.path.islink(path):  # merged /usr: /bin -> usr/bin
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for name in _ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for java in sorted(Path("/etc").glob("java*")):  # Debian's JDKs keep their conf here
        args += ["--ro-bind", str(java), str(java)]
    return args


def _under(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def _hidden(entry: Path, hidden: Sequence[Path]) -> bool:
    """`entry` is hidden, or a sibling file of a hidden one (arena.db -> arena.db-wal)."""
    return any(
        entry == h or (entry.parent == h.parent and entry.name.startswith(h.name + "-"))
        for h in hidden
    )


def _bind_tree(source: Path, hidden: Sequence[Path], flag: str) -> list[tuple[Path, list[str]]]:
    """Bind `source` at its own path, leaving out every hidden path inside it.

    Entry by entry, a symbolic link is made again as a link with the same text
    (`--symlink`), never bound: bwrap binds the target of a link it is given, so a link in
    a bot's folder (`peek -> arena.db`, `-> /etc/shadow`, `-> logs`) would have put the
    hidden or the host's file in the sandbox. Made again, it points where it pointed, inside
    the sandbox, where a hidden or unbound path is not."""
    inside = [h for h in hidden if h != source and h.is_relative_to(source)]
    if not inside:
        return [(source, [flag, str(source), str(source)])]
    binds: list[tuple[Path, list[str]]] = [(source, ["--dir", str(source)])]
    try:
        entries = sorted(source.iterdir())
    except OSError:
        return binds
    for entry in entries:
        if _hidden(entry, hidden):
            continue
        if entry.is_symlink():
            with contextlib.suppress(OSError):  # (gone meanwhile)
                binds.append((entry, ["--symlink", os.readlink(entry), str(entry)]))
        elif entry.is_dir():
            binds += _bind_tree(entry, hidden, flag)
        else:
            binds.append((entry, [flag, str(entry), str(entry)]))
    return binds


def private_run_dir() -> Path:
    """A new private (0700) folder for one run's referee socket and seat temp dirs, named
    after this process; those of runs whose process is gone (SIGKILL) are removed first."""
    parent = Path(tempfile.gettempdir())
    for stale in parent.glob("arena-run-*-*"):
        owner = stale.name.split("-")[2]
        if owner.isdigit() and owner != str(os.getpid()):
            try:
                os.kill(int(owner), 0)
            except ProcessLookupError:
                shutil.rmtree(stale, ignore_errors=True)
            except PermissionError:
                pass
    return Path(tempfile.mkdtemp(prefix=f"arena-run-{os.getpid()}-", dir=parent))


def protect_referee(adj: int = REFEREE_OOM_SCORE_ADJ) -> int | None:
    """Lower this process's ``oom_score_adj`` to `adj`, else (without CAP_SYS_RESOURCE a
    process may not go below the minimum it inherited, usually 0) to 0; the value it now
    has, None if unknown."""
    path = Path("/proc/self/oom_score_adj")
    try:
        current = int(path.read_text())
    except (OSError, ValueError):
        return None
    refused = ""
    for wanted in (adj, 0):
        if current <= wanted:
            break
        try:
            path.write_text(str(wanted))
        except OSError as exc:  # EACCES: below the minimum without CAP_SYS_RESOURCE
            refused = refused or str(exc)
        else:
            current = wanted
            break
    if refused:
        log.info("referee_oom_score_adj_kept", wanted=adj, kept=current, error=refused,
                 detail="seats still get the highest score; the referee keeps its own")
    return current


def python_paths() -> list[Path]:
    """What `python` (this interpreter) needs to run an SDK bot, symlinks resolved."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable))}
    with contextlib.suppress(AttributeError):
        paths.update(site.getsitepackages())
    paths.add(str(Path(arena.__file__).resolve().parent))
    return sorted({Path(os.path.realpath(p)) for p in paths if os.path.exists(p)} |
                  {Path(os.path.abspath(p)) for p in paths if os.path.exists(p)})


def launch_prefix(cgroup: SeatCgroup | None) -> list[str]:
    """The ``sh`` the seat's process starts as: it raises its own ``oom_score_adj`` to
    `SEAT_OOM_SCORE_ADJ` (kept across exec and fork: the bot and all its children), joins
    the seat's cgroup if any, then execs the rest of the argv."""
    steps = [f"echo {SEAT_OOM_SCORE_ADJ} > /proc/self/oom_score_adj"]
    if cgroup is not None:
        steps.append(cgroup.join_commands())
    return ["/bin/sh", "-c", " && ".join([*steps, 'exec "$@"']), "arena-seat"]


class Sandbox:
    """Builds each seat's jail for one run (a tournament, a match, a check)."""

    def __init__(
        self,
        mode: str = "none",
        *,
        hidden: Iterable[Path] = (),
        socket: Path | None = None,
        pass_env: Sequence[str] = (),
        writable: Sequence[Path] = (),
        temp_root: Path | None = None,
    ) -> None:
        if mode not in ("bubblewrap", "none"):
            raise ConfigError(f"sandbox.mode: must be one of {', '.join(MODES)}, got {mode!r}")
        self.mode = mode
        self.hidden = tuple(Path(os.path.realpath(p)) for p in hidden)
        self.socket = socket
        self.pass_env = tuple(pass_env)
        self.writable = tuple(Path(os.path.realpath(p)) for p in writable)
        self.temp_root = temp_root
        self.userns = probe_bubblewrap()[1] if mode == "bubblewrap" else False
        self.seccomp = lock_filter() if mode == "bubblewrap" else None
        if mode == "bubblewrap" and self.seccomp is None:
            log.warning("no_seccomp_filter", machine=os.uname().machine,
                        detail="no lock filter for this architecture: sandboxed seats can "
                               "signal each other through file locks and inotify")
        protect_referee()
        self.cgroups: CgroupRoots | None = find_cgroups()
        if self.cgroups is not None:
            self.cgroups.sweep()
        self.prlimit = shutil.which("prlimit")
        if self.prlimit is None:
            log.warning("no_prlimit", detail="util-linux prlimit is missing: launched bots "
                        "run without CPU-time and open-file limits")
        if self.cgroups is None or not self.cgroups.cpu_shared:
            log.warning("no_cpu_cgroup",
                        detail="seats share the CPU by the kernel's default (by session): "
                               "a bot whose busy children start sessions of their own "
                               "(setsid) may take more than a seat's share; run the referee "
                               "where it may write a cgroup with the cpu controller (root)")
        if self.cgroups is None:
            log.warning("no_writable_cgroup", fallback="RLIMIT_AS",
                        factor=AS_FALLBACK_FACTOR,
                        detail="memory is capped by address space, not real use, and "
                               "processes a bot detaches (setsid) are stopped only by "
                               "the sandbox's PID namespace")

    def jail(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        bot_dir: Path | None,
        env: Mapping[str, str],
        limits: BotLimits,
        others: Iterable[Path] = (),
        socket: Path | None = None,
    ) -> SeatJail:
        """The jail of one seat: `argv` (already resolved) run in `cwd` with the ARENA_*
        variables and the bot's own `env`; `others` are the other bots' directories.
        `socket`, if given, is this seat's own door to the referee (bound at
        `SOCKET_IN_SANDBOX` instead of the run's `socket`)."""
        door = socket if socket is not None else self.socket
        cwd = cwd.resolve()  # a config given by a relative path has a relative folder
        temp: Path | None = None
        if self.mode == "none":
            temp = Path(tempfile.mkdtemp(prefix="seat-", dir=self.temp_root))
            temp.chmod(0o700)
        cgroup: SeatCgroup | None = None
        notes: list[str] = []
        if self.cgroups is not None:
            try:
                cgroup = self.cgroups.seat(limits.memory_mb, limits.processes)
            except OSError as exc:
                notes.append(f"no seat cgroup ({exc}); memory capped by address space")
        clean = self._environment(env, home=str(temp) if temp is not None else "/tmp",
                                  socket=door)
        cmd = list(argv)
        fds: list[int] = []
        if self.mode == "bubblewrap":
            cmd = self._bwrap(cmd, cwd=cwd, bot_dir=bot_dir, env=clean, others=others,
                              fds=fds, tmp_mb=limits.tmp_mb, socket=door)
        prefix = launch_prefix(cgroup)
        rlimits = self._rlimits(limits, capped_by_cgroup=cgroup is not None)
        if rlimits and self.prlimit:
            prefix += [self.prlimit, *rlimits, "--"]
        sealed = self.mode == "bubblewrap" and self.userns and disables_userns()
        return SeatJail(prefix + cmd, clean, cwd if self.mode == "none" else Path("/"), temp,
                        cgroup, self.mode == "bubblewrap", notes, fds, own_netns=sealed,
                        referee_socket=str(door) if door is not None else None)

    def _rlimits(self, limits: BotLimits, *, capped_by_cgroup: bool) -> list[str]:
        args: list[str] = []
        if limits.cpu_seconds:
            args.append(f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 5}")
        if limits.open_files:
            args.append(f"--nofile={limits.open_files}:{limits.open_files}")
        if limits.memory_mb and not capped_by_cgroup:
            size = limits.memory_mb * AS_FALLBACK_FACTOR * 1024 * 1024
            args.append(f"--as={size}:{size}")
        return args

    def _environment(
        self, env: Mapping[str, str], home: str, socket: Path | None = None
    ) -> dict[str, str]:
        clean = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "TMPDIR": home}
        if self.mode == "none":
            clean["PATH"] = os.environ.get("PATH", clean["PATH"])
        for name, value in os.environ.items():
            if name in _ENV_KEEP or name.startswith("LC_") or name in self.pass_env:
                clean[name] = value
        clean.update(env)
        if socket is not None and self.mode == "bubblewrap":
            # The sandbox's only way out. Unsandboxed seats keep the loopback TCP address the
            # launcher gives them: there the referee checks that the connecting socket belongs
            # to the seat's own process tree (a unix socket's peer cannot be checked that way,
            # and an unsandboxed sibling could reach it).
            clean["ARENA_SERVER"] = f"unix:{SOCKET_IN_SANDBOX}"
            clean.pop("ARENA_TLS_CA", None)  # the local socket is not TLS
        return clean

    def _bwrap(
        self,
        argv: list[str],
        *,
        cwd: Path,
        bot_dir: Path | None,
        env: Mapping[str, str],
        others: Iterable[Path],
        fds: list[int],
        tmp_mb: int = TMP_MB,
        socket: Path | None = None,
    ) -> list[str]:
        bwrap = shutil.which("bwrap")
        assert bwrap is not None  # the mode was chosen by probe_bubblewrap
        args = [bwrap, *_base_flags(self.userns), *_system_binds(),
                *_tmp_and_proc(tmp_mb)]
        if self.seccomp is not None:
            # bwrap reads the program to its end, installs it just before it execs the bot
            # and closes the descriptor: the bot never sees it.
            read, write = os.pipe()
            try:
                os.write(write, self.seccomp)  # a few hundred bytes: fits in the pipe
            finally:
                os.close(write)
            fds.append(read)
            args += ["--seccomp", str(read)]
        proto = Path(arena.__file__).resolve().parent.parent / "proto"
        sources: set[Path] = {proto} if proto.is_dir() else set()  # the public contract
        program = Path(os.path.realpath(argv[0]))
        if os.path.realpath(argv[0]) == os.path.realpath(sys.executable):
            sources.update(python_paths())
        if not _under(program, [Path(p) for p in _SYSTEM]):
            sources.add(program.parent)
        own = Path(os.path.realpath(bot_dir)) if bot_dir is not None else None
        if own is not None:
            sources.add(own)
        ca = env.get("ARENA_TLS_CA")
        if ca:
            sources.add(Path(os.path.realpath(ca)))
        if own is not None:
            # The referee's own paths stay hidden whatever folder the bot names: a bot whose
            # folder lay inside its logs folder had that folder bound, live — its own match's
            # seed in the log's match_start line, every hand computed from it (hostile review,
            # round 6). Such a seat is not started.
            inside = next((h for h in self.hidden if own.is_relative_to(h)), None)
            if inside is not None:
                raise PermissionError(
                    f"its folder {own} lies in {inside}, which no bot may see (the referee's "
                    "database, replays, logs, config, secret or TLS key): give the bot a "
                    "folder of its own"
                )
        # Another bot's folder that holds this one's (a bot in a subfolder of another's) is
        # left visible as far as this one's folder goes: only that is bound.
        hidden = [*self.hidden,
                  *(Path(os.path.realpath(o)) for o in others
                    if own is None or not own.is_relative_to(Path(os.path.realpath(o))))]
        binds: list[tuple[Path, list[str]]] = []
        for source in sorted(sources):
            if _hidden(source, hidden):
                continue
            binds += _bind_tree(source, hidden, "--ro-bind")
        for folder in self.writable:
            binds.append((folder, ["--bind", str(folder), str(folder)]))
        for _, bind in sorted(binds, key=lambda b: len(b[0].parts)):
            args += bind
        if socket is not None:
            args += ["--bind", str(socket), SOCKET_IN_SANDBOX]
        # Last of the mounts: the root, bwrap's tmpfs holding the mount points, read-only.
        # Writable, a new file anywhere outside /tmp (in the bot's "read-only" folder, say)
        # landed there, outside tmp_mb (an outside walkthrough wrote 300 MB so). /tmp, /dev,
        # the socket and `writable` folders are mounts of their own and keep their modes.
        args += ["--dir", str(cwd), "--remount-ro", "/", "--chdir", str(cwd), "--clearenv"]
        for name, value in sorted(env.items()):
            args += ["--setenv", name, value]
        return [*args, "--", *argv]
