"""The judge's tool loop against the strict fake Messages API (tools/fakes): the fake judge
model searches and reads, every turn obeys the API's rules (the fake rejects violations),
budgets stop the tools, a resumed loop pays nothing again, and pointers are checked against
what was read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agents.context.charts import ChartStore
from agents.judge.judge import Judge
from agents.providers.anthropic import AnthropicProvider
from agents.providers.journal import journal_key
from agents.settings import Settings
from agents.transient import LLMUnavailable
from schemas.chart_review import JudgeJob
from schemas.skill import Skill
from tests.unit.agents.judge.fixtures import answer, job
from tools.fakes.fake_anthropic import FakeAnthropic, Reply
from tools.fakes.fake_chart_judge import ChartJudge

PATIENT = "p077"
#: the deciding sentence is in n05, which no agent cited and no keyword matches
NOTES = {"n01": "MEDICATIONS: metformin 1000 mg twice daily. No SGLT2 inhibitor listed.\n",
         "n05": "CARDIOLOGY CLINIC NOTE\nDate of service: 2024-05-01\nHeart failure with "
                "reduced ejection fraction. Started Jardiance 10 mg daily for cardiorenal "
                "protection.\n"}


def charts(tmp_path: Path) -> ChartStore:
    folder = tmp_path / "charts" / PATIENT
    folder.mkdir(parents=True, exist_ok=True)
    for n, t in NOTES.items():
        (folder / f"{n}.txt").write_text(t)
    return ChartStore(tmp_path / "charts")


def sglt2_job() -> JudgeJob:
    return job("disagreement",
               answer("default", "no", field_id="on_sglt2i", patient=PATIENT,
                      quotes=(("n01", "No SGLT2 inhibitor listed"),)),
               answer("skeptical", "yes", field_id="on_sglt2i", patient=PATIENT))


def make(fake: FakeAnthropic, skill: Skill, store: ChartStore, mode: str = "on",
         journal: Any = None, **tools: Any) -> Judge:
    s = Settings(llm={"provider": "anthropic", "model": "claude-sonnet-5-5",
                      "sdk_max_retries": 0, "deadline_seconds": 5.0, "max_attempts": 2,
                      "backoff_base_seconds": 0.01, "requests_per_minute": 6000,
                      "max_tokens": 2000},
                 chart_tools={"mode": mode, **tools})
    return Judge(s, skill, store, AnthropicProvider(s.llm, base_url=fake.base_url),
                 journal=journal)


def statuses(fake: FakeAnthropic) -> list[int]:
    return [r.status for r in fake.message_requests()]


async def test_tools_find_the_deciding_note_nobody_cited(fake: FakeAnthropic, skill: Skill,
                                                         tmp_path: Path) -> None:
    fake.responder = ChartJudge()
    r = await make(fake, skill, charts(tmp_path)).judge(sglt2_job())
    assert statuses(fake) == [200, 200, 200]  # search, read, answer: none rejected
    assert r.status == "ok", r.validation
    assert r.analysis.suggested_answer == "yes" and r.analysis.agent_correctness == "agent_b"
    ptr = r.analysis.evidence_pointers[0]
    text = NOTES["n05"][ptr.offsets[0]:ptr.offsets[1]]  # type: ignore[index]
    assert ptr.note_id == "n05" and "Started Jardiance 10 mg daily" in text
    tools = [(a.tool, a.note_id) for a in r.consulted]
    assert ("search_notes", None) in tools and ("read_note", "n05") in tools
    assert r.usage.llm_calls == 3
    last = fake.message_requests()[-1].body
    assert [m["role"] for m in last["messages"]] == ["user", "assistant", "user",
                                                     "assistant", "user"]
    # thinking blocks came back unmodified (the fake checks signatures and issued ids)
    assert last["messages"][1]["content"][0]["type"] == "thinking"
    # one breakpoint in the messages, on the newest turn: each turn reads the last from cache
    for q in fake.message_requests():
        marks = [(n, b) for n, m in enumerate(q.body["messages"]) if m["role"] == "user"
                 for b in m["content"] if "cache_control" in b]
        assert [n for n, _ in marks] == [len(q.body["messages"]) - 1]
    assert r.usage.cache_read_input_tokens > r.usage.input_tokens


async def test_without_tools_the_same_fake_judges_from_the_excerpts(
        fake: FakeAnthropic, skill: Skill, tmp_path: Path) -> None:
    fake.responder = ChartJudge()
    r = await make(fake, skill, charts(tmp_path), mode="off").judge(sglt2_job())
    assert statuses(fake) == [200] and "tools" not in fake.message_requests()[0].body
    assert r.analysis.suggested_answer == "no_info" and r.consulted == ()


async def test_auto_offers_tools_only_when_the_context_left_something_out(
        fake: FakeAnthropic, skill: Skill, tmp_path: Path) -> None:
    fake.responder = ChartJudge()
    judge = make(fake, skill, charts(tmp_path), mode="auto")
    await judge.judge(sglt2_job())  # every note fits the context budget: no tools
    assert "tools" not in fake.message_requests()[0].body
    cites_missing = job("disagreement",
                        answer("default", "no", field_id="on_sglt2i", patient=PATIENT,
                               quotes=(("n09", "no such note"),)),
                        answer("skeptical", "yes", field_id="on_sglt2i", patient=PATIENT))
    fake.requests.clear()
    await judge.judge(cites_missing)
    assert fake.message_requests()[0].body["tools"]
    per_criterion = make(fake, skill, charts(tmp_path / "b"), mode="off",
                         criteria={"on_sglt2i": "on"})
    fake.requests.clear()
    await per_criterion.judge(sglt2_job())
    assert fake.message_requests()[0].body["tools"]


async def test_parallel_calls_are_all_answered_results_first(fake: FakeAnthropic,
                                                             skill: Skill,
                                                             tmp_path: Path) -> None:
    fake.responder = ChartJudge(calls_per_turn=2)
    r = await make(fake, skill, charts(tmp_path)).judge(sglt2_job())
    assert 400 not in statuses(fake) and r.status == "ok"
    second = fake.message_requests()[1].body["messages"][2]["content"]
    assert [b["type"] for b in second] == ["tool_result", "tool_result"]


async def test_the_budget_stops_the_tools_and_the_judge_answers(fake: FakeAnthropic,
                                                               skill: Skill,
                                                               tmp_path: Path) -> None:
    fake.responder = ChartJudge(reads=5)
    r = await make(fake, skill, charts(tmp_path), max_calls=1).judge(sglt2_job())
    bodies = [q.body for q in fake.message_requests()]
    assert len(bodies) == 2 and bodies[1]["tool_choice"] == {"type": "none"}
    assert "budget of this cell is spent (tool calls)" in json.dumps(bodies[1]["messages"][-1])
    assert r.status != "fallback" and len([a for a in r.consulted if a.tool == "read_note"]) == 0


async def test_a_pointer_into_an_unopened_note_is_flagged(fake: FakeAnthropic, skill: Skill,
                                                         tmp_path: Path) -> None:
    def answer_unread(body: dict[str, Any]) -> Reply:
        return Reply.message(text=json.dumps({
            "suggested_answer": "yes", "reasoning": "The cardiology note settles it. The "
            "skeptical agent is right.", "evidence_pointers": [
                {"note_id": "n05", "what_to_look_for": "new medication", "offsets": [60, 90]}],
            "agent_correctness": "agent_b", "classification_hint": "agent_a_error",
            "judge_confidence": "medium"}))
    fake.responder = answer_unread
    store = charts(tmp_path)
    big = "x" * 30_000 + NOTES["n05"]  # too long for the context: only windows are shown
    (tmp_path / "charts" / PATIENT / "n05.txt").write_text(big)
    r = await make(fake, skill, store).judge(sglt2_job())
    assert ("pointer_unread", "flagged") in [(p.type, p.action) for p in r.validation]


class MemoryJournal:
    """The three calls :class:`Recall` makes of a journal, in memory."""

    topic = "t"

    def __init__(self) -> None:
        self.entries: dict[str, bytes] = {}

    async def sync(self) -> None:
        return None

    def get(self, key: str) -> bytes | None:
        return self.entries.get(key)

    async def put(self, key: str, value: bytes) -> None:
        self.entries[key] = value

    def has(self, key: str) -> bool:
        return key in self.entries


async def test_a_loop_cut_short_resumes_without_paying_again(fake: FakeAnthropic,
                                                             skill: Skill,
                                                             tmp_path: Path) -> None:
    """An outage on the third turn: the job is kept for a later try (a dead letter); the
    retry reuses the two journaled turns and pays only the answer."""
    journal = MemoryJournal()
    fake.responder = ChartJudge()
    seen = {"n": 0}

    def outage_from_third(body: dict[str, Any]) -> Reply:
        seen["n"] += 1
        return Reply.error(529) if seen["n"] >= 3 else ChartJudge()(body)
    fake.responder = outage_from_third
    fake.default_retry_after = 0.01
    judge = make(fake, skill, charts(tmp_path), journal=journal)
    with pytest.raises(LLMUnavailable):
        await judge.judge(sglt2_job())
    assert statuses(fake)[:2] == [200, 200] and 200 not in statuses(fake)[2:]
    key = journal_key("judge", judge.result_id(sglt2_job()))
    assert len(json.loads(journal.entries[key])["answers"]) == 2
    fake.requests.clear()
    fake.responder = ChartJudge()
    again = await make(fake, skill, charts(tmp_path), journal=journal).judge(sglt2_job())
    assert statuses(fake) == [200]  # only the answer turn is paid; two turns reused
    assert again.status == "ok" and again.analysis.suggested_answer == "yes"
    assert [a.note_id for a in again.consulted if a.tool == "read_note"] == ["n05"]
