"""Logging for the ``judgeflow`` process, set up once from main()."""

from __future__ import annotations

import logging
import sys

from streams.logsafety import guard_third_party_loggers

#: Long-running commands whose own aiokafka warnings (rebalances, retries) are worth seeing.
SERVICES = frozenset({"worker"})


def setup_logging(command: str, level: str, explicit: bool) -> None:
    """Root handler at ``level``. aiokafka narrates every subscription at INFO: workers keep
    its warnings; one-shot commands silence it below CRITICAL, because they report an
    unreachable broker themselves in one line (its ``Unable connect`` error would come first)."""
    logging.basicConfig(level=level, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    floor = logging.WARNING if command in SERVICES else logging.CRITICAL
    if explicit and logging.root.level <= logging.DEBUG:
        floor = logging.DEBUG  # asked for everything: aiokafka included
    logging.getLogger("aiokafka").setLevel(max(floor, logging.root.level))
    guard_third_party_loggers()  # SDK/HTTP request logs carry PHI; see streams.logsafety
    if command == "demo" and not explicit:
        logging.root.setLevel(logging.WARNING)  # the demo prints its own progress
