"""Client-side workaround for the embedded broker's ignored Fetch max-wait.

noida-db answers an empty Fetch at once instead of holding it for ``fetch_max_wait_ms``, so
an idle aiokafka consumer (and so every Faust worker) re-polls in a tight loop and burns a
core. :func:`install_idle_fetch_backoff` makes the consumer pause after a fetch that returned
no records, which is what the broker should have done. It is installed only on the
embedded/dev path (``JUDGEFLOW_KAFKA__IDLE_FETCH_BACKOFF_MS`` > 0, set by ``judgeflow demo``,
``judgeflow broker`` output and the tests) and only on the aiokafka version it was checked
against; real Kafka never needs it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import aiokafka
from aiokafka.consumer import fetcher as _fetcher

log = logging.getLogger(__name__)

CHECKED_AIOKAFKA = ("0.14.0",)
_state: dict[str, float] = {"backoff": 0.0}
_original: Any = None


def install_idle_fetch_backoff(backoff_ms: int) -> bool:
    """Pause ``backoff_ms`` after an empty fetch. Returns whether the patch is active."""
    global _original
    if backoff_ms <= 0:
        _state["backoff"] = 0.0  # an installed patch no longer pauses (real Kafka next)
        return False
    if aiokafka.__version__ not in CHECKED_AIOKAFKA:
        log.warning("idle fetch backoff not installed: checked only with aiokafka %s, found %s",
                    CHECKED_AIOKAFKA, aiokafka.__version__)
        return False
    _state["backoff"] = backoff_ms / 1000.0
    if _original is not None:
        return True
    _original = _fetcher.Fetcher._proc_fetch_request

    async def _proc_fetch_request(self: Any, assignment: Any, node_id: Any, request: Any) -> bool:
        got_records: bool = await _original(self, assignment, node_id, request)
        if not got_records:
            wait = min(_state["backoff"], self._fetch_max_wait_ms / 1000.0)
            try:
                await asyncio.sleep(wait)
            except asyncio.CancelledError:
                # close() or a rebalance cancels pending fetches; the original returns False.
                return False
        return got_records

    _fetcher.Fetcher._proc_fetch_request = _proc_fetch_request  # type: ignore[method-assign]
    log.debug("idle fetch backoff of %d ms installed", backoff_ms)
    return True

