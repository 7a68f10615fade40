"""Write a Truco bot in Python: subclass `Bot`, implement `act`, call `run`.

    from arena.sdk import Bot, run

    class FirstLegal(Bot):
        def act(self, view, legal):
            return 0                      # an index into `legal`, or one of its actions

    if __name__ == "__main__":
        run(FirstLegal)

`run` dials the referee (``--server`` / ARENA_SERVER; over TLS when ``--tls-ca`` /
ARENA_TLS_CA names the certificate to trust; never over TLS to a local ``unix:`` address),
says hello with the token (``--token``; a bot the referee launches reads it once from the
inherited file descriptor ARENA_TOKEN_FD; else ARENA_TOKEN) and plays until the referee
ends the stream. It makes one `Bot` instance per seat per match, so a bot can keep per-seat
state in `self`; one connection may hold several seats at once, and each instance sees only
its own seat's view. The views and actions are the rules engine's own types (`arena.rules`).

Hooks besides `act` (all optional): `on_match_start`, `on_event` (moves, tricks, envido, the
signs your partners send as `SignalEvent`), `on_hand_end`, `on_error` (every strike the
referee counts against the seat — a timeout or an illegal answer; other refusals, which name
no seat, are only logged to stderr), `on_match_end`.

If `act` raises, the SDK answers the first legal action so the seat does not time out, prints
the traceback to stderr after a line that starts with `FALLBACK_MARK` ("[arena.sdk]
FALLBACK"), and counts it (`fallbacks()`). `arena check` reads those lines from the bot's
output and fails a bot whose answers came from the fallback.
"""

from __future__ import annotations

import argparse
import os
import queue
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import grpc

from arena.rpc import convert
from arena.rules import Action, HandSummary, Options, SeatView
from arena.rules.cards import Deck
from arena.rules.signals import Signal, SignalKind
from arena.rules.views import EventBody
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

PROTOCOL_VERSION = 1
PROTOCOL_MINOR = 1  # protocol 1.1 (arena.proto)
FALLBACK_MARK = "[arena.sdk] FALLBACK"
"""The start of the line the SDK prints to stderr each time `act` raises and it answers the
first legal action instead; `arena check` counts these lines in the bot's output."""
_fallbacks = 0


def fallbacks() -> int:
    """How many answers of this process came from the fallback (`act` raised)."""
    return _fallbacks


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """What a seat is told when its match starts."""

    match_id: str
    variant: str
    options: Options
    seat: int
    team: int
    seat_names: tuple[str, ...]
    decision_ms: int  # time for each decision (each request also says the time left)
    bank_ms: int = 0  # chess-clock reserve for the match, spent past decision_ms
    increment_ms: int = 0  # added to the bank after each decision answered in time
    grace_ms: int = 0  # waited past each deadline for the network: do not plan on it


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """A strike the referee counted against the seat (an `Error` that names the seat).

    `code` is "timeout" or "illegal_action"; `strikes` / `max_strikes` say where the seat
    stands (at `max_strikes` its side forfeits)."""

    code: str  # the ErrorCode without its prefix, lower case: timeout, illegal_action, ...
    message: str
    request_id: str
    detail: str = ""
    strikes: int = 0
    max_strikes: int = 0


@dataclass(frozen=True, slots=True)
class MatchOver:
    """How a seat's match ended."""

    termination: str  # normal, timeout, illegal_action, disconnect, forfeit
    winner_team: int | None
    faulty_seat: int | None
    detail: str


class Bot:
    """Subclass and implement `act`. One instance plays one seat of one match."""

    def on_match_start(self, info: MatchInfo) -> None:
        """The match started; `info` says which seat this instance plays."""

    def act(
        self, view: SeatView, legal: tuple[Action, ...]
    ) -> Action | int | tuple[Action | int, Signal | None]:
        """Choose an action: one of `legal`, or its index in `legal`. To send your partners
        a sign with it (señas, RULES.md §4.9), return `(choice, Signal(...))`; the signs you
        receive are in `view.signals`."""
        raise NotImplementedError

    def on_event(self, event: EventBody) -> None:
        """Something this seat may see happened (a move, a trick, an envido result)."""

    def on_hand_end(self, summary: HandSummary) -> None:
        """A hand ended."""

    def on_error(self, error: ErrorInfo) -> None:
        """The referee counted a strike against this seat: a timeout or an illegal answer
        (the SDK has already logged it to stderr)."""

    def on_match_end(self, over: MatchOver) -> None:
        """The match ended; the instance is dropped after this."""


