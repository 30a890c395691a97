"""The concurrent runner's fault paths without a broker: a stub producer that fails, refuses,
or acknowledges; a handler that never returns; oversized input; the catch-up gate."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from aiokafka import TopicPartition
from aiokafka.errors import KafkaConnectionError, MessageSizeTooLargeError

from streams import limits
from streams.metrics import Metrics
from streams.runner import ConcurrentWorker, Output, PartitionOffsets
from tests.helpers import test_settings

TP = TopicPartition("in", 0)


@dataclass
class Rec:
    value: bytes | None
    key: bytes | None = b"k"
    topic: str = "in"
    partition: int = 0
    offset: int = 7
    headers: tuple[()] = ()


class StubProducer:
    def __init__(self, fail: list[BaseException]) -> None:
        self.fail = fail
        self.sent: list[tuple[str, Any, Any]] = []

    async def send(self, topic: str, value: Any, key: Any, headers: Any) -> asyncio.Future[Any]:
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self.fail:
            exc = self.fail.pop(0)
            if isinstance(exc, MessageSizeTooLargeError):
                raise exc
            fut.set_exception(exc)
        else:
            self.sent.append((topic, value, dict(headers or ())))
            fut.set_result(None)
        return fut


def make(handler: Any, fail: list[BaseException] | None = None,
         deadline: float = 0.05) -> tuple[ConcurrentWorker, StubProducer]:
    s = test_settings("127.0.0.1:1", llm={"deadline_seconds": deadline})
    w = ConcurrentWorker(s, name="t", topic="in", group_id="g", handler=handler,
                         concurrency=2, metrics=Metrics.create(), call_deadline_seconds=1.0)
    w.handler_timeout = 0.2
    producer = StubProducer(fail or [])
    w.publisher.producer = producer  # type: ignore[assignment]
    w._parts[TP] = PartitionOffsets()
    w._parts[TP].in_flight.add(7)
    return w, producer


async def ok(rec: Any) -> list[Output]:
    return [Output("out", rec.key, b"result")]


async def test_a_handler_that_never_returns_is_dead_lettered_within_its_bound() -> None:
    async def hang(rec: Any) -> list[Output]:
        await asyncio.sleep(3600)
        return []

    w, p = make(hang)
    await w._sem.acquire()
    await asyncio.wait_for(w._handle(TP, Rec(b"{}")), 5)
    assert [(t, h["error.type"]) for t, _, h in p.sent] == [("in.dlq", b"llm_failure")]
    assert w._parts[TP].committable() == 8


async def test_an_oversized_record_is_dead_lettered_truncated_without_calling_the_handler(
        ) -> None:
    called = []

    async def handler(rec: Any) -> list[Output]:
        called.append(rec)
        return []

    w, p = make(handler)
    big = b"x" * (limits.MAX_DLQ_RECORD_BYTES + 10)
    await w._sem.acquire()
    await w._handle(TP, Rec(big))
    assert not called
    topic, value, headers = p.sent[0]
    assert topic == "in.dlq" and headers["error.type"] == b"oversized"
    assert int(headers["original.size"]) == len(big)
    assert len(value) == limits.DLQ_TRUNCATED_VALUE_BYTES


async def test_a_failed_send_is_retried_and_never_fatal() -> None:
    w, p = make(ok, fail=[KafkaConnectionError(), KafkaConnectionError()])
    w.publisher.renew = _no_renew  # type: ignore[method-assign]
    await w._sem.acquire()
    await asyncio.wait_for(w._handle(TP, Rec(b"{}")), 10)
    assert [t for t, _, _ in p.sent] == ["out"]
    assert w._parts[TP].committable() == 8


async def test_a_send_that_never_succeeds_leaves_the_record_uncommitted_on_stop() -> None:
    w, p = make(ok, fail=[KafkaConnectionError()] * 100)
    w.publisher.renew = _no_renew  # type: ignore[method-assign]
    await w._sem.acquire()
    task = asyncio.create_task(w._handle(TP, Rec(b"{}")))
    await asyncio.sleep(0.3)
    w.stop()
    await asyncio.wait_for(task, 10)
    assert not p.sent and w._parts[TP].committable() == 7  # commit up to it, not past it


async def test_an_output_too_large_for_the_broker_becomes_a_dead_letter() -> None:
    w, p = make(ok, fail=[MessageSizeTooLargeError()])
    await w._sem.acquire()
    await w._handle(TP, Rec(b"{}"))
    assert [(t, h["error.type"]) for t, _, h in p.sent] == [("in.dlq", b"oversized")]


async def _no_renew(failed: Any) -> None:
    return None
