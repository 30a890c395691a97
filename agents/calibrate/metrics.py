"""Agreement statistics as pure functions: accuracy, Cohen's kappa, confusion matrices.

Every function takes paired labels ``(reference, candidate)``: the human reviewer first, the
judge second. Nothing here knows about Kafka or about the judge's schema.

Degenerate cases (defined, not errors):

* no pairs at all: accuracy and kappa are ``None`` (nothing was measured);
* expected agreement ``p_e == 1`` (both raters used one and the same single class for every
  item): kappa is ``None``. Cohen's formula is 0/0 there; reporting 1.0 would claim skill the
  data cannot show, so the caller shows the raw agreement (which is then 1.0) instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

L = TypeVar("L", bound=Hashable)


@dataclass(frozen=True)
class Ratio:
    """``hits`` of ``n``; ``value`` is None when ``n`` is 0."""

    hits: int
    n: int

    @property
    def value(self) -> float | None:
        return self.hits / self.n if self.n else None


def agreement(pairs: Iterable[tuple[L, L]]) -> Ratio:
    """How many pairs have equal members (observed agreement, or accuracy vs a reference)."""
    items = list(pairs)
    return Ratio(sum(1 for a, b in items if a == b), len(items))


def confusion(pairs: Iterable[tuple[L, L]], labels: Sequence[L]) -> list[list[int]]:
    """Counts, rows = reference label, columns = candidate label, in ``labels`` order.

    A label outside ``labels`` is a caller bug and raises ``ValueError``."""
    index = {label: i for i, label in enumerate(labels)}
    table = [[0] * len(labels) for _ in labels]
    for ref, cand in pairs:
        if ref not in index or cand not in index:
            raise ValueError(f"label outside {list(labels)!r}")
        table[index[ref]][index[cand]] += 1
    return table


def cohen_kappa(pairs: Iterable[tuple[L, L]]) -> float | None:
    """Cohen's kappa ``(p_o - p_e) / (1 - p_e)`` of two raters over the same items.

    ``p_o`` is the observed agreement; ``p_e = sum_k (ref_k / n) * (cand_k / n)`` is the
    agreement expected by chance from each rater's own label frequencies. 1 = perfect,
    0 = no better than chance, negative = worse than chance. ``None`` when undefined (no
    items, or ``p_e == 1``; see the module docstring)."""
    items = list(pairs)
    n = len(items)
    if n == 0:
        return None
    ref = Counter(a for a, _ in items)
    cand = Counter(b for _, b in items)
    p_o = sum(1 for a, b in items if a == b) / n
    # integer arithmetic for p_e so that "exactly 1" is exact
    expected = sum(ref[k] * cand.get(k, 0) for k in ref)
    if expected == n * n:
        return None
    p_e = expected / (n * n)
    return (p_o - p_e) / (1 - p_e)
