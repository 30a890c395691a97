"""The judge with the chart tools off and on, per judged cell, on charts of real size.

    python -m tools.bench.chart_tools [--out DIR] [--big 400]

Writes :mod:`tools.sampledata.big_chart` (one ~4 MB patient of 400 notes and four smaller
ones; the deciding sentence outside the assembled context), then judges each disagreement
cell in-process through the real Anthropic provider against the strict fake Messages API
whose judge model (:mod:`tools.fakes.fake_chart_judge`) uses the tools when offered them.
Per mode: wall time per cell (our code and the fake's HTTP; a real model adds its own
seconds per turn), model turns, tokens (the fake's estimate: characters / 3.5, prompt
caching simulated), USD at the catalogue's price, accuracy against the adjudications, note
files read from disk (each chart once, not per cell) and the process's peak RSS.
Its figures come from a fake model: they measure our loop and the token growth, not
clinical quality.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agents.chart_tool_settings import ChartToolsSettings, Mode
from agents.context.charts import ChartStore
from agents.judge.judge import Judge
from agents.providers.anthropic import AnthropicProvider
from agents.providers.settings import LLMSettings
from agents.settings import Settings
from schemas.chart_review import AgentAnswer, JudgeJob
from schemas.skill import load_skill
from streams.sampledata import DATA_DIR
from tools.fakes.fake_anthropic import FakeAnthropic
from tools.fakes.fake_chart_judge import ChartJudge
from tools.sampledata.big_chart import build


def jobs(out: Path) -> list[JudgeJob]:
    answers = [AgentAnswer.model_validate_json(line)
               for line in (out / "answers.jsonl").read_text().splitlines()]
    cells: dict[str, list[AgentAnswer]] = {}
    for a in answers:
        cells.setdefault(a.key, []).append(a)
    return [JudgeJob(job_id=f"bench-{i}", kind="disagreement", task_id=pair[0].task_id,
                     patient_id=pair[0].patient_id, field_id=pair[0].field_id,
                     answers=tuple(pair), normalized=tuple(a.answer for a in pair),
                     reasons=("the agents disagree",), detected_at=datetime.now(UTC))
            for i, pair in enumerate(cells.values())]


class CountingStore(ChartStore):
    """Counts note files read from disk."""

    reads = 0

    def note(self, patient_id: str, note_id: str) -> str | None:
        CountingStore.reads += 1
        return super().note(patient_id, note_id)


@contextmanager
def api_key() -> Iterator[None]:
    old = os.environ.get("ANTHROPIC_API_KEY")
    os.environ["ANTHROPIC_API_KEY"] = old or "bench"
    try:
        yield
    finally:
        if old is None:
            del os.environ["ANTHROPIC_API_KEY"]


async def run_mode(out: Path, mode: Mode) -> dict[str, Any]:
    truth = {(j["patient_id"], j["field_id"]): j["final_answer"] for j in map(
        json.loads, (out / "adjudications.jsonl").read_text().splitlines())}
    s = Settings(llm=LLMSettings(provider="anthropic", model="claude-sonnet-5-5",
                                 sdk_max_retries=0, requests_per_minute=100_000),
                 chart_tools=ChartToolsSettings(mode=mode), charts_dir=out / "charts",
                 skill_dir=DATA_DIR / "skill")
    CountingStore.reads = 0
    rows = []
    with api_key(), FakeAnthropic(responder=ChartJudge()) as fake:
        judge = Judge(s, load_skill(s.skill_dir), CountingStore(s.charts_dir),
                      AnthropicProvider(s.llm, base_url=fake.base_url))
        for job in jobs(out):
            started = time.monotonic()
            r = await judge.judge(job)
            u = r.usage
            rows.append({"patient": job.patient_id, "ms": (time.monotonic() - started) * 1000,
                         "turns": u.llm_calls, "usd": u.cost_usd,
                         "tokens": u.input_tokens + u.output_tokens + u.cache_read_input_tokens
                         + u.cache_creation_input_tokens,
                         "right": r.analysis.suggested_answer == truth[
                             (job.patient_id, job.field_id)],
                         "reads": sum(1 for a in r.consulted if a.tool == "read_note")})
        rejected = sum(1 for q in fake.message_requests() if q.status == 400)
    big = [x for x in rows if x["patient"] == "PB01"]
    return {"mode": mode, "cells": len(rows), "rejected": rejected,
            "accuracy": sum(x["right"] for x in rows) / len(rows),
            "big_cells": len(big),
            "ms_per_cell_big": statistics.median(x["ms"] for x in big),
            "turns_per_cell": statistics.mean(x["turns"] for x in rows),
            "tokens_per_cell": statistics.mean(x["tokens"] for x in rows),
            "tokens_per_cell_big": statistics.mean(x["tokens"] for x in big),
            "usd_per_cell": statistics.mean(x["usd"] for x in rows),
            "usd_per_cell_big": statistics.mean(x["usd"] for x in big),
            "note_files_read": CountingStore.reads,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Judge per cell with the chart tools off "
                                     "and on, on a ~4 MB chart (fake model).")
    parser.add_argument("--out", type=Path, help="where to write the charts (default: a "
                        "temporary folder)")
    parser.add_argument("--big", type=int, default=400, help="notes of the large chart")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="judgeflow-big-"))
    sizes = build(out, big=args.big)
    print(f"charts in {out}: " + ", ".join(f"{p} {n / 1e6:.2f} MB" for p, n in sizes.items()))
    modes: tuple[Mode, ...] = ("off", "on")
    for mode in modes:
        r = asyncio.run(run_mode(out, mode))
        print(f"tools {r['mode']:>3}: {r['cells']} cells, accuracy {r['accuracy']:.0%}, "
              f"{r['turns_per_cell']:.1f} turns, {r['tokens_per_cell']:.0f} tokens, "
              f"${r['usd_per_cell']:.4f} per cell; 400-note chart: "
              f"{r['tokens_per_cell_big']:.0f} tokens, ${r['usd_per_cell_big']:.4f}, "
              f"{r['ms_per_cell_big']:.0f} ms per cell (median, fake model); note files read "
              f"{r['note_files_read']}; peak RSS {r['peak_rss_mb']:.0f} MB; "
              f"requests rejected {r['rejected']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
