"""Keep patient data out of every log, at every level, however the level was given.

Third-party libraries log what they carry: at DEBUG aiokafka dumps whole record values
(rationales, quotes, transcripts, adjudicated answers), the Anthropic SDK logs every
request's options (the whole prompt: note text, names) and httpx/httpcore/aiohttp log
requests and headers. judgeflow's own loggers never log note text, quotes or answers, so
``--log-level DEBUG`` (or ``JUDGEFLOW_LOG_LEVEL=DEBUG``: the same thing) must stay safe:
:func:`guard_third_party_loggers` caps every logger in :data:`FLOORS` (and its children) at
its floor and adds :class:`PhiLoggerFilter` to the root handlers, which

* drops their records below the floor even if a library lowers its level again later (the SDK
  does so on import when ``ANTHROPIC_LOG`` is set), and
* withholds the message of every logged exception (``exc_info``, any logger): the traceback's
  frames and the exception's type are kept, its text (which may quote an input) is not.

The explicit, documented escape hatch is ``JUDGEFLOW_UNSAFE_DEBUG_LOG_PHI=1``: nothing is
filtered and a warning says that the log may now contain patient data.
"""

from __future__ import annotations

import logging
import os
import re
import traceback
from collections.abc import Iterable, Mapping

UNSAFE_ENV = "JUDGEFLOW_UNSAFE_DEBUG_LOG_PHI"
#: Lowest level let through per third-party logger family. WARNING for those that log
#: record or request contents below it; INFO for faust/mode, whose DEBUG narrates events
#: but whose INFO is start-up and rebalance lines only.
FLOORS: dict[str, int] = {
    **dict.fromkeys(("aiokafka", "kafka", "anthropic", "httpx", "httpx2", "httpcore",
                     "httpcore2", "h11", "hpack", "h2", "urllib3", "aiohttp", "aiohttp_cors",
                     "yarl"), logging.WARNING),
    **dict.fromkeys(("faust", "mode", "venusian", "croniter"), logging.INFO),
    # Group membership (joins, generations, member ids, assigned partitions): no record
    # contents at INFO, and what an operator needs when a rebalance goes wrong.
    "aiokafka.consumer.group_coordinator": logging.INFO,
}
#: HTTP transport packages and their renamed forks (the SDK's ``httpx2``/``httpcore2``): at
#: DEBUG they log every request and response header. Any such family is capped at WARNING,
#: listed above or not, so that an SDK moving to ``httpcore3`` does not open the log.
TRANSPORT = re.compile(r"(httpx|httpcore|h11|h2|hpack)\d*")
WITHHELD = "(message withheld: it may quote patient data; see streams.logsafety)"

log = logging.getLogger(__name__)


def floor_of(name: str) -> int | None:
    """The floor of logger ``name`` (the most specific listed family it belongs to), None if
    unlisted."""
    found = [(len(family), floor) for family, floor in FLOORS.items()
             if name == family or name.startswith(family + ".")]
    if found:
        return max(found)[1]
    return logging.WARNING if TRANSPORT.fullmatch(name.split(".", 1)[0]) else None


def scrub_exception(record: logging.LogRecord) -> None:
    """Replace ``record``'s exception by its frames and type name (no message)."""
    if not record.exc_info or record.exc_info[1] is None:
        return
    etype, _, tb = record.exc_info
    frames = "".join(traceback.format_tb(tb)) if tb is not None else ""
    name = etype.__name__ if etype is not None else "Exception"
    record.exc_text = f"Traceback (most recent call last):\n{frames}{name} {WITHHELD}"
    record.exc_info = None


class PhiLoggerFilter(logging.Filter):
    """Drops records below their family's floor; withholds exception messages."""

    def filter(self, record: logging.LogRecord) -> bool:
        floor = floor_of(record.name)
        if floor is not None and record.levelno < floor:
            return False
        scrub_exception(record)
        return True


def unsafe_requested(env: Mapping[str, str]) -> bool:
    return env.get(UNSAFE_ENV, "").strip().lower() in ("1", "true", "yes")


def guard_third_party_loggers(env: Mapping[str, str] | None = None,
                              handlers: Iterable[logging.Handler] | None = None) -> bool:
    """Cap the third-party loggers; returns False when the unsafe switch is set."""
    if unsafe_requested(os.environ if env is None else env):
        log.warning("%s is set: third-party request logging is on and the log may contain "
                    "patient data", UNSAFE_ENV)
        return False
    for name, floor in FLOORS.items():
        logger = logging.getLogger(name)
        logger.setLevel(max(floor, logger.level))
    for handler in logging.root.handlers if handlers is None else handlers:
        if not any(isinstance(f, PhiLoggerFilter) for f in handler.filters):
            handler.addFilter(PhiLoggerFilter())
    return True
