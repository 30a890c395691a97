"""Join judge results with human adjudications by cell and compute the calibration figures.

Pure: no Kafka. :class:`Calibration` holds the latest judge result per (cell, prompt
version), the latest adjudication per cell and the latest cell outcome per cell; it can be
fed in any order (records are kept by their own timestamps, not by arrival) and recomputes
one (task, criterion, prompt version) group on demand. Answers are compared by their
canonical value under the criterion's answer schema (``true`` equals ``"yes"``) when the
skill knows the criterion, else by their JSON spelling.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, TypeVar

from agents.calibrate import figures as fig
from agents.calibrate.figures import figure
from agents.calibrate.intervals import ac1_pairs, kappa_with_ci
from agents.calibrate.metrics import Ratio, agreement, cohen_kappa, confusion
from schemas.calibration import (
    AGENT_ERROR,
    CLASSIFICATIONS,
    Adjudication,
    AgentAgreement,
    CalibrationRecord,
    Confusion,
)
from schemas.chart_review import CellOutcome, JudgeJob, JudgeResult
from schemas.ids import canonical_json, derive_id
from schemas.reviewer_labels import class_key
from schemas.skill import AnswerSchema
from streams.detect.normalize import canonicalize, format_signature

Group = tuple[str, str, str]  # task_id, field_id, prompt_version
_Cell = TypeVar("_Cell", Adjudication, CellOutcome, JudgeJob)
AGREE, DISAGREE = frozenset({"agreement", "type_drift"}), frozenset({"disagreement"})


def same_answer(a: Any, b: Any, schema: AnswerSchema | None) -> bool:
    if schema is not None:
        return bool(canonicalize(a, schema) == canonicalize(b, schema))
    return format_signature(a) == format_signature(b)


def reviewer_agents(results: Iterable[JudgeResult]) -> tuple[str, ...]:
    """The agents behind the results' positional labels: the order most results list
    (a cell decided without one of its agents lists fewer; ties: the longer, then by name)."""
    counts = Counter(r.agents for r in results if r.agents)
    if not counts:
        return ()
    return max(counts, key=lambda agents: (counts[agents], len(agents), agents))


def who_was_right(a: Adjudication, r: JudgeResult) -> tuple[Any, Any]:
    """The reviewer's and the judge's "who was right", compared by agent ids when both name
    them (any number of agents), else by the positional tokens."""
    if a.correct_agents is not None and r.correct_agents is not None:
        return tuple(sorted(a.correct_agents)), tuple(sorted(r.correct_agents))
    return a.agent_correctness, r.analysis.agent_correctness


class Calibration:
    def __init__(self, schemas: Mapping[str, AnswerSchema] | None = None) -> None:
        self.schemas = dict(schemas or {})
        self.results: dict[tuple[str, str], JudgeResult] = {}  # (cell key, version)
        self.adjudications: dict[str, Adjudication] = {}  # review slot 1: ground truth
        self.second: dict[str, Adjudication] = {}  # review slot 2: the human baseline
        self.jobs: dict[str, JudgeJob] = {}  # the agents' answers by id, per cell
        self.outcomes: dict[str, CellOutcome] = {}
        self.versions: dict[tuple[str, str], set[str]] = {}  # (task, field) -> versions

    # -- input: each returns the groups whose figures may have changed -------------------
    def add_result(self, r: JudgeResult) -> set[Group]:
        slot = (r.key, r.prompt_version)
        old = self.results.get(slot)
        if old is not None and (old.judged_at, old.result_id) >= (r.judged_at, r.result_id):
            return set()
        self.results[slot] = r
        self.versions.setdefault((r.task_id, r.field_id), set()).add(r.prompt_version)
        return {(r.task_id, r.field_id, r.prompt_version)}

    def add_adjudication(self, a: Adjudication) -> set[Group]:
        # a second reviewer's decision never replaces the first's (docs/calibration.md)
        store = self.second if a.review_slot == 2 else self.adjudications
        return self._keep_latest(store, a, lambda x: x.adjudicated_at)

    def add_job(self, j: JudgeJob) -> set[Group]:
        return self._keep_latest(self.jobs, j, lambda x: x.detected_at)

    def add_outcome(self, o: CellOutcome) -> set[Group]:
        return self._keep_latest(self.outcomes, o, lambda x: x.decided_at)

    def _keep_latest(self, store: dict[str, _Cell], item: _Cell,
                     at: Callable[[_Cell], datetime]) -> set[Group]:
        """Keep ``item`` per cell unless the stored one is later (a tie: the newer delivery)."""
        old = store.get(item.key)
        if old is not None and at(old) > at(item):
            return set()
        store[item.key] = item
        return self._all_versions(item.task_id, item.field_id)

    def _all_versions(self, task: str, field: str) -> set[Group]:
        return {(task, field, v) for v in self.versions.get((task, field), ())}

    def groups(self) -> list[Group]:
        return sorted((t, f, v) for (t, f), vs in self.versions.items() for v in vs)

    def results_of(self, group: Group) -> dict[str, JudgeResult]:
        task, field, version = group
        return {cell: r for (cell, v), r in self.results.items()
                if v == version and r.task_id == task and r.field_id == field}

    # -- output ----------------------------------------------------------------------
    def record(self, group: Group, now: datetime) -> CalibrationRecord:
        task, field, version = group
        results = self.results_of(group)
        schema = self.schemas.get(field)
        joined = [(self.adjudications[c], r) for c, r in sorted(results.items())
                  if c in self.adjudications]
        judged = [(a, r) for a, r in joined if r.status != "fallback"]
        accuracy = Ratio(sum(1 for a, r in judged if r.analysis.suggested_answer is not None
                             and same_answer(r.analysis.suggested_answer, a.final_answer,
                                             schema)), len(judged))
        agents = reviewer_agents(results.values())
        # classes named by agent, so that a third agent's error counts as its own class
        klass = [(class_key(a.classification, a.error_agent, r.agents or agents),
                  class_key(r.analysis.classification_hint, r.error_agent, r.agents or agents))
                 for a, r in judged]
        # the five tokens, then each later agent's error class (a group may mix cells of
        # two and of three agents)
        extra = {f"{AGENT_ERROR}:{x}" for x in agents[2:]} | {k for p in klass for k in p}
        labels = (*CLASSIFICATIONS, *sorted(extra - set(CLASSIFICATIONS)))
        correct = [who_was_right(a, r) for a, r in judged
                   if a.agent_correctness is not None or a.correct_agents is not None]
        cost = sum(r.usage.cost_usd for r in results.values())
        _, kappa_ci = kappa_with_ci(klass)
        ac1, ac1_ci = ac1_pairs(klass, labels)
        answers = [(fig.answer_label(a.final_answer, schema),
                    fig.answer_label(r.analysis.suggested_answer, schema)) for a, r in judged]
        answer_kappa, answer_kappa_ci = kappa_with_ci(answers)
        second = [(self.adjudications[c], b) for c, b in sorted(self.second.items())
                  if b.task_id == task and b.field_id == field and c in self.adjudications]
        fields: dict[str, Any] = dict(
            task_id=task, field_id=field, prompt_version=version,
            cells_judged=len(results), cells_adjudicated=len(joined),
            answer_accuracy=figure(accuracy), classification_kappa=cohen_kappa(klass),
            classification_agreement=figure(agreement(klass)),
            agent_correctness_agreement=figure(agreement(correct)),
            confusion=Confusion(labels=labels, counts=tuple(
                tuple(row) for row in confusion(klass, labels))),
            fallback=figure(Ratio(sum(r.status == "fallback" for r in results.values()),
                                  len(results))),
            cost_usd=round(cost, 8),
            cost_per_cell_usd=round(cost / len(results), 8) if results else None,
            agent_agreement=self.agent_agreement(task, field), agents=agents,
            kappa_ci95=kappa_ci, ac1=ac1, ac1_ci95=ac1_ci, answer_kappa=answer_kappa,
            answer_kappa_ci95=answer_kappa_ci,
            answer_ac1=ac1_pairs(answers, fig.answer_scale(schema))[0],
            by_review_mode=fig.by_review_mode(judged, klass, labels, schema),
            human_agreement=fig.human_agreement(second, schema, labels))
        digest = derive_id(canonical_json(
            CalibrationRecord.model_construct(**fields).model_dump(mode="json", exclude={
                "calibration_id", "computed_at", "schema_version", "agents"})), length=None)
        return CalibrationRecord(calibration_id=digest, computed_at=now, **fields)

    def agent_agreement(self, task: str, field: str) -> AgentAgreement | None:
        decided = [o.outcome for o in self.outcomes.values()
                   if o.task_id == task and o.field_id == field and o.outcome in AGREE | DISAGREE]
        if not decided:
            return None
        r = Ratio(sum(o in AGREE for o in decided), len(decided))
        raters, cells, fleiss, pairs = fig.agents_agreement(
            fig.agent_answers(self.outcomes, self.jobs, task, field, self.schemas.get(field)),
            reviewer_agents(
                r for r in self.results.values() if (r.task_id, r.field_id) == (task, field)))
        return AgentAgreement(agreed=r.hits, n=r.n, rate=r.value, ci95=figure(r).ci95,
                              raters=raters, cells=cells, fleiss_kappa=fleiss,
                              pairwise=pairs)

    def changed_suggestions(self, old: Group, new: Group) -> Ratio:
        """Cells judged under both versions whose suggested answer differs."""
        a, b = self.results_of(old), self.results_of(new)
        both = sorted(set(a) & set(b))
        schema = self.schemas.get(old[1])
        return Ratio(sum(not same_answer(a[c].analysis.suggested_answer,
                                         b[c].analysis.suggested_answer, schema)
                         for c in both), len(both))
