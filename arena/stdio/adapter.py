"""The stdio adapter: one gRPC connection to the referee, bot processes that speak lines.

Threads (each blocked in I/O most of the time, so they share the GIL cheaply):

    main thread      iterates the gRPC stream: each message becomes a line written to the
                     stdin of the child that holds its seat (a 1 MiB pipe: a child that stops
                     reading stalls only itself for a long while)
    gRPC's thread    sends what the outbox holds (the SDK's pattern: a request iterator)
    one per child    reads the child's stdout: each `action` line answers the child's oldest
                     unanswered decision (decisions are answered in order, so a late answer
                     never lands on a newer decision)

A child plays one match at a time and may play several in turn (`match` ... `gameover`, then
the next `match`); the adapter starts one before it connects (so a launched bot pays its
start-up before its first decision) and more only when a connection holds several seats at
once. A child that exits while it holds a seat ends the connection: the referee counts its
seats as disconnected, as for a gRPC bot whose process died.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import grpc
import structlog

from arena.errors import ArenaError
from arena.rpc import convert
from arena.rules import Action, Deck, SeatView
from arena.sdk import (
    DOOR_RETRIES_S,
    PROTOCOL_MINOR,
    PROTOCOL_VERSION,
    may_try_again,
    resolve_token,
    say_while_waiting,
)
from arena.stdio import lines
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

log = structlog.get_logger("arena.stdio")

MAX_LINE = 1 << 16  # bytes of one line from a bot
PIPE_BYTES = 1 << 20  # Linux caps a pipe at /proc/sys/fs/pipe-max-size (1 MiB by default)
_SIGNAL_IN_ONEOF = (
    pb.ActionReply.DESCRIPTOR.fields_by_name["signal"].containing_oneof is not None
)
"""Protocol 1.0 put `ActionReply.signal` inside the `choice` oneof, so a sign cannot travel
with an action; the adapter then drops the sign and tells the bot (docs/stdio.md)."""


@dataclass
class _Decision:
    """A decision sent to a child and not answered yet."""

    n: int
    request_id: str
    match_id: str
    seat: int
    legal: tuple[Action, ...]
    received_ns: int  # when the adapter got the request
    written_ns: int = 0  # when its line was written to the child


@dataclass
class Stats:
    """The adapter's own time per decision (its overhead), and the child's (pipe included)."""

    overhead_ns: list[int] = field(default_factory=list)
    child_ns: list[int] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        def us(values: list[int], q: float) -> float:
            if not values:
                return 0.0
            ordered = sorted(values)
            return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1000, 1)

        return {
            "decisions": len(self.overhead_ns),
            "overhead_median_us": round(statistics.median(self.overhead_ns) / 1000, 1)
            if self.overhead_ns else 0.0,
            "overhead_p99_us": us(self.overhead_ns, 0.99),
            "child_median_us": round(statistics.median(self.child_ns) / 1000, 1)
            if self.child_ns else 0.0,
        }


class Child:
    """One bot process: its pipes, the seat it holds, its unanswered decisions."""

    def __init__(self, adapter: Adapter, argv: Sequence[str], number: int) -> None:
        self.adapter = adapter
        self.number = number
        secret = ("ARENA_TOKEN", "ARENA_TOKEN_FD")  # the bot never sees the token
        env = {k: v for k, v in os.environ.items() if k not in secret}
        env["ARENA_STDIO"] = str(lines.VERSION)
        self.process = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, bufsize=0,
        )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.stdin: IO[bytes] = self.process.stdin
        # Buffered: lines are read whole from the pipe, not a byte at a time.
        self.stdout: IO[bytes] = open(  # noqa: SIM115  (closed with the process)
            self.process.stdout.fileno(), "rb", buffering=MAX_LINE, closefd=False
        )
        with contextlib.suppress(OSError):
            fcntl.fcntl(self.stdin.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        self.lock = threading.Lock()  # guards `seat`, `deck`, `pending`, `by_request`
        self.write_lock = threading.Lock()
        self.seat: tuple[str, int] | None = None
        self.deck: Deck | None = None
        self.decisions = 0
        self.matches = 0
        self.lines_read = 0  # every line the bot wrote (a bot that wrote none is told why)
        self.pending: deque[_Decision] = deque()
        self.by_request: dict[str, int] = {}  # request id -> decision number, this match
        self.reader = threading.Thread(target=self._read, name=f"stdio-child-{number}",
                                       daemon=True)
        self.reader.start()

    def send(self, line: str) -> bool:
        """Write one line; False if the child no longer reads (it exited)."""
        data = line.encode("utf-8") + b"\n"
        try:
            with self.write_lock:  # two threads write (lines, and errors): whole lines only
                self.stdin.write(data)
            return True
        except (BrokenPipeError, ValueError, OSError):
            return False

    def _read(self) -> None:
        too_long = False  # in the middle of discarding an over-long line
        while raw := self.stdout.readline(MAX_LINE):
            self.lines_read += 1
            complete = raw.endswith(b"\n")
            if too_long:
                too_long = not complete
                continue
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if not complete and len(raw) >= MAX_LINE:
                too_long = True
                self.adapter.bad_line(self, text[:80] + "...",
                                      f"a line is at most {MAX_LINE} bytes; this one was cut")
                continue
            try:
                self.adapter.on_line(self, text)
            except Exception as exc:  # never lose the reader: the bot would hang on us
                self.adapter.bad_line(self, text[:200], f"could not be sent: {exc}")
        self.stdout.close()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.process.wait()
        self.adapter.on_exit(self)

    def close(self, grace: float = 2.0) -> None:
        """EOF on stdin (the bot should exit), then SIGTERM, then SIGKILL."""
        with contextlib.suppress(OSError, ValueError):
            self.stdin.close()
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            try:
                self.process.wait(1.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if threading.current_thread() is not self.reader:
            self.reader.join(grace)  # it closes stdout once the child's end is closed


class Adapter:
    """Speaks gRPC to the referee for bot processes that speak lines (module docstring)."""

    def __init__(self, argv: Sequence[str], *, name: str) -> None:
        self.argv = list(argv)
        self.name = name
        self.outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
        self.children: list[Child] = []
        self.idle: list[Child] = []
        self.seats: dict[tuple[str, int], Child] = {}
        self.stats = Stats()
        self.call: Any = None
        self.failure = ""  # why the adapter ended the connection itself
        self.exit_code = 0
        self.closing = False  # set once the stream is over: children exit because we ask
        self.lock = threading.Lock()

    # ------------------------------------------------------------------ children

    def start_child(self) -> Child:
        child = Child(self, self.argv, len(self.children))
        child.send(lines.hello_line(self.name))
        with self.lock:
            self.children.append(child)
            self.idle.append(child)
        return child

    def _take_child(self) -> Child:
        with self.lock:
            while self.idle:
                child = self.idle.pop(0)
                if child.process.poll() is None:
                    return child
        return self.start_child_busy()

    def start_child_busy(self) -> Child:
        child = self.start_child()
        with self.lock:
            self.idle.remove(child)
        return child

    def on_exit(self, child: Child) -> None:
        """A child's stdout closed: if it held a seat, end the connection (disconnect)."""
        code = child.process.returncode
        with self.lock:
            if child in self.idle:
                self.idle.remove(child)
            holding = child.seat
        log.info("stdio_child_exit", child=child.number, code=code, seat=holding)
        if self.closing:
            return
        if holding is not None or child.matches == 0:
            self.failure = f"the bot exited with code {code}" + (
                f" during match {holding[0]} (seat {holding[1]})" if holding else ""
            )
            # as a shell says it: 128 + N for a bot killed by signal N (SIGXCPU: its CPU time)
            self.exit_code = code if code and code > 0 else 128 - code if code else 1
            self.stop()

    def stop(self) -> None:
        """End the connection: close our side and cancel the call."""
        self.outbox.put(None)
        if self.call is not None:
            with contextlib.suppress(Exception):
                self.call.cancel()

    # ------------------------------------------------------------------ bot -> referee

    def on_line(self, child: Child, line: str) -> None:
        got_ns = time.perf_counter_ns()
        with child.lock:
            deck = child.deck
        try:
            parsed = lines.parse_bot_line(line, deck)
        except lines.BadLine as exc:
            self.bad_line(child, line, str(exc))
            return
        if parsed is None:
            return
        if isinstance(parsed, lines.LogLine):
            print(f"[bot] {parsed.text}", file=sys.stderr, flush=True)
            return
        with child.lock:
            decision = child.pending.popleft() if child.pending else None
        if decision is None:
            child.send(lines.error_line(
                "unexpected", "no decision is waiting for an answer; this line was ignored",
                line=line,
            ))
            return
        reply = pb.ActionReply(
            request_id=decision.request_id, match_id=decision.match_id, seat=decision.seat
        )
        choice = parsed.choice
        if isinstance(choice, Action) and choice in decision.legal:
            choice = decision.legal.index(choice)  # the index: cheaper for both sides
        if isinstance(choice, Action):
            reply.action.CopyFrom(convert.action_to_proto(choice))
        else:
            reply.action_index = choice
        # The sign after the action: with protocol 1.1 `signal` is outside the oneof; with
        # 1.0 setting it would clear the action, so it is dropped and the bot told.
        if parsed.signal is not None:
            if _SIGNAL_IN_ONEOF:
                child.send(lines.error_line(
                    "sign_dropped", "this referee speaks protocol 1.0: signs cannot travel "
                    "with an action; the action was sent without it", n=decision.n,
                ))
            else:
                reply.signal.CopyFrom(convert.signal_to_proto(parsed.signal))
        elif parsed.bad_sign:
            # Told here in the door's words; the referee is sent a sign it cannot read, so
            # that it strikes it as it would over gRPC (the action goes ahead unsigned).
            child.send(lines.error_line("bad_sign", parsed.bad_sign, n=decision.n))
            if not _SIGNAL_IN_ONEOF:
                reply.signal.SetInParent()
        self.outbox.put(pb.BotMessage(action=reply))
        done_ns = time.perf_counter_ns()
        if decision.written_ns:
            self.stats.overhead_ns.append(
                (decision.written_ns - decision.received_ns) + (done_ns - got_ns)
            )
            self.stats.child_ns.append(got_ns - decision.written_ns)

    def bad_line(self, child: Child, line: str, why: str) -> None:
        """A garbage line: the bot is told; if a decision waits, it is answered with no
        choice, which the referee counts as an illegal answer (a strike)."""
        print(f"{lines.BAD_LINE_MARK}{line[:200]!r}: {why}", file=sys.stderr,
              flush=True)
        with child.lock:
            decision = child.pending.popleft() if child.pending else None
        child.send(lines.error_line(
            "bad_line", why, n=None if decision is None else decision.n, line=line[:200]
        ))
        if decision is not None:
            self.outbox.put(pb.BotMessage(action=pb.ActionReply(
                request_id=decision.request_id, match_id=decision.match_id, seat=decision.seat,
            )))

    # ------------------------------------------------------------------ referee -> bot

    def dispatch(self, message: pb.ServerMessage) -> None:
        """Turn one referee message into a line for the child holding its seat. A message
        this adapter cannot read (a newer referee's, say) is logged and skipped: the bot
        then simply does not hear of it."""
        try:
            self._dispatch(message)
        except (ArenaError, ValueError, KeyError) as exc:
            print(f"[arena.stdio] could not pass on a {message.WhichOneof('body')} message: "
                  f"{exc}", file=sys.stderr, flush=True)

    def _dispatch(self, message: pb.ServerMessage) -> None:
        body = message.WhichOneof("body")
        if body == "decision":
            self._decision(message.decision)
        elif body == "event":
            self._tell(message.event.match_id, message.event.seat, message)
        elif body == "hand_ended":
            self._tell(message.hand_ended.match_id, message.hand_ended.seat, message)
        elif body == "game_started":
            self._game_started(message.game_started)
        elif body == "game_over":
            self._game_over(message.game_over)
        elif body == "error":
            self._error(message.error)
        elif body == "welcome":
            log.info("stdio_welcome", session=message.welcome.session_id)

    def _game_started(self, s: pb.GameStarted) -> None:
        child = self._take_child()
        deck = convert.deck_of(s.variant)
        with child.lock:
            child.seat = (s.match_id, s.seat)
            child.deck = deck
            child.decisions = 0
            child.matches += 1
            child.pending.clear()
            child.by_request.clear()
        self.seats[(s.match_id, s.seat)] = child
        tc = s.time_control
        child.send(lines.match_line(
            match_id=s.match_id, variant=s.variant, seat=s.seat, team=s.team,
            names=[info.bot_name for info in s.seats], teams=[info.team for info in s.seats],
            options=convert.options_from_proto(s.options),
            time_control={"decision_ms": tc.decision_ms, "bank_ms": tc.bank_ms,
                          "increment_ms": tc.increment_ms, "grace_ms": tc.grace_ms},
        ))

    def _decision(self, d: pb.DecisionRequest) -> None:
        received = time.perf_counter_ns()
        child = self.seats.get((d.match_id, d.seat))
        if child is None or child.deck is None:
            log.warning("stdio_unknown_seat", match_id=d.match_id, seat=d.seat)
            return
        view: SeatView | None
        try:
            view = convert.view_from_proto(d.view, child.deck)
            legal = view.legal_actions  # the same list as d.legal_actions, already read
            if len(legal) != len(d.legal_actions):
                legal = tuple(convert.action_from_proto(a, child.deck) for a in d.legal_actions)
        except ArenaError as exc:  # a view this adapter cannot read: the bot still decides
            print(f"[arena.stdio] decision without its view: {exc}", file=sys.stderr, flush=True)
            view, legal = None, ()
        with child.lock:
            child.decisions += 1
            decision = _Decision(child.decisions, d.request_id, d.match_id, d.seat, legal,
                                 received)
            child.pending.append(decision)
            child.by_request[d.request_id] = decision.n
        spent_ms = (time.perf_counter_ns() - received) // 1_000_000  # ours, not the bot's
        time_left = max(0, d.time_left_ms - spent_ms)
        line = (
            lines.decision_line(decision.n, view, legal, time_left) if view is not None
            else f"decision n={decision.n} time_left_ms={time_left} legal="
            + ",".join(_wire_action(a) for a in d.legal_actions)
        )
        decision.written_ns = time.perf_counter_ns()  # before the write: the child may answer
        child.send(line)

    def _tell(self, match_id: str, seat: int, message: pb.ServerMessage) -> None:
        child = self.seats.get((match_id, seat))
        if child is None or child.deck is None:
            return
        child.send(lines.event_line(convert.event_from_proto(message, child.deck)))

    def _game_over(self, over: pb.GameOver) -> None:
        child = self.seats.pop((over.match_id, over.seat), None)
        if child is None:
            return
        o = over.outcome
        child.send(lines.gameover_line(
            termination=pb.Termination.Name(o.termination).removeprefix("TERMINATION_").lower(),
            winner_team=o.winner_team if o.HasField("winner_team") else None,
            faulty_seat=o.faulty_seat if o.HasField("faulty_seat") else None,
            strikes=list(o.strikes),
            result=convert.result_from_proto(o.result) if o.HasField("result") else None,
            detail=o.detail,
        ))
        with child.lock:
            child.seat = None
            child.deck = None
            child.pending.clear()
            child.by_request.clear()
        with self.lock:
            if child.process.poll() is None:
                self.idle.append(child)

    def _error(self, e: pb.Error) -> None:
        """An in-band error: to the child whose decision it names, else to the log."""
        code = pb.ErrorCode.Name(e.code).removeprefix("ERROR_CODE_").lower()
        # Protocol 1.1 adds the strike count to the errors that cost one.
        strikes = getattr(e, "strikes", None) if _has_field(e, "strikes") else None
        max_strikes = getattr(e, "max_strikes", None) if _has_field(e, "max_strikes") else None
        detail = getattr(e, "detail", "") if _has_field(e, "detail") else ""
        text = detail or e.message
        for child in list(self.seats.values()):
            with child.lock:
                n = child.by_request.get(e.request_id) if e.request_id else None
            if n is not None:
                child.send(lines.error_line(code, text, n=n, strikes=strikes or None,
                                            max_strikes=max_strikes or None))
                if e.code == pb.ERROR_CODE_TIMEOUT and child.lines_read == 0:
                    print("[arena.stdio] timeout, and the bot has written no line at all: "
                          "is its stdout flushed after each line? (a pipe is buffered: "
                          "fflush(stdout), std::endl, print(..., flush=True), "
                          "System.out.flush(), io::stdout().flush())", file=sys.stderr,
                          flush=True)
                return
        print(f"[arena.stdio] referee error {code}: {e.message}", file=sys.stderr, flush=True)

    # ------------------------------------------------------------------ the connection

    def run(self, server: str, token: str, credentials: grpc.ChannelCredentials | None,
            wait_for_ready: bool) -> int:
        """Play until the referee ends the stream; return the process exit code. Refused at
        the door before any welcome (TOO_MANY_CONNECTIONS), or launched and unable to reach
        the referee at all (UNAVAILABLE), say hello again after the SDK's waits
        (`arena.sdk.DOOR_RETRIES_S`) before giving up."""
        waits = iter(DOOR_RETRIES_S)
        try:
            while True:
                code, at_the_door = self._play(server, token, credentials, wait_for_ready)
                wait = next(waits, None) if at_the_door and not self.failure else None
                if wait is None:
                    return code
                print("[arena.stdio] the referee refused or dropped the stream before any "
                      f"message; trying again in "
                      f"{wait:g} s", file=sys.stderr, flush=True)
                time.sleep(wait)
                self.outbox = queue.SimpleQueue()
        finally:
            self.closing = True
            self.outbox.put(None)
            for child in list(self.children):
                child.close()
            log.info("stdio_summary", **self.stats.summary())

    def _play(self, server: str, token: str, credentials: grpc.ChannelCredentials | None,
              wait_for_ready: bool) -> tuple[int, bool]:
        """One stream, from hello to its end: the exit code it leaves, and whether the referee
        refused it at the door before any welcome (then it may be tried again)."""
        self.outbox.put(pb.BotMessage(hello=pb.Hello(
            bot_name=self.name, bot_version="arena-stdio", token=token,
            protocol_version=PROTOCOL_VERSION, protocol_minor=PROTOCOL_MINOR,
            accepts_batches=True,
        )))

        def outgoing() -> Iterator[pb.BotMessage]:
            while (message := self.outbox.get()) is not None:
                yield message

        channel = (grpc.secure_channel(server, credentials) if credentials
                   else grpc.insecure_channel(server))
        welcomed = refused = heard = False
        launched = os.environ.get("ARENA_LAUNCHED") == "1"
        quiet: Callable[[], None] = (
            say_while_waiting(channel, server, _note) if wait_for_ready else _no_note)
        try:
            with channel:
                stub = pb_grpc.RefereeStub(channel)  # type: ignore[no-untyped-call]
                self.call = stub.Play(outgoing(), wait_for_ready=wait_for_ready)
                if self.failure:  # the first child died while we dialled
                    self.call.cancel()
                for message in self.call:
                    heard = True
                    body = message.WhichOneof("body")
                    welcomed = welcomed or body == "welcome"
                    refused = refused or (not welcomed and body == "error" and message.error.code
                                          == pb.ERROR_CODE_TOO_MANY_CONNECTIONS)
                    if body == "batch":
                        for item in message.batch.messages:
                            self.dispatch(item)
                    else:
                        self.dispatch(message)
            return 0, False
        except grpc.RpcError as exc:
            status = exc.code() if hasattr(exc, "code") else None
            if self.failure:
                print(f"[arena.stdio] {self.failure}", file=sys.stderr, flush=True)
                return self.exit_code, False
            details = exc.details() if hasattr(exc, "details") else str(exc)
            print(f"[arena.stdio] the referee ended the stream: {status}: {details}",
                  file=sys.stderr, flush=True)
            return (0 if status == grpc.StatusCode.OK else 1,
                    may_try_again(status, heard=heard, at_the_door=refused, launched=launched))
        finally:
            quiet()
            self.outbox.put(None)


