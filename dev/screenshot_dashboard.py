"""Take docs/review-page.md's screenshots of the review page over the demo's data.

    .venv/bin/python dev/screenshot_dashboard.py [OUT_DIR]     (default docs/img)

Runs the demo pipeline on an embedded broker (offline judge; the sample adjudications held
back as ``judgeflow demo --dashboard`` holds them, so a third of the judged cells are still
to do), serves the page with one reviewer, and captures ``queue.png`` (the work queue at
1366x768) and ``validate.png`` (the validate form for P033 / diabetes_type at 1400x1000,
answer overridden, not yet saved).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.settings import Settings
from cli.produce import produce
from dashboard.identity import add_reviewer
from streams.sampledata import DATA_DIR
from streams.topics import ensure_topics, read_to_end
from tools.broker import EmbeddedBroker
from tools.browser import launch
from tools.dashboard_launch import start_dashboard
from tools.demo.run import demo_settings, input_batches, lines_of, workers

CELL = ("P033", "diabetes_type")


async def shoot(pw: Any, url: str, token: str, work: Path, out: Path) -> None:
    context: Any = await launch(pw, work / "profile")
    page = await context.new_page()
    await page.set_viewport_size({"width": 1366, "height": 768})
    await page.goto(url + "auth?token=" + token)
    await page.wait_for_selector("body[data-ready='1']")
    await page.wait_for_selector("#queue tbody tr")
    await page.click("#queue tbody tr:first-child")
    await page.wait_for_selector("#detail:not([hidden]) #final-answer")
    await page.screenshot(path=str(out / "queue.png"))
    queue = await (await page.request.get(url + "api/queue?state=all")).json()
    rid = next(i["result_id"] for i in queue["items"]
               if (i["patient_id"], i["field_id"]) == CELL)
    await page.set_viewport_size({"width": 1400, "height": 1000})
    await page.select_option("select[name=state]", "all")
    await page.click(f"#queue tbody tr[data-id='{rid}']")
    await page.wait_for_selector("#detail:not([hidden]) .note")
    await page.select_option("#final-answer", '"no_info"')
    await page.check("input[name=classification][value=agent_a_error]")
    await page.fill("#decide textarea", "Does not meet criteria for diabetes; the type 2 "
                    "line is family history.")
    await page.screenshot(path=str(out / "validate.png"))
    await context.close()


async def _wait_for_results(s: Settings, count: int, timeout: float) -> None:
    """Poll the results topic until ``count`` results are there (a dev script, not a test)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = [r async for r in read_to_end(s.kafka.bootstrap_servers,
                                            [s.topics.judge_results], timeout=30)]
        if len(got) >= count:
            return
        await asyncio.sleep(1.0)
    raise TimeoutError(f"fewer than {count} judge results after {timeout:.0f} s")


async def main(broker: EmbeddedBroker, work: Path, out: Path) -> None:
    from playwright.async_api import async_playwright

    s = demo_settings(Settings(), broker.bootstrap, work / "state", 5.0, True)
    await ensure_topics(s)
    with workers(s, work):  # as the demo's --dashboard: a third of the cells still to do
        for topic, path, raw in input_batches(s):
            await produce(s, topic, lines_of(s, topic, path, True), raw)
        judged = len((DATA_DIR / "adjudications.jsonl").read_bytes().splitlines())
        await _wait_for_results(s, judged, timeout=300)
    reviewers = work / "reviewers.txt"
    token = add_reviewer(reviewers, "reviewer")
    proc, url = start_dashboard(s, work / "dashboard.log", [
        "--port", "0", "--from-beginning", "--reviewers", str(reviewers)])
    try:
        out.mkdir(parents=True, exist_ok=True)
        async with async_playwright() as pw:
            await shoot(pw, url, token, work, out)
    finally:
        proc.stop()
    print(f"wrote {out / 'queue.png'} and {out / 'validate.png'}")


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/img")
    work_dir = Path(tempfile.mkdtemp(prefix="judgeflow-screenshots-"))
    with EmbeddedBroker(data_dir=work_dir / "broker") as embedded:
        asyncio.run(main(embedded, work_dir, target))
