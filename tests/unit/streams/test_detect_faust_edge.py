"""The detect Faust edge: the input-partition warning, and why it writes cell states straight to
the producer (the output guard is tested with the other watchdogs, test_watchdogs.py)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace


def test_fewer_input_partitions_than_configured_is_reported() -> None:
    from streams.detect.run import partition_warning

    assert partition_warning("answers", 4, 4) is None
    assert partition_warning("answers", 8, 4) is None
    text = partition_warning("answers", 1, 4)
    assert text is not None and "answers has 1 partition(s)" in text and "4" in text


def test_faust_buffer_flush_is_no_barrier() -> None:
    """Why the edge sends its changelog records straight to the producer: Faust's producer
    buffer (where ``Table.send_changelog`` queues them) returns from ``flush()`` while a
    record it took from the queue is still on its way to the producer, and gives up after
    0.1 s without progress. Faust commits offsets right after that flush, so a cell state
    could still be unsent when its input offset was committed (a kill then lost it)."""
    from faust.transport.producer import ProducerBuffer

    class Running(ProducerBuffer):
        state = "running"  # type: ignore[assignment]

    async def scenario() -> tuple[list[int], list[int]]:
        sent: list[int] = []

        async def slow_send(fut: int) -> None:
            await asyncio.sleep(0.3)  # a producer slowed down (a loaded machine, a full batch)
            sent.append(fut)

        buffer = Running()
        buffer.app = SimpleNamespace(conf=SimpleNamespace(producer_threaded=False))  # type: ignore[assignment]
        buffer._send_pending = slow_send  # type: ignore[assignment,method-assign]
        worker = asyncio.ensure_future(ProducerBuffer._handle_pending(buffer))  # type: ignore[call-arg]
        for n in (1, 2):
            buffer.pending.put_nowait(n)
        await buffer.flush()
        at_flush = list(sent)
        await asyncio.sleep(0.8)
        worker.cancel()
        return at_flush, sent

    at_flush, eventually = asyncio.run(scenario())
    assert eventually == [1, 2]
    assert at_flush != [1, 2], "Faust's buffer flush now waits: the direct send may go"
