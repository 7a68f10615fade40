"""The tournament config file (TOML), read strictly: every error names the field.

    [tournament]
    name = "sample"                 # names the tournament in the database and the logs
    seed = 2026                     # every match seed derives from it
    games = 2                       # matches per pair of bots per variant (sides alternate)
    variants = ["argentine-1v1"]    # default: every variant
    concurrency = 4                 # matches played at the same time
    database = "arena.db"           # SQLite file (relative to the config file)
    replays = "replays"             # folder for one JSON-lines replay per match
    replay_legal = false            # replays list each decision's legal actions (docs/replay.md)
    logs = "logs"                   # folder for the JSON-lines log
    listen = "127.0.0.1:0"          # where bots connect (port 0: any free port)
    format = "round-robin"          # or "gauntlet": only `challenger` against each other bot
    challenger = "new"              # the gauntlet's challenger (a [[bot]] name)

    [time_control]
    decision_ms = 1000              # per-decision deadline
    bank_ms = 0                     # chess-clock bank per seat per match
    increment_ms = 0
    grace_ms = 50                   # waited past the deadline for the network, unannounced

    [faults]
    max_strikes = 3                 # 1 = forfeit at the first fault
    reconnect_ms = 10000            # a remote bot that drops may come back within this
    connect_ms = 20000              # a launched bot must connect and say hello within this
    hello_ms = 10000                # an open stream must say hello within this, or is closed

    [limits]                        # per launched bot process; 0 = no limit
    cpu_seconds = 300
    memory_mb = 2048
    open_files = 256

    [spectators]                    # live spectating with --web (public information only)
    delay_s = 0                     # seconds spectators see the table late

    [options.argentine-1v1]         # per-variant options (see README "Variants")
    target = 15

    [tls]                           # optional: serve over TLS (bots get ARENA_TLS_CA)
    cert = "referee.crt"
    key = "referee.key"

    [[bot]]                         # a bot the referee launches, one process per seat
    name = "random"
    command = ["python", "sample_bots/random_bot.py"]

    [[bot]]                         # a bot that speaks lines on stdin/stdout (docs/stdio.md)
    name = "c-random"
    command = ["sample_bots/c_random/bot"]
    protocol = "stdio"              # default "grpc"

    [[bot]]                         # a remote bot that connects with its token
    name = "remote"
    token = "s3cret"
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.errors import ConfigError, UnknownVariantError
from arena.referee import FaultPolicy, TimeControl
from arena.rules import Options, find_variant, variant_names
from arena.tournament.launcher import BotLimits


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A bot in the tournament: launched from `command`, or remote with `token`."""

    name: str
    command: tuple[str, ...] = ()
    token: str = ""
    cwd: Path = Path(".")
    protocol: str = "grpc"  # "stdio": the command speaks lines, an adapter speaks gRPC for it

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
    database: Path = Path("arena.db")
    replays: Path = Path("replays")
    logs: Path = Path("logs")
    listen: str = "127.0.0.1:0"
    time_control: TimeControl = field(default_factory=TimeControl)
    policy: FaultPolicy = field(default_factory=FaultPolicy)
    limits: BotLimits = field(default_factory=BotLimits)
    connect_ms: int = 20_000  # a launched bot that has not said hello by then forfeits
    hello_ms: int = 10_000  # a stream that has not said hello by then is refused (BAD_HELLO)
    tls_cert: Path | None = None  # PEM certificate chain of the referee (enables TLS)
    tls_key: Path | None = None  # its PEM private key
    replay_legal: bool = False  # action lines of the replays list the legal actions
    format: str = "round-robin"  # or "gauntlet": `challenger` against every other bot
    challenger: str = ""
    spectator_delay_s: float = 0.0  # [spectators] delay_s: live spectators see the table late


PROTOCOLS = ("grpc", "stdio")  # how a launched bot talks: gRPC itself, or lines on stdio

_TOP = {"tournament", "time_control", "faults", "limits", "tls", "options", "bot", "spectators"}
_TOURNAMENT = {
    "name", "seed", "games", "variants", "concurrency", "database", "replays", "logs", "listen",
    "replay_legal",
    "format", "challenger",
}
FORMATS = ("round-robin", "gauntlet")


def _check_keys(table: dict[str, Any], allowed: set[str], where: str) -> None:
    for key in table:
        if key not in allowed:
            raise ConfigError(
                f"{where}: unknown field {key!r}; allowed fields: {', '.join(sorted(allowed))}"
            )


def _int(table: dict[str, Any], key: str, where: str, default: int, minimum: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{where}.{key}: must be a whole number, got {value!r}")
    if value < minimum:
        raise ConfigError(f"{where}.{key}: must be at least {minimum}, got {value}")
    return value


def _bool(table: dict[str, Any], key: str, where: str, default: bool) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{where}.{key}: must be true or false, got {value!r}")
    return value


def _str(table: dict[str, Any], key: str, where: str, default: str) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}.{key}: must be a non-empty string, got {value!r}")
    return value