_token_read: str | None = None


def token_from_env() -> str:
    """The admission token: read once from the pipe at ARENA_TOKEN_FD (then closed; a
    launched bot's token is never in its environment), else ARENA_TOKEN, else ""."""
    global _token_read
    if _token_read is None:
        fd = os.environ.get("ARENA_TOKEN_FD")
        if fd is None:
            return os.environ.get("ARENA_TOKEN", "")
        with os.fdopen(int(fd), "rb") as pipe:
            _token_read = pipe.read().decode().strip()
    return _token_read


def resolve_token(token: str | None = None) -> str:
    """The admission token: `token` if given, else the one the referee handed the process
    (`token_from_env`). The stdio adapter (arena.stdio) gets its token here too."""
    return token if token is not None else token_from_env()


def _log(text: str) -> None:
    print(f"[arena.sdk] {text}", file=sys.stderr, flush=True)


def run(
    bot_factory: Callable[[], Bot],
    *,
    server: str | None = None,
    token: str | None = None,
    name: str | None = None,
    version: str = "",
    credentials: grpc.ChannelCredentials | None = None,
) -> int:
    """Play until the referee ends the stream; return a process exit code (0 = clean)."""
    server = server or os.environ.get("ARENA_SERVER", "127.0.0.1:50051")
    ca_file = os.environ.get("ARENA_TLS_CA")
    if server.startswith("unix:"):  # a local socket: no TLS
        credentials = None
    elif credentials is None and ca_file:
        with open(ca_file, "rb") as pem:
            credentials = grpc.ssl_channel_credentials(root_certificates=pem.read())
    token = resolve_token(token)
    name = name or os.environ.get("ARENA_BOT_NAME", type(bot_factory).__name__)
    hello = pb.BotMessage(
        hello=pb.Hello(
            bot_name=name, bot_version=version, token=token,
            protocol_version=PROTOCOL_VERSION, accepts_batches=True,
            protocol_minor=PROTOCOL_MINOR,
        )
    )
    waits = iter(DOOR_RETRIES_S)
    while True:
        code, details, at_the_door = _play(bot_factory, server, credentials, hello)
        if code == grpc.StatusCode.OK:
            return 0
        _log(f"the referee ended the stream: {code}: {details}")
        wait = next(waits, None) if at_the_door else None
        if wait is None:
            return 1
        _log(f"the referee refused or dropped the stream before any message; "
             f"trying again in {wait:g} s")
        time.sleep(wait)


DOOR_RETRIES_S = (0.25, 0.5, 1.0, 2.0, 4.0)
"""How long `run` waits before it says hello again after the referee refused it at the door
(TOO_MANY_CONNECTIONS before any welcome: its token's connections at their cap, or its
stream closed for a newcomer at a full door) or, for a bot the referee launched, after its
connection failed before any message (UNAVAILABLE: the launched bots' socket at its
connection cap, say, when another seat holds idle connections there): ~8 s in all,
within a launched bot's connect deadline (`[faults] connect_ms`, 20 s by default). Also
after a stream that ended CANCELLED or RESOURCE_EXHAUSTED before the referee said anything
(a referee under a stream flood may drop a call it has not taken yet; a connection over its
streams-per-second is refused so): see `may_try_again`."""

BEFORE_ANY_MESSAGE = (grpc.StatusCode.CANCELLED, grpc.StatusCode.RESOURCE_EXHAUSTED)
"""Statuses that, ending a stream before its first message, mean it never reached the
referee's bot logic: saying hello again is safe (nothing was played)."""


def may_try_again(code: grpc.StatusCode | None, *, heard: bool, at_the_door: bool,
                  launched: bool) -> bool:
    """Whether a stream that ended with `code` may be tried again after a wait
    (`DOOR_RETRIES_S`): refused at the door (TOO_MANY_CONNECTIONS, then RESOURCE_EXHAUSTED),
    ended before any message by a status in `BEFORE_ANY_MESSAGE`, or, for a launched bot, its
    referee not reached (UNAVAILABLE before any message)."""
    if at_the_door and code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return True
    if heard:
        return False
    return code in BEFORE_ANY_MESSAGE or (launched and code == grpc.StatusCode.UNAVAILABLE)


WAITING_NOTES_S = (3.0, 10.0, 30.0, 60.0)
"""After how long (then every last step) a remote bot still waiting for its referee to
listen says so on stderr (`say_while_waiting`)."""


