"""Decode the calibrate worker's four inputs and route them into a :class:`Calibration`.

A malformed adjudication is a :class:`BadRecord` (it goes to the adjudications DLQ: people
type these), and so is one naming a criterion the skill does not have (``unknown_criterion``)
or a task no cell outcome or judge result names (``unknown_task``): it could never be
compared with anything, and silently keeping it would hide a reviewer's typo. That holds for
what was on the topics at start; an adjudication read later (or at start, before any cell
was decided) waits for its task's first outcome or result, up to :data:`MAX_WAITING`. A malformed
judge result or cell outcome is skipped and counted: those topics are written by our own
workers and have no DLQ of their own.
"""

from __future__ import annotations

import logging
from collections.abc import Set
from typing import Any

from agents.calibrate.core import Calibration, Group
from schemas.calibration import Adjudication
from schemas.chart_review import CellOutcome, JudgeJob, JudgeResult
from streams.decode import decode_record
from streams.errors import BadRecord
from streams.settings import TopicSettings

log = logging.getLogger(__name__)
#: Live adjudications of a task not seen yet, kept until its first outcome or result (a
#: reviewer's decision may be read before the cell it decides); beyond this, dead-lettered.
MAX_WAITING = 10_000


def check_adjudication(a: Adjudication, criteria: Set[str] | None, tasks: Set[str]) -> None:
    """Refuse an adjudication of an unknown criterion (when a skill is loaded: ``criteria``)
    or task; the message names the field, never its value (the sender typed it)."""
    if criteria is not None and a.field_id not in criteria:
        raise BadRecord("unknown_criterion", "field_id is not a criterion of the loaded skill")
    if a.task_id not in tasks:
        raise BadRecord("unknown_task", "task_id is not the task of any decided cell "
                        "(no cell outcome or judge result names it)")


class Feeder:
    def __init__(self, calibration: Calibration, topics: TopicSettings,
                 criteria: Set[str] | None = None) -> None:
        self.cal = calibration
        self.topics = topics
        self.skipped = 0
        #: the skill's criteria (None: no skill loaded, criteria not checked)
        self.criteria = criteria
        #: tasks named by a cell outcome or judge result read so far
        self.tasks: set[str] = set()
        #: True once everything written before the start was read (the worker sets it): an
        #: adjudication of an unseen task then waits for it instead of being refused
        self.live = False
        self.waiting: dict[str, list[Adjudication]] = {}

    def _known(self, task_id: str) -> set[Group]:
        """Note ``task_id`` as known; the adjudications that waited for it count now."""
        self.tasks.add(task_id)
        groups: set[Group] = set()
        for a in self.waiting.pop(task_id, ()):
            groups |= self.cal.add_adjudication(a)
        return groups

    def feed(self, rec: Any) -> set[Group]:
        """Route one consumer record; raises BadRecord only for adjudications."""
        t = self.topics
        if rec.topic == t.adjudications:
            adjudication = decode_record(Adjudication, rec.value)
            waiting = sum(len(v) for v in self.waiting.values())
            if (self.live and adjudication.task_id not in self.tasks
                    and waiting < MAX_WAITING):
                check_adjudication(adjudication, self.criteria, {adjudication.task_id})
                self.waiting.setdefault(adjudication.task_id, []).append(adjudication)
                return set()
            check_adjudication(adjudication, self.criteria, self.tasks)
            return self.cal.add_adjudication(adjudication)
        try:
            if rec.topic == t.judge_results:
                result = decode_record(JudgeResult, rec.value)
                return self._known(result.task_id) | self.cal.add_result(result)
            if rec.topic == t.cell_outcomes:
                outcome = decode_record(CellOutcome, rec.value)
                return self._known(outcome.task_id) | self.cal.add_outcome(outcome)
            if rec.topic == t.judge_jobs:
                return self.cal.add_job(decode_record(JudgeJob, rec.value))
        except BadRecord as exc:
            self.skipped += 1
            log.warning("calibrate: skipped %s[%d]@%d: %s", rec.topic, rec.partition,
                        rec.offset, exc.error_type)
        return set()
