"""The seccomp filter of a sandboxed seat: no file locks, no file-event watches.

Every bubblewrap sandbox binds the same read-only inodes (the bot's own program, the
interpreter, ``/usr/bin/sh``...). Read-only is not enough: a seat may take a read lock on a
read-only file and any other seat sees it (``F_GETLK``, a failing ``flock``), and an inotify
or fanotify watch on a shared file reports the other seats' opens and reads. Two seats of one
bot passed their hidden hands through such locks, bit by bit (the partner's in a 2v2 match,
the opponent's through the simultaneous duplicate twin).

`lock_filter` builds a classic-BPF program (``struct sock_filter[]``, what ``bwrap --seccomp
FD`` reads from that descriptor) that makes these fail with EPERM and allows everything else:

- ``flock(2)``;
- ``fcntl(2)`` (and ``fcntl64`` of 32-bit x86) with a lock command: ``F_GETLK``,
  ``F_SETLK``, ``F_SETLKW``, their ``*64`` forms (12-14), the open-file-description locks
  ``F_OFD_GETLK/SETLK/SETLKW`` (36-38), leases ``F_SETLEASE``/``F_GETLEASE`` (1024, 1025)
  and directory notification ``F_NOTIFY`` (1026, dnotify: the same kind of channel);
- ``inotify_init``, ``inotify_init1``, ``fanotify_init``.

The filter checks the calling convention (``seccomp_data.arch``): x86_64 (x32 calls, with
bit 30 set in the number, are matched by their x86_64 number), the 32-bit x86 calls a 64-bit
process can still make (``int 0x80``), and aarch64. Any other calling convention is refused
altogether (EPERM on every call): a filter that let an unknown one through would let a bot
reach the same calls under other numbers. `lock_filter` returns None on a machine that is
none of these (the caller runs the seat without the filter, with a warning).
"""

from __future__ import annotations

import errno
import platform
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass

# Classic BPF opcodes (linux/bpf_common.h) and seccomp return values (linux/seccomp.h).
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_AND_K = 0x54  # BPF_ALU | BPF_AND | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
RET_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
RET_ERRNO = 0x00050000  # SECCOMP_RET_ERRNO | errno (in the low 16 bits)
DENIED_ERRNO = errno.EPERM

# struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }
_NR = 0
_ARCH = 4
_ARG1_LOW = 16 + 8 * 1  # the low half of args[1] (fcntl's cmd; little-endian only)

X32_SYSCALL_BIT = 0x40000000
# fcntl commands (the kernel reads cmd as an unsigned int: only the low 32 bits count)
LOCK_COMMANDS = (
    5, 6, 7,  # F_GETLK, F_SETLK, F_SETLKW
    12, 13, 14,  # F_GETLK64, F_SETLK64, F_SETLKW64 (32-bit calls)
    36, 37, 38,  # F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW
    1024, 1025, 1026,  # F_SETLEASE, F_GETLEASE, F_NOTIFY
)


@dataclass(frozen=True, slots=True)
class CallingConvention:
    """The syscall numbers of one architecture (seccomp_data.arch)."""

    audit_arch: int
    denied: tuple[int, ...]  # refused whatever the arguments (flock, inotify, fanotify)
    fcntl: tuple[int, ...]  # refused with a lock command
    x32: bool = False  # numbers may carry the x32 bit (x86_64)


X86_64 = CallingConvention(0xC000003E, denied=(73, 253, 294, 300), fcntl=(72,), x32=True)
I386 = CallingConvention(0x40000003, denied=(143, 291, 332, 338), fcntl=(55, 221))
AARCH64 = CallingConvention(0xC00000B7, denied=(32, 26, 262), fcntl=(25,))
CONVENTIONS = {"x86_64": (X86_64, I386), "amd64": (X86_64, I386), "aarch64": (AARCH64,),
               "arm64": (AARCH64,)}


def _ins(code: int, k: int, jt: int | str = 0, jf: int | str = 0) -> tuple[int, int | str,
                                                                            int | str, int]:
    return code, jt, jf, k


def assemble(conventions: Sequence[CallingConvention]) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) instructions, jumps resolved."""
    program: list[tuple[int, int | str, int | str, int]] = [_ins(_LD_W_ABS, _ARCH)]
    for i, conv in enumerate(conventions):
        program.append(_ins(_JEQ_K, conv.audit_arch, f"arch{i}", 0))
    program.append(_ins(_RET_K, RET_ERRNO | DENIED_ERRNO))  # an unknown calling convention
    labels: dict[str, int] = {}
    for i, conv in enumerate(conventions):
        labels[f"arch{i}"] = len(program)
        program.append(_ins(_LD_W_ABS, _NR))
        if conv.x32:
            program.append(_ins(_AND_K, 0xFFFFFFFF & ~X32_SYSCALL_BIT))
        for nr in conv.denied:
            program.append(_ins(_JEQ_K, nr, "deny", 0))
        for nr in conv.fcntl:
            program.append(_ins(_JEQ_K, nr, "fcntl", 0))
        program.append(_ins(_RET_K, RET_ALLOW))
    labels["fcntl"] = len(program)
    program.append(_ins(_LD_W_ABS, _ARG1_LOW))
    for cmd in LOCK_COMMANDS:
        program.append(_ins(_JEQ_K, cmd, "deny", 0))
    program.append(_ins(_RET_K, RET_ALLOW))
    labels["deny"] = len(program)
    program.append(_ins(_RET_K, RET_ERRNO | DENIED_ERRNO))

    resolved = []
    for at, (code, jt, jf, k) in enumerate(program):
        offsets = [labels[j] - at - 1 if isinstance(j, str) else j for j in (jt, jf)]
        if not all(0 <= off <= 255 for off in offsets):
            raise ValueError(f"seccomp filter: jump out of range at instruction {at}")
        resolved.append((code, offsets[0], offsets[1], k))
    return resolved


def lock_filter(machine: str | None = None) -> bytes | None:
    """The compiled filter (``struct sock_filter[]``, native byte order) for this machine,
    or None where its calling convention is not known here (or it is big-endian)."""
    machine = (machine or platform.machine()).lower()
    conventions = CONVENTIONS.get(machine)
    if conventions is None or sys.byteorder != "little":
        return None
    return b"".join(struct.pack("=HBBI", *ins) for ins in assemble(conventions))
