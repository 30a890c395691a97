"""Figures for the review page (docs/review-page.md, issue 12). Not part of the test suite.

1. Latency: the demo's whole pipeline (embedded broker, detect, judge and debrief workers,
   the bundled samples) with the dashboard and a headless chromium page attached from the
   start. For every judge result: its Kafka record timestamp (stamped when the judge sent it)
   to the moment its row was inserted into the page (a MutationObserver in the page).
2. Memory: the dashboard with its default ``--window`` (5000: pending cells are kept beyond
   it) after 10,000 judge results (and their 10,000 jobs) of 10,000 distinct cells were
   produced, all pending: its resident set size,
   the page's JS heap and how long ``GET /api/queue`` takes over them.
3. Saves: a reviewer (token from a reviewers file) saves 50 decisions from that queue; for
   each, the click on "Save" to the page showing "saved" (the broker acknowledged the
   adjudication), measured inside the page.

    .venv/bin/python dev/bench_dashboard.py [--memory-only]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.settings import Settings
from cli.produce import produce
from dashboard.identity import add_reviewer
from streams.topics import ensure_topics, read_to_end, send_all
from tools.broker import EmbeddedBroker
from tools.browser import launch
from tools.dashboard_launch import start_dashboard
from tools.demo.run import demo_settings, expectations, follow, input_batches, workers

OBSERVER = """
window.__rows = {};
new MutationObserver((muts) => {
  const now = Date.now();
  for (const m of muts) for (const n of m.addedNodes)
    if (n.nodeName === 'TR' && n.dataset && n.dataset.id && !(n.dataset.id in window.__rows))
      window.__rows[n.dataset.id] = now;
}).observe(document, {childList: true, subtree: true});
"""


def expect(locator: Any) -> Any:
    """playwright's own waiting (the page's CSP forbids the eval wait_for_function needs)."""
    from playwright.async_api import expect as pw_expect

    return pw_expect(locator)


async def wait_until(check: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = await check()
        if value:
            return value
        await asyncio.sleep(0.2)
    raise SystemExit(f"timed out waiting for {what}")


async def open_page(pw: Any, url: str, work: Path,
                    token: str | None = None) -> tuple[Any, Any]:
    context = await launch(pw, work / ("profile-" + ("rev" if token else "ro")))
    page = await context.new_page()
    await page.add_init_script(OBSERVER + SAVE_TIMER)
    await page.goto(url + (f"auth?token={token}" if token else ""))
    await page.wait_for_selector("body[data-ready='1']")

    async def assigned() -> bool:
        health = await (await page.request.get(url + "api/health")).json()
        return bool(health["feed"]["assigned"] >= 15)
    await wait_until(assigned, 60, "the feed")
    return context, page


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


async def latency(pw: Any, s: Settings, work: Path) -> None:
    proc, url = start_dashboard(s, work / "dashboard.log", ["--port", "0"])
    context, page = await open_page(pw, url, work)
    # the demo's sample adjudications decide every cell: show decided cells as well
    await page.select_option("select[name=state]", "all")
    try:
        with workers(s, work):
            for topic, path, raw in input_batches(s):
                await produce(s, topic, path.read_bytes().splitlines(), raw)
            _, ok = await follow(s, expectations(), 300, lambda *a, **k: None)
        records = [r async for r in read_to_end(s.kafka.bootstrap_servers,
                                                [s.topics.judge_results], timeout=30)]
        sent = {orjson.loads(r.value)["result_id"]: r.timestamp for r in records}

        async def all_rows() -> dict[str, int] | None:
            seen: dict[str, int] = await page.evaluate("window.__rows")
            return seen if set(sent) <= set(seen) else None
        seen = await wait_until(all_rows, 60, "every row")
        lat = [float(seen[rid] - ts) for rid, ts in sent.items()]
        print(f"latency, result on the topic -> row on the page ({len(lat)} results of the "
              f"demo, pipeline complete={ok}): p50 {pct(lat, 50):.0f} ms, "
              f"p95 {pct(lat, 95):.0f} ms, max {max(lat):.0f} ms")
    finally:
        await context.close()
        proc.stop()


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


#: Criteria of the sample skill (so that a save can be checked against an answer schema).
FIELDS = ("ace_arb_use", "ckd_dx", "insulin_use", "on_sglt2i", "t2dm_dx")
SAVE_TIMER = """
window.__saves = [];
document.addEventListener('click', (e) => {
  if (e.target && e.target.id === 'save') window.__clicked = performance.now();
}, true);
new MutationObserver(() => {
  const s = document.getElementById('save-status');
  if (s && s.textContent === 'saved' && window.__clicked) {
    window.__saves.push(performance.now() - window.__clicked); window.__clicked = 0;
  }
}).observe(document, {childList: true, subtree: true, characterData: true});
"""


def fake(i: int) -> tuple[bytes, bytes, bytes]:
    rid, job = f"r{i:06d}", f"j{i:06d}"
    patient, field = f"p{i // len(FIELDS)}", FIELDS[i % len(FIELDS)]  # n distinct cells
    key = f"t1|{patient}|{field}".encode()
    result = {"result_id": rid, "job_id": job, "task_id": "t1", "patient_id": patient,
              "field_id": field, "kind": "disagreement",
              "status": ("ok", "flagged", "fallback")[i % 3], "prompt_version": "v1",
              "analysis": {"suggested_answer": "yes", "reasoning": "x" * 300,
                           "evidence_pointers": [{"note_id": "n1", "what_to_look_for": "y" * 40,
                                                  "offsets": [10, 40]}],
                           "agent_correctness": "agent_a",
                           "classification_hint": "agent_b_error", "judge_confidence": "high"},
              "validation": [], "provider": "offline", "model": "offline",
              "usage": {"input_tokens": 2000, "output_tokens": 200, "cost_usd": 0.01},
              "latency_ms": 1000, "judged_at": "2026-12-01T00:00:00Z"}
    answers = [{"agent_id": a, "answer": "yes", "confidence": "high", "rationale": "z" * 200}
                for a in ("default", "skeptical")]
    return key, orjson.dumps(result), orjson.dumps({
        "job_id": job, "task_id": "t1", "patient_id": patient, "field_id": field,
        "answers": answers})


async def memory(pw: Any, s: Settings, work: Path, n: int = 10_000, saves: int = 50) -> None:
    reviewers = work / "reviewers.txt"
    token = add_reviewer(reviewers, "bench")
    proc, url = start_dashboard(s, work / "dashboard-mem.log", [
        "--port", "0", "--reviewers", str(reviewers)])
    context, page = await open_page(pw, url, work, token)
    try:
        idle = rss_mib(proc.proc.pid)
        rows = [fake(i) for i in range(n)]
        await send_all(s.kafka.bootstrap_servers, s.topics.judge_jobs,
                       [(k, j) for k, _, j in rows])
        await send_all(s.kafka.bootstrap_servers, s.topics.judge_results,
                       [(k, r) for k, r, _ in rows])

        async def full() -> bool:
            health = await (await page.request.get(url + "api/health")).json()
            return bool(health["window"] >= 2 * n)
        await wait_until(full, 300, "the window to fill")
        started = time.perf_counter()
        queue = await (await page.request.get(url + "api/queue")).json()
        took = (time.perf_counter() - started) * 1000
        await page.reload()
        await page.wait_for_selector("body[data-ready='1']")
        heap = await page.evaluate("performance.memory.usedJSHeapSize") / 2**20
        rows_shown = await page.eval_on_selector_all("#queue tbody tr", "r => r.length")
        print(f"memory with {queue['total']} pending cells ({n} results + {n} jobs) in the "
              f"window: dashboard RSS {rss_mib(proc.proc.pid):.0f} MiB (idle {idle:.0f} MiB); "
              f"GET /api/queue {took:.0f} ms; page JS heap {heap:.1f} MiB with {rows_shown} "
              "rows shown")
        for i in range(saves):
            await page.click("#queue tbody tr:first-child")
            await page.wait_for_selector("#detail:not([hidden]) #final-answer")
            await page.click("#save")
            await page.wait_for_selector("#save-status.saved")
            await expect(page.locator("#queue tbody tr")).to_have_count(rows_shown - i - 1)
        lat: list[float] = await page.evaluate("window.__saves")
        print(f"saves, click -> 'saved' after the broker's ack ({len(lat)} saves, "
              f"{queue['total']} pending): p50 {pct(lat, 50):.0f} ms, p95 {pct(lat, 95):.0f} "
              f"ms, max {max(lat):.0f} ms; dashboard RSS after {rss_mib(proc.proc.pid):.0f} MiB")
    finally:
        await context.close()
        proc.stop()


async def main(broker: EmbeddedBroker, work: Path, memory_only: bool = False) -> None:
    from playwright.async_api import async_playwright

    s = demo_settings(Settings(), broker.bootstrap, work / "state", 5.0, True)
    await ensure_topics(s)
    async with async_playwright() as pw:
        if not memory_only:
            await latency(pw, s, work)
        mem = s.model_copy(update={"topics": s.topics.model_copy(update={
            "judge_results": "bench.judge-results", "judge_jobs": "bench.judge-jobs",
            "adjudications": "bench.adjudications"})})
        await ensure_topics(mem, extra=["bench.judge-results", "bench.judge-jobs",
                                        "bench.adjudications"])
        await memory(pw, mem, work)
    print(f"logs in {work}")


if __name__ == "__main__":
    work_dir = Path(tempfile.mkdtemp(prefix="judgeflow-bench-dashboard-"))
    with EmbeddedBroker(data_dir=work_dir / "broker") as embedded:
        asyncio.run(main(embedded, work_dir, "--memory-only" in sys.argv[1:]))
