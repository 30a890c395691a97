"""Kappa, accuracy and confusion against examples worked out by hand (arithmetic in comments)."""

from __future__ import annotations

import pytest

from agents.calibrate.metrics import Ratio, agreement, cohen_kappa, confusion


def _from_table(labels: list[str], table: list[list[int]]) -> list[tuple[str, str]]:
    """Expand a confusion table (rows = reference, columns = candidate) into pairs."""
    return [(r, c) for i, r in enumerate(labels) for j, c in enumerate(labels)
            for _ in range(table[i][j])]


def test_two_by_two() -> None:
    #            cand yes  cand no | row
    # ref yes        20        5   |  25
    # ref no         10       15   |  25
    # column         30       20   |  50
    # p_o = (20 + 15) / 50 = 0.70
    # p_e = (25*30 + 25*20) / 50^2 = 1250 / 2500 = 0.50
    # kappa = (0.70 - 0.50) / (1 - 0.50) = 0.40
    pairs = _from_table(["yes", "no"], [[20, 5], [10, 15]])
    assert cohen_kappa(pairs) == pytest.approx(0.40)
    assert agreement(pairs) == Ratio(35, 50)
    assert agreement(pairs).value == pytest.approx(0.70)
    assert confusion(pairs, ["yes", "no"]) == [[20, 5], [10, 15]]


def test_four_classes() -> None:
    #          a  b  c  d | row
    # a        4  1  0  0 |  5
    # b        0  3  1  1 |  5
    # c        1  0  4  0 |  5
    # d        0  0  1  4 |  5
    # column   5  4  6  5 | 20
    # p_o = (4 + 3 + 4 + 4) / 20 = 15/20 = 0.75
    # p_e = (5*5 + 5*4 + 5*6 + 5*5) / 20^2 = 100 / 400 = 0.25
    # kappa = (0.75 - 0.25) / 0.75 = 2/3
    labels = ["a", "b", "c", "d"]
    table = [[4, 1, 0, 0], [0, 3, 1, 1], [1, 0, 4, 0], [0, 0, 1, 4]]
    pairs = _from_table(labels, table)
    assert cohen_kappa(pairs) == pytest.approx(2 / 3)
    assert confusion(pairs, labels) == table


def test_perfect_agreement_is_one() -> None:
    # p_o = 1; p_e = (2*2 + 1*1) / 9 = 5/9; kappa = (1 - 5/9) / (1 - 5/9) = 1
    assert cohen_kappa([("x", "x"), ("x", "x"), ("y", "y")]) == pytest.approx(1.0)


def test_chance_agreement_is_zero() -> None:
    # ref x x y y, cand x y x y: p_o = 2/4 = 0.5; p_e = (2*2 + 2*2) / 16 = 0.5; kappa = 0
    assert cohen_kappa([("x", "x"), ("x", "y"), ("y", "x"), ("y", "y")]) == pytest.approx(0.0)


def test_systematic_disagreement_is_negative() -> None:
    # p_o = 0; p_e = (1*1 + 1*1) / 4 = 0.5; kappa = (0 - 0.5) / 0.5 = -1
    assert cohen_kappa([("x", "y"), ("y", "x")]) == pytest.approx(-1.0)


def test_candidate_label_unknown_to_reference() -> None:
    # ref x x, cand x z: p_o = 1/2; p_e = (2*1 + 0*1) / 4 = 0.5 (z never used by ref);
    # kappa = (0.5 - 0.5) / 0.5 = 0
    assert cohen_kappa([("x", "x"), ("x", "z")]) == pytest.approx(0.0)


def test_one_rater_single_class_is_defined() -> None:
    # ref x x x x, cand x x x y: p_o = 3/4; p_e = (4*3) / 16 = 0.75; kappa = 0 (no skill shown)
    assert cohen_kappa([("x", "x")] * 3 + [("x", "y")]) == pytest.approx(0.0)


def test_degenerate_cases_are_none() -> None:
    # no items: nothing measured
    assert cohen_kappa([]) is None
    assert agreement([]).value is None
    # both raters always "x": p_e = (3*3) / 9 = 1, the formula is 0/0 -> None (undefined);
    # the raw agreement is still reported
    same = [("x", "x")] * 3
    assert cohen_kappa(same) is None
    assert agreement(same).value == 1.0


def test_confusion_rejects_unknown_label() -> None:
    with pytest.raises(ValueError):
        confusion([("x", "q")], ["x", "y"])
