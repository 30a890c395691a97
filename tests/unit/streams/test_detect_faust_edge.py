"""The detect Faust edge's guard: a failed output stops the worker before an offset commit."""

from __future__ import annotations

import asyncio

import pytest

from streams.detect import faust_edge


@pytest.mark.parametrize(("outcome", "exits"), [("ok", False), ("error", True),
                                                ("cancel", False)])
def test_failed_output_exits_before_commit(monkeypatch: pytest.MonkeyPatch, outcome: str,
                                           exits: bool) -> None:
    codes: list[int] = []
    monkeypatch.setattr(faust_edge.os, "_exit", codes.append)
    loop = asyncio.new_event_loop()
    try:
        fut: asyncio.Future[int] = loop.create_future()
        if outcome == "ok":
            fut.set_result(1)
        elif outcome == "error":
            fut.set_exception(ConnectionError("broker gone"))
        else:
            fut.cancel()
        faust_edge._exit_if_unpublished(fut)
    finally:
        loop.close()
    assert codes == ([faust_edge.EXIT_UNPUBLISHED] if exits else [])


def test_fewer_input_partitions_than_configured_is_reported() -> None:
    from streams.detect.run import partition_warning

    assert partition_warning("answers", 4, 4) is None
    assert partition_warning("answers", 8, 4) is None
    text = partition_warning("answers", 1, 4)
    assert text is not None and "answers has 1 partition(s)" in text and "4" in text
