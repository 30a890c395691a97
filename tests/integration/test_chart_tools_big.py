"""Charts of real size end to end: a generated 400-note (~4 MB) patient and a smaller one
whose deciding sentences lie outside the judge's assembled context. The agents' answers go
through the detect worker, the judge worker judges them with the chart tools off (one call
per cell), ``replay judge`` re-judges them with the tools on (a new series), ``compare``
shows what the tools changed against the adjudications, and the review page's cell view
shows what the judge searched and read. The judge worker's peak memory stays bounded (the
chart is read once, not per cell) and the strict fake rejects none of its requests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp.test_utils import TestClient, TestServer

from agents.context.charts import ChartStore
from dashboard.feed import FeedStatus, Hub
from dashboard.web import State, create_app
from dashboard.window import RESULTS, Window
from streams.sampledata import DATA_DIR
from streams.topics import ensure_topics
from tests.helpers import WorkerProcess, collect, produce, values
from tests.helpers import test_settings as make_settings
from tests.integration.test_cli import run_cli
from tests.integration.test_judge_worker import LLM
from tests.unit.dashboard.audit_sink import RecordedAudit
from tools.fakes.fake_anthropic import FakeAnthropic
from tools.fakes.fake_chart_judge import ChartJudge
from tools.sampledata.big_chart import build

pytestmark = pytest.mark.integration
CELLS = 6  # two patients x three criteria


def peak_rss_mb(proc: WorkerProcess) -> float:
    for line in Path(f"/proc/{proc.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def lines(path: Path) -> list[tuple[bytes, bytes]]:
    out = []
    for raw in path.read_bytes().splitlines():
        row = orjson.loads(raw)
        out.append((f"{row['task_id']}|{row['patient_id']}|{row['field_id']}".encode(), raw))
    return out


async def cell_view(charts: Path, result: dict[str, Any]) -> dict[str, Any]:
    state = State(Window(10), ChartStore(charts), Hub(), FeedStatus(),
                  audit_trail=RecordedAudit())
    state.window.add(RESULTS, result)
    client: TestClient = TestClient(TestServer(create_app(state)))  # type: ignore[type-arg]
    await client.start_server()
    try:
        data: dict[str, Any] = await (await client.get(f"/api/cell/{result['result_id']}")
                                      ).json()
        return data
    finally:
        await client.close()


async def test_a_400_note_chart_through_detect_judge_replay_compare_and_review(
        bootstrap: str, tmp_path: Path) -> None:
    sizes = build(tmp_path / "big", big=400, small=20, others=1)
    assert sizes["PB01"] > 3_900_000
    s = make_settings(bootstrap, llm={**LLM, "concurrency": 2}, skill_dir=DATA_DIR / "skill",
                      charts_dir=tmp_path / "big" / "charts", chart_tools={"mode": "off"})
    on = s.model_copy(update={"chart_tools": s.chart_tools.model_copy(update={"mode": "on"})})
    await ensure_topics(s)
    await produce(bootstrap, s.topics.agent_answers, lines(tmp_path / "big" / "answers.jsonl"))
    await produce(bootstrap, s.topics.adjudications,
                  lines(tmp_path / "big" / "adjudications.jsonl"))
    with FakeAnthropic(responder=ChartJudge()) as fake:
        env = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.base_url}
        detect = WorkerProcess("detect", s, tmp_path / "detect.log", env)
        judge = WorkerProcess("judge", s, tmp_path / "judge.log", env)
        try:
            first = values(await collect(bootstrap, s.topics.judge_results, until=CELLS,
                                         timeout=180, quiet=0.5))
            rss = peak_rss_mb(judge)
        finally:
            judge.kill()
            detect.kill()
        replay = WorkerProcess("replay", on, tmp_path / "replay.log", env,
                               ("cli.main", "replay", "judge"))
        try:
            assert replay.proc.wait(timeout=300) == 0, (tmp_path / "replay.log").read_text()[
                -3000:]
        finally:
            replay.kill()
        rejected = [r for r in fake.message_requests() if r.status != 200]
    results = values(await collect(bootstrap, s.topics.judge_results, until=2 * CELLS,
                                   timeout=60, quiet=1.0))
    old = {r["prompt_version"] for r in first}
    new = {r["prompt_version"] for r in results} - old
    assert len(old) == 1 and len(new) == 1 and not rejected
    tools_on = [r for r in results if r["prompt_version"] in new]
    print(f"400-note chart: judge worker peak RSS {rss:.0f} MB; tools off "
          f"{sum(r['usage']['cost_usd'] for r in first) / CELLS:.4f} USD/cell, on "
          f"{sum(r['usage']['cost_usd'] for r in tools_on) / CELLS:.4f} USD/cell")
    assert rss < 400  # two charts of 4.0 and 0.2 MB held once, not per cell
    assert all(r["usage"]["llm_calls"] == 1 and not r["consulted"] for r in first)
    assert all(r["analysis"]["suggested_answer"] in ("yes", True) for r in tools_on)

    print(run_cli(s, "compare", *old, *new).stdout)
    compare = run_cli(s, "compare", *old, *new, "--json")
    assert compare.returncode == 0, compare.stderr
    out = orjson.loads(compare.stdout)
    assert {row["field_id"] for row in out["criteria"]} == {"on_sglt2i", "insulin_use",
                                                            "ace_arb_use"}
    for row in out["criteria"]:
        assert row["old"]["answer_accuracy"]["hits"] == 0
        assert row["new"]["answer_accuracy"]["hits"] == row["new"]["answer_accuracy"]["n"] == 2
        assert row["changed_suggestions"]["hits"] == 2
        assert row["new"]["cost_per_cell_usd"] > row["old"]["cost_per_cell_usd"]

    big = next(r for r in tools_on if r["patient_id"] == "PB01")
    view = await cell_view(tmp_path / "big" / "charts", big)
    read = [c for c in view["consulted"] if c["tool"] == "read_note"]
    assert "PB01-N0393" in {c["note_id"] for c in read}
    assert any(e["note_id"] == "PB01-N0393" and e["note"] for e in view["evidence"])
    assert not [v for v in view["validation"] if v["type"].startswith("pointer_")]
