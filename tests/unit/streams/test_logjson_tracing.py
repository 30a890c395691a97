"""``JUDGEFLOW_LOG_FORMAT=json`` keeps the PHI filter (an exception's message is withheld,
a third-party DEBUG record dropped) and writes one JSON object per line; tracing is off,
and every span a no-op, without ``OTEL_EXPORTER_OTLP_ENDPOINT``."""

from __future__ import annotations

import contextvars
import io
import logging

import orjson
import pytest

from streams import tracing
from streams.logjson import JsonFormatter, apply_format
from streams.logsafety import PhiLoggerFilter

SECRET = "Jane Roe HbA1c 9.1"


@pytest.fixture()
def json_handler() -> logging.StreamHandler[io.StringIO]:
    handler = logging.StreamHandler(io.StringIO())
    handler.addFilter(PhiLoggerFilter())
    handler.setFormatter(JsonFormatter())
    return handler


def test_one_json_object_per_line_and_no_phi(
        json_handler: logging.StreamHandler) -> None:  # type: ignore[type-arg]
    ours = logging.getLogger("agents.test_logjson")
    ours.addHandler(json_handler)
    ours.setLevel(logging.DEBUG)
    library = logging.getLogger("aiokafka.test_logjson")
    library.addHandler(json_handler)
    library.setLevel(logging.DEBUG)
    try:
        ours.info("judged %d cell(s)\nsecond line", 3)
        try:
            raise ValueError(SECRET)
        except ValueError:
            ours.error("handler failed: %s", "ValueError", exc_info=True)
        library.debug("record value %s", SECRET)  # a library's record dump: dropped
    finally:
        ours.removeHandler(json_handler)
        library.removeHandler(json_handler)
    lines = json_handler.stream.getvalue().splitlines()
    assert len(lines) == 2
    first, second = (orjson.loads(line) for line in lines)
    assert (first["level"], first["logger"], first["message"]) == (
        "INFO", "agents.test_logjson", "judged 3 cell(s)\nsecond line")
    assert first["ts"].endswith("+00:00")
    assert "ValueError" in second["exc"] and "withheld" in second["exc"]
    assert SECRET not in json_handler.stream.getvalue()


def test_apply_format_restyles_the_root_handlers_keeping_the_filter() -> None:
    handler = logging.StreamHandler(io.StringIO())
    logging.root.addHandler(handler)
    try:
        apply_format("json")
        assert isinstance(handler.formatter, JsonFormatter)
        assert any(isinstance(f, PhiLoggerFilter) for f in handler.filters)
        apply_format("text")
        assert not isinstance(handler.formatter, JsonFormatter)
    finally:
        logging.root.removeHandler(handler)


def test_tracing_is_off_without_an_endpoint() -> None:
    assert not tracing.enabled({}) and not tracing.enabled({"OTEL_EXPORTER_OTLP_ENDPOINT": " "})
    assert tracing.enabled({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert tracing.setup_tracing("test", env={}) is False
    with tracing.span("x", {"a": 1}) as span:
        assert span is None

    def annotated() -> object:  # in a context of its own, as each record's task has
        tracing.annotate(job_id="j1")  # kept for the step's LLM spans, exported nowhere
        return tracing.step_ids()["judgeflow.job_id"]
    assert contextvars.copy_context().run(annotated) == "j1"
    assert tracing.step_ids() == {}
