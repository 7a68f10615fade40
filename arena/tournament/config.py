"""The tournament config file (TOML), read strictly: every error names the field.

    [tournament]
    name = "sample"                 # names the tournament in the database and the logs
    seed = 2026                     # every match seed derives from it
    matches_per_pair = 2            # matches per pair of bots per variant (sides alternate;
                                    # the old name `games` still works, with a warning)
    variants = ["argentine-1v1"]    # default: every variant
    concurrency = 4                 # matches played at the same time
    database = "arena.db"           # SQLite file (relative to the config file), or a
                                    # PostgreSQL URL "postgresql://user@host:5432/db"
    replays = "replays"             # folder for one JSON-lines replay per match
    replay_legal = false            # replays list each decision's legal actions (docs/replay.md)
    logs = "logs"                   # folder for the JSON-lines log
    listen = "127.0.0.1:0"          # where bots connect (port 0: any free port)
    secret_file = "arena.key"       # optional: the deals' secret key (default: in the database)
    format = "round-robin"          # or "gauntlet": only `challenger` against each other bot
    challenger = "new"              # the gauntlet's challenger (a [[bot]] name)
    duplicate = false               # true: each deal once from each side (less luck), only
                                    # where no bot can remember a match's deals in the next
                                    # (README "Deals": on one machine, none can be stopped)

    [time_control]
    decision_ms = 1000              # per-decision deadline
    bank_ms = 0                     # chess-clock bank per seat per match
    increment_ms = 0
    grace_ms = 50                   # waited past the deadline for the network, unannounced
    fixed_pace = false              # true: every decision looks to the other seats as if it
                                    # took all of decision_ms (no partner can read another's
                                    # thinking time: a covert channel), matches take longer

    [faults]
    max_strikes = 3                 # 1 = forfeit at the first fault
    reconnect_ms = 10000            # a remote bot that drops may come back within this
    connect_ms = 20000              # a launched bot must connect and say hello within this
    hello_ms = 10000                # an open stream must say hello within this, or is closed
    no_show_ms = 60000              # a remote bot that has not connected by then forfeits
    max_pending = 256               # silent streams per door (a newcomer closes the oldest)

    [storage]
    busy_timeout_ms = 5000          # how long one commit waits for another process's lock
    retry_ms = 300000               # how long storing may stay paused (locked, full) before
                                    # the tournament stops (resume later: nothing is lost)

    [limits]                        # per launched seat; 0 = no limit
    cpu_seconds = 300
    memory_mb = 2048                # real use (cgroup); without one, 4x as address space
    open_files = 256
    log_mb = 10                     # stdout + stderr kept per seat per match, then the tail
    tmp_mb = 256                    # the seat's private /tmp (its HOME): a tmpfs, then ENOSPC
    sockets = 64                    # sockets the seat may hold at once; past it it is killed

    [sandbox]                       # launched bots (README "Running a contest safely")
    mode = "auto"                   # "auto" | "bubblewrap" | "none"
    allow_unsandboxed = false       # "auto" without bubblewrap: refuse to start unless true
    pass_env = []                   # names of variables of the referee bots also get
    writable = []                   # folders bound read-write into every sandbox

    [spectators]                    # live spectating: --web pages and the gRPC Spectator
    delay_s = 0                     # seconds spectators see the table late
    token = "..."                   # optional: gRPC spectators must send it (else: open)

    [options.argentine-1v1]         # per-variant options (see README "Variants")
    target = 15

    [executor]                      # where matches run (README "Executors")
    kind = "auto"                   # "auto" | "local" | "processes" | "ray"
    workers = 0                     # processes: worker processes (0: one per core)
    address = "auto"                # ray: "auto" (a running cluster) or "ray://host:10001"

    [tls]                           # optional: serve over TLS (bots get ARENA_TLS_CA)
    cert = "referee.crt"
    key = "referee.key"

    [[bot]]                         # a bot the referee launches, one process per seat
    name = "random"
    command = ["python", "sample_bots/random_bot.py"]
    dir = "sample_bots"             # its own files, readable in the sandbox (default: the
                                    # folder of the program file, else the config's folder)
    env = {ARENA_BOT_SEED = "1"}    # extra environment variables

    [[bot]]                         # a bot that speaks lines on stdin/stdout (docs/stdio.md)
    name = "c-random"
    command = ["sample_bots/c_random/bot"]
    protocol = "stdio"              # default "grpc"

    [[bot]]                         # a remote bot that connects with its token
    name = "remote"
    token = "s3cret"

Every value is checked for type and range before anything runs (times fit a protobuf int32,
limits what the OS can apply, names at most 64 printable characters); `preflight` then checks
what the machine must offer (writable folders, a database file, a free port, every launched
bot's program). Each error is one line naming the field or the bot.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import resource
import shlex
import socket
import ssl
import tomllib
from collections.abc import Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.errors import ConfigError, UnknownVariantError
from arena.referee import FaultPolicy, TimeControl
from arena.rules import Options, find_variant, variant_names
from arena.tournament.backend import DatabaseError, Target, as_target, is_url, open_backend
from arena.tournament.launcher import program_file
from arena.tournament.sandbox import MODES, BotLimits, SandboxPolicy


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A bot in the tournament: launched from `command`, or remote with `token`."""

    name: str
    command: tuple[str, ...] = ()
    token: str = ""
    cwd: Path = Path(".")
    protocol: str = "grpc"  # "stdio": the command speaks lines, an adapter speaks gRPC for it
    dir: Path | None = None  # its own files (None: the program's folder, else cwd)
    env: tuple[tuple[str, str], ...] = ()  # extra environment variables

    @property
    def launched(self) -> bool:
        return bool(self.command)

    @property
    def launch_command(self) -> tuple[str, ...]:
        """What the referee runs for a seat: the command, or for a stdio bot the adapter with
        the command as its child (docs/stdio.md); the adapter is then the seat's process."""
        if self.protocol == "stdio":
            return ("python", "-m", "arena.stdio", "--", *self.command)
        return self.command


