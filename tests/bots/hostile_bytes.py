"""A bot that sends bytes that are not the protocol.

First, on plain TCP sockets to the referee's port: an HTTP/1.1 request, then the HTTP/2
preface followed by a malformed frame. Then it connects properly, says hello, and answers its
first decision with bytes that no protobuf parser accepts, through a gRPC call whose request
serializer passes raw bytes. The referee must survive all of it and end the match as a
disconnect. What it is told is noted by hostile_common.Told.
"""

from __future__ import annotations

import os
import socket

from hostile_common import Send, Told, hello, play

from arena.v1 import arena_pb2 as pb

# Field 1 with wire type 7 (there is no wire type 7): corrupt for every protobuf message.
NOT_PROTOBUF = b"\x0f\xde\xad\xbe\xef"
JUNK = (
    b"GET /arena.v1.Referee/Play HTTP/1.1\r\nHost: referee\r\n\r\n",
    # The HTTP/2 preface, then a SETTINGS frame of 5 bytes (must be a multiple of 6).
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x05\x04\x00\x00\x00\x00\x00" + b"\xff" * 5,
)


def _connect(server: str) -> socket.socket:
    """A raw socket to the referee: its Unix socket (a launched bot) or host:port."""
    if server.startswith("unix:"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(2)
        sock.connect(server.removeprefix("unix:"))
        return sock
    host, port = server.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=2)


def junk_on_the_socket(server: str, told: Told) -> None:
    for junk in JUNK:
        with _connect(server) as sock:
            sock.sendall(junk)
            try:
                while sock.recv(4096):
                    pass
                told.line("socket closed by the referee")
            except OSError as exc:
                told.line(f"socket: {exc!r}")


if __name__ == "__main__":
    told = Told()
    junk_on_the_socket(os.environ["ARENA_SERVER"], told)

    def on_message(message: pb.ServerMessage, send: Send) -> None:
        if message.WhichOneof("body") == "decision":
            send(NOT_PROTOBUF)

    play(hello(), on_message, told=told)
