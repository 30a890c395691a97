"""Every statistic of agents.calibrate.intervals / figures against an independent
implementation (statsmodels, scikit-learn, irrCAC: test-only dependencies) on tables that
include the degenerate cases: no items, one class only, perfect agreement, none at all."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from irrCAC.raw import CAC
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from agents.calibrate.figures import agents_agreement, newcombe
from agents.calibrate.intervals import ac1_counts, ac1_pairs, fleiss_kappa, kappa_with_ci, wilson
from agents.calibrate.metrics import Ratio, cohen_kappa

PAIRS: dict[str, list[tuple[str, str]]] = {
    "mixed": [("a", "a"), ("a", "b"), ("b", "b"), ("c", "c"), ("a", "a"), ("b", "a"),
              ("a", "a"), ("a", "c")],
    "skewed": [("n", "n")] * 18 + [("n", "y"), ("y", "n")],  # the kappa paradox
    "perfect": [("y", "y"), ("n", "n"), ("y", "y"), ("y", "y")],
    "one class only": [("y", "y")] * 5,
    "never agree": [("y", "n"), ("n", "y"), ("y", "n")],
    "one rater constant": [("y", "y"), ("y", "n"), ("y", "n"), ("y", "y")],
    "single item": [("y", "n")],
    "two items": [("y", "y"), ("n", "y")],
}


def _table(pairs: list[tuple[str, str]]) -> np.ndarray:
    labels = sorted({x for p in pairs for x in p})
    return np.array([[sum(p == (i, j) for p in pairs) for j in labels] for i in labels])


@pytest.mark.parametrize("hits,n", [(0, 1), (1, 1), (0, 5), (5, 5), (3, 6), (2, 3), (1, 40),
                                    (97, 100), (0, 1000)])
def test_wilson_is_statsmodels_wilson(hits: int, n: int) -> None:
    low, high = proportion_confint(hits, n, method="wilson")
    assert wilson(hits, n) == pytest.approx((max(0.0, low), min(1.0, high)), abs=1e-6)


def test_wilson_of_nothing_is_none() -> None:
    assert wilson(0, 0) is None


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_kappa_and_its_interval_are_statsmodels_and_sklearn(name: str) -> None:
    pairs = PAIRS[name]
    kappa, ci = kappa_with_ci(pairs)
    table = _table(pairs)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        ref = cohens_kappa(table)
        sk = cohen_kappa_score([a for a, _ in pairs], [b for _, b in pairs])
    if math.isnan(sk):  # p_e == 1: undefined, here as there
        assert (kappa, ci) == (None, None)
        assert cohen_kappa(pairs) is None
        return
    assert kappa == pytest.approx(sk) == pytest.approx(ref.kappa)
    assert kappa == pytest.approx(cohen_kappa(pairs))  # the old figure is the same number
    assert ci == pytest.approx((max(-1, ref.kappa_low), min(1, ref.kappa_upp)), abs=1e-6)


def test_kappa_of_nothing_is_none() -> None:
    assert kappa_with_ci([]) == (None, None)


def test_perfect_agreement_has_a_zero_width_kappa_interval() -> None:
    assert kappa_with_ci(PAIRS["perfect"]) == (1.0, (1.0, 1.0))


@pytest.mark.parametrize("name", sorted(PAIRS))
@pytest.mark.parametrize("scale", [(), ("y", "n", "a", "b", "c", "unused")])
def test_ac1_is_irrcac_gwet(name: str, scale: tuple[str, ...]) -> None:
    pairs = PAIRS[name]
    categories = list(dict.fromkeys([*scale, *sorted({x for p in pairs for x in p})]))
    ac1, ci = ac1_pairs(pairs, scale)
    if len(categories) < 2:  # AC1 needs a scale of two categories at least
        assert (ac1, ci) == (None, None)
        return
    if len(pairs) < 2:  # irrCAC divides by n - 1 here; by hand: p_a 0, p_e 1/(q-1)...
        q = len(categories)
        assert ac1 == pytest.approx((0 - 2 * 0.5 * 0.5 / (q - 1)) / (1 - 0.5 / (q - 1)))
        assert ci is None
        return
    frame = pd.DataFrame({"r1": [a for a, _ in pairs], "r2": [b for _, b in pairs]})
    est = CAC(frame, categories=categories).gwet()["est"]
    assert ac1 == pytest.approx(est["coefficient_value"], abs=1e-5)
    assert ci is not None
    # irrCAC reports the SE (its interval uses Student's t; ours the normal quantile)
    se = (ci[1] - ci[0]) / (2 * 1.959963984540054)
    if ci[0] > -1 and ci[1] < 1:  # not clipped
        assert se == pytest.approx(est["se"], abs=1e-5)


def test_ac1_survives_skewed_classes_where_kappa_collapses() -> None:
    kappa, _ = kappa_with_ci(PAIRS["skewed"])
    ac1, _ = ac1_pairs(PAIRS["skewed"])
    assert kappa is not None and ac1 is not None
    assert kappa < 0 < 0.85 < ac1  # 90% agreement: kappa -0.05, AC1 0.89


def test_ac1_of_nothing_is_none() -> None:
    assert ac1_pairs([]) == (None, None)
    assert ac1_counts([[0, 0]]) == (None, None)


TABLES = {  # subjects x categories, 3 or 4 raters
    "mixed": [[3, 0, 0], [2, 1, 0], [0, 3, 0], [1, 1, 1], [0, 0, 3], [3, 0, 0]],
    "perfect": [[4, 0], [0, 4], [4, 0]],
    "one class only": [[3, 0], [3, 0]],
    "always split": [[2, 2], [2, 2], [2, 2]],
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_fleiss_kappa_is_statsmodels(name: str) -> None:
    table = TABLES[name]
    with np.errstate(all="ignore"):
        ref = sm_fleiss(np.array(table), method="fleiss")
    got = fleiss_kappa(table)
    assert (got is None) if math.isnan(ref) else got == pytest.approx(ref)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_ac1_of_many_raters_is_irrcac(name: str) -> None:
    table = TABLES[name]
    raters = sum(table[0])
    frame = pd.DataFrame([[c for c, k in enumerate(row) for _ in range(k)] for row in table],
                         columns=[f"r{i}" for i in range(raters)])
    est = CAC(frame, categories=list(range(len(table[0])))).gwet()["est"]
    assert ac1_counts(table)[0] == pytest.approx(est["coefficient_value"], abs=1e-5)


def test_fleiss_needs_complete_subjects() -> None:
    assert fleiss_kappa([]) is None
    with pytest.raises(ValueError):
        fleiss_kappa([[2, 0], [1, 2]])


@pytest.mark.parametrize("a,b", [((9, 10), (5, 10)), ((4, 4), (3, 6)), ((0, 5), (5, 5)),
                                 ((10, 20), (10, 20)), ((1, 1), (0, 1))])
def test_anchoring_difference_is_statsmodels_newcombe(a: tuple[int, int],
                                                       b: tuple[int, int]) -> None:
    got = newcombe(Ratio(*a), Ratio(*b))
    low, high = confint_proportions_2indep(a[0], a[1], b[0], b[1], method="newcomb",
                                           compare="diff")
    assert got.estimate == pytest.approx(a[0] / a[1] - b[0] / b[1])
    assert got.ci95 == pytest.approx((low, high), abs=1e-6)
    assert newcombe(Ratio(0, 0), Ratio(*b)).ci95 is None


def test_three_agents_fleiss_and_pairs_by_id() -> None:
    answers = {"c1": {"x": "1", "y": "1", "z": "1"}, "c2": {"x": "1", "y": "2", "z": "1"},
               "c3": {"x": "2", "y": "2", "z": "2"}, "c4": {"x": "1", "y": "2"}}
    raters, cells, kappa, pairs = agents_agreement(answers, ("x", "y", "z"))
    assert (raters, cells) == (3, 3)  # c4 lacks z: only complete cells enter Fleiss
    assert kappa == pytest.approx(sm_fleiss(np.array([[3, 0], [2, 1], [0, 3]])))
    by = {p.agents: p for p in pairs}
    assert by[("x", "y")].agreement.hits == 2 and by[("x", "y")].agreement.n == 4
    assert by[("x", "z")].agreement.hits == 3 and by[("x", "z")].agreement.n == 3
    assert by[("x", "z")].kappa == 1.0
