"""The CalibrationRecord's issue-27 figures on the hand-worked scenario: blind vs verify,
the anchoring difference, the human baseline from second reviews (never ground truth), and
older adjudications (no review_mode, no review_slot) still counted as verify / first."""

from __future__ import annotations

from datetime import timedelta

import pytest
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from agents.calibrate.core import Calibration
from schemas.calibration import Adjudication
from tests.unit.agents.calibrate import scenario as sc

GROUP = (sc.TASK, sc.FIELD, "v1")


def _cal(extra: list[Adjudication]) -> Calibration:
    cal = Calibration()
    for r in sc.results():
        cal.add_result(r)
    for a in [*sc.adjudications(), *extra]:
        cal.add_adjudication(a)
    return cal


def _with(a: Adjudication, **update: object) -> Adjudication:
    return a.model_copy(update=update)


def test_no_blind_cell_no_split_and_no_human_baseline() -> None:
    rec = _cal([]).record(GROUP, sc.T0)
    assert rec.by_review_mode is None and rec.human_agreement is None
    assert rec.answer_accuracy.ci95 == pytest.approx(
        proportion_confint(2, 3, method="wilson"), abs=1e-6)
    assert rec.kappa_ci95 is not None and rec.ac1 is not None


def test_blind_and_verify_cells_are_split_and_differenced() -> None:
    # c1 decided blind (suggested yes, final yes: a hit); c2 (miss) and c3 (hit) verify
    blind = _with(sc.adjudication("c1", "yes", "agent_a_error", "agent_b", minute=30),
                  review_mode="blind")
    rec = _cal([blind]).record(GROUP, sc.T0)
    modes = rec.by_review_mode
    assert modes is not None
    assert (modes.blind.answer_accuracy.hits, modes.blind.answer_accuracy.n) == (1, 1)
    assert (modes.verify.answer_accuracy.hits, modes.verify.answer_accuracy.n) == (1, 2)
    diff = modes.verify_minus_blind
    assert diff.estimate == pytest.approx(0.5 - 1.0)
    assert diff.ci95 == pytest.approx(confint_proportions_2indep(
        1, 2, 1, 1, method="newcomb", compare="diff"), abs=1e-6)
    # the split covers the same cells as the whole
    assert modes.blind.cells_adjudicated + modes.verify.cells_adjudicated == 3


def test_a_second_review_is_the_human_baseline_not_the_ground_truth() -> None:
    # the second reviewer disagrees on c1 (no) and agrees on c3 (no); c2: a second review
    # by the same person does not count as two reviewers
    def second(cell: str, final: str, who: str = "rev-2") -> Adjudication:
        return _with(sc.adjudication(cell, final, "agent_b_error", "agent_a", minute=50),
                     review_slot=2, adjudicator=who)
    cal = _cal([second("c1", "no"), second("c3", "no"), second("c2", "yes", who="rev-1")])
    rec = cal.record(GROUP, sc.T0)
    # ground truth unchanged: the first reviews (c1 yes) -> accuracy still 2/3
    assert (rec.answer_accuracy.hits, rec.answer_accuracy.n) == (2, 3)
    human = rec.human_agreement
    assert human is not None
    assert (human.n, human.percent.hits, human.percent.n) == (2, 1, 2)
    assert human.percent.ci95 == pytest.approx(proportion_confint(1, 2, method="wilson"),
                                               abs=1e-6)
    # classification: c1 (a_err vs b_err), c3 (b_err vs b_err) -> 1 of 2
    assert human.classification_agreement is not None
    assert human.classification_agreement.hits == 1


def test_the_second_review_never_replaces_the_first() -> None:
    later = _with(sc.adjudication("c2", "no", "agent_b_error", "agent_a", minute=90),
                  review_slot=2, adjudicator="rev-2")
    cal = _cal([later])
    assert cal.adjudications["T|c2|f"].final_answer == "yes"
    assert cal.second["T|c2|f"].final_answer == "no"


def test_an_older_adjudication_reads_as_verify_first_review() -> None:
    a = Adjudication.model_validate_json(sc.adjudication("c1", "yes", "n_a", None)
                                         .model_dump_json(exclude={"review_mode",
                                                                   "review_slot"}))
    assert a.review_mode is None and a.review_slot is None
    cal = _cal([_with(a, adjudicated_at=sc.T0 + timedelta(hours=1))])
    assert cal.adjudications["T|c1|f"] == _with(a, adjudicated_at=sc.T0 + timedelta(hours=1))


def test_a_new_figure_alone_changes_the_calibration_id() -> None:
    """The id hashes every figure: a second review changes only the human baseline, and the
    worker must still republish (its ledger is by id). So the ids of records computed
    before issue 27 changed once (tests/data/recorded_ids.json)."""
    before = _cal([]).record(GROUP, sc.T0)
    second = _with(sc.adjudication("c1", "no", "n_a", None, minute=50), review_slot=2,
                   adjudicator="rev-2")
    after = _cal([second]).record(GROUP, sc.T0)
    assert after.answer_accuracy == before.answer_accuracy
    assert after.human_agreement is not None and before.human_agreement is None
    assert after.calibration_id != before.calibration_id
