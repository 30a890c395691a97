"""The detect agent's guard: a failed output stops the worker before an offset commit."""

from __future__ import annotations

import asyncio

import pytest

from streams.detect import agent


@pytest.mark.parametrize(("outcome", "exits"), [("ok", False), ("error", True),
                                                ("cancel", False)])
def test_failed_output_exits_before_commit(monkeypatch: pytest.MonkeyPatch, outcome: str,
                                           exits: bool) -> None:
    codes: list[int] = []
    monkeypatch.setattr(agent.os, "_exit", codes.append)
    loop = asyncio.new_event_loop()
    try:
        fut: asyncio.Future[int] = loop.create_future()
        if outcome == "ok":
            fut.set_result(1)
        elif outcome == "error":
            fut.set_exception(ConnectionError("broker gone"))
        else:
            fut.cancel()
        agent._exit_if_unpublished(fut)
    finally:
        loop.close()
    assert codes == ([agent.EXIT_UNPUBLISHED] if exits else [])
