"""The review page in a real browser (Debian chromium, headless) on a real broker.

Records are produced onto the topics after the page has loaded: the work queue must fill
over SSE in priority order, a filter must narrow it (and keep narrowing live records), a
cell's detail must show the note excerpt with the evidence highlighted, and markup planted
in a note, a reasoning or a debrief narrative must stay text (no script runs). The decision
loop itself is tests/integration/test_dashboard_review.py."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from streams.topics import ensure_topics
from tests.helpers import produce, test_settings
from tools.browser import launch, missing_reason
from tools.dashboard_launch import start_dashboard

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(missing_reason() is not None, reason=str(missing_reason()))]

EVIL = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
NOTE = f"Clinic visit. {EVIL} Labs today: HbA1c 9.1% on metformin. Plan: add insulin."
HIGHLIGHT = "HbA1c 9.1%"


def result(rid: str, patient: str = "p-1", **kw: Any) -> dict[str, Any]:
    start = NOTE.index(HIGHLIGHT)
    base: dict[str, Any] = {
        "result_id": rid, "job_id": f"job-{rid}", "task_id": "t2d", "patient_id": patient,
        "field_id": "hba1c_above_goal", "kind": "disagreement", "status": "ok",
        "analysis": {"suggested_answer": "yes", "reasoning": "The note states the value.",
                     "evidence_pointers": [{"note_id": "n-1", "what_to_look_for": "HbA1c",
                                            "offsets": [start, start + len(HIGHLIGHT)]}],
                     "agent_correctness": "agent_a", "classification_hint": "agent_b_error",
                     "judge_confidence": "high"},
        "validation": [], "prompt_version": "judge-v1", "provider": "offline",
        "model": "offline", "usage": {"input_tokens": 100, "cost_usd": 0.001},
        "latency_ms": 5, "judged_at": "2026-12-01T00:00:00Z"}
    base.update(kw)
    return base


def job(rid: str) -> dict[str, Any]:
    return {"job_id": f"job-{rid}", "answers": [
        {"agent_id": "default", "answer": "yes", "confidence": "high"},
        {"agent_id": "skeptical", "answer": f"no {EVIL}", "confidence": 0.4}]}


@pytest.fixture()
async def page(bootstrap: str, tmp_path: Path) -> AsyncIterator[tuple[Any, Any, str]]:
    from playwright.async_api import async_playwright

    (tmp_path / "charts" / "p-1").mkdir(parents=True)
    (tmp_path / "charts" / "p-1" / "n-1.txt").write_text(NOTE, encoding="utf-8")
    settings = test_settings(bootstrap, charts_dir=tmp_path / "charts")
    await ensure_topics(settings)
    proc, url = start_dashboard(settings, tmp_path / "dashboard.log", ["--port", "0"])
    try:
        async with async_playwright() as pw:
            context: Any = await launch(pw, tmp_path / "profile")
            try:
                page = await context.new_page()
                response = await page.goto(url)
                assert response is not None and response.ok
                csp = response.headers.get("content-security-policy", "")
                assert "script-src 'self'" in csp and "unsafe-inline" not in csp
                await page.wait_for_selector("body[data-ready='1']")
                await page.wait_for_selector("#live:text('live')")
                await wait_assigned(page, url)
                yield page, settings, url
            finally:
                await context.close()
    finally:
        proc.kill()
    log = (tmp_path / "dashboard.log").read_text(errors="replace")
    assert "GET /api/queue 200" in log  # the access log is on...
    assert HIGHLIGHT not in log and "p-1" not in log and "r-evil" not in log  # ...without PHI


async def wait_assigned(page: Any, url: str, timeout: float = 30.0) -> None:
    """The feed follows every partition (it starts from their end), so records produced
    from now on are shown."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        health = await (await page.request.get(url + "api/health")).json()
        if health["feed"]["assigned"] >= 5 * 3:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"feed never assigned: {health}")


async def send(settings: Any, topic: str, values: list[dict[str, Any]]) -> None:
    await produce(settings.kafka.bootstrap_servers, topic,
                  [(b"k", orjson.dumps(v)) for v in values])


def expect(locator: Any) -> Any:
    """playwright's assertions wait in its own script world, which the page's strict CSP
    (no eval) leaves alone; ``wait_for_function`` would be blocked by it."""
    from playwright.async_api import expect as pw_expect

    return pw_expect(locator)