EXECUTORS = ("auto", "local", "processes", "ray")


@dataclass(frozen=True, slots=True)
class ExecutorSpec:
    """Where matches run ([executor]): `kind` "local" (this process), "processes" (`workers`
    referee processes, 0: one per core), "ray" (tasks on the Ray cluster at `address`), or
    "auto" (processes on a machine of at least 4 cores with matches between launched bots,
    else local: `arena.tournament.executors.choose_executor`)."""

    kind: str = "auto"
    workers: int = 0
    address: str = "auto"


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """A validated tournament config."""

    name: str
    bots: tuple[BotSpec, ...]
    variants: tuple[str, ...]
    options: dict[str, Options] = field(default_factory=dict)
    seed: int = 0
    games: int = 2
    concurrency: int = 4
    database: Target = Path("arena.db")  # a Path, or a postgresql:// URL (str)
    replays: Path = Path("replays")
    logs: Path = Path("logs")
    listen: str = "127.0.0.1:0"
    time_control: TimeControl = field(default_factory=TimeControl)
    policy: FaultPolicy = field(default_factory=FaultPolicy)
    limits: BotLimits = field(default_factory=BotLimits)
    connect_ms: int = 20_000  # a launched bot that has not said hello by then forfeits
    hello_ms: int = 10_000  # a stream that has not said hello by then is refused (BAD_HELLO)
    no_show_ms: int = 60_000  # a remote bot not connected this long after the start forfeits
    max_pending: int = 256  # silent streams per door, at most (newcomers close the oldest)
    tls_cert: Path | None = None  # PEM certificate chain of the referee (enables TLS)
    tls_key: Path | None = None  # its PEM private key
    secret_file: Path | None = None  # the deals' key file (None: the key is in the database)
    busy_timeout_ms: int = 5_000  # one commit waits this long for another process's lock
    retry_ms: int = 300_000  # storing may stay paused (locked, full) this long, then stop
    replay_legal: bool = False  # action lines of the replays list the legal actions
    format: str = "round-robin"  # or "gauntlet": `challenger` against every other bot
    challenger: str = ""
    duplicate: bool = False  # the two matches of a pair play the same deals, sides swapped
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
    source: Path | None = None  # the config file itself (hidden from every sandbox)
    notes: tuple[str, ...] = ()  # warnings about old spellings (`config_notes`), said at start
    spectator_delay_s: float = 0.0  # [spectators] delay_s: live spectators see the table late
    spectator_token: str | None = None  # [spectators] token: gRPC spectators must send it
    executor: ExecutorSpec = field(default_factory=ExecutorSpec)  # [executor]: where matches run


PROTOCOLS = ("grpc", "stdio")  # how a launched bot talks: gRPC itself, or lines on stdio

INT32_MAX = 2**31 - 1  # protobuf int32: every time on the wire
INT63_MAX = 2**63 - 1  # SQLite INTEGER
NAME_MAX = 64
MIN_MEMORY_MB = 64
MIN_CONNECT_MS = 100
MIN_OPEN_FILES = 16
MAX_MEMORY_MB = 1 << 24  # 16 TiB of address space: far beyond any machine, and fits rlim_t
MAX_CONCURRENCY = 4096


_TOP = {
    "tournament", "time_control", "faults", "limits", "tls", "options", "bot", "storage",
    "sandbox", "spectators", "executor",
}
_TOURNAMENT = {
    "name", "seed", "games", "matches_per_pair", "variants", "concurrency", "database", "replays",
    "logs", "listen",
    "secret_file",
    "replay_legal",
    "format", "challenger", "duplicate",
}
FORMATS = ("round-robin", "gauntlet")


def _table(raw: dict[str, Any], key: str) -> dict[str, Any]:
    value = raw.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{key}: must be a table ([{key}]), got {_show(value)}")
    return value


