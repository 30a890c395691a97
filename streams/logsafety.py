"""Keep third-party loggers that can carry patient data quiet.

At DEBUG the Anthropic SDK logs every request's options (the whole prompt: note text,
quotes, names) and httpx/httpcore log requests and headers. judgeflow's own loggers never
log note text, quotes or answers, so ``--log-level DEBUG`` must stay safe for them:
:func:`guard_third_party_loggers` sets the loggers in :data:`PHI_LOGGERS` (and their
children) to WARNING and adds a filter to the root handlers that drops their records below
WARNING even if a library raises their level again later (the SDK does so on import when
``ANTHROPIC_LOG`` is set).

The explicit, documented escape hatch is ``JUDGEFLOW_UNSAFE_DEBUG_LOG_PHI=1``: nothing is
filtered and a warning says that the log may now contain patient data.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping

UNSAFE_ENV = "JUDGEFLOW_UNSAFE_DEBUG_LOG_PHI"
#: Loggers that log request or message contents at DEBUG/INFO.
#: (aiokafka is already kept at WARNING by the CLI; faust logs no record payloads.)
PHI_LOGGERS = ("anthropic", "httpx", "httpx2", "httpcore", "hpack", "h2", "urllib3")

log = logging.getLogger(__name__)


def is_phi_logger(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in PHI_LOGGERS)


class PhiLoggerFilter(logging.Filter):
    """Drops records below WARNING from :data:`PHI_LOGGERS`."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or not is_phi_logger(record.name)


def unsafe_requested(env: Mapping[str, str]) -> bool:
    return env.get(UNSAFE_ENV, "").strip().lower() in ("1", "true", "yes")


def guard_third_party_loggers(env: Mapping[str, str] | None = None,
                              handlers: Iterable[logging.Handler] | None = None) -> bool:
    """Quiet the PHI-carrying loggers; returns False when the unsafe switch is set."""
    if unsafe_requested(os.environ if env is None else env):
        log.warning("%s is set: third-party request logging is on and the log may contain "
                    "patient data", UNSAFE_ENV)
        return False
    for name in PHI_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    for handler in logging.root.handlers if handlers is None else handlers:
        if not any(isinstance(f, PhiLoggerFilter) for f in handler.filters):
            handler.addFilter(PhiLoggerFilter())
    return True
