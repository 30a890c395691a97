"""noida-db 0.2.3 answers an empty Fetch at once, ignoring its max-wait: pause after one.

A client-side work-around for the embedded broker only. noida-db answers an empty Fetch at once
instead of holding it for ``fetch_max_wait_ms``, so an idle aiokafka consumer (and so every
Faust worker) re-polls in a tight loop and burns a core. Once :func:`install_idle_fetch_backoff`
has registered a cluster's bootstrap servers, a consumer of THAT cluster pauses after a fetch
that returned no records, which is what the broker should have done; consumers of any other
cluster in the same process are untouched. Only :mod:`streams.kafka_clients` registers a
cluster, and only one it recognised as the embedded broker; only on the aiokafka version this
was checked against. Real Kafka never needs it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

import aiokafka
from aiokafka.conn import collect_hosts
from aiokafka.consumer import fetcher as _fetcher

log = logging.getLogger(__name__)

CHECKED_AIOKAFKA = ("0.14.0",)
#: bootstrap hosts ("host:port") of registered clusters -> pause in seconds
_backoff: dict[str, float] = {}
_original: Any = None


def hosts(bootstrap: str | Iterable[str]) -> list[str]:
    return [f"{h}:{p}" for h, p, _ in collect_hosts(bootstrap)]


def _pause_for(client: Any) -> float:
    try:
        found = hosts(client._bootstrap_servers)
    except Exception:  # an unexpected client shape: never break a fetch over it
        return 0.0
    return max((_backoff.get(h, 0.0) for h in found), default=0.0)


def install_idle_fetch_backoff(bootstrap: str, backoff_ms: int) -> bool:
    """Pause ``backoff_ms`` after an empty fetch from the cluster at ``bootstrap``.
    Returns whether the patch is active."""
    global _original
    if backoff_ms <= 0:
        return False
    if aiokafka.__version__ not in CHECKED_AIOKAFKA:
        log.warning("idle fetch backoff not installed: checked only with aiokafka %s, found %s",
                    CHECKED_AIOKAFKA, aiokafka.__version__)
        return False
    for host in hosts(bootstrap):
        _backoff[host] = backoff_ms / 1000.0
    if _original is not None:
        return True
    _original = _fetcher.Fetcher._proc_fetch_request

    async def _proc_fetch_request(self: Any, assignment: Any, node_id: Any, request: Any) -> bool:
        got_records: bool = await _original(self, assignment, node_id, request)
        if not got_records:
            pause = _pause_for(self._client)
            if pause <= 0:
                return got_records
            try:
                await asyncio.sleep(min(pause, self._fetch_max_wait_ms / 1000.0))
            except asyncio.CancelledError:
                # close() or a rebalance cancels pending fetches; the original returns False.
                return False
        return got_records

    _fetcher.Fetcher._proc_fetch_request = _proc_fetch_request  # type: ignore[method-assign]
    log.debug("idle fetch backoff of %d ms installed for %s", backoff_ms, bootstrap)
    return True
