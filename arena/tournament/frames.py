"""The frames between the coordinator and an executor's worker process
(`arena.tournament.worker`): a 4-byte big-endian length and a pickled tuple. Both ends are
this package, in processes of the same user; nothing a bot sends is ever unpickled."""

from __future__ import annotations

import pickle
import struct
from typing import Any

import trio

FRAME = struct.Struct(">I")
MAX_FRAME = 1 << 30  # a replay of a very long match is a few MB; more is a broken stream


def encode(message: tuple[Any, ...]) -> bytes:
    """One frame: the length, then the pickled message."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return FRAME.pack(len(data)) + data


class FrameReader:
    """Frames from a byte stream; `receive` returns None at a clean end of the stream."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream = stream
        self.buffer = bytearray()

    async def _fill(self, size: int) -> bool:
        while len(self.buffer) < size:
            chunk = await self.stream.receive_some(1 << 16)
            if not chunk:
                if self.buffer:
                    raise EOFError(f"the stream ended inside a frame ({len(self.buffer)} bytes)")
                return False
            self.buffer += chunk
        return True

    async def receive(self) -> tuple[Any, ...] | None:
        if not await self._fill(FRAME.size):
            return None
        (size,) = FRAME.unpack_from(self.buffer)
        if size > MAX_FRAME:
            raise EOFError(f"a frame of {size} bytes: the stream is broken")
        if not await self._fill(FRAME.size + size):
            raise EOFError("the stream ended inside a frame")
        data = bytes(self.buffer[FRAME.size : FRAME.size + size])
        del self.buffer[: FRAME.size + size]
        message = pickle.loads(data)
        if not isinstance(message, tuple) or not message:
            raise EOFError(f"not a message: {type(message).__name__}")
        return message
