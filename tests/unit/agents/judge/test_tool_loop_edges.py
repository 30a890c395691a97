"""The tool loop's edges against the strict fake: pause_turn, max_tokens mid-loop, the repair
round-trip after tool turns, and the token budget."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from schemas.skill import Skill
from tests.unit.agents.judge.test_tool_loop import charts, make, sglt2_job, statuses
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

ANSWER = {"suggested_answer": "no", "reasoning": "The medication list names no SGLT2 "
          "inhibitor. The default agent read it correctly.",
          "evidence_pointers": [{"note_id": "n01", "what_to_look_for": "medication list",
                                 "offsets": None}],
          "agent_correctness": "agent_a", "classification_hint": "agent_b_error",
          "judge_confidence": "medium"}


def search(pattern: str = "jardiance") -> Reply:
    return Reply.message(tool_use={"name": "search_notes", "input": {"pattern": pattern}})


def answer(payload: dict[str, Any] | None = None, **kw: Any) -> Reply:
    return Reply.message(text=json.dumps(ANSWER if payload is None else payload), **kw)


def bodies(fake: FakeAnthropic) -> list[dict[str, Any]]:
    return [r.body for r in fake.message_requests()]


async def test_pause_turn_is_sent_back_to_continue(fake: FakeAnthropic, skill: Skill,
                                                   tmp_path: Path) -> None:
    fake.enqueue(Reply.message(text="Searching the chart", stop_reason="pause_turn"), answer())
    r = await make(fake, skill, charts(tmp_path)).judge(sglt2_job())
    _, second = bodies(fake)
    assert statuses(fake) == [200, 200] and r.status == "ok"
    assert [m["role"] for m in second["messages"]] == ["user", "assistant"]
    assert second["messages"][1]["content"][-1] == {"type": "text",
                                                     "text": "Searching the chart"}


async def test_max_tokens_mid_loop_is_retried_from_where_the_loop_stood(
        fake: FakeAnthropic, skill: Skill, tmp_path: Path) -> None:
    fake.enqueue(search(), Reply.message(text='{"suggested_', stop_reason="max_tokens"),
                 answer())
    r = await make(fake, skill, charts(tmp_path)).judge(sglt2_job())
    b = bodies(fake)
    assert statuses(fake) == [200, 200, 200] and r.status == "ok"
    assert len(b[2]["messages"]) == 3 and b[2]["max_tokens"] == 2 * b[1]["max_tokens"]
    assert ("max_tokens", "repaired") in [(p.type, p.action) for p in r.validation]


async def test_the_repair_after_tool_turns_keeps_the_tools_and_calls_none(
        fake: FakeAnthropic, skill: Skill, tmp_path: Path) -> None:
    fake.enqueue(search(), answer({"verdict": "yes"}), answer())
    r = await make(fake, skill, charts(tmp_path)).judge(sglt2_job())
    repair = bodies(fake)[2]
    assert statuses(fake) == [200, 200, 200] and r.status == "ok"
    assert repair["tools"] and repair["tool_choice"] == {"type": "none"}
    assert [m["role"] for m in repair["messages"]] == ["user", "assistant", "user",
                                                       "assistant", "user"]


async def test_the_token_budget_stops_the_tools(fake: FakeAnthropic, skill: Skill,
                                                tmp_path: Path) -> None:
    fake.enqueue(search(), answer())
    r = await make(fake, skill, charts(tmp_path), max_tokens=1000).judge(sglt2_job())
    second = bodies(fake)[1]
    results = second["messages"][2]["content"]
    assert results[0]["is_error"] and "spent (tokens)" in results[0]["content"]
    assert second["tool_choice"] == {"type": "none"} and r.consulted == ()
