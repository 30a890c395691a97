"""The join and the figures of one group, against the hand calculation in scenario.py."""

from __future__ import annotations

import random

import pytest

from agents.calibrate.core import Calibration, same_answer
from schemas.calibration import CLASSIFICATIONS, Adjudication
from schemas.chart_review import JudgeResult
from schemas.skill import AnswerSchema
from tests.unit.agents.calibrate import scenario as sc


def _fed(shuffle_seed: int | None = None) -> Calibration:
    cal = Calibration()
    items: list[object] = [*sc.results(), *sc.adjudications(), *sc.outcomes()]
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(items)
    for item in items:
        if isinstance(item, JudgeResult):
            cal.add_result(item)
        elif isinstance(item, Adjudication):
            cal.add_adjudication(item)
        else:
            cal.add_outcome(item)  # type: ignore[arg-type]
    return cal


@pytest.mark.parametrize("seed", [None, 1, 2, 3])
def test_v1_figures_match_the_hand_calculation(seed: int | None) -> None:
    rec = _fed(seed).record((sc.TASK, sc.FIELD, "v1"), sc.T0)
    assert (rec.cells_judged, rec.cells_adjudicated) == (5, 4)
    assert (rec.answer_accuracy.hits, rec.answer_accuracy.n) == (2, 3)
    assert rec.classification_kappa == pytest.approx(0.4)
    assert (rec.agent_correctness_agreement.hits, rec.agent_correctness_agreement.n) == (2, 3)
    assert rec.confusion.labels[:2] == ("agent_a_error", "agent_b_error")
    assert rec.confusion.counts[0] == (1, 0, 0, 0, 0)
    assert rec.confusion.counts[1] == (1, 1, 0, 0, 0)
    assert sum(map(sum, rec.confusion.counts)) == 3
    assert (rec.fallback.hits, rec.fallback.n) == (1, 5)
    assert rec.cost_usd == pytest.approx(0.10)
    assert rec.cost_per_cell_usd == pytest.approx(0.02)
    assert rec.agent_agreement is not None
    assert (rec.agent_agreement.agreed, rec.agent_agreement.n) == (4, 6)


def test_v2_and_changed_suggestions() -> None:
    cal = _fed()
    rec = cal.record((sc.TASK, sc.FIELD, "v2"), sc.T0)
    assert (rec.answer_accuracy.hits, rec.answer_accuracy.n) == (2, 2)
    assert rec.classification_kappa == pytest.approx(1.0)
    assert rec.cost_per_cell_usd == pytest.approx(0.05)
    changed = cal.changed_suggestions((sc.TASK, sc.FIELD, "v1"), (sc.TASK, sc.FIELD, "v2"))
    assert (changed.hits, changed.n) == (1, 2)


def test_id_depends_on_figures_not_on_time() -> None:
    cal = _fed()
    group = (sc.TASK, sc.FIELD, "v1")
    later = cal.record(group, sc.T0.replace(year=2027))
    assert cal.record(group, sc.T0).calibration_id == later.calibration_id
    cal.add_adjudication(sc.adjudication("c2", "no", "agent_b_error", "agent_a", minute=30))
    assert cal.record(group, sc.T0).calibration_id != later.calibration_id


def test_dirty_groups() -> None:
    cal = Calibration()
    assert cal.add_result(sc.results()[1]) == {(sc.TASK, sc.FIELD, "v1")}
    assert cal.add_result(sc.results()[1]) == set()  # the same result again: nothing changes
    assert cal.add_adjudication(sc.adjudications()[0]) == {(sc.TASK, sc.FIELD, "v1")}


def test_answers_compare_by_canonical_value_when_the_schema_is_known() -> None:
    boolean = AnswerSchema(type="boolean", enum=(True, False, "no_info"))
    assert same_answer("yes", True, boolean)
    assert not same_answer("yes", False, boolean)
    assert not same_answer("yes", True, None)  # unknown criterion: exact JSON spelling
    assert same_answer(["b", "a"], ["a", "b"], None)


def test_a_third_agents_error_is_its_own_class_in_the_confusion() -> None:
    """Three agents (issue 16 item 2): a reviewer who blames the third agent is counted
    under ``agent_error:third``, and "who was right" compares by agent ids."""
    agents = ("default", "skeptical", "third")
    cal = Calibration()
    for cell, hint in (("c1", "n_a"), ("c2", "agent_a_error")):
        r = sc.result(cell, "v1", "yes", hint, "both", 0.01)
        cal.add_result(r.model_copy(update={"agents": agents, "correct_agents": agents[:2]}))
    cal.add_adjudication(sc.adjudication("c1", "yes", "n_a", None).model_copy(update={
        "classification": "agent_error", "error_agent": "third",
        "correct_agents": ("default", "skeptical")}))
    cal.add_adjudication(sc.adjudication("c2", "yes", "agent_a_error", "agent_b").model_copy(
        update={"error_agent": "default", "correct_agents": ("skeptical", "third")}))
    rec = cal.record(("T", "f", "v1"), sc.T0)
    assert rec.agents == agents and rec.confusion.labels[-1] == "agent_error:third"
    row = rec.confusion.labels.index("agent_error:third")
    assert rec.confusion.counts[row][rec.confusion.labels.index("n_a")] == 1
    assert (rec.agent_correctness_agreement.hits, rec.agent_correctness_agreement.n) == (1, 2)
    two = _fed().record(("T", "f", "v1"), sc.T0)  # two-agent groups keep their five labels
    assert two.confusion.labels == CLASSIFICATIONS
