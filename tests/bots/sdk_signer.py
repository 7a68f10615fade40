"""An SDK bot that sends a sign with every action (`act` returns (index, Signal)) and records
the signs it receives, as raw_signer.py does, in $SIGN_DUMP_DIR/sdk-<pid>.jsonl."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from arena.rules import Action, SeatView
from arena.rules.views import EventBody, SignalEvent
from arena.sdk import Bot, MatchInfo, Signal, SignalKind, main

DUMP = Path(os.environ["SIGN_DUMP_DIR"]) / f"sdk-{os.getpid()}.jsonl"


def record(what: str, **fields: Any) -> None:
    with DUMP.open("a", encoding="utf-8") as dump:
        dump.write(json.dumps({what: fields}) + "\n")


class Signer(Bot):
    """First legal action, always with a TRES sign."""

    def on_match_start(self, info: MatchInfo) -> None:
        self.info = info

    def act(self, view: SeatView, legal: tuple[Action, ...]) -> tuple[int, Signal]:
        for seen in view.signals:
            record("view", match_id=self.info.match_id, seat=view.seat, kind=seen.signal.kind.name,
                   **{"from": seen.seat})
        record("sent", match_id=self.info.match_id, seat=view.seat, kind="TRES")
        return 0, Signal(SignalKind.TRES, f"sdk seat {view.seat}")

    def on_event(self, event: EventBody) -> None:
        if isinstance(event, SignalEvent):
            record("event", match_id=self.info.match_id, seat=self.info.seat,
                   kind=event.signal.kind.name, **{"from": event.seat})


if __name__ == "__main__":
    main(Signer)
