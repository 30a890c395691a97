"""``judgeflow replay dlq TOPIC.dlq``: re-drive dead letters to their original topic."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable

from agents.replay.cli_llm import add_kinds
from agents.replay.console import Console, replay_console
from agents.replay.dlq import Replayer, Tally
from streams import event_loop
from streams.exit_codes import ExitCode
from streams.settings import Settings


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("replay", help="re-judge a topic under a new prompt, or re-drive "
                       "dead letters", description="Re-judge an input topic under the current "
                       "prompt version (judge, debrief), or re-drive dead letters (dlq).")
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True)
    d = kinds.add_parser(
        "dlq", help="send dead letters back to the topic they came from",
        description="Send every dead letter of TOPIC.dlq back to its original topic with its "
        "original key and value bytes (fix the cause first). Progress is kept in a consumer "
        "group per DLQ and --type, committed only after the broker acknowledged the re-driven "
        "records: a killed run resumes, and a second run re-drives only new dead letters.")
    d.add_argument("topic", metavar="TOPIC.dlq", help="the dead-letter topic")
    d.add_argument("--type", dest="error_type", metavar="ERROR_TYPE",
                   help="only dead letters whose error.type header is ERROR_TYPE")
    d.add_argument("--dry-run", action="store_true",
                   help="count what would be re-driven, by error type; send and commit nothing")
    d.set_defaults(func=run)
    add_kinds(kinds)


def _counts(c: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "none"


def _progress(dry_run: bool) -> Callable[[Tally], None]:
    label = "to re-drive" if dry_run else "re-driven"

    def show(t: Tally) -> None:
        sys.stderr.write(f"\rre-drive: read {t.read}/{t.total}, "
                         f"{label} {sum(t.redriven.values())}   ")
        sys.stderr.flush()
    return show


def run(args: argparse.Namespace, settings: Settings) -> int:
    replayer = Replayer(settings, args.topic, args.error_type, args.dry_run)
    tty = sys.stderr.isatty()
    console = Console()  # the progress line never shares a line with a log record
    with replay_console(console):
        t = event_loop.run(replayer.run(console.wrap(_progress(args.dry_run)) if tty else None))
    console.end()
    verb = "would re-drive" if args.dry_run else "re-drove"
    print(f"{args.topic}: {verb} {sum(t.redriven.values())} ({_counts(t.redriven)}) "
          f"to {_counts(t.targets)}; already re-driven {sum(t.already.values())}; "
          f"other types {sum(t.filtered.values())} ({_counts(t.filtered)}); "
          f"read {t.read}")
    return ExitCode.OK