def _nothing() -> None:
    pass


def say_while_waiting(channel: grpc.Channel, server: str,
                      log: Callable[[str], None]) -> Callable[[], None]:
    """Start telling, through `log`, that `channel` has not reached the referee at `server`
    yet, after `WAITING_NOTES_S` and then every minute: a remote bot waits for a referee
    that is not listening yet (wait_for_ready), and was silent however long it waited, a
    wrong --server and a referee long gone alike (outside walkthrough 2). Returns the
    function that stops it (call it once connected, or when done)."""
    ready = grpc.channel_ready_future(channel)
    stopped = threading.Event()

    def marks() -> Iterator[float]:
        yield from WAITING_NOTES_S
        mark = WAITING_NOTES_S[-1]
        while True:
            mark += 60.0
            yield mark

    def watch() -> None:
        began = time.monotonic()
        for mark in marks():
            try:
                ready.result(timeout=max(0.0, mark - (time.monotonic() - began)))
                return
            except grpc.FutureTimeoutError:
                pass
            except Exception:  # cancelled, the channel closed: nothing to say
                return
            if stopped.is_set():
                return
            log(f"no referee at {server} after {mark:g} s; still waiting for it to listen "
                "(is --server right, and is the referee running?)")

    def stop() -> None:
        stopped.set()
        ready.cancel()

    threading.Thread(target=watch, name="arena-wait-note", daemon=True).start()
    return stop


def _play(
    bot_factory: Callable[[], Bot], server: str, credentials: grpc.ChannelCredentials | None,
    hello: pb.BotMessage,
) -> tuple[grpc.StatusCode | None, str, bool]:
    """One stream, from hello to its end: its final status and details, and whether the
    referee refused it at the door before any welcome, or (launched) could not be reached
    at all: then it may be tried again."""
    outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
    outbox.put(hello)

    def outgoing() -> Iterator[pb.BotMessage]:
        while (message := outbox.get()) is not None:
            yield message

    channel = (
        grpc.secure_channel(server, credentials) if credentials else grpc.insecure_channel(server)
    )
    seats: dict[tuple[str, int], tuple[Bot, Deck]] = {}
    at_the_door = heard = False
    launched = os.environ.get("ARENA_LAUNCHED") == "1"
    quiet: Callable[[], None] = (
        _nothing if launched else say_while_waiting(channel, server, _log))
    try:
        with channel:
            stub = pb_grpc.RefereeStub(channel)  # type: ignore[no-untyped-call]
            # wait_for_ready: a bot started before the referee waits for it to listen. Not a
            # bot the referee launched (ARENA_LAUNCHED): its referee listens already, and if
            # it is gone the bot must exit, not wait for it forever.
            welcomed = False
            for message in stub.Play(outgoing(), wait_for_ready=not launched):
                heard = True
                for item in _unpacked(message):
                    body = item.WhichOneof("body")
                    welcomed = welcomed or body == "welcome"
                    if (not welcomed and body == "error"
                            and item.error.code == pb.ERROR_CODE_TOO_MANY_CONNECTIONS):
                        at_the_door = True
                        continue
                    reply = _handle(item, seats, bot_factory)
                    if reply is not None:
                        outbox.put(reply)
        return grpc.StatusCode.OK, "", False
    except grpc.RpcError as exc:
        code = exc.code() if hasattr(exc, "code") else None
        details = exc.details() if hasattr(exc, "details") else str(exc)
        return code, details, may_try_again(code, heard=heard, at_the_door=at_the_door,
                                            launched=launched)
    finally:
        quiet()
        outbox.put(None)


def _unpacked(message: pb.ServerMessage) -> Sequence[pb.ServerMessage]:
    """The messages a `ServerMessage` carries: those of a batch, in order, or itself."""
    if message.WhichOneof("body") == "batch":
        return message.batch.messages  # type: ignore[no-any-return]
    return (message,)


