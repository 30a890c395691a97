"""What a Kafka client sees of a test cluster: live brokers, partition leaders, ISR health
(one metadata round trip each, through aiokafka's admin client)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any


async def _metadata(bootstrap: str, timeout: float) -> dict[str, Any] | None:
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap,
                                request_timeout_ms=int(timeout * 1000))
    quiet = logging.getLogger("aiokafka")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # refused connections are expected while nodes start
    try:
        await asyncio.wait_for(admin.start(), timeout)
        cluster = await asyncio.wait_for(admin.describe_cluster(), timeout)
        topics = await asyncio.wait_for(admin.describe_topics(), timeout)
        return {"brokers": cluster["brokers"], "topics": topics}
    except Exception:
        return None
    finally:
        with contextlib.suppress(Exception):
            await admin.close()
        quiet.setLevel(level)


def metadata(bootstrap: str, timeout: float = 3.0) -> dict[str, Any] | None:
    """``{"brokers": [...], "topics": [...]}`` or None when the cluster does not answer."""
    return asyncio.run(_metadata(bootstrap, timeout))


def live_brokers(bootstrap: str) -> int:
    meta = metadata(bootstrap)
    return 0 if meta is None else len(meta["brokers"])


def leader(bootstrap: str, topic: str, partition: int) -> int:
    """The node id leading ``topic``-``partition`` (-1 when none or unknown)."""
    meta = metadata(bootstrap) or {"topics": []}
    for t in meta["topics"]:
        if t["topic"] == topic:
            for p in t["partitions"]:
                if p["partition"] == partition:
                    return int(p["leader"])
    return -1


def under_replicated(bootstrap: str) -> int:
    """Partitions whose in-sync replicas are fewer than their replicas (-1: no answer)."""
    meta = metadata(bootstrap)
    if meta is None:
        return -1
    return sum(1 for t in meta["topics"] for p in t["partitions"]
               if len(p["isr"]) < len(p["replicas"]))
