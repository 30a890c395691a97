"""``python -m tools.bench.offline_eval``: the offline judge against the sample's ground truth.

Every sample cell the detector turns into a judge job (latest answer per agent, decided by
:func:`streams.detect.decide.decide`) is judged by :class:`Judge` with the offline provider
— the same validation and field rules as a model answer — and compared with
``truth.jsonl``: does the suggested answer equal the correct answer (``null`` counts as an
abstention), does ``agent_correctness`` name the agents the truth says were right (``n_a``
on low-confidence cells), and which status did the result get. Prints one row per job kind.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agents.context.charts import ChartStore
from agents.judge.judge import Judge
from agents.providers.factory import OfflineProvider
from agents.settings import Settings
from schemas.chart_review import AgentAnswer, JudgeJob, JudgeResult
from schemas.skill import load_skill
from streams.detect.decide import decide
from streams.detect.normalize import Invalid, to_json_value


def sample_jobs(settings: Settings) -> list[tuple[JudgeJob, dict[str, Any]]]:
    data = Path(settings.skill_dir).parent
    skill = load_skill(settings.skill_dir)
    latest: dict[str, dict[str, AgentAnswer]] = defaultdict(dict)
    for line in (data / "answers.jsonl").read_bytes().splitlines():
        a = AgentAnswer.model_validate_json(line)
        old = latest[a.key].get(a.agent_id)
        if old is None or a.emitted_at >= old.emitted_at:
            latest[a.key][a.agent_id] = a
    out = []
    for text in (data / "truth.jsonl").read_text().splitlines():
        truth = json.loads(text)
        answers = list(latest.get(truth["cell"], {}).values())
        crit = skill.criteria.get(truth["field_id"])
        if not answers or crit is None:
            continue
        d = decide(answers, crit.answer_schema, settings.expected_agents,
                   settings.low_confidence_threshold)
        if d.job_kind is None:
            continue
        norm = tuple(None if isinstance(n.canonical, Invalid) else to_json_value(n.canonical)
                     for n in d.answers)
        # a job id is a record id (no '|'): the cell key's parts joined by '_'
        job = JudgeJob(job_id="eval-" + truth["cell"].replace("|", "_"), kind=d.job_kind,
                       task_id=truth["task_id"],
                       patient_id=truth["patient_id"], field_id=truth["field_id"],
                       answers=tuple(n.answer for n in d.answers), normalized=norm,
                       reasons=d.reasons, detected_at=datetime.now(UTC),
                       missing_agents=d.missing_agents, kinds_applicable=d.kinds_applicable)
        out.append((job, truth))
    return out


def expected_correctness(job: JudgeJob, truth: dict[str, Any]) -> str:
    if job.kind == "low_confidence":
        return "n_a"
    right = set(truth.get("agents_correct") or ())
    ids = [a.agent_id for a in job.answers[:2]]
    hits = [label for label, agent in zip(("agent_a", "agent_b"), ids, strict=False)
            if agent in right]
    return {0: "neither", 1: hits[0] if hits else "neither", 2: "both"}[len(hits)]


def score(pairs: list[tuple[JudgeResult, JudgeJob, dict[str, Any]]]) -> list[list[object]]:
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    for result, job, truth in pairs:
        c = rows[job.kind]
        c["cells"] += 1
        c[f"status_{result.status}"] += 1
        suggested = result.analysis.suggested_answer
        if suggested is None:
            c["abstained"] += 1
        elif json.dumps(suggested) == json.dumps(truth.get("correct_answer")):
            c["answer_right"] += 1
        if result.analysis.agent_correctness == expected_correctness(job, truth):
            c["correctness_right"] += 1
    keys = ("cells", "answer_right", "abstained", "correctness_right", "status_ok",
            "status_flagged", "status_fallback")
    table = [[kind, *(c[k] for k in keys)] for kind, c in sorted(rows.items())]
    total = [sum(int(r[i]) for r in table) for i in range(1, len(keys) + 1)]  # type: ignore[call-overload]
    return [*table, ["all", *total]]


async def evaluate(settings: Settings) -> list[list[object]]:
    skill = load_skill(settings.skill_dir)
    judge = Judge(settings, skill, ChartStore(settings.charts_dir), OfflineProvider())
    pairs = [(await judge.judge(job), job, truth) for job, truth in sample_jobs(settings)]
    return score(pairs)


def main() -> None:
    headers = ("kind", "cells", "answer=truth", "abstained", "correctness=truth", "ok",
               "flagged", "fallback")
    rows = asyncio.run(evaluate(Settings()))
    print("| " + " | ".join(headers) + " |")
    print("|" + "---|" * len(headers))
    for row in rows:
        print("| " + " | ".join(str(x) for x in row) + " |")


if __name__ == "__main__":
    main()
