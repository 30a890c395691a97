"""Decode the calibrate worker's three inputs and route them into a :class:`Calibration`.

A malformed adjudication is a :class:`BadRecord` (it goes to the adjudications DLQ: people
type these), and so is one naming a criterion the skill does not have (``unknown_criterion``)
or a task no cell outcome or judge result names (``unknown_task``): it could never be
compared with anything, and silently keeping it would hide a reviewer's typo. A malformed
judge result or cell outcome is skipped and counted: those topics are written by our own
workers and have no DLQ of their own.
"""

from __future__ import annotations

import logging
from collections.abc import Set
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from agents.calibrate.core import Calibration, Group
from schemas.calibration import Adjudication
from schemas.chart_review import CellOutcome, JudgeResult
from schemas.errors import describe_record
from streams.errors import BadRecord
from streams.json_depth import depth_reason, too_deep
from streams.settings import TopicSettings

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)


def decode(model: type[M], value: bytes | None) -> M:
    """Validate one record; the error names fields and error types, never values (PHI)."""
    try:
        orjson.loads(value or b"")
    except orjson.JSONDecodeError:
        depth = too_deep(value)
        if depth is not None:
            raise BadRecord("schema_error", f"{model.__name__} invalid: {depth_reason(depth)}"
                            ) from None
        raise BadRecord("invalid_json", f"not a JSON {model.__name__}") from None
    try:
        return model.model_validate_json(value or b"")
    except ValidationError as exc:
        # parsed by orjson above, yet too deep for pydantic's own JSON parser
        depth = too_deep(value) if any(e["type"] == "json_invalid" for e in exc.errors(
            include_input=False)) else None
        if depth is not None:
            raise BadRecord("schema_error", f"{model.__name__} invalid: {depth_reason(depth)}"
                            ) from None
        raise BadRecord("schema_error", f"{exc.error_count()} validation error(s): "
                        + describe_record(exc, root="")) from None


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

    def feed(self, rec: Any) -> set[Group]:
        """Route one consumer record; raises BadRecord only for adjudications."""
        t = self.topics
        if rec.topic == t.adjudications:
            adjudication = decode(Adjudication, rec.value)
            check_adjudication(adjudication, self.criteria, self.tasks)
            return self.cal.add_adjudication(adjudication)
        try:
            if rec.topic == t.judge_results:
                result = decode(JudgeResult, rec.value)
                self.tasks.add(result.task_id)
                return self.cal.add_result(result)
            if rec.topic == t.cell_outcomes:
                outcome = decode(CellOutcome, rec.value)
                self.tasks.add(outcome.task_id)
                return self.cal.add_outcome(outcome)
        except BadRecord as exc:
            self.skipped += 1
            log.warning("calibrate: skipped %s[%d]@%d: %s", rec.topic, rec.partition,
                        rec.offset, exc.error_type)
        return set()
