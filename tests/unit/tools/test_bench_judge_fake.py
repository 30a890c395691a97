"""The benchmark's fake answers pass the judge's own checks, so bench results are ``ok``
(a benchmark of flagged results would measure a path production rarely takes)."""

from __future__ import annotations

from agents.context.charts import ChartStore
from agents.judge.validate import NEEDS_REVIEW, validate_analysis
from agents.settings import Settings
from schemas.skill import load_skill
from tools.bench.judge_fake import analysis, case_of
from tools.bench.judge_phase import bench_jobs, judge_requests


def test_every_bench_answer_is_accepted_without_review() -> None:
    s = Settings()
    skill, store = load_skill(s.skill_dir), ChartStore(s.charts_dir)
    jobs = bench_jobs(s, 400, slow=False)
    low = [j.model_copy(update={"kind": "low_confidence"}) for j in jobs[:5]]
    for job, request in zip(jobs + low, judge_requests(s, jobs + low), strict=True):
        criterion = skill.criteria[job.field_id]
        payload = analysis(case_of({"messages": list(request.messages)}))
        assert 1 <= len(payload["evidence_pointers"]) <= 3
        check = validate_analysis(payload, criterion=criterion,
                                  notes=store.notes(job.patient_id), n_agents=len(job.answers),
                                  kind=job.kind, agent_answers=job.normalized,
                                  extra_sources=(criterion.prompt, criterion.body))
        assert check.analysis is not None
        kept = {p.type for p in check.problems if p.action != "repaired"}
        assert not kept & NEEDS_REVIEW and not kept, (job.kind, kept)
        assert not check.problems, check.problems
