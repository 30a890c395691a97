"""``judgeflow broker``: run the embedded Kafka-protocol broker in the foreground."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from cli.argtypes import port
from streams.exit_codes import CommandError, ExitCode
from streams.settings import Settings


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "broker", help="run the embedded Kafka-protocol broker (noida-db) in the foreground",
        description="Start noida-db on 127.0.0.1, print its bootstrap address on the first line "
        "once it answers Kafka requests, and run until Ctrl-C/SIGTERM. For development only; "
        "workers talking to it should set JUDGEFLOW_KAFKA__IDLE_FETCH_BACKOFF_MS=50.")
    p.add_argument("--port", type=port, default=0, help="Kafka port (default: a free port)")
    p.add_argument("--data-dir", type=Path, default=None,
                   help="data directory (default: a fresh temporary directory, removed on exit)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    from tools.broker import EmbeddedBroker  # dev-only (the `dev` extra)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with EmbeddedBroker(port=args.port, data_dir=args.data_dir) as broker:
        print(broker.bootstrap, flush=True)
        print(f"export JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS={broker.bootstrap} "
              "JUDGEFLOW_KAFKA__IDLE_FETCH_BACKOFF_MS=50", file=sys.stderr, flush=True)
        try:
            while not stop.is_set():
                if broker.process is None or broker.process.poll() is not None:
                    raise CommandError("embedded broker exited", ExitCode.FAILURE)
                stop.wait(0.5)
        except KeyboardInterrupt:
            pass
    return ExitCode.OK
