"""``JUDGEFLOW_LOG_FORMAT=json``: one JSON object per line, for log pipelines.

``{"ts", "level", "logger", "message"}`` and, when present, ``"exc"`` (the traceback as the
PHI filter left it: frames and type, never the message: :mod:`streams.logsafety`) and the
current OpenTelemetry ``trace_id``/``span_id`` (:mod:`streams.tracing`), so a log line and
its span meet in the backend. The same records reach it as in the text format: the PHI
filter runs on the handler before any formatter.
"""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime
from typing import Any

import orjson

from streams.logsafety import PhiLoggerFilter, unsafe_requested

FORMATS = ("text", "json")
TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname, "logger": record.name, "message": record.getMessage()}
        if record.exc_info and not record.exc_text:  # only when the PHI filter is off
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            out["exc"] = record.exc_text
        if record.stack_info:
            out["stack"] = self.formatStack(record.stack_info)
        out.update(_trace_ids())
        return orjson.dumps(out).decode()


def _trace_ids() -> dict[str, str]:
    try:
        from opentelemetry import trace
    except ImportError:
        return {}
    ctx = trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return {}
    return {"trace_id": format(ctx.trace_id, "032x"), "span_id": format(ctx.span_id, "016x")}


def formatter(fmt: str) -> logging.Formatter:
    return JsonFormatter() if fmt == "json" else logging.Formatter(TEXT)


def apply_format(fmt: str) -> None:
    """Give every root handler the format (again: Faust's worker sets up its own handler),
    each keeping the PHI filter (unless the documented unsafe switch is set: then, as
    streams.logsafety says, nothing is filtered)."""
    unsafe = unsafe_requested(os.environ)
    for handler in logging.root.handlers:
        handler.setFormatter(formatter(fmt))
        if not unsafe and not any(isinstance(f, PhiLoggerFilter) for f in handler.filters):
            handler.addFilter(PhiLoggerFilter())
