"""Traces over OTLP/HTTP, without content: the judge worker, with
``OTEL_EXPORTER_OTLP_ENDPOINT`` pointing at a receiver this test serves on 127.0.0.1
(it decodes the protobuf ``ExportTraceServiceRequest`` as a collector would), sends one span
per worker step and one per LLM call with the GenAI attributes, the step's ids, cost and
latency; PHI markers planted in the notes, the agents' quotes and rationales and the
model's answer are sent to the (fake) API but appear in no byte the receiver got. The same
worker logs with ``JUDGEFLOW_LOG_FORMAT=json``: one JSON object per line."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp import web
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from streams.topics import ensure_topics
from tests.helpers import collect, produce, values, worker
from tests.integration.test_judge_worker import GOOD, judge_settings, record
from tests.unit.agents.judge.fixtures import PATIENT, answer, job
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

pytestmark = pytest.mark.integration
MARKERS = ("PHIMARK-NOTE-4471", "PHIMARK-QUOTE-8812", "PHIMARK-RATIONALE-2290",
           "PHIMARK-REPLY-6603")


class Receiver:
    """An OTLP/HTTP trace receiver: keeps every request's raw bytes and decoded spans."""

    def __init__(self) -> None:
        self.raw: list[bytes] = []
        self.spans: list[dict[str, Any]] = []

    async def traces(self, request: web.Request) -> web.Response:
        body = await request.read()
        assert request.headers["Content-Type"] == "application/x-protobuf"
        self.raw.append(body)
        export = ExportTraceServiceRequest.FromString(body)
        for rs in export.resource_spans:
            service = {a.key: a.value.string_value for a in rs.resource.attributes}
            for ss in rs.scope_spans:
                for s in ss.spans:
                    attrs = {a.key: getattr(a.value, a.value.WhichOneof("value"))
                             for a in s.attributes}
                    self.spans.append({"name": s.name, "attrs": attrs, "status": s.status.code,
                                       "trace": s.trace_id.hex(), "id": s.span_id.hex(),
                                       "parent": s.parent_span_id.hex(), **service})
        return web.Response(body=ExportTraceServiceResponse().SerializeToString(),
                            content_type="application/x-protobuf")


@pytest.fixture()
async def receiver() -> AsyncIterator[tuple[Receiver, str]]:
    rec = Receiver()
    app = web.Application()
    app.router.add_post("/v1/traces", rec.traces)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield rec, f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


def planted(tmp_path: Path) -> Any:
    """The judge's fixtures with a PHI marker in every note, quote and rationale."""
    charts = tmp_path / "data" / "charts" / PATIENT
    for note in charts.iterdir():
        note.write_text(f"{MARKERS[0]} {MARKERS[1]} " + note.read_text())
    quote = ((("n01", f"{MARKERS[0]} {MARKERS[1]}"),))
    a = answer("default", True, quotes=quote)
    b = answer("skeptical", False, quotes=(("n02", MARKERS[1]),))
    a = a.model_copy(update={"rationale": f"{MARKERS[2]} the list says so"})
    return job("disagreement", a, b, job_id="job-traced")


async def test_spans_arrive_with_genai_attributes_and_no_patient_text(
        bootstrap: str, tmp_path: Path, receiver: tuple[Receiver, str]) -> None:
    rec, endpoint = receiver
    settings = judge_settings(bootstrap, tmp_path)
    the_job = planted(tmp_path)
    await ensure_topics(settings)
    await produce(bootstrap, settings.topics.judge_jobs, [record(the_job)])
    reply = {**GOOD, "reasoning": f"{MARKERS[3]} as the problem list documents."}
    with FakeAnthropic(responder=lambda body: Reply.message(text=json.dumps(reply))) as fake:
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test",
               "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100",
               "JUDGEFLOW_LOG_FORMAT": "json"}
        with worker("judge", settings, tmp_path, extra_env=env) as proc:
            (result,) = values(await collect(bootstrap, settings.topics.judge_results,
                                             until=1, timeout=60, quiet=0))
            deadline = time.monotonic() + 30
            while not any(s["name"] == "judge step" for s in rec.spans):
                assert time.monotonic() < deadline, proc.log_text()
                await asyncio.sleep(0.1)
            log = proc.log_text()
        sent = json.dumps([r.body for r in fake.message_requests()])
    assert all(m in sent for m in MARKERS[:3])  # the markers were live: the API got them
    assert MARKERS[3] in json.dumps(result)  # and the answer carried its own

    raw = b"".join(rec.raw)
    for marker in (*MARKERS, "problem list", "metformin", PATIENT):
        assert marker.encode() not in raw, marker  # 0 PHI in any exported byte
    (step,) = [s for s in rec.spans if s["name"] == "judge step"]
    calls = [s for s in rec.spans if s["attrs"].get("gen_ai.operation.name") == "chat"]
    assert calls and all(c["parent"] == step["id"] and c["trace"] == step["trace"]
                         for c in calls)
    call = calls[0]["attrs"]
    assert calls[0]["name"] == "chat claude-sonnet-5-5"
    assert (call["gen_ai.provider.name"], call["gen_ai.request.model"]) == (
        "anthropic", "claude-sonnet-5-5")
    assert call["gen_ai.usage.input_tokens"] > 0 and call["gen_ai.usage.output_tokens"] > 0
    assert call["judgeflow.cost_usd"] > 0 and call["judgeflow.latency_ms"] >= 0
    assert call["judgeflow.status"] == "ok"
    assert call["judgeflow.job_id"] == "job-traced" == step["attrs"]["judgeflow.job_id"]
    assert call["judgeflow.result_id"] == result["result_id"]
    assert step["attrs"]["judgeflow.outcome"] == "published"
    assert step["service.name"] == "judgeflow-worker"
    print(f"{len(rec.spans)} span(s) in {len(rec.raw)} export(s), {len(raw)} bytes; "
          f"PHI markers found: 0 of {len(MARKERS)}")

    lines = [line for line in log.splitlines() if line.strip()]
    assert lines and all(isinstance(orjson.loads(line), dict) for line in lines), log[-2000:]
    assert any(orjson.loads(line)["logger"].startswith("agents") for line in lines)


async def test_the_detector_traces_its_steps_without_the_answers_text(
        bootstrap: str, tmp_path: Path, receiver: tuple[Receiver, str]) -> None:
    rec, endpoint = receiver
    settings = judge_settings(bootstrap, tmp_path, settle_seconds=1.0)
    the_job = planted(tmp_path)  # its two answers carry the quote and rationale markers
    await ensure_topics(settings)
    await produce(bootstrap, settings.topics.agent_answers,
                  [(a.key.encode(), a.model_dump_json().encode()) for a in the_job.answers])
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"}
    with worker("detect", settings, tmp_path, extra_env=env) as proc:
        await collect(bootstrap, settings.topics.judge_jobs, until=1, timeout=60, quiet=0)
        deadline = time.monotonic() + 30
        while not any(s["name"] == "detect step" and s["attrs"]["judgeflow.outputs"]
                      for s in rec.spans):
            assert time.monotonic() < deadline, proc.log_text()
            await asyncio.sleep(0.1)
    raw = b"".join(rec.raw)
    for marker in (*MARKERS, PATIENT):
        assert marker.encode() not in raw, marker
    assert {s["service.name"] for s in rec.spans} == {"judgeflow-worker"}