def _handle(
    message: pb.ServerMessage,
    seats: dict[tuple[str, int], tuple[Bot, Deck]],
    bot_factory: Callable[[], Bot],
) -> pb.BotMessage | None:
    body = message.WhichOneof("body")
    if body == "welcome":
        return None
    if body == "error":
        e = message.error
        code = pb.ErrorCode.Name(e.code).removeprefix("ERROR_CODE_").lower()
        strikes = f" (strike {e.strikes} of {e.max_strikes})" if e.max_strikes else ""
        _log(f"referee error {code}{strikes}: {e.message}")
        if e.HasField("seat") and (e.match_id, e.seat) in seats:
            seats[(e.match_id, e.seat)][0].on_error(
                ErrorInfo(code, e.message, e.request_id, e.detail, e.strikes, e.max_strikes)
            )
        return None
    if body == "game_started":
        s = message.game_started
        deck = convert.deck_of(s.variant)
        bot = bot_factory()
        seats[(s.match_id, s.seat)] = (bot, deck)
        bot.on_match_start(
            MatchInfo(
                match_id=s.match_id,
                variant=s.variant,
                options=convert.options_from_proto(s.options),
                seat=s.seat,
                team=s.team,
                seat_names=tuple(info.bot_name for info in s.seats),
                decision_ms=s.time_control.decision_ms,
                bank_ms=s.time_control.bank_ms,
                increment_ms=s.time_control.increment_ms,
                grace_ms=s.time_control.grace_ms,
            )
        )
        return None
    if body == "decision":
        d = message.decision
        bot, deck = seats[(d.match_id, d.seat)]
        view = convert.view_from_proto(d.view, deck)
        legal = tuple(convert.action_from_proto(a, deck) for a in d.legal_actions)
        reply = pb.ActionReply(request_id=d.request_id, match_id=d.match_id, seat=d.seat)
        signal: Signal | None = None
        try:
            choice = bot.act(view, legal)
            if isinstance(choice, tuple):
                choice, signal = choice
        except Exception:
            global _fallbacks
            _fallbacks += 1
            print(
                f"{FALLBACK_MARK} {_fallbacks}: act() raised; answering the first legal action "
                f"(match {d.match_id} seat {d.seat}):\n{traceback.format_exc()}",
                file=sys.stderr, flush=True,
            )
            choice, signal = 0, None
        if signal is not None:
            reply.signal.CopyFrom(convert.signal_to_proto(signal))
        if isinstance(choice, Action):
            reply.action.CopyFrom(convert.action_to_proto(choice))
        else:
            reply.action_index = int(choice)
        return pb.BotMessage(action=reply)
    if body == "event":
        key = (message.event.match_id, message.event.seat)
        if key in seats:
            bot, deck = seats[key]
            bot.on_event(convert.event_from_proto(message, deck))
        return None
    if body == "hand_ended":
        key = (message.hand_ended.match_id, message.hand_ended.seat)
        if key in seats:
            bot, deck = seats[key]
            bot.on_hand_end(convert.summary_from_proto(message.hand_ended.summary, deck))
        return None
    if body == "game_over":
        over = message.game_over
        entry = seats.pop((over.match_id, over.seat), None)
        if entry is not None:
            o = over.outcome
            entry[0].on_match_end(
                MatchOver(
                    termination=pb.Termination.Name(o.termination)
                    .removeprefix("TERMINATION_")
                    .lower(),
                    winner_team=o.winner_team if o.HasField("winner_team") else None,
                    faulty_seat=o.faulty_seat if o.HasField("faulty_seat") else None,
                    detail=o.detail,
                )
            )
        return None
    return None


def main(bot_factory: Callable[[], Bot], argv: Sequence[str] | None = None) -> None:
    """A command line for a bot: --server, --token, --name; exits with `run`'s code."""
    parser = argparse.ArgumentParser(description="A Truco Arena bot.")
    parser.add_argument("--server", help="referee address host:port (env ARENA_SERVER)")
    parser.add_argument(
        "--token", help="admission token (env ARENA_TOKEN_FD: a file descriptor to read it "
        "from, or ARENA_TOKEN)"
    )
    parser.add_argument("--name", help="bot name (env ARENA_BOT_NAME)")
    parser.add_argument(
        "--tls-ca", help="PEM certificate to trust: connect over TLS (env ARENA_TLS_CA)"
    )
    args: Any = parser.parse_args(argv)
    credentials = None
    if args.tls_ca:
        with open(args.tls_ca, "rb") as pem:
            credentials = grpc.ssl_channel_credentials(root_certificates=pem.read())
    sys.exit(
        run(bot_factory, server=args.server, token=args.token, name=args.name,
            credentials=credentials)
    )


__all__ = [
    "FALLBACK_MARK",
    "Bot",
    "ErrorInfo",
    "MatchInfo",
    "MatchOver",
    "Signal",
    "SignalKind",
    "fallbacks",
    "main",
    "run",
    "token_from_env",
]
