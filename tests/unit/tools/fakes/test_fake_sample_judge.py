"""The README walk's fake judge model: it answers as the sample's reviewers did, and as a
weak model on a hard criterion it blames the other agent, consistently (the judge's own
rules would otherwise repair the answer back)."""

from __future__ import annotations

import json
from typing import Any

from agents.judge.rules import supported_agent
from tools.fakes.fake_sample_judge import SampleJudge

CASE = """Cell: task t2dm-ckd-v1, patient P007, criterion ckd_stage
answer: "G3b"  (canonical: "G3b")
answer: "G3a"  (canonical: "G3a")
<<DATA-x note P007-N04 (cited by an agent); characters 0-10 of 10>>"""


def ask(model: str, judge: SampleJudge) -> dict[str, Any]:
    reply = judge({"model": model, "messages": [{"role": "user", "content": CASE}]})
    text = next(b["text"] for b in reply.body["content"] if b["type"] == "text")
    return dict(json.loads(text))


def test_it_answers_as_the_reviewers_and_errs_only_where_told() -> None:
    judge = SampleJudge(hard=frozenset({"ckd_stage"}))
    good = ask("claude-sonnet-5-5", judge)
    assert (good["suggested_answer"], good["classification_hint"],
            good["agent_correctness"]) == ("G3b", "agent_b_error", "agent_a")
    weak = ask("claude-haiku-5-5", judge)
    assert ask("claude-haiku-4-5", judge) == weak
    assert (weak["suggested_answer"], weak["classification_hint"],
            weak["agent_correctness"]) == ("G3a", "agent_a_error", "agent_b")
    # consistent: the suggested answer is the agent it calls correct
    assert supported_agent(weak["suggested_answer"], ["G3b", "G3a"]) == "agent_b"
    assert weak["evidence_pointers"][0]["note_id"] == "P007-N04"
    assert ask("claude-haiku-4-5", SampleJudge()) == good  # not a hard criterion
