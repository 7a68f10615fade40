"""An HTTP/2 stream flooder that is no gRPC client: raw frames through `h2` (no grpcio, no SDK).

It opens `--connections` connections to ADDRESS (``host:port`` or ``unix:/path``) and on each
opens silent ``/arena.v1.Referee/Play`` streams (HEADERS, never a message) as fast as it can,
resetting its oldest (RST_STREAM CANCEL) once more than `--keep` are open: `--keep 200` holds
streams by the hundred, `--keep 1` is a "rapid reset" flood. With `--rude` it ignores the
server's SETTINGS_MAX_CONCURRENT_STREAMS (opens streams past it). A connection the server
closes is opened again. After `--seconds` it prints one JSON line of what it saw:

    opened            streams it opened
    refused           streams the server reset with REFUSED_STREAM (over its stream limit)
    reset             streams the server reset otherwise
    ended             streams the server ended (a gRPC status in trailers)
    statuses          those trailers' grpc-status values, counted
    connections       connections opened (the first ones included)
    goaway            GOAWAY frames received
    max_streams       the server's SETTINGS_MAX_CONCURRENT_STREAMS (None: not sent)
    most_open         the most streams the server had open at once on one connection (opened,
                      not yet reset or ended by either side, not refused)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import signal
import socket
import threading
import time
from collections import Counter, deque
from typing import Any

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions


class _Rude(h2.connection.H2Connection):
    """Opens streams whatever the server's MAX_CONCURRENT_STREAMS says."""

    @property
    def open_outbound_streams(self) -> int:
        return 0


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self.statuses: Counter[str] = Counter()
        self.max_streams: int | None = None
        self.most_open = 0


def _connect(address: str) -> tuple[socket.socket, str]:
    if address.startswith("unix:"):
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(address[5:])
        return sock, "localhost"
    host, port = address.rsplit(":", 1)
    return socket.create_connection((host, int(port))), address


def flood_one(address: str, keep: int, rude: bool, until: float, stats: Stats) -> None:
    """One connection's flood until `until` (time.monotonic()); returns when the server closes
    the connection."""
    sock, authority = _connect(address)
    with stats.lock:
        stats.counts["connections"] += 1
    kind = _Rude if rude else h2.connection.H2Connection
    conn = kind(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    headers = [(":method", "POST"), (":scheme", "http"), (":path", "/arena.v1.Referee/Play"),
               (":authority", authority), ("content-type", "application/grpc"),
               ("te", "trailers")]
    live: deque[int] = deque()  # our streams, oldest first, that the server has not closed
    sock.setblocking(False)
    try:
        while time.monotonic() < until:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                try:
                    data = sock.recv(1 << 16)
                except (BlockingIOError, InterruptedError):
                    data = None
                except OSError:
                    return
                if data == b"":
                    return
                if data:
                    try:
                        events = conn.receive_data(data)
                    except h2.exceptions.ProtocolError:
                        return
                    _note(events, live, stats)
                    if conn.state_machine.state == h2.connection.ConnectionState.CLOSED:
                        return
            try:
                sid = conn.get_next_available_stream_id()
                conn.send_headers(sid, headers)
                live.append(sid)
                with stats.lock:
                    stats.counts["opened"] += 1
                    stats.most_open = max(stats.most_open, len(live))
            except h2.exceptions.TooManyStreamsError:
                pass
            except h2.exceptions.ProtocolError:
                return
            while len(live) > keep:
                old = live.popleft()
                with contextlib.suppress(h2.exceptions.StreamClosedError,
                                         h2.exceptions.ProtocolError):
                    conn.reset_stream(old)
            out = conn.data_to_send()
            if out:
                sock.setblocking(True)
                try:
                    sock.sendall(out)
                except OSError:
                    return
                sock.setblocking(False)
    finally:
        sock.close()


def _note(events: list[Any], live: deque[int], stats: Stats) -> None:
    with stats.lock:
        for event in events:
            if isinstance(event, h2.events.RemoteSettingsChanged):
                changed = event.changed_settings.get(
                    h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS)
                if changed is not None:
                    stats.max_streams = changed.new_value
            elif isinstance(event, h2.events.StreamReset) and event.remote_reset:
                if event.error_code == h2.errors.ErrorCodes.REFUSED_STREAM:
                    stats.counts["refused"] += 1
                else:
                    stats.counts["reset"] += 1
                _forget(live, event.stream_id)
            elif isinstance(event, h2.events.TrailersReceived):
                status = dict(event.headers).get("grpc-status", "?")
                stats.statuses[str(status)] += 1
            elif isinstance(event, h2.events.StreamEnded):
                stats.counts["ended"] += 1
                _forget(live, event.stream_id)
            elif isinstance(event, h2.events.ConnectionTerminated):
                stats.counts["goaway"] += 1


def _forget(live: deque[int], sid: int) -> None:
    with contextlib.suppress(ValueError):
        live.remove(sid)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("address")
    parser.add_argument("--connections", type=int, default=2)
    parser.add_argument("--keep", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rude", action="store_true")
    args = parser.parse_args()
    stats = Stats()
    until = time.monotonic() + args.seconds

    def worker() -> None:
        while time.monotonic() < until:
            try:
                flood_one(args.address, args.keep, args.rude, until, stats)
            except OSError:
                time.sleep(0.05)  # refused at accept: try again

    def report() -> None:
        with stats.lock:
            print(json.dumps({**stats.counts, "statuses": dict(stats.statuses),
                              "max_streams": stats.max_streams, "most_open": stats.most_open}),
                  flush=True)

    def stopped(signum: int, frame: object) -> None:  # SIGTERM: report what it saw, then go
        report()
        os._exit(0)

    signal.signal(signal.SIGTERM, stopped)
    threads = [threading.Thread(target=worker, daemon=True) for _ in range(args.connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    report()


if __name__ == "__main__":
    main()
