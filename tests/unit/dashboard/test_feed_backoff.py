"""The dashboard's feed backs off while Kafka is unreachable: 1 s doubling up to 30 s."""

from __future__ import annotations

import asyncio
import contextlib

from dashboard.feed import Backoff, FeedStatus, Hub, run_feed
from dashboard.window import Window
from tests.helpers import test_settings


def test_pauses_double_up_to_the_cap_and_reset() -> None:
    pause = Backoff()
    assert [pause.next() for _ in range(7)] == [1, 2, 4, 8, 16, 30, 30]
    pause.reset()
    assert pause.next() == 1


def test_an_unreachable_broker_is_retried_with_growing_pauses() -> None:
    async def scenario() -> tuple[int, float]:
        status, pause = FeedStatus(), Backoff(first=0.01, cap=0.04)
        feed = asyncio.create_task(run_feed(test_settings("127.0.0.1:1"), Window(10), Hub(),
                                            status, from_beginning=True, backoff=pause))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        while status.errors < 4 and loop.time() < deadline and not feed.done():
            await asyncio.sleep(0.01)
        feed.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await feed
        return status.errors, pause.current

    errors, current = asyncio.run(scenario())
    assert errors >= 4 and current == 0.04
