"""Blind audit and double review (issue 27) with the real page server on the embedded broker:
in Chromium and with curl.

Every cell is blind here (``review.blind_share = 1``). Before a reviewer's own decision, no
response for the cell (the queue, the cell, the triage rows, the live ``result`` event) and
no part of the page carries the judge's suggestion, hint, confidence, reasoning or evidence
pointers; after the save the page shows the judge's answer and the adjudication says
``review_mode: blind``. With ``double_share = 1`` a second reviewer gets the cell, never
sees the first's decision, and both decisions are kept (slot 1 and slot 2); a third
reviewer cannot claim a cell two others hold."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from schemas.calibration import Adjudication
from streams.topics import ensure_topics
from tests.helpers import produce, test_settings
from tests.integration.test_dashboard_review import (
    CITED,
    FIELD,
    NOTE,
    adjudications,
    expect,
    judge_job,
    judge_result,
    wait_assigned,
)
from tools.browser import launch, missing_reason
from tools.dashboard_launch import start_dashboard

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(missing_reason() is not None, reason=str(missing_reason()))]

#: What only the judge says: none of it may reach a reviewer of a blind cell before they decide.
REASONING = "JUDGE-REASONING-7f3a"
LOOK_FOR = "JUDGE-POINTER-91c2"
SUGGESTED = "type_1"  # no agent answered it (the agents say type_2 and no_info)


def blind_result(rid: str, patient: str) -> dict[str, Any]:
    r = judge_result(rid, patient, "ok", "disagreement")
    r["analysis"].update(suggested_answer=SUGGESTED, reasoning=REASONING,
                         judge_confidence="low", classification_hint="guideline_gap")
    r["analysis"]["evidence_pointers"][0]["what_to_look_for"] = LOOK_FOR
    r["validation"] = [{"type": "x", "action": "kept", "message": f"{SUGGESTED} checked"}]
    return r


def curl(url: str, token: str, *extra: str) -> bytes:
    return subprocess.run(["curl", "-sS", "--fail-with-body", "-H",
                           f"Authorization: Bearer {token}", *extra, url],
                          check=True, capture_output=True, timeout=30).stdout


def leaks(body: bytes) -> list[str]:
    """The judge-only values found in a response (the criterion's enum lists type_1 too, so
    the suggestion is checked by field, the unique markers by text)."""
    found = [m for m in (REASONING, LOOK_FOR) if m.encode() in body]
    return found + [f"{SUGGESTED} outside the schema" for _ in range(
        body.count(SUGGESTED.encode()) - body.count(b'"enum":["type_1"'))]


@pytest.fixture()
async def blind(bootstrap: str, tmp_path: Path, request: Any) -> AsyncIterator[dict[str, Any]]:
    from dashboard.identity import add_reviewer

    for patient in ("P050", "P051"):
        (tmp_path / "charts" / patient).mkdir(parents=True)
        (tmp_path / "charts" / patient / "n-1.txt").write_text(NOTE, encoding="utf-8")
    reviewers = tmp_path / "reviewers.txt"
    tokens = {n: add_reviewer(reviewers, n) for n in ("alice", "bob", "carol")}
    double = float(getattr(request, "param", 0.0))
    settings = test_settings(bootstrap, charts_dir=tmp_path / "charts",
                             review={"blind_share": 1.0, "double_share": double})
    await ensure_topics(settings)
    proc, url = start_dashboard(settings, tmp_path / "dashboard.log",
                                ["--port", "0", "--reviewers", str(reviewers)])
    try:
        yield {"settings": settings, "url": url, "tokens": tokens, "tmp": tmp_path}
    finally:
        proc.kill()


async def _send(settings: Any, pairs: list[tuple[str, str]]) -> None:
    bootstrap, topics = settings.kafka.bootstrap_servers, settings.topics
    await produce(bootstrap, topics.judge_jobs,
                  [(b"k", orjson.dumps(judge_job(r, p))) for r, p in pairs])
    await produce(bootstrap, topics.judge_results, [
        (f"t2d|{p}|{FIELD}".encode(), orjson.dumps(blind_result(r, p))) for r, p in pairs])


async def _pages(pw: Any, b: dict[str, Any], names: tuple[str, ...]) -> list[Any]:
    pages = []
    for name in names:
        context = await launch(pw, b["tmp"] / f"profile-{name}")
        page = await context.new_page()
        await page.goto(b["url"] + "auth?token=" + b["tokens"][name])
        await page.wait_for_selector("body[data-ready='1']")
        await page.wait_for_selector("#live:text('live')")
        pages.append(page)
    await wait_assigned(pages[0], b["url"])
    return pages


def _dom_without_options(page: Any) -> Any:
    """The page's DOM without the answer choices and the criterion's text (both list every
    value of the schema, type_1 among them)."""
    return page.eval_on_selector("body", "b => { const c = b.cloneNode(true); "
                                 "c.querySelectorAll('option, .criterion')"
                                 ".forEach(o => o.remove()); return c.innerHTML; }")


async def test_a_blind_cell_hides_the_judge_until_the_reviewer_saves(
        blind: dict[str, Any]) -> None:
    from playwright.async_api import async_playwright

    settings, url, token = blind["settings"], blind["url"], blind["tokens"]["alice"]
    async with async_playwright() as pw:
        [alice] = await _pages(pw, blind, ("alice",))
        events = subprocess.Popen(["curl", "-sS", "-N", "--max-time", "60", "-H",
                                   f"Authorization: Bearer {token}", url + "events"],
                                  stdout=subprocess.PIPE)
        try:
            await _send(settings, [("r-b1", "P050")])
            await expect(alice.locator("#queue tbody tr")).to_have_count(1)
            # the live event, as curl reads it: the row, without the judge's answer
            assert events.stdout is not None
            seen = b""
            deadline = time.monotonic() + 30
            while b"r-b1" not in seen and time.monotonic() < deadline:
                seen += await asyncio.to_thread(events.stdout.read1, 65536)  # type: ignore[attr-defined]
        finally:
            events.kill()
            events.wait()
        event = next(line for line in seen.split(b"\n") if b"r-b1" in line)
        row = orjson.loads(event.removeprefix(b"data: "))
        assert row["blind"] is True and row["suggested_answer"] is None
        assert row["confidence"] is None and row["classification_hint"] is None

        # every API response for the cell, with curl, before the decision
        for path in ("api/queue", "api/cell/r-b1", "api/rows", "api/queue?state=all"):
            body = curl(url + path, token)
            assert leaks(body) == [], (path, body[:2000])
        cell = orjson.loads(curl(url + "api/cell/r-b1", token))
        assert cell["row"]["suggested_answer"] is None and cell["reasoning"] is None
        assert cell["review"] == {"mode": "blind", "reviews": 1, "judge_hidden": True,
                                  "slot": 1, "held_by_others": False}
        assert cell["evidence"] == [] and cell["validation"] == []
        assert [n["note_id"] for n in cell["notes"]] == ["n-1"]  # the note the agents quoted
        assert [a["agent_id"] for a in cell["answers"]] == ["default", "skeptical"]

        # the page: the suggestion is not in the DOM, nothing is preset, `a` cannot accept
        await expect(alice.locator("#queue tbody tr td.suggestion")).to_have_text("blind")
        await alice.click("#queue tbody tr[data-id='r-b1']")
        await alice.wait_for_selector("#detail:not([hidden]) #final-answer")
        await expect(alice.locator("#detail .blind-note")).to_have_count(1)
        dom = await _dom_without_options(alice)
        assert REASONING not in dom and LOOK_FOR not in dom and SUGGESTED not in dom
        assert await alice.input_value("#final-answer") == ""
        assert await alice.locator("input[name=classification]:checked").count() == 0
        assert await alice.is_disabled("#accept")
        assert CITED in str(await alice.text_content("#detail .note"))

        await alice.select_option("#final-answer", '"type_2"')
        await alice.check("input[name=classification][value=agent_b_error]")
        await alice.click("#save")
        await expect(alice.locator("#save-status")).to_have_text(
            "saved (blind); the judge's answer is now shown")
        # after the save: the judge's answer is on the page and in the API
        line = alice.locator("#detail .judge-line")
        await expect(line).to_contain_text(f"suggests {SUGGESTED}")
        await expect(alice.locator("#detail .reasoning")).to_have_text(REASONING)
        after = orjson.loads(curl(url + "api/cell/r-b1", token))
        assert after["row"]["suggested_answer"] == SUGGESTED
        assert after["review"]["judge_hidden"] is False

    [adj] = [Adjudication.model_validate(a) for a in await adjudications(settings, 1)]
    assert (adj.review_mode, adj.review_slot, adj.final_answer) == ("blind", 1, "type_2")
    assert adj.suggested_answer == SUGGESTED and adj.decision == "overridden"


@pytest.mark.parametrize("blind", [1.0], indirect=True)
async def test_double_review_two_reviewers_neither_sees_the_other(
        blind: dict[str, Any]) -> None:
    from playwright.async_api import async_playwright

    settings, url, tokens = blind["settings"], blind["url"], blind["tokens"]
    async with async_playwright() as pw:
        alice, bob = await _pages(pw, blind, ("alice", "bob"))
        await _send(settings, [("r-d1", "P051")])
        for page in (alice, bob):
            await expect(page.locator("#queue tbody tr")).to_have_count(1)
            await page.click("#queue tbody tr[data-id='r-d1']")  # both claim the cell
            await page.wait_for_selector("#detail:not([hidden]) #final-answer")
        # two reviewers hold the double-review cell: a third cannot claim it
        csrf = ["-H", f"Origin: {url.rstrip('/')}", "-H", "X-CSRF-Token: " + "t" * 32,
                "-b", "judgeflow_csrf=" + "t" * 32, "-H", "Content-Type: application/json"]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            progress = orjson.loads(curl(url + "api/progress", tokens["carol"]))
            if sum(r["holding"] for r in progress["reviewers"]) == 2:
                break
            await asyncio.sleep(0.1)
        third = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-H",
                                f"Authorization: Bearer {tokens['carol']}", *csrf, "-d",
                                '{"result_id": "r-d1"}', url + "api/claim"],
                               capture_output=True, timeout=30)
        assert third.stdout == b"409", third

        await alice.select_option("#final-answer", '"type_2"')
        await alice.check("input[name=classification][value=agent_b_error]")
        await alice.click("#save")
        await expect(alice.locator("#save-status")).to_have_text(
            "saved (blind); the judge's answer is now shown")
        # bob: the cell is still his to do; he sees neither alice's decision nor the judge
        cell = orjson.loads(curl(url + "api/cell/r-d1", tokens["bob"]))
        assert cell["decisions"] == [] and cell["review"]["slot"] == 2
        assert cell["row"]["suggested_answer"] is None and cell["row"]["decided_by"] is None
        queue = orjson.loads(curl(url + "api/queue", tokens["bob"]))
        assert [i["result_id"] for i in queue["items"]] == ["r-d1"]
        assert orjson.loads(curl(url + "api/queue", tokens["alice"]))["items"] == []
        await expect(bob.locator("#prior .prior")).to_have_count(0)
        assert REASONING not in await _dom_without_options(bob)
        await bob.select_option("#final-answer", '"no_info"')
        await bob.check("input[name=classification][value=agent_a_error]")
        await bob.click("#save")
        await expect(bob.locator("#save-status")).to_have_text(
            "saved (blind); the judge's answer is now shown")
        await expect(bob.locator("#prior .prior")).to_have_count(2)  # both, once decided

        progress = orjson.loads(curl(url + "api/progress", tokens["alice"]))
        assert progress["criteria"] == [{"field_id": FIELD, "cells": 1, "done": 1, "blind": 1,
                                         "double": 1, "double_done": 1}]
        assert sorted(r["decided"] for r in progress["reviewers"]) == [1, 1]

    both = sorted((Adjudication.model_validate(a) for a in await adjudications(settings, 2)),
                  key=lambda a: a.review_slot or 1)
    assert [(a.review_slot, a.review_mode, a.final_answer) for a in both] == [
        (1, "blind", "type_2"), (2, "blind", "no_info")]
    assert both[1].supersedes is None  # the second review replaces nothing
    assert both[0].adjudicator != both[1].adjudicator