def load_config(path: Path) -> TournamentConfig:
    """Read and validate a tournament config; raise `ConfigError` naming the bad field."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    return parse_config(raw, base=path.parent)


def parse_config(raw: dict[str, Any], base: Path = Path(".")) -> TournamentConfig:
    """Validate an already-parsed config (paths are relative to `base`)."""
    _check_keys(raw, _TOP, "config")
    t = raw.get("tournament", {})
    if not isinstance(t, dict):
        raise ConfigError("tournament: must be a table ([tournament])")
    _check_keys(t, _TOURNAMENT, "tournament")
    variants_raw = t.get("variants", list(variant_names()))
    if not isinstance(variants_raw, list) or not variants_raw:
        raise ConfigError("tournament.variants: must be a non-empty list of variant names")
    variants: list[str] = []
    for name in variants_raw:
        try:
            variants.append(find_variant(str(name)).name)
        except UnknownVariantError as exc:
            raise ConfigError(f"tournament.variants: {exc}") from None
    options_raw = raw.get("options", {})
    if not isinstance(options_raw, dict):
        raise ConfigError("options: must be a table of per-variant tables")
    options: dict[str, Options] = {}
    for name in variants:
        given = options_raw.get(name, {})
        if not isinstance(given, dict):
            raise ConfigError(f"options.{name}: must be a table")
        try:
            options[name] = find_variant(name).options(given)
        except UnknownVariantError as exc:
            raise ConfigError(f"options.{name}: {exc}") from None
    for name in options_raw:
        if name not in variants:
            raise ConfigError(
                f"options.{name}: not a variant of this tournament ({', '.join(variants)})"
            )
    tc_raw = raw.get("time_control", {})
    _check_keys(tc_raw, {"decision_ms", "bank_ms", "increment_ms", "grace_ms"}, "time_control")
    tc = TimeControl(
        decision_ms=_int(tc_raw, "decision_ms", "time_control", 1000, 1),
        bank_ms=_int(tc_raw, "bank_ms", "time_control", 0, 0),
        increment_ms=_int(tc_raw, "increment_ms", "time_control", 0, 0),
        grace_ms=_int(tc_raw, "grace_ms", "time_control", 50, 0),
    )
    faults = raw.get("faults", {})
    _check_keys(faults, {"max_strikes", "reconnect_ms", "connect_ms", "hello_ms"}, "faults")
    policy = FaultPolicy(
        max_strikes=_int(faults, "max_strikes", "faults", 3, 1),
        reconnect_ms=_int(faults, "reconnect_ms", "faults", 10_000, 0),
    )
    limits_raw = raw.get("limits", {})
    _check_keys(limits_raw, {"cpu_seconds", "memory_mb", "open_files"}, "limits")
    defaults = BotLimits()
    limits = BotLimits(
        cpu_seconds=_int(limits_raw, "cpu_seconds", "limits", defaults.cpu_seconds, 0),
        memory_mb=_int(limits_raw, "memory_mb", "limits", defaults.memory_mb, 0),
        open_files=_int(limits_raw, "open_files", "limits", defaults.open_files, 0),
    )
    tls = raw.get("tls", {})
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
    spectators = raw.get("spectators", {})
    _check_keys(spectators, {"delay_s"}, "spectators")
    delay = spectators.get("delay_s", 0)
    if isinstance(delay, bool) or not isinstance(delay, int | float) or not 0 <= delay <= 3600:
        raise ConfigError(f"spectators.delay_s: must be a number of seconds 0..3600, got {delay!r}")
    bots = _bots(raw.get("bot", []), base)
    fmt, challenger = _format(t, bots)
    return TournamentConfig(
        name=_str(t, "name", "tournament", "tournament"),
        bots=bots,
        variants=tuple(variants),
        options=options,
        seed=_int(t, "seed", "tournament", 0, 0),
        games=_int(t, "games", "tournament", 2, 1),
        concurrency=_int(t, "concurrency", "tournament", 4, 1),
        database=base / _str(t, "database", "tournament", "arena.db"),
        replays=base / _str(t, "replays", "tournament", "replays"),
        logs=base / _str(t, "logs", "tournament", "logs"),
        listen=_str(t, "listen", "tournament", "127.0.0.1:0"),
        time_control=tc,
        policy=policy,
        limits=limits,
        connect_ms=_int(faults, "connect_ms", "faults", 20_000, 1),
        hello_ms=_int(faults, "hello_ms", "faults", 10_000, 1),
        tls_cert=tls_cert,
        tls_key=tls_key,
        replay_legal=_bool(t, "replay_legal", "tournament", False),
        format=fmt,
        challenger=challenger,
        spectator_delay_s=float(delay),
    )


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


def _bots(raw: Any, base: Path) -> tuple[BotSpec, ...]:
    if not isinstance(raw, list) or len(raw) < 2:
        raise ConfigError("bot: a tournament needs at least two [[bot]] tables")
    bots: list[BotSpec] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        where = f"bot[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: must be a table")
        _check_keys(entry, {"name", "command", "token", "protocol"}, where)
        if "name" not in entry:
            raise ConfigError(f"{where}.name: every bot needs a name")
        name = _str(entry, "name", where, "")
        if name in seen:
            raise ConfigError(f"{where}.name: {name!r} is used by two bots")
        seen.add(name)
        command = entry.get("command", [])
        token = entry.get("token", "")
        if isinstance(command, str):
            command = command.split()
        if not isinstance(command, list) or not all(isinstance(c, str) for c in command):
            raise ConfigError(f"{where}.command: must be a list of strings")
        if bool(command) == bool(token):
            raise ConfigError(
                f"{where}: give exactly one of command (the referee launches the bot) "
                "or token (a remote bot connects with it)"
            )
        if token and not isinstance(token, str):
            raise ConfigError(f"{where}.token: must be a string")
        protocol = entry.get("protocol", "grpc")
        if protocol not in PROTOCOLS:
            raise ConfigError(
                f"{where}.protocol: must be one of {', '.join(PROTOCOLS)}, got {protocol!r}"
            )
        if protocol == "stdio" and token:
            raise ConfigError(
                f"{where}.protocol: \"stdio\" is for bots the referee launches; a remote "
                "stdio bot runs `arena stdio --server HOST:PORT --token TOKEN -- COMMAND`"
            )
        bots.append(BotSpec(name=name, command=tuple(command), token=token, cwd=base,
                            protocol=protocol))
    return tuple(bots)
