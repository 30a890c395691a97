"""A fake judge model for the sample data (``tools.demo.model_choice``): it answers each
judge request from the sample's human adjudications, as a model that agrees with the
reviewers would; as the models named in ``weak`` it gets the criteria in ``hard`` wrong
wherever the reviewers blamed one agent (it blames the other one and suggests that agent's
answer). It exists
to show what ``judgeflow compare`` reports when two models differ on some criteria and not
on others; its figures say nothing about real models.
"""

from __future__ import annotations

import json
import re
from typing import Any

from streams.sampledata import DATA_DIR
from tools.fakes.fake_anthropic import Reply

_CELL = re.compile(r"Cell: task (\S+), patient (\S+), criterion (\S+)")
_CANON = re.compile(r"answer: .*\(canonical: (.*)\)$", re.MULTILINE)
_NOTE = re.compile(r"note (\S+) \((?:cited|not cited)")
#: a hint -> the opposite hint and the agent it then calls correct
#: the models the fake answers worse as (its "weak" models, by default)
HAIKU = frozenset({"claude-haiku-4-5", "claude-haiku-5-5"})
_SWAP = {"agent_a_error": ("agent_b_error", "agent_a"),
         "agent_b_error": ("agent_a_error", "agent_b")}


def _adjudications() -> dict[tuple[str, str, str], dict[str, Any]]:
    rows = (json.loads(line) for line in
            (DATA_DIR / "adjudications.jsonl").read_text().splitlines() if line.strip())
    return {(r["task_id"], r["patient_id"], r["field_id"]): r for r in rows}


class SampleJudge:
    def __init__(self, weak: frozenset[str] = HAIKU,
                 hard: frozenset[str] = frozenset()) -> None:
        self.weak, self.hard = weak, hard
        self.truth = _adjudications()

    def __call__(self, body: dict[str, Any]) -> Reply:
        case = next((m["content"] for m in body.get("messages", [])
                     if m.get("role") == "user" and isinstance(m.get("content"), str)), "")
        cell = _CELL.search(case)
        if cell is None:  # not a judge case (the debrief's check): a plain answer
            return Reply.message(text="ok")
        task, patient, field = cell.groups()
        agents = [json.loads(v) for v in _CANON.findall(case)]
        adj = self.truth.get((task, patient, field))
        answer: Any = adj["final_answer"] if adj else (agents[0] if agents else None)
        hint = adj["classification"] if adj else "true_ambiguity"
        correct = (adj or {}).get("agent_correctness") or "neither"
        wrong = body.get("model") in self.weak and field in self.hard
        if wrong and hint in _SWAP and len(agents) >= 2:
            hint, correct = _SWAP[hint]
            answer = agents[0] if correct == "agent_a" else agents[1]
        note = _NOTE.search(case)
        return Reply.message(text=json.dumps({
            "suggested_answer": answer,
            "reasoning": f"The notes support {json.dumps(answer)} for {field}. The "
                         "reviewer should confirm the cited passage.",
            "evidence_pointers": [{"note_id": note.group(1) if note else "unknown",
                                   "what_to_look_for": "the cited passage", "offsets": None}],
            "agent_correctness": correct, "classification_hint": hint,
            "judge_confidence": "medium"}))
