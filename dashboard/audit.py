"""Which cells are reviewed blind or twice, and who holds a cell (issue 27). Pure.

A cell's draw is a number in [0, 1) from sha256 of its key (task|patient|criterion), so the
same cells are chosen on every replay, restart and page server, whatever the arrival order.
The cell is **blind** when its draw is below ``blind_share`` and **double-reviewed** when it
is below ``double_share``: the double-review cells are the blind ones first (all of them
blind while ``double_share <= blind_share``). Each draw is independent, so every criterion
(stratum) gets the share in expectation and no criterion is left out by construction; the
realised count per criterion is binomial (docs/calibration.md).

A **claim** is a reviewer's hold on a cell while they work it: it expires after
``claim_seconds``, a cell holds as many claims as it has review slots left, and a
reviewer's own save releases theirs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import lru_cache

#: The redacted fields of a row: the judge's answer and everything that hints at it.
JUDGE_FIELDS = ("suggested_answer", "confidence", "classification_hint", "error_agent")


@lru_cache(maxsize=65536)
def draw(cell: str, purpose: bytes = b"judgeflow-audit") -> float:
    """The cell's deterministic uniform draw in [0, 1); another ``purpose`` gives another
    draw, independent of the audit's (the demo's simulated second reviewer). Cached: the
    queue asks it of every cell on every page refresh."""
    digest = hashlib.sha256(purpose + b"|" + cell.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0 ** 64


@dataclass(frozen=True)
class AuditPlan:
    blind_share: float = 0.0
    double_share: float = 0.0

    def __post_init__(self) -> None:
        for share in (self.blind_share, self.double_share):
            if not 0.0 <= share <= 1.0:
                raise ValueError("a review share must be between 0 and 1")

    def blind(self, cell: str) -> bool:
        return draw(cell) < self.blind_share

    def slots(self, cell: str) -> int:
        """How many independent reviews the cell needs: 2 for a double-review cell."""
        return 2 if draw(cell) < self.double_share else 1

    def mode(self, cell: str) -> str:
        return "blind" if self.blind(cell) else "verify"


@dataclass
class Claims:
    """Cell -> reviewer -> when their claim expires (monotonic seconds, passed in)."""

    seconds: float = 900.0
    held: dict[str, dict[str, float]] = field(default_factory=dict)

    def holders(self, cell: str, now: float) -> set[str]:
        live = {r: t for r, t in self.held.get(cell, {}).items() if t > now}
        if live:
            self.held[cell] = live
        else:
            self.held.pop(cell, None)
        return set(live)

    def free_for(self, cell: str, reviewer: str | None, open_slots: int, now: float) -> bool:
        """Whether ``reviewer`` may work the cell: they hold it, or a slot is unclaimed."""
        holders = self.holders(cell, now)
        return reviewer in holders or len(holders) < open_slots

    def claim(self, cell: str, reviewer: str, open_slots: int, now: float) -> bool:
        """Hold (or renew) the cell for ``reviewer``; False when others hold every open slot."""
        if not self.free_for(cell, reviewer, open_slots, now):
            return False
        self.held.setdefault(cell, {})[reviewer] = now + self.seconds
        return True

    def release(self, cell: str, reviewer: str) -> None:
        self.held.get(cell, {}).pop(reviewer, None)

    def by_reviewer(self, now: float) -> dict[str, int]:
        out: dict[str, int] = {}
        for cell in list(self.held):
            for r in self.holders(cell, now):
                out[r] = out.get(r, 0) + 1
        return out