def _show(value: Any) -> str:
    """A value for an error message: one line, at most 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_keys(table: dict[str, Any], allowed: Set[str], where: str) -> None:
    for key in table:
        if key not in allowed:
            raise ConfigError(
                f"{where}: unknown field {key!r}; allowed fields: {', '.join(sorted(allowed))}"
            )


def _int(
    table: dict[str, Any], key: str, where: str, default: int, minimum: int,
    maximum: int = INT32_MAX, *, why: str = "", zero_ok: bool = False,
) -> int:
    """An integer in [minimum, maximum] (or 0 if `zero_ok`: "no limit"); `why` explains the
    minimum in the error."""
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{where}.{key}: must be a whole number, got {_show(value)}")
    if zero_ok and value == 0:
        return value
    if value < minimum:
        zero = " (or 0 for no limit)" if zero_ok else ""
        because = f": {why}" if why else ""
        raise ConfigError(f"{where}.{key}: must be at least {minimum}{zero}, got {value}{because}")
    if value > maximum:
        raise ConfigError(f"{where}.{key}: must be at most {maximum}, got {value}")
    return value


def _bool(table: dict[str, Any], key: str, where: str, default: bool) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{where}.{key}: must be true or false, got {value!r}")
    return value


def _str(table: dict[str, Any], key: str, where: str, default: str, maximum: int = 4096) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}.{key}: must be a non-empty string, got {_show(value)}")
    if len(value) > maximum:
        raise ConfigError(
            f"{where}.{key}: at most {maximum} characters, got {len(value)} ({_show(value)})"
        )
    if not value.isprintable():
        raise ConfigError(f"{where}.{key}: must be printable (no control characters), "
                          f"got {_show(value)}")
    return value


def _name(table: dict[str, Any], key: str, where: str, default: str) -> str:
    value = _str(table, key, where, default, NAME_MAX)
    if value != value.strip():
        raise ConfigError(f"{where}.{key}: no leading or trailing spaces, got {_show(value)}")
    return value


def checked_name(value: Any, where: str, key: str = "name") -> str:
    """A bot's or a tournament's name as a config's `[[bot]] name` must be (`where.key`
    in the error): printable, at most NAME_MAX characters, no space at either end."""
    return _name({key: value}, key, where, "")


def _check_key_pair(cert: Path, key: Path) -> None:
    """The TLS certificate and key load together (the key is the certificate's, and not
    encrypted: gRPC takes no passphrase); else a `ConfigError` before anything runs (gRPC's
    own failure came later, as "Failed to bind to address", after files were written)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key, password=lambda: b"")
    except (ssl.SSLError, OSError) as exc:
        raise ConfigError(f"tls: {cert.name} and {key.name} do not load as a certificate and "
                          f"its private key (unencrypted): {exc.args[-1]}") from None


def load_config(path: Path) -> TournamentConfig:
    """Read and validate a tournament config; raise `ConfigError` naming the bad field."""
    raw = read_toml(path)
    return dataclasses.replace(parse_config(raw, base=path.parent), source=path,
                               notes=tuple(config_notes(raw)))