def row(rid: str) -> str:
    return f"#queue tbody tr[data-id='{rid}']"


async def ids(page: Any) -> list[str]:
    return list(await page.eval_on_selector_all(
        "#queue tbody tr", "rows => rows.map(r => r.dataset.id)"))


async def test_queue_fills_live_filters_narrow_detail_highlights_and_markup_stays_text(
        page: tuple[Any, Any, str]) -> None:
    pg, settings, _ = page
    topics = settings.topics
    assert await ids(pg) == []
    await send(settings, topics.judge_jobs, [job("r-1"), job("r-evil")])
    await send(settings, topics.judge_results, [
        result("r-1", "p-2"),
        result("r-2", "p-3", kind="type_drift", status="flagged"),
        result("r-evil", status="fallback", analysis={
            **result("x")["analysis"], "reasoning": f"judge could not analyze: {EVIL}"}),
    ])
    await pg.wait_for_selector(row("r-evil"))
    await expect(pg.locator("#queue tbody tr")).to_have_count(3)
    # flagged and fallback first (oldest first among them), then the plain disagreement
    assert await ids(pg) == ["r-2", "r-evil", "r-1"]
    assert await pg.text_content(f"{row('r-2')} .status") == "flagged"

    await pg.select_option("select[name=status]", "flagged")
    await expect(pg.locator("#queue tbody tr")).to_have_count(1)
    assert await ids(pg) == ["r-2"]
    await send(settings, topics.judge_results, [result("r-3", "p-4"),
                                                result("r-4", "p-5", status="flagged")])
    await pg.wait_for_selector(row("r-4"))
    assert await ids(pg) == ["r-2", "r-4"]  # the live ok record r-3 stayed out
    await pg.select_option("select[name=status]", "")
    await pg.wait_for_selector(row("r-3"))

    await pg.click(row("r-evil"))
    await pg.wait_for_selector("#detail:not([hidden]) .excerpt mark")
    assert await pg.text_content("#detail .excerpt mark") == HIGHLIGHT
    excerpt = await pg.text_content("#detail .excerpt")
    assert EVIL in str(excerpt)  # the planted markup is shown as text...
    assert EVIL in str(await pg.text_content("#detail .reasoning"))
    assert EVIL in str(await pg.text_content(f"{row('r-evil')}"))
    assert await pg.evaluate("window.__pwned") is None  # ...and never ran
    assert await pg.eval_on_selector_all("main script, main img", "n => n.length") == 0


async def test_debrief_cards_put_the_safety_breach_first_and_escape_the_narrative(
        page: tuple[Any, Any, str]) -> None:
    pg, settings, _ = page
    rating = {"score": 0.9, "verdict": "excellent"}
    plain = {"evaluation_id": "e-1", "request_id": "q-1", "case_id": "c-1",
             "global_rating": rating, "domain_scores": {"interpersonal": rating},
             "narrative": "Good work.", "dropped_criteria": [], "corrections": []}
    breach = {**plain, "evaluation_id": "e-2", "request_id": "q-2",
              "safety_breach": {"kind": "contraindicated_drug", "description": "gave X"},
              "narrative": f"Safety first. {EVIL}",
              "corrections": [{"scope": "global", "score": 0.5, "model_verdict": "good",
                               "verdict": "borderline"}]}
    await send(settings, settings.topics.case_evaluations, [breach, plain])
    await expect(pg.locator("#debriefs .card")).to_have_count(2)
    first = await pg.eval_on_selector("#debriefs .card", "c => c.dataset.id")
    assert first == "e-2"
    text = str(await pg.text_content("#debriefs .card.breach"))
    assert EVIL in text and "code computed borderline" in text
    assert await pg.evaluate("window.__pwned") is None


