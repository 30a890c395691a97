"""The Faust floor for ``judgeflow bench detect``: a Faust agent that only forwards records.

Run as ``python -m tools.bench.faust SOURCE SINK`` with the usual ``JUDGEFLOW_*``
environment. It shows how much of the gap between the raw aiokafka passthrough and the
detector is Faust's own per-event cost (stream, acks, per-message send) and how much is ours.
"""

from __future__ import annotations

import asyncio
import sys

import faust

from streams import kafka_clients
from streams.app import base_app
from streams.detect.faust_edge import RAW
from streams.detect.run import QuietWorker
from streams.settings import Settings


def main(argv: list[str]) -> int:
    source, sink = argv
    settings = Settings()
    asyncio.run(kafka_clients.connect(settings.kafka))  # recognises the embedded broker
    (settings.state_dir / "faust-forward").mkdir(parents=True, exist_ok=True)
    app = base_app(settings, f"{settings.groups.detect}-faust-forward", settings.kafka.partitions)
    src = app.topic(source, **RAW)
    dst = app.topic(sink, **RAW)

    @app.agent(src, name="forward")
    async def forward(stream: faust.StreamT) -> None:
        async for event in stream.events():
            await dst.send(key=event.message.key, value=event.message.value)

    QuietWorker(app, loglevel=settings.log_level, quiet=True).execute_from_commandline()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