def read_toml(path: Path) -> dict[str, Any]:
    """A config file's tables (a tournament's or a ladder's); `ConfigError`, one line, if it
    is missing, a folder, unreadable, not UTF-8 or not TOML."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"config file {path} is a directory, not a TOML file") from None
    except OSError as exc:
        raise ConfigError(f"config file {path} cannot be read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"config file {path}: not UTF-8 text (byte {exc.start}); save it as UTF-8"
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:  # tomllib parses nested arrays and inline tables recursively
        raise ConfigError(f"{path}: not valid TOML: arrays or tables nested too deeply") from None


def parse_config(raw: dict[str, Any], base: Path = Path(".")) -> TournamentConfig:
    """Validate an already-parsed config (paths are relative to `base`)."""
    _check_keys(raw, _TOP, "config")
    t = _table(raw, "tournament")
    _check_keys(t, _TOURNAMENT, "tournament")
    variants_raw = t.get("variants", list(variant_names()))
    if not isinstance(variants_raw, list) or not variants_raw:
        raise ConfigError("tournament.variants: must be a non-empty list of variant names")
    variants: list[str] = []
    for name in variants_raw:
        if not isinstance(name, str):
            raise ConfigError(f"tournament.variants: {_show(name)} is not a variant name")
        try:
            found = find_variant(name).name
        except UnknownVariantError as exc:
            raise ConfigError(f"tournament.variants: {exc}") from None
        if found in variants:
            raise ConfigError(f"tournament.variants: {found!r} is listed twice")
        variants.append(found)
    options_raw = _table(raw, "options")
    options: dict[str, Options] = {}
    for name in variants:
        given = options_raw.get(name, {})
        if not isinstance(given, dict):
            raise ConfigError(f"options.{name}: must be a table")
        try:
            options[name] = find_variant(name).options(given)
        except (UnknownVariantError, TypeError, ValueError) as exc:
            raise ConfigError(f"options.{name}: {exc}") from None
    for name in options_raw:
        if name not in variants:
            raise ConfigError(
                f"options.{name}: not a variant of this tournament ({', '.join(variants)})"
            )
    tc_raw = _table(raw, "time_control")
    _check_keys(tc_raw, {"decision_ms", "bank_ms", "increment_ms", "grace_ms", "fixed_pace"},
                "time_control")
    tc = TimeControl(
        decision_ms=_int(tc_raw, "decision_ms", "time_control", 1000, 1),
        bank_ms=_int(tc_raw, "bank_ms", "time_control", 0, 0),
        increment_ms=_int(tc_raw, "increment_ms", "time_control", 0, 0),
        grace_ms=_int(tc_raw, "grace_ms", "time_control", 50, 0),
        fixed_pace=_bool(tc_raw, "fixed_pace", "time_control", False),
    )
    faults = _table(raw, "faults")
    _check_keys(
        faults,
        {"max_strikes", "reconnect_ms", "connect_ms", "hello_ms", "no_show_ms", "max_pending"},
        "faults",
    )
    policy = FaultPolicy(
        max_strikes=_int(faults, "max_strikes", "faults", 3, 1, 1000),
        reconnect_ms=_int(faults, "reconnect_ms", "faults", 10_000, 0),
    )
    limits_raw = _table(raw, "limits")
    _check_keys(limits_raw,
                {"cpu_seconds", "memory_mb", "open_files", "log_mb", "tmp_mb", "sockets"},
                "limits")
    defaults = BotLimits()
    hard_files = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    limits = BotLimits(
        cpu_seconds=_int(limits_raw, "cpu_seconds", "limits", defaults.cpu_seconds, 1,
                         zero_ok=True),
        memory_mb=_int(
            limits_raw, "memory_mb", "limits", defaults.memory_mb, MIN_MEMORY_MB, MAX_MEMORY_MB,
            zero_ok=True, why="an interpreter cannot even start in less address space",
        ),
        open_files=_int(
            limits_raw, "open_files", "limits", defaults.open_files, MIN_OPEN_FILES,
            hard_files if hard_files != resource.RLIM_INFINITY else INT32_MAX,
            zero_ok=True, why="a bot needs descriptors for its runtime and its connection",
        ),
        log_mb=_int(limits_raw, "log_mb", "limits", defaults.log_mb, 0, 1 << 20),
        tmp_mb=_int(limits_raw, "tmp_mb", "limits", defaults.tmp_mb, 1, 1 << 20),
        sockets=_int(limits_raw, "sockets", "limits", defaults.sockets, 0, 1 << 20),
    )
    sandbox = _sandbox(raw.get("sandbox", {}), base)
    storage = _table(raw, "storage")
    _check_keys(storage, {"busy_timeout_ms", "retry_ms"}, "storage")
    tls = _table(raw, "tls")
    _check_keys(tls, {"cert", "key"}, "tls")
    tls_cert = tls_key = None
    if tls:
        if set(tls) != {"cert", "key"}:
            raise ConfigError("tls: give both cert and key (PEM files), or leave out [tls]")
        tls_cert = base / _str(tls, "cert", "tls", "")
        tls_key = base / _str(tls, "key", "tls", "")
        for name, path in (("cert", tls_cert), ("key", tls_key)):
            if not path.is_file():
                raise ConfigError(f"tls.{name}: file {path} does not exist")
            try:
                pem = path.read_bytes()
            except OSError as exc:
                raise ConfigError(f"tls.{name}: cannot read {path}: {exc.strerror}") from None
            if b"-----BEGIN" not in pem:
                raise ConfigError(f"tls.{name}: {path} is not a PEM file")
            if name == "key" and b"PRIVATE KEY-----" not in pem:
                raise ConfigError(f"tls.key: {path} holds no private key (a certificate? "
                                  "cert and key swapped?)")
        _check_key_pair(tls_cert, tls_key)
    spectators = _table(raw, "spectators")
    _check_keys(spectators, {"delay_s", "token"}, "spectators")
    spectator_token = spectators.get("token")
    if spectator_token is not None and (not isinstance(spectator_token, str)
                                        or not 8 <= len(spectator_token) <= 200):
        raise ConfigError("spectators.token: must be a string of 8..200 characters, "
                          f"got {spectator_token!r}")
    delay = spectators.get("delay_s", 0)
    if isinstance(delay, bool) or not isinstance(delay, int | float) or not 0 <= delay <= 3600:
        raise ConfigError(f"spectators.delay_s: must be a number of seconds 0..3600, got {delay!r}")
    bots = _bots(raw.get("bot", []), base)
    listen = _str(t, "listen", "tournament", "127.0.0.1:0", 300)
    _listen_address(listen)
    secret_file = t.get("secret_file")
    fmt, challenger = _format(t, bots)
    return TournamentConfig(
        name=_name(t, "name", "tournament", "tournament"),
        bots=bots,
        variants=tuple(variants),
        options=options,
        seed=_int(t, "seed", "tournament", 0, 0, INT63_MAX),
        games=_matches_per_pair(t),
        concurrency=_int(t, "concurrency", "tournament", 4, 1, MAX_CONCURRENCY),
        database=_database(_str(t, "database", "tournament", "arena.db"), base),
        replays=base / _str(t, "replays", "tournament", "replays"),
        logs=base / _str(t, "logs", "tournament", "logs"),
        listen=listen,
        time_control=tc,
        policy=policy,
        limits=limits,
        connect_ms=_int(
            faults, "connect_ms", "faults", 20_000, MIN_CONNECT_MS,
            why="no bot process starts and connects faster; every match would be forfeit",
        ),
        hello_ms=_int(faults, "hello_ms", "faults", 10_000, MIN_CONNECT_MS,
                      why="a stream needs a round trip to say hello"),
        no_show_ms=_int(faults, "no_show_ms", "faults", 60_000, 1, INT32_MAX),
        max_pending=_int(faults, "max_pending", "faults", 256, 1, 1 << 20),
        tls_cert=tls_cert,
        tls_key=tls_key,
        secret_file=(
            base / _str(t, "secret_file", "tournament", "") if secret_file is not None else None
        ),
        busy_timeout_ms=_int(storage, "busy_timeout_ms", "storage", 5_000, 0),
        retry_ms=_int(storage, "retry_ms", "storage", 300_000, 0),
        replay_legal=_bool(t, "replay_legal", "tournament", False),
        format=fmt,
        challenger=challenger,
        duplicate=_duplicate(t),
        sandbox=sandbox,
        spectator_delay_s=float(delay),
        spectator_token=spectator_token,
        executor=_executor(raw.get("executor", {})),
    )


MAX_WORKERS = 1024


def _executor(raw: Any) -> ExecutorSpec:
    """The [executor] table: kind, workers, address (each error names its field)."""
    if not isinstance(raw, dict):
        raise ConfigError(f"executor: must be a table ([executor]), got {_show(raw)}")
    _check_keys(raw, {"kind", "workers", "address"}, "executor")
    kind = raw.get("kind", "auto")
    if kind not in EXECUTORS:
        raise ConfigError(f"executor.kind: must be one of {', '.join(EXECUTORS)}, got "
                          f"{_show(kind)}")
    workers = _int(raw, "workers", "executor", 0, 1, MAX_WORKERS, zero_ok=True)
    if "workers" in raw and kind not in ("auto", "processes"):
        raise ConfigError(f'executor.workers: only for kind = "processes" (or "auto"), '
                          f"not {kind!r}")
    address = _str(raw, "address", "executor", "auto", 300)
    if "address" in raw and kind != "ray":
        raise ConfigError(f'executor.address: only for kind = "ray", not {kind!r}')
    if address != "auto" and not address.startswith("ray://") and ":" not in address:
        raise ConfigError(f'executor.address: "auto", "ray://HOST:PORT" or HOST:PORT of a '
                          f"Ray head, got {_show(address)}")
    return ExecutorSpec(kind=kind, workers=workers, address=address)


def _duplicate(t: dict[str, Any]) -> bool:
    """tournament.duplicate: whether the two matches of a pair share their deals (sides
    swapped). Off unless the organizer sets it to true: a bot that remembers the first match's
    deals knows, in the second, its opponent's whole hand, hand by hand, and no sandbox on one
    machine stops a bot from remembering. A remote bot keeps what it likes; a launched one,
    even sandboxed without writable folders, can leave marks in the kernel's page cache (which
    pages of a file every sandbox reads are cached) and read them back in the next match
    (README "Deals"). "auto", the old default that shared deals when every bot was launched
    and sandboxed, now means false for that reason."""
    value = t.get("duplicate", False)
    if value == "auto":
        return False
    if not isinstance(value, bool):
        raise ConfigError(f'tournament.duplicate: true or false, got {value!r}')
    return value


def _format(t: dict[str, Any], bots: tuple[BotSpec, ...]) -> tuple[str, str]:
    """tournament.format and, for a gauntlet, tournament.challenger (a bot's name)."""
    fmt = t.get("format", "round-robin")
    if fmt not in FORMATS:
        raise ConfigError(f"tournament.format: one of {', '.join(FORMATS)}, got {fmt!r}")
    challenger = t.get("challenger", "")
    names = [bot.name for bot in bots]
    if fmt == "gauntlet" and challenger not in names:
        raise ConfigError(f"tournament.challenger: a gauntlet needs the name of one of its "
                          f"bots ({', '.join(names)}), got {challenger!r}")
    if fmt != "gauntlet" and challenger:
        raise ConfigError("tournament.challenger: only for format = \"gauntlet\"")
    return fmt, challenger


def _names(table: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where}.{key}: must be a list of non-empty strings, got {value!r}")
    return tuple(value)


def _env_name(name: str, where: str) -> None:
    """`name` can be an environment variable's name: not empty, no '=' and no NUL (the
    launch would fail in every match otherwise)."""
    if not name:
        raise ConfigError(f"{where}: a variable name cannot be empty")
    for char, what in (("=", "'='"), ("\0", "a NUL character")):
        if char in name:
            raise ConfigError(f"{where}: variable name {_show(name)} cannot contain {what}")


def _env(entry: dict[str, Any], where: str) -> tuple[tuple[str, str], ...]:
    """`[[bot]] env`: a table of variable names to string values."""
    env = entry.get("env", {})
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise ConfigError(f'{where}: must be a table of strings, e.g. {{K = "v"}}')
    for key, value in env.items():
        _env_name(key, where)
        if "\0" in value:
            raise ConfigError(f"{where}: the value of {key!r} cannot contain a NUL character")
    return tuple(sorted(env.items()))


def _sandbox(raw: Any, base: Path) -> SandboxPolicy:
    if not isinstance(raw, dict):
        raise ConfigError("sandbox: must be a table ([sandbox])")
    _check_keys(raw, {"mode", "allow_unsandboxed", "pass_env", "writable"}, "sandbox")
    mode = raw.get("mode", "auto")
    if mode not in MODES:
        raise ConfigError(f"sandbox.mode: must be one of {', '.join(MODES)}, got {mode!r}")
    allow = raw.get("allow_unsandboxed", False)
    if not isinstance(allow, bool):
        raise ConfigError(f"sandbox.allow_unsandboxed: must be true or false, got {allow!r}")
    writable = tuple(base / p for p in _names(raw, "writable", "sandbox"))
    for path in writable:
        if not path.is_dir():
            raise ConfigError(f"sandbox.writable: folder {path} does not exist")
    pass_env = _names(raw, "pass_env", "sandbox")
    for name in pass_env:
        _env_name(name, "sandbox.pass_env")
    return SandboxPolicy(mode=mode, allow_unsandboxed=allow, pass_env=pass_env,
                         writable=writable)


def _listen_address(listen: str) -> tuple[str, int]:
    """The host and port of `tournament.listen` (host:port, [v6]:port)."""
    host, sep, port = listen.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ConfigError(
            f"tournament.listen: write host:port with a port from 0 to 65535 "
            f"(e.g. 127.0.0.1:50051), got {_show(listen)}"
        )
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


def _matches_per_pair(t: dict[str, Any]) -> int:
    """tournament.matches_per_pair, or its old name `games` (a "game" inside a match is a
    chico, so the old name misled): either, not both; the old one warns."""
    if "games" in t and "matches_per_pair" in t:
        raise ConfigError("tournament.games: the old name of matches_per_pair; give only "
                          "matches_per_pair")
    if "games" in t:
        return _int(t, "games", "tournament", 2, 1)
    return _int(t, "matches_per_pair", "tournament", 2, 1)


OLD_NAMES = {"tournament.games": "tournament.matches_per_pair"}


def config_notes(raw: dict[str, Any]) -> list[str]:
    """Warnings about a config that works but says something the old way."""
    t = raw.get("tournament")
    notes = []
    if isinstance(t, dict) and "games" in t:
        notes.append("tournament.games is the old name of tournament.matches_per_pair "
                     "(matches per pair of bots per variant; a game inside a match is a "
                     "chico); it still works")
    bots = raw.get("bot")
    for i, entry in enumerate(bots if isinstance(bots, list) else []):
        token = entry.get("token") if isinstance(entry, dict) else None
        if isinstance(token, str) and 0 < len(token) < GOOD_TOKEN:
            notes.append(f"bot[{i}].token: {len(token)} characters; anyone who can reach the "
                         f"referee may guess it and play that bot's seats: use {GOOD_TOKEN} or "
                         "more random characters (python3 -c 'import secrets; "
                         "print(secrets.token_urlsafe(16))')")
    return notes


GOOD_TOKEN = 16
"""A remote bot's token shorter than this is warned about at start (`config_notes`)."""


def split_command(command: str, where: str) -> list[str]:
    """A command written as one string, split as a shell reads quotes and spaces; an
    unclosed quote is a `ConfigError` naming `where`."""
    try:
        return shlex.split(command)
    except ValueError as exc:  # "No closing quotation", "No escaped character"
        raise ConfigError(f"{where}: cannot split {_show(command)} as a shell would: "
                          f"{exc}") from None


BOT_FIELDS = frozenset({"name", "command", "token", "protocol", "dir", "env"})
"""The fields of a `[[bot]]` table (a ladder's adds `version`)."""


def parse_bot(
    entry: Any, where: str, base: Path, *, extra: frozenset[str] = frozenset()
) -> BotSpec:
    """One `[[bot]]` table, a tournament's or a ladder's: its name, command or token, protocol,
    dir and env, checked alone (errors name `where`, `bot[0]`, and the field). `extra`: more
    fields the caller allows and reads itself."""
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: must be a table")
    _check_keys(entry, BOT_FIELDS | extra, where)
    if "name" not in entry:
        raise ConfigError(f"{where}.name: every bot needs a name")
    name = _name(entry, "name", where, "")
    command = entry.get("command", [])
    token = entry.get("token", "")
    if isinstance(command, str):
        command = split_command(command, f"{where}.command (bot {name!r})")
    if not isinstance(command, list | tuple) or not all(isinstance(c, str) for c in command):
        raise ConfigError(f"{where}.command (bot {name!r}): must be a list of strings")
    if any("\0" in c for c in command) or (command and not command[0]):
        raise ConfigError(f"{where}.command (bot {name!r}): an empty program or a NUL byte")
    if bool(command) == bool(token):
        raise ConfigError(
            f"{where}: give exactly one of command (the referee launches the bot) "
            "or token (a remote bot connects with it)"
        )
    if token and not isinstance(token, str):
        raise ConfigError(f"{where}.token (bot {name!r}): must be a string")
    if token:
        _str(entry, "token", where, "", 256)
    protocol = entry.get("protocol", "grpc")
    if protocol not in PROTOCOLS:
        raise ConfigError(
            f"{where}.protocol: must be one of {', '.join(PROTOCOLS)}, got {_show(protocol)}"
        )
    if protocol == "stdio" and token:
        raise ConfigError(
            f"{where}.protocol: \"stdio\" is for bots the referee launches; a remote "
            "stdio bot runs `arena stdio --server HOST:PORT --token TOKEN -- COMMAND`"
        )
    folder: Path | None = None
    if "dir" in entry:
        folder = base / _str(entry, "dir", where, "")
        if not folder.is_dir():
            raise ConfigError(f"{where}.dir: folder {folder} does not exist")
    env = _env(entry, f"{where}.env")
    if (folder is not None or env) and not command:
        raise ConfigError(f"{where}: dir and env are for bots with a command")
    return BotSpec(name=name, command=tuple(command), token=token, cwd=base, dir=folder,
                   env=env, protocol=protocol)


def _bots(raw: Any, base: Path) -> tuple[BotSpec, ...]:
    if not isinstance(raw, list) or len(raw) < 2:
        raise ConfigError("bot: a tournament needs at least two [[bot]] tables")
    bots: list[BotSpec] = []
    for i, entry in enumerate(raw):
        where = f"bot[{i}]"
        bot = parse_bot(entry, where, base)
        if any(b.name == bot.name for b in bots):
            raise ConfigError(f"{where}.name: {bot.name!r} is used by two bots")
        twin = next((b for b in bots if bot.token and b.token == bot.token), None)
        if twin is not None:  # one connection would play both bots' seats
            raise ConfigError(
                f"{where}.token (bot {bot.name!r}): the same token as bot {twin.name!r}; each "
                "remote bot needs a token of its own")
        bots.append(bot)
    return tuple(bots)


def decisive(config: TournamentConfig, sandbox_mode: str) -> dict[str, Any]:
    """What decides how the matches of `config` are played, by config key: the seed, duplicate
    deals, the time control, the fault policy, the seats' limits and sandbox, each variant's
    options and each bot's program. A resumed tournament must agree with what it was begun
    with on every key both have (`changed_on_resume`): variants, bots and matches per pair
    may be added or left out, since they only change which matches are played. An
    environment's values are kept as a hash (they may hold secrets)."""
    out: dict[str, Any] = {
        "tournament.seed": config.seed, "tournament.duplicate": config.duplicate,
        "sandbox.mode": sandbox_mode,
        "faults.max_strikes": config.policy.max_strikes,
        "faults.reconnect_ms": config.policy.reconnect_ms,
    }
    for f in dataclasses.fields(config.time_control):
        out[f"time_control.{f.name}"] = getattr(config.time_control, f.name)
    for f in dataclasses.fields(config.limits):
        out[f"limits.{f.name}"] = getattr(config.limits, f.name)
    for variant in config.variants:
        for key, value in config.options[variant].as_dict().items():
            out[f"options.{variant}.{key}"] = value
    for bot in config.bots:
        where = f"bot {bot.name!r}"
        out[f"{where}.command"] = list(bot.command) if bot.command else "(remote)"
        out[f"{where}.protocol"] = bot.protocol
        env = json.dumps(sorted(bot.env)).encode()
        out[f"{where}.env"] = hashlib.sha256(env).hexdigest()[:16] if bot.env else ""
        if bot.command:  # the program itself, not only its name (a recompiled ./bot)
            out[f"{where}.program"] = _file_hash(program_file(bot.command, bot.cwd))
    return out


def _file_hash(path: Path | None) -> str:
    """The first 16 hex digits of the SHA-256 of the file at `path` ("" for none)."""
    if path is None:
        return ""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
    except OSError:
        return ""
    return f"sha256 {digest.hexdigest()[:16]} of {path.name}"


def changed_on_resume(stored: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """The keys both `decisive` maps have whose values differ, as ``key: old -> new``."""
    return [f"{key}: {_show(stored[key])} -> {_show(now[key])}"
            for key in sorted(stored.keys() & now.keys()) if stored[key] != now[key]]


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path("/")


def _writable_folder(path: Path, field_name: str) -> None:
    """`path` is a writable folder, or can be created in one (nothing is created here)."""
    existing = _nearest_existing(path)
    if not existing.is_dir():
        what = "" if existing == path else f" ({existing} is not a folder)"
        raise ConfigError(f"{field_name}: {path} is not a folder{what}")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"{field_name}: {existing} is not writable")


def _database(text: str, base: Path) -> Target:
    """`tournament.database`: an SQLite file relative to `base`, or a PostgreSQL URL."""
    if "://" in text and not is_url(text):
        scheme = text.split("://", 1)[0]
        raise ConfigError(f"tournament.database: {scheme}:// is not supported; give an SQLite "
                          "file name or a postgresql://user@host:port/db URL")
    return as_target(text, base)


def check_database(target: Target, field_name: str = "tournament.database") -> None:
    """A file: see `_database_file`. A PostgreSQL URL: the server answers and lets us in
    (`ConfigError`, one line, if not)."""
    if not is_url(target):
        _database_file(Path(target), field_name)
        return
    try:
        open_backend(target, busy_timeout=10).close()
    except DatabaseError as exc:
        raise ConfigError(f"{field_name}: {str(exc).removeprefix('database: ')}") from None


def _database_file(path: Path, field_name: str = "tournament.database") -> None:
    if path.is_dir():
        raise ConfigError(f"{field_name}: {path} is a folder; give a file name")
    if path.exists():
        if not path.is_file():  # /dev/null, a pipe: SQLite cannot keep a database there
            raise ConfigError(f"{field_name}: {path} is not a regular file; give a file name")
        try:
            with path.open("rb") as src:
                head = src.read(16)
        except OSError as exc:
            raise ConfigError(f"{field_name}: cannot open {path}: {exc.strerror}") from None
        if head and head != b"SQLite format 3\0":
            raise ConfigError(f"{field_name}: {path} is not an SQLite database")
        if not os.access(path, os.R_OK | os.W_OK):
            raise ConfigError(f"{field_name}: {path} is not writable")
        return
    _writable_folder(path.parent, field_name)


def _python_script(argv: tuple[str, ...], cwd: Path, where: str) -> None:
    """`python X.py ...`: X.py exists and compiles (a syntax error fails here, not in every
    match)."""
    rest = [a for a in argv[1:]]
    if not rest or rest[0].startswith("-"):
        return
    script = cwd / rest[0]
    if not script.is_file():
        raise ConfigError(f"{where}: script {rest[0]!r} does not exist (relative to {cwd})")
    try:
        compile(script.read_bytes(), str(script), "exec")
    except (SyntaxError, ValueError) as exc:
        raise ConfigError(f"{where}: {script} does not compile: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read {script}: {exc.strerror}") from None


def check_bot_command(index: int, bot: BotSpec, where: str | None = None) -> None:
    """A launched bot's program exists, is a file and is executable (a `python X.py` script
    exists and compiles); raise `ConfigError` naming the bot (at `where`, else its config
    entry)."""
    import shutil

    where = where or f"bot[{index}].command (bot {bot.name!r})"
    program = bot.command[0]
    if program in ("python", "python3") or Path(program).name.startswith("python"):
        _python_script(bot.command, bot.cwd, where)
        if program in ("python", "python3"):
            return
    if os.sep in program:
        path = bot.cwd / program
    else:
        found = shutil.which(program)
        if found is None:
            raise ConfigError(f"{where}: program {program!r} is not on PATH")
        path = Path(found)
    if not path.exists():
        raise ConfigError(f"{where}: program {program!r} does not exist (relative to {bot.cwd})")
    if not path.is_file():
        raise ConfigError(f"{where}: program {program!r} is a folder, not a program")
    if not os.access(path, os.X_OK):
        raise ConfigError(f"{where}: program {program!r} is not executable (chmod +x)")
    script = bot.command[1] if len(bot.command) > 1 else "-"
    if path.name == "node" and not script.startswith("-") and not (bot.cwd / script).is_file():
        raise ConfigError(
                f"{where}: script {bot.command[1]!r} does not exist (relative to {bot.cwd})"
            )


def preflight(config: TournamentConfig, *, bind: bool = True) -> None:
    """Check what the machine must offer before anything is created: the database file (or
    the PostgreSQL server answering) and
    the replays and logs folders writable, the key file readable (or creatable), the listen
    address free, every launched bot's program there. Raise `ConfigError` (one line)."""
    check_database(config.database)
    _writable_folder(config.replays, "tournament.replays")
    _writable_folder(config.logs, "tournament.logs")
    if config.secret_file is not None:
        if config.secret_file.is_dir():
            raise ConfigError(f"tournament.secret_file: {config.secret_file} is a folder")
        if config.secret_file.exists():
            if not os.access(config.secret_file, os.R_OK):
                raise ConfigError(f"tournament.secret_file: {config.secret_file} is not readable")
        else:
            _writable_folder(config.secret_file.parent, "tournament.secret_file")
    for index, bot in enumerate(config.bots):
        if bot.launched:
            check_bot_command(index, bot)
    if config.executor.kind == "ray":
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            raise ConfigError("executor.kind: \"ray\" needs Ray: pip install 'truco-arena[ray]'")
    if bind:
        check_listen(config.listen)


def check_listen(listen: str, field: str = "tournament.listen") -> None:
    """`listen` (HOST:PORT) can be listened on now; else a `ConfigError` naming `field`."""
    host, port = _listen_address(listen)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ConfigError(f"{field}: unknown host {host!r}: {exc.strerror}") from None
    family, kind, proto, _name, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise ConfigError(f"{field}: cannot listen on {listen}: {exc.strerror}") from None