def _no_note() -> None:
    pass


def _note(text: str) -> None:
    print(f"[arena.stdio] {text}", file=sys.stderr, flush=True)


def _wire_action(action: pb.Action) -> str:
    """An action token read straight off the wire (when it cannot become an engine value)."""
    kind = str(pb.ActionKind.Name(action.kind)).removeprefix("ACTION_KIND_").lower()
    if action.HasField("card"):
        return f"{kind}:{action.card.text}"
    if action.HasField("slot"):
        return f"{kind}:{action.slot}"
    return kind


def _has_field(message: Any, name: str) -> bool:
    return name in message.DESCRIPTOR.fields_by_name


def credentials_from_env(
    tls_ca: str | None, server: str = ""
) -> grpc.ChannelCredentials | None:
    """TLS credentials from a CA file (`--tls-ca`, else ARENA_TLS_CA), as the SDK does; none
    for a local `unix:` socket (a sandboxed seat's way to its referee)."""
    path = tls_ca or os.environ.get("ARENA_TLS_CA")
    if not path or server.startswith("unix:"):
        return None
    with open(path, "rb") as pem:
        return grpc.ssl_channel_credentials(root_certificates=pem.read())


def resolve_child(argv: Sequence[str]) -> list[str]:
    """The bot's argv: `python` means the arena's own interpreter, as for gRPC bots."""
    out = list(argv)
    if out and out[0] in ("python", "python3"):
        out[0] = sys.executable
    return out


def serve(
    argv: Sequence[str], *, server: str | None = None, token: str | None = None,
    name: str | None = None, tls_ca: str | None = None,
) -> int:
    """Start the bot, connect it to the referee, play; return an exit code."""
    launched = os.environ.get("ARENA_LAUNCHED") == "1"
    adapter = Adapter(
        resolve_child(argv), name=name or os.environ.get("ARENA_BOT_NAME", "stdio-bot")
    )
    try:
        adapter.start_child()  # before connecting: start-up is not paid at the first decision
    except OSError as exc:
        print(f"[arena.stdio] cannot start the bot {list(argv)}: {exc}", file=sys.stderr,
              flush=True)
        return 2
    address = server or os.environ.get("ARENA_SERVER", "127.0.0.1:50051")
    return adapter.run(
        address,
        resolve_token(token),
        credentials_from_env(tls_ca, address),
        wait_for_ready=not launched,
    )
