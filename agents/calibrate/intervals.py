"""Agreement statistics with their uncertainty, as pure functions (no numpy, no clock).

Every two-rater function takes paired labels ``(reference, candidate)`` like
:mod:`agents.calibrate.metrics`. How each figure is computed, and why, is in
docs/calibration.md; the tests check each one against an independent implementation
(statsmodels, scikit-learn, irrCAC) on tables that include the degenerate cases:

* ``n == 0``: every figure and interval is ``None`` (nothing was measured);
* one class only (``p_e == 1``): kappa and its interval are ``None`` (0/0); AC1 is defined;
* perfect agreement with ``p_e < 1``: kappa is 1 and its large-sample interval collapses to
  ``[1, 1]`` (the SE is 0); the Wilson interval of the agreement rate stays honest, so
  decisions use that one (docs/calibration.md).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

L = TypeVar("L", bound=Hashable)
Interval = tuple[float, float]
#: The two-sided 95% normal quantile.
Z95 = 1.959963984540054


def _clip(low: float, high: float, lo: float = -1.0, hi: float = 1.0) -> Interval:
    return (round(max(lo, low), 6), round(min(hi, high), 6))


def wilson(hits: int, n: int, z: float = Z95) -> Interval | None:
    """Wilson score interval of ``hits / n`` (Wilson 1927): unlike the Wald interval it
    stays inside [0, 1] and is not zero-width at 0 or n hits. None when ``n`` is 0."""
    if n <= 0:
        return None
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return _clip(centre - half, centre + half, 0.0, 1.0)


def _table(pairs: Sequence[tuple[L, L]]) -> tuple[list[L], dict[tuple[L, L], int]]:
    labels = sorted({x for p in pairs for x in p}, key=repr)
    return labels, Counter(pairs)


def kappa_with_ci(pairs: Iterable[tuple[L, L]], z: float = Z95
                  ) -> tuple[float | None, Interval | None]:
    """Cohen's kappa and its 95% interval ``kappa +/- z * SE``, SE the large-sample standard
    error of Fleiss, Cohen & Everitt (1969) (statsmodels' ``std_kappa``), clipped to
    [-1, 1]. (None, None) with no pairs or ``p_e == 1``."""
    items = list(pairs)
    n = len(items)
    if n == 0:
        return None, None
    labels, cells = _table(items)
    row = {k: sum(cells[(k, c)] for c in labels) / n for k in labels}
    col = {k: sum(cells[(r, k)] for r in labels) / n for k in labels}
    expected = sum(row[k] * col[k] for k in labels)
    if math.isclose(expected, 1.0, rel_tol=0, abs_tol=1e-12):
        return None, None
    p_o = sum(cells[(k, k)] for k in labels) / n
    kappa = (p_o - expected) / (1 - expected)
    term_a = sum(cells[(k, k)] / n * (1 - (row[k] + col[k]) * (1 - kappa)) ** 2
                 for k in labels)
    term_b = (1 - kappa) ** 2 * sum(cells[(i, j)] / n * (col[i] + row[j]) ** 2
                                    for i in labels for j in labels if i != j)
    term_c = (kappa - expected * (1 - kappa)) ** 2
    se = math.sqrt(max(0.0, (term_a + term_b - term_c) / (1 - expected) ** 2 / n))
    return kappa, _clip(kappa - z * se, kappa + z * se)


def ac1_counts(counts: Sequence[Sequence[int]], z: float = Z95
               ) -> tuple[float | None, Interval | None]:
    """Gwet's AC1 (Gwet 2008) from a subjects x categories table of how many raters put each
    subject in each category (any number of raters, possibly varying), with its 95% interval
    ``ac1 +/- z * SE`` (SE: Gwet's variance, as irrCAC's ``gwet()`` computes it; clipped to
    [-1, 1]). ``q``, the number of categories, is the table's width: pass every category of
    the scale, used or not. (None, None) without a subject rated twice or with ``q < 2``."""
    rows = [list(r) for r in counts if sum(r) > 0]
    n, q = len(rows), len(rows[0]) if rows else 0
    rated = [r for r in rows if sum(r) >= 2]
    if not rated or q < 2:
        return None, None
    n2 = len(rated)
    ri = [sum(r) for r in rows]
    agree_i = [sum(c * (c - 1) for c in r) / (t * (t - 1)) if t >= 2 else 0.0
               for r, t in zip(rows, ri, strict=True)]
    pa = sum(agree_i) / n2
    pi = [sum(r[k] / t for r, t in zip(rows, ri, strict=True)) / n for k in range(q)]
    pe = sum(p * (1 - p) for p in pi) / (q - 1)
    ac1 = (pa - pe) / (1 - pe)
    if n < 2:
        return ac1, None
    out = []
    for r, t, a in zip(rows, ri, agree_i, strict=True):
        ac1_i = (n / n2) * (a - (pe if t >= 2 else 0.0)) / (1 - pe)
        pe_i = sum(r[k] / t * (1 - pi[k]) for k in range(q)) / (q - 1)
        out.append(ac1_i - 2 * (1 - ac1) * (pe_i - pe) / (1 - pe))
    var = sum((x - ac1) ** 2 for x in out) / (n * (n - 1))
    se = math.sqrt(var)
    return ac1, _clip(ac1 - z * se, ac1 + z * se)


def ac1_pairs(pairs: Iterable[tuple[L, L]], categories: Sequence[L] = ()
              ) -> tuple[float | None, Interval | None]:
    """Gwet's AC1 of two raters over paired labels; ``categories``: the scale (labels seen
    in the pairs are added)."""
    items = list(pairs)
    scale = list(dict.fromkeys([*categories, *sorted({x for p in items for x in p},
                                                     key=repr)]))
    index = {c: i for i, c in enumerate(scale)}
    table = []
    for a, b in items:
        row = [0] * len(scale)
        row[index[a]] += 1
        row[index[b]] += 1
        table.append(row)
    return ac1_counts(table)


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa (Fleiss 1971) from a subjects x categories table in which every subject
    has the same number ``m >= 2`` of ratings. None with no subjects or ``P_e == 1``;
    ValueError when the rows' totals differ (the caller keeps complete subjects only)."""
    rows = [list(r) for r in counts]
    if not rows:
        return None
    m = sum(rows[0])
    if m < 2 or any(sum(r) != m for r in rows):
        raise ValueError("every subject needs the same number (>= 2) of ratings")
    n = len(rows)
    p_bar = sum((sum(c * c for c in r) - m) / (m * (m - 1)) for r in rows) / n
    p_j = [sum(r[k] for r in rows) / (n * m) for k in range(len(rows[0]))]
    p_e = sum(p * p for p in p_j)
    if math.isclose(p_e, 1.0, rel_tol=0, abs_tol=1e-12):
        return None
    return (p_bar - p_e) / (1 - p_e)
