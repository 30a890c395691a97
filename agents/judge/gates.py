"""The patient's answer to a gate criterion, for the judge of a gated criterion. Pure.

The detector publishes one :class:`CellOutcome` per decided cell; when the agents agree, it
carries their shared canonical answer (``agreed_answer``); a reviewer's adjudication of the
gate cell (its ``final_answer``) outranks that. The judge worker follows the cell-outcomes
and adjudications topics into a :class:`GateAnswers` store keyed by cell key
(``task|patient|criterion``), keeping only the criteria some other criterion is gated on, so
its size is bounded by patients x gate criteria. A job may arrive before its gate cell is
decided (or the agents may disagree on the gate): the prompt then says the answer is not
known, and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from schemas.calibration import Adjudication
from schemas.chart_review import CellOutcome, cell_key
from schemas.skill import Criterion, Skill
from streams.detect.normalize import Invalid, canonicalize

#: The outcome of a gate cell not decided yet (no cell outcome seen for it).
PENDING = "pending"
#: A gate cell a reviewer adjudicated (its final answer outranks the agents').
ADJUDICATED = "adjudicated"


@dataclass(frozen=True)
class GateAnswer:
    """How the gate cell was decided: ``answer`` is meaningful only when ``decided``."""

    field_id: str
    outcome: str
    decided: bool
    answer: Any = None
    #: whether ``answer`` is one of the gate's values (None: not decided or not comparable)
    met: bool | None = None


def gate_met(answer: Any, criterion: Criterion, skill: Skill) -> bool | None:
    """Whether a gate answer satisfies ``criterion``'s gate, compared under the gate
    criterion's answer schema (``true`` meets a ``"yes"`` gate); None if it cannot tell."""
    gate = criterion.gate
    if gate is None:
        return None
    gate_criterion = skill.criteria.get(gate.field_id)
    if gate_criterion is None:
        return answer in gate.values
    schema = gate_criterion.answer_schema
    canon = canonicalize(answer, schema)
    if isinstance(canon, Invalid):
        return None
    return any(canonicalize(v, schema) == canon for v in gate.values)


class GateAnswers:
    """The latest outcome of every gate cell, keyed by cell key."""

    def __init__(self, skill: Skill) -> None:
        self.skill = skill
        self.fields = frozenset(c.gate.field_id for c in skill.criteria.values() if c.gate)
        self._latest: dict[str, CellOutcome] = {}
        self._adjudicated: dict[str, Adjudication] = {}

    def add_adjudication(self, a: Adjudication) -> bool:
        """Keep a reviewer's verdict on a gate cell (the latest one per cell): it outranks
        the agents' agreement."""
        if a.field_id not in self.fields:
            return False
        old = self._adjudicated.get(a.key)
        if old is not None and old.adjudicated_at > a.adjudicated_at:
            return False
        self._adjudicated[a.key] = a
        return True

    def add(self, outcome: CellOutcome) -> bool:
        """Keep ``outcome`` if it is of a gate criterion and not older than the stored one."""
        if outcome.field_id not in self.fields:
            return False
        old = self._latest.get(outcome.key)
        if old is not None and _at(old) > _at(outcome):
            return False
        self._latest[outcome.key] = outcome
        return True

    def __len__(self) -> int:
        return len(self._latest.keys() | self._adjudicated.keys())

    def lookup(self, task_id: str, patient_id: str, criterion: Criterion) -> GateAnswer | None:
        """The gate answer for ``criterion`` of this patient (outcome :data:`PENDING` when its
        gate cell has no outcome yet); None when the criterion has no gate."""
        if criterion.gate is None:
            return None
        key = cell_key(task_id, patient_id, criterion.gate.field_id)
        adj = self._adjudicated.get(key)
        if adj is not None and adj.final_answer is not None:
            return GateAnswer(adj.field_id, ADJUDICATED, True, adj.final_answer,
                              gate_met(adj.final_answer, criterion, self.skill))
        o = self._latest.get(key)
        if o is None:
            return GateAnswer(criterion.gate.field_id, PENDING, False)
        decided = o.outcome in ("agreement", "type_drift", "agent_missing") \
            and o.job_kind in (None, "type_drift") and o.agreed_answer is not None
        if not decided:
            return GateAnswer(o.field_id, o.outcome, False)
        return GateAnswer(o.field_id, o.outcome, True, o.agreed_answer,
                          gate_met(o.agreed_answer, criterion, self.skill))


def _at(o: CellOutcome) -> datetime:
    return o.decided_at
