"""The calibrate worker's edge (issue 25): a record on which the worker fails does not stop
it, and the dead letters of a batch are written (and only then counted and logged) even when
a later record of the same batch fails."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from agents.calibrate.core import Calibration
from agents.calibrate.run import CalibrateWorker
from schemas.calibration import Adjudication
from streams.metrics import Metrics
from tests.helpers import test_settings as make_settings
from tests.unit.agents.calibrate import scenario as sc


@dataclass
class Rec:
    topic: str
    partition: int
    offset: int
    value: bytes
    key: bytes = b"k"
    headers: tuple[Any, ...] = ()


class Producer:
    """Records what was sent; a send is acknowledged when its future is awaited."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes | None]] = []

    async def send(self, topic: str, key: bytes | None = None, value: bytes | None = None,
                   headers: Any = None) -> asyncio.Future[None]:
        self.sent.append((topic, value))
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        fut.set_result(None)
        return fut


class Consumer:
    def __init__(self, records: list[Rec]) -> None:
        self.records = records

    async def getmany(self, **kw: Any) -> dict[str, list[Rec]]:
        out, self.records = self.records, []
        return {"tp": out} if out else {}


class Exploding(Calibration):
    def add_adjudication(self, a: Adjudication) -> set[Any]:
        if a.patient_id == "boom":
            raise TypeError("can't compare offset-naive and offset-aware datetimes")
        return super().add_adjudication(a)


def adj(cell: str, minute: int = 50) -> bytes:
    return orjson.dumps(sc.adjudication(cell, "no", "n_a", None, minute=minute)
                        .model_dump(mode="json"))


async def test_a_failing_record_is_dead_lettered_and_the_batch_letters_are_written(
        caplog: pytest.LogCaptureFixture) -> None:
    s = make_settings("127.0.0.1:9")
    w = CalibrateWorker(s, Metrics.create(), Exploding())
    w.held = None  # caught up: adjudications are fed as they come
    w.feeder.tasks.add(sc.TASK)
    w.producer = Producer()  # type: ignore[assignment]
    t = s.topics.adjudications
    batch = [Rec(t, 0, 0, b"{not json"), Rec(t, 0, 1, b'{"task_id": "T"}'),
             Rec(t, 0, 2, adj("boom")), Rec(t, 0, 3, adj("c1"))]
    with caplog.at_level(logging.WARNING):
        await w._poll(Consumer(batch))  # type: ignore[arg-type]
    letters = [v for topic, v in w.producer.sent if topic == s.topics.dlq(t)]  # type: ignore[attr-defined]
    assert letters == [batch[0].value, batch[1].value, batch[2].value]
    assert w.cal.adjudications[sc.adjudication("c1", "no", "n_a", None).key].final_answer \
        == "no"  # the record after the failing one was processed
    assert w.dead == {(0, 0), (0, 1), (0, 2)}
    said = [r.getMessage() for r in caplog.records]
    assert sum("dead-lettered" in m for m in said) == 3
    assert any(m.endswith("internal_error") for m in said)
    assert not any("naive" in m for m in said)  # the type only, never the text
