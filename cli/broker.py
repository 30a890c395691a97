"""``judgeflow broker``: run the embedded Kafka-protocol broker in the foreground."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from streams.argtypes import port
from streams.exit_codes import CommandError, ExitCode
from streams.settings import Settings


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "broker", help="run the embedded Kafka-protocol broker (noida-db) in the foreground",
        description="Start noida-db on 127.0.0.1, print its bootstrap address on the first line "
        "once it answers Kafka requests, and run until Ctrl-C/SIGTERM. For development only. "
        "judgeflow's clients recognise it by its cluster id and apply its work-arounds (idle "
        "fetch backoff, dead-member eviction) themselves; the settings to use are printed.")
    p.add_argument("--port", type=port, default=0, help="Kafka port (default: a free port)")
    p.add_argument("--data-dir", type=Path, default=None,
                   help="data directory (default: a fresh temporary directory, removed on exit)")
    p.set_defaults(func=run)


def embedded_hint(bootstrap: str) -> list[str]:
    """What to tell whoever started the embedded broker by hand (stderr)."""
    return [f"export JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS={bootstrap} "
            "JUDGEFLOW_KAFKA__BROKER=embedded",
            "judgeflow: embedded dev broker (noida-db): it ignores Fetch max-wait and never "
            "expires a killed group member; judgeflow recognises it and applies its "
            "work-arounds (JUDGEFLOW_KAFKA__IDLE_FETCH_BACKOFF_MS, default 50; "
            "JUDGEFLOW_KAFKA__EVICT_DEAD_MEMBERS, default true) to its clients only. Other "
            "clients (kcat, your own) spin a core while idle unless they pause after an "
            "empty fetch."]


def run(args: argparse.Namespace, settings: Settings) -> int:
    from tools.broker import EmbeddedBroker  # dev-only (the `dev` extra)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with EmbeddedBroker(port=args.port, data_dir=args.data_dir) as broker:
        print(broker.bootstrap, flush=True)
        for line in embedded_hint(broker.bootstrap):
            print(line, file=sys.stderr, flush=True)
        try:
            while not stop.is_set():
                if broker.process is None or broker.process.poll() is not None:
                    raise CommandError("embedded broker exited", ExitCode.FAILURE)
                stop.wait(0.5)
        except KeyboardInterrupt:
            pass
    return ExitCode.OK
