"""Decode the calibrate worker's three inputs and route them into a :class:`Calibration`.

A malformed adjudication is a :class:`BadRecord` (it goes to the adjudications DLQ: people
type these). A malformed judge result or cell outcome is skipped and counted: those topics
are written by our own workers and have no DLQ of their own.
"""

from __future__ import annotations

import logging
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from agents.calibrate.core import Calibration, Group
from schemas.calibration import Adjudication
from schemas.chart_review import CellOutcome, JudgeResult
from schemas.errors import describe
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
                        + describe(exc, limit=5, reason="type", root="")) from None


class Feeder:
    def __init__(self, calibration: Calibration, topics: TopicSettings) -> None:
        self.cal = calibration
        self.topics = topics
        self.skipped = 0

    def feed(self, rec: Any) -> set[Group]:
        """Route one consumer record; raises BadRecord only for adjudications."""
        t = self.topics
        if rec.topic == t.adjudications:
            return self.cal.add_adjudication(decode(Adjudication, rec.value))
        try:
            if rec.topic == t.judge_results:
                return self.cal.add_result(decode(JudgeResult, rec.value))
            if rec.topic == t.cell_outcomes:
                return self.cal.add_outcome(decode(CellOutcome, rec.value))
        except BadRecord as exc:
            self.skipped += 1
            log.warning("calibrate: skipped %s[%d]@%d: %s", rec.topic, rec.partition,
                        rec.offset, exc.error_type)
        return set()
