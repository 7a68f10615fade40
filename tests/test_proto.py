"""The wire protocol: committed generated code is current, and enums match the engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.rpc import codegen
from arena.rules.actions import ActionKind
from arena.rules.cards import Suit
from arena.rules.signals import SignalKind
from arena.rules.views import AwardReason
from arena.v1 import arena_pb2

GENERATED = codegen.REPO_ROOT / "arena" / "v1"


def test_committed_generated_code_is_current(tmp_path: Path) -> None:
    """Regenerating the code from proto/ gives exactly the committed arena/v1 files."""
    written = codegen.generate(tmp_path)
    fresh = {path.name for path in written if path.parent == Path("arena/v1")}
    committed = {path.name for path in GENERATED.iterdir() if path.is_file()}
    assert fresh == {"__init__.py", "arena_pb2.py", "arena_pb2.pyi", "arena_pb2_grpc.py"}
    assert committed == fresh, "arena/v1 holds files protoc did not write: run `make proto`"
    stale = [
        name
        for name in sorted(fresh)
        if (tmp_path / "arena" / "v1" / name).read_bytes() != (GENERATED / name).read_bytes()
    ]
    assert not stale, f"generated code is out of date ({', '.join(stale)}): run `make proto`"


@pytest.mark.parametrize(
    ("engine", "proto_enum", "prefix"),
    [
        (ActionKind, arena_pb2.ActionKind, "ACTION_KIND_"),
        (AwardReason, arena_pb2.AwardReason, "AWARD_REASON_"),
        (SignalKind, arena_pb2.SignalKind, "SIGNAL_KIND_"),
    ],
)
def test_enum_numbers_match_the_engine(
    engine: type[ActionKind] | type[AwardReason] | type[SignalKind], proto_enum: Any, prefix: str
) -> None:
    """Every engine value has a proto value of the same name and number, and vice versa
    (apart from the proto's UNSPECIFIED = 0), so the wire numbers can never drift."""
    wire = {
        name.removeprefix(prefix): number
        for name, number in proto_enum.items()
        if name != f"{prefix}UNSPECIFIED"
    }
    assert wire == {member.name: int(member) for member in engine}
    assert proto_enum.Value(f"{prefix}UNSPECIFIED") == 0


def test_suits_correspond_by_name() -> None:
    """Every engine suit has a proto suit of the same name (numbers are shifted by one for
    SUIT_UNSPECIFIED = 0; arena.rpc.convert maps them by name)."""
    wire = {name.removeprefix("SUIT_") for name, _ in arena_pb2.Suit.items()} - {"UNSPECIFIED"}
    assert wire == {suit.name for suit in Suit}
