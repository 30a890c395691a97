"""Shared model base, id validation and the package's root exception."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field


class SchemaError(Exception):
    """Root of every error raised by the ``schemas`` package."""


class Frozen(BaseModel):
    """Base of every contract model: unknown keys rejected, instances immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_safe_id(value: str) -> str:
    """An id that may name a file or folder: no separators, no ``..``, no leading dot."""
    if not _SAFE_ID.fullmatch(value) or ".." in value:
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

