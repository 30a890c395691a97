"""Shared model base, id validation and the package's root exception."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError


class SchemaError(Exception):
    """Root of every error raised by the ``schemas`` package."""


class Frozen(BaseModel):
    """Base of every contract model: unknown keys rejected, instances immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


#: Longest id that may name a file or folder.
MAX_SAFE_ID_CHARS = 128


def check_safe_id(value: str) -> str:
    """An id that may name a file or folder: no separators, no ``..``, no leading dot (the
    alphabet of :func:`is_record_id`, at most :data:`MAX_SAFE_ID_CHARS` characters)."""
    if len(value) > MAX_SAFE_ID_CHARS or not is_record_id(value):
        raise ValueError(
            "must be 1-128 characters of letters, digits, '.', '_' or '-', "
            "start with a letter or digit and contain no '..'"
        )
    return value


#: An id that is safe to use as a path component (patient, note, field, case ids).
SafeId = Annotated[str, AfterValidator(check_safe_id)]

#: Longest id accepted in any record (event, run, job, result ids ...): ids are keys, header
#: values and log tokens, never free text.
MAX_ID_CHARS = 200
#: Any other id: 1 to :data:`MAX_ID_CHARS` characters (not a path component: see SafeId).
BoundedId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]

_RECORD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def check_record_id(value: str) -> str:
    """An id that lands in a Kafka header, a log line, a file name or a result (job, result,
    outcome, evaluation ids ...): the alphabet of :data:`SafeId`, so that no id can carry a
    newline or an escape (a forged log line) or a path separator."""
    if not is_record_id(value):
        raise PydanticCustomError(
            "unsafe_id", "must be letters, digits, '.', '_' or '-', start with a letter or "
            "digit and contain no '..'")
    return value


def is_record_id(value: str) -> bool:
    """Whether ``value`` is in the alphabet of :func:`check_record_id`."""
    return bool(_RECORD_ID.fullmatch(value)) and ".." not in value


#: An id of a record (1 to :data:`MAX_ID_CHARS` characters of the :data:`SafeId` alphabet).
RecordId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS),
                     AfterValidator(check_record_id)]


def check_aware(value: datetime) -> datetime:
    """RFC 3339 times carry an offset; a naive time cannot be ordered against an aware one
    (comparing them raises TypeError in whatever consumes the record)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise PydanticCustomError(
            "timezone_aware", "must carry a UTC offset (RFC 3339), e.g. 2026-01-01T00:00:00Z")
    return value


#: Every time in a contract: a time without a UTC offset is a ``schema_error``.
AwareTime = Annotated[datetime, AfterValidator(check_aware)]

