"""The audit trail's writer with the broker replaced by a list (unit tests of the page; the
integration tests write to a real broker): records what would be sent, or refuses it."""

from __future__ import annotations

from typing import Any

import orjson

from dashboard.writer import WriteFailed, Writer


class RecordedAudit(Writer):
    def __init__(self, fail: bool = False) -> None:
        super().__init__("127.0.0.1:1", "audit", timeout=1.0)
        self.fail = fail
        self.events: list[dict[str, Any]] = []

    async def send_record(self, key: bytes, value: bytes) -> None:
        if self.fail:
            raise WriteFailed("refused by the test")
        self.events.append({"key": key.decode(), **orjson.loads(value)})
