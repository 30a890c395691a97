"""OpenTelemetry spans for every worker step and every LLM call, without content.

Off unless the standard ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``..._TRACES_ENDPOINT``) is set;
then :func:`setup_tracing` (called once from ``main()``) exports over OTLP/HTTP protobuf
(``opentelemetry-exporter-otlp-proto-http``, which reads the other standard ``OTEL_*``
variables itself: headers, timeout, ``OTEL_SERVICE_NAME``). Without the packages installed
nothing breaks: every span here is a no-op, and a warning says so once.

What a span may carry is decided here, not by callers: ids (job, result, request,
evaluation: derived hashes, never a patient id), counts, the model, token counts, cost,
latency, status and error *types*. Never a prompt, a completion, a note, a quote, an
exception message (which may quote an input): exceptions are not recorded by the SDK
(``record_exception=False``); the status says only the error's type.

LLM spans follow the GenAI semantic conventions (``gen_ai.operation.name``,
``gen_ai.provider.name``, ``gen_ai.request.model``, ``gen_ai.response.model``,
``gen_ai.usage.input_tokens``/``output_tokens``; content attributes never set), so
Langfuse, Arize Phoenix or any OTLP backend shows them as LLM calls.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import logging
import os
from collections.abc import Iterator, Mapping
from typing import Any

log = logging.getLogger(__name__)
ENDPOINT_ENVS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
Value = str | int | float | bool

_tracer: Any = None
_provider: Any = None
#: ids of the input being handled, copied onto the LLM spans below its step
_IDS: contextvars.ContextVar[Mapping[str, Value] | None] = contextvars.ContextVar(
    "trace_ids", default=None)


def enabled(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return any(env.get(name, "").strip() for name in ENDPOINT_ENVS)


def setup_tracing(service: str, env: Mapping[str, str] | None = None) -> bool:
    """Export spans over OTLP/HTTP when an endpoint is configured; True when on."""
    global _tracer, _provider
    if not enabled(env) or _tracer is not None:
        return _tracer is not None
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        log.warning("OTEL_EXPORTER_OTLP_ENDPOINT is set but opentelemetry-sdk and "
                    "opentelemetry-exporter-otlp-proto-http are not installed: no traces")
        return False
    name = (env or os.environ).get("OTEL_SERVICE_NAME") or f"judgeflow-{service}"
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    _provider, _tracer = provider, provider.get_tracer("judgeflow")
    atexit.register(shutdown)  # the last batch leaves before the process does
    return True


def shutdown() -> None:
    global _tracer, _provider
    if _provider is not None:
        with contextlib.suppress(Exception):  # an unreachable collector must not hang exit
            _provider.shutdown()
    _tracer = _provider = None


def _clean(attributes: Mapping[str, Any]) -> dict[str, Value]:
    return {k: v for k, v in attributes.items()
            if isinstance(v, str | int | float | bool) and v is not None}


@contextlib.contextmanager
def span(name: str, attributes: Mapping[str, Any] | None = None,
         kind: str = "internal") -> Iterator[Any]:
    """A span (None when tracing is off). Exceptions end it with status ERROR and their
    type only; set more with :func:`annotate`."""
    if _tracer is None:
        yield None
        return
    from opentelemetry.trace import SpanKind, Status, StatusCode

    with _tracer.start_as_current_span(
            name, kind=SpanKind.CLIENT if kind == "client" else SpanKind.INTERNAL,
            attributes=_clean(attributes or {}), record_exception=False,
            set_status_on_exception=False) as current:
        try:
            yield current
        except BaseException as exc:
            current.set_attribute("error.type", type(exc).__name__)
            current.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            raise


def annotate(**attributes: Any) -> None:
    """Add ids or outcomes to the current step's span, and remember the ids for the LLM
    spans the step opens (``job_id=...`` becomes ``judgeflow.job_id``)."""
    named = {f"judgeflow.{k}": v for k, v in attributes.items()}
    _IDS.set({**(_IDS.get() or {}), **_clean(named)})
    if _tracer is None:
        return
    from opentelemetry import trace

    current = trace.get_current_span()
    if current.is_recording():
        current.set_attributes(_clean(named))


def step_ids() -> Mapping[str, Value]:
    return _IDS.get() or {}


def fail(current: Any, error_type: str) -> None:
    """Mark ``current`` (a span from :func:`span`, or None) failed with ``error_type``."""
    if current is None:
        return
    from opentelemetry.trace import Status, StatusCode

    current.set_attribute("error.type", error_type)
    current.set_status(Status(StatusCode.ERROR, error_type))


@contextlib.contextmanager
def step(worker: str, topic: str, partition: int, offset: int) -> Iterator[Any]:
    """The span of one input record's handling by ``worker`` (its LLM calls nest in it)."""
    token = _IDS.set({"judgeflow.worker": worker})
    try:
        with span(f"{worker} step", {"judgeflow.worker": worker, "messaging.system": "kafka",
                                     "messaging.operation.type": "process",
                                     "messaging.destination.name": topic,
                                     "messaging.destination.partition.id": str(partition),
                                     "messaging.kafka.offset": offset}) as current:
            yield current
    finally:
        _IDS.reset(token)