async def test_calibration_table_shows_the_newest_record_per_criterion_and_version(
        page: tuple[Any, Any, str]) -> None:
    pg, settings, _ = page
    base = {"task_id": "t2d", "field_id": "hba1c_above_goal", "prompt_version": "judge-v1",
            "cells_judged": 10, "cells_adjudicated": 8, "classification_kappa": 0.5,
            "answer_accuracy": {"hits": 6, "n": 8, "rate": 0.75},
            "fallback": {"hits": 1, "n": 10, "rate": 0.1}, "cost_usd": 0.02}
    await send(settings, settings.topics.calibration, [
        {**base, "calibration_id": "c-old"},
        {**base, "calibration_id": "c-new", "classification_kappa": 0.61,
         "answer_accuracy": {"hits": 7, "n": 8, "rate": 0.875}}])
    await pg.click("#views a[data-view=calibration]")
    await pg.wait_for_selector("#calibration tbody tr td:text('87.5%')")
    await expect(pg.locator("#calibration tbody tr")).to_have_count(1)
    cells = await pg.eval_on_selector_all("#calibration tbody td", "c => c.map(x => x.textContent)")
    # a record without the issue-27 fields: no intervals, no AC1, no blind split or
    # human baseline; 8 cells are below the minimum n, and the row says so
    assert cells == ["t2d", "hba1c_above_goal", "judge-v1", "10",
                     "8not enough cells (< 30)", "87.5% (7/8)", "0.61", "—",
                     "no blind cells", "no double-reviewed cells", "10.0%", "0.0200", "—"]
    assert await pg.is_hidden("#view-queue") and await pg.is_hidden("#view-debriefs")
    assert await pg.is_hidden("#calibration-empty")


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
async def test_the_queue_and_the_form_fit_without_horizontal_scrolling(
        page: tuple[Any, Any, str], size: tuple[int, int]) -> None:
    pg, settings, _ = page
    await pg.set_viewport_size({"width": size[0], "height": size[1]})
    long = "x" * 300
    await send(settings, settings.topics.judge_jobs, [
        {"job_id": f"job-w{i}", "answers": [
            {"agent_id": "default", "answer": [long] * 5, "confidence": "high"},
            {"agent_id": "skeptical", "answer": long, "confidence": 0.2}]} for i in range(30)])
    await send(settings, settings.topics.judge_results, [
        result(f"w{i}", f"p-{i}", field_id="criterion_" + "y" * 80,
               analysis={**result("x")["analysis"], "suggested_answer": long})
        for i in range(30)])
    await expect(pg.locator("#queue tbody tr")).to_have_count(30)
    await pg.click("#queue tbody tr:first-child")
    await pg.wait_for_selector("#detail:not([hidden]) #final-answer")
    widths = await pg.evaluate("""() => {
        const q = document.getElementById('queue-section'), d = document.getElementById('detail');
        return {page: document.documentElement.scrollWidth, view: window.innerWidth,
                queue: q.scrollWidth, queueBox: q.clientWidth, detail: d.scrollWidth,
                detailBox: d.clientWidth, queueRight: q.getBoundingClientRect().right,
                detailLeft: d.getBoundingClientRect().left,
                pageHeight: document.documentElement.scrollHeight, viewHeight: innerHeight};
    }""")
    assert widths["page"] <= widths["view"], widths
    assert widths["queue"] <= widths["queueBox"] and widths["detail"] <= widths["detailBox"]
    assert widths["queueRight"] <= widths["detailLeft"], widths  # side by side
    assert widths["pageHeight"] <= widths["viewHeight"], widths  # the panes scroll, not the page


async def test_the_detail_shows_what_the_judge_searched_and_read(
        page: tuple[Any, Any, str]) -> None:
    """The chart tools' trace: the searches (pattern, hits, windows) and the reads by note id
    and span; a planted pattern stays text."""
    pg, settings, _ = page
    consulted = [{"tool": "search_notes", "pattern": f"HbA1c|{EVIL}", "hits": 3},
                 {"tool": "search_notes", "note_id": "n-1", "start": 10, "end": 90},
                 {"tool": "read_note", "note_id": "n-1", "start": 0, "end": 60},
                 {"tool": "list_notes"}]
    await send(settings, settings.topics.judge_jobs, [job("r-tools")])
    await send(settings, settings.topics.judge_results, [result("r-tools",
                                                               consulted=consulted)])
    await pg.wait_for_selector(row("r-tools"))
    await pg.click(row("r-tools"))
    await pg.wait_for_selector("#detail:not([hidden]) .consulted")
    items = await pg.eval_on_selector_all("#detail .consulted li",
                                          "n => n.map(x => x.textContent)")
    assert items[0].startswith("searched ") and ": 3 hit(s) — shown: n-1 [10, 90]" in items[0]
    assert "<script>window.__pwned = 1</script>" in items[0]  # shown as text
    assert items[1:] == ["read note n-1 [0, 60]", "listed the notes"]
    assert await pg.evaluate("window.__pwned") is None
