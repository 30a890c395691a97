"""One judge request built exactly as the worker builds it, for ``judgeflow llm check`` and the
judge benchmarks: a disagreement job from sample answers, its chart context and prompt.

The sample answers are the ``answers.jsonl`` beside the configured skill folder (the layout
of the packaged sample). A hospital's own skill folder has none, so the packaged sample (its
skill, answers and charts) stands in: the request is then the sample's, which says so
(:attr:`SampleSource.packaged`). Either way no patient chart of the deployment is read.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from agents.context.assemble import gather
from agents.context.charts import ChartStore
from agents.errors import AgentsError
from agents.judge.prompt import build_request
from agents.providers.base import LLMRequest
from agents.providers.factory import model_entry
from agents.settings import Settings
from schemas.chart_review import AgentAnswer, JudgeJob
from schemas.skill import Skill, load_skill
from streams.settings import SAMPLE_DIR

ANSWERS = "answers.jsonl"


@dataclass(frozen=True)
class SampleSource:
    skill_dir: Path
    charts_dir: Path
    answers: Path
    #: True when the configured skill folder had no sample answers beside it
    packaged: bool


PACKAGED = SampleSource(SAMPLE_DIR / "skill", SAMPLE_DIR / "charts", SAMPLE_DIR / ANSWERS, True)


def source_of(settings: Settings) -> SampleSource:
    answers = Path(settings.skill_dir).parent / ANSWERS
    if answers.is_file():
        return SampleSource(Path(settings.skill_dir), Path(settings.charts_dir), answers, False)
    return PACKAGED


def answer_pairs(answers: Path) -> list[tuple[AgentAnswer, AgentAnswer]]:
    """The first two valid answers of every cell that has two, in file order."""
    cells: dict[str, list[AgentAnswer]] = {}
    for line in answers.read_bytes().splitlines():
        try:
            a = AgentAnswer.model_validate_json(line)
        except ValidationError:
            continue  # blank or malformed: a sample may hold some on purpose
        cells.setdefault(a.key, []).append(a)
    return [(v[0], v[1]) for v in cells.values() if len(v) >= 2]


def disagreement(a: AgentAnswer, b: AgentAnswer, reason: str) -> JudgeJob:
    return JudgeJob(job_id=f"{reason}-{uuid.uuid4().hex}", kind="disagreement",
                    task_id=a.task_id, patient_id=a.patient_id, field_id=a.field_id,
                    answers=(a, b), normalized=(a.answer, b.answer), reasons=(reason,),
                    detected_at=datetime.now().astimezone())


def judge_request(settings: Settings, skill: Skill, store: ChartStore,
                  job: JudgeJob) -> LLMRequest:
    """The request the judge worker sends for ``job`` (built the same way, not sent)."""
    crit = skill.criteria[job.field_id]
    notes = store.notes(job.patient_id)
    ctx = gather(job.answers, crit.keywords, notes, settings.llm.context_budget_chars)
    return build_request(skill, crit, job, ctx, structured=settings.llm.structured_output,
                         max_tokens=settings.llm.max_tokens, notes=notes,
                         min_cache_tokens=model_entry(settings.llm).min_cache_tokens)


def sample_request(settings: Settings) -> tuple[LLMRequest, SampleSource]:
    """One judge request for the first sample disagreement, and where it came from."""
    for src in dict.fromkeys((source_of(settings), PACKAGED)):
        skill = load_skill(src.skill_dir)
        pairs = [p for p in answer_pairs(src.answers) if skill.criterion(p[0].field_id)]
        if pairs:  # else a configured sample without a usable pair: the packaged one has some
            job = disagreement(*pairs[0], reason="llm-check")
            return judge_request(settings, skill, ChartStore(src.charts_dir), job), src
    raise AgentsError("the packaged sample has no two answers of one cell")
