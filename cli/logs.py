"""Logging for the ``judgeflow`` process, set up once from main()."""

from __future__ import annotations

import logging
import os
import sys

from streams.logjson import apply_format
from streams.logsafety import guard_third_party_loggers, unsafe_requested

#: Long-running commands whose own aiokafka warnings (rebalances, retries) are worth seeing.
SERVICES = frozenset({"worker"})


def setup_logging(command: str, level: str, explicit: bool, fmt: str = "text") -> None:
    """Root handler at ``level``, however it was given (flag or ``JUDGEFLOW_LOG_LEVEL``).
    aiokafka narrates every subscription at INFO and dumps record values (patient data) at
    DEBUG: workers keep its warnings, one-shot commands silence it below CRITICAL, because
    they report an unreachable broker themselves in one line (its ``Unable connect`` error
    would come first). Only the documented unsafe switch lets it log below WARNING.
    ``fmt``: ``text`` or ``json`` (JUDGEFLOW_LOG_FORMAT), the same filter either way."""
    logging.basicConfig(level=level, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    floor = logging.WARNING if command in SERVICES else logging.CRITICAL
    if unsafe_requested(os.environ):
        floor = logging.root.level  # the operator opted in to everything
    logging.getLogger("aiokafka").setLevel(max(floor, logging.root.level))
    guard_third_party_loggers()  # record/request logs carry PHI; see streams.logsafety
    apply_format(fmt)  # JUDGEFLOW_LOG_FORMAT: text or json (streams.logjson)
    if command == "demo" and not explicit:
        logging.root.setLevel(logging.WARNING)  # the demo prints its own progress
