"""The one PHI-safe way to put a pydantic ValidationError into words.

A validation error's default text quotes the offending input, and the inputs here are clinical
records (note quotes, answers, patient ids) or configuration (keys). Every message built from a
ValidationError goes through this module, which names WHERE (the field path) and WHY (pydantic's
message or error type), never WHAT (the value): errors are read with ``include_input=False``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ValidationError
from pydantic_core import ErrorDetails

ROOT = "<root>"
#: Stands for a key the sender chose (pydantic's ``extra_forbidden`` location is that key).
EXTRA_KEY = "<unexpected key>"


def location(error: ErrorDetails, root: str = ROOT, *, hide_extra: bool = False) -> str:
    """The dotted field path of one error (``answers.0.quote``); ``root`` when it has none.
    ``hide_extra`` replaces the key of an ``extra_forbidden`` error by :data:`EXTRA_KEY`:
    the sender chose it, so it may be anything, patient data included."""
    loc = list(error["loc"])
    if hide_extra and loc and error["type"] == "extra_forbidden":
        loc[-1] = EXTRA_KEY
    return ".".join(map(str, loc)) or root


def _errors(exc: ValidationError) -> list[ErrorDetails]:
    return exc.errors(include_input=False, include_url=False, include_context=False)


def describe(exc: ValidationError, *, limit: int | None = None,
             reason: Literal["msg", "type"] = "msg", root: str = ROOT,
             more: bool = False) -> str:
    """``path: reason`` for each error (the first ``limit``), joined by ``"; "``.

    ``reason`` is pydantic's message (``msg``, e.g. "Field required") or its error type
    (``type``, e.g. ``missing``); ``more`` appends "; and N more" when ``limit`` cut the list.
    """
    errors = _errors(exc)
    shown = errors if limit is None else errors[:limit]
    text = "; ".join(f"{location(e, root)}: {e[reason]}" for e in shown)
    rest = len(errors) - len(shown)
    return text + (f"; and {rest} more" if more and rest > 0 else "")


def describe_record(exc: ValidationError, *, limit: int = 5, root: str = ROOT) -> str:
    """The dead-letter wording of a record that failed validation: ``path: error_type`` for
    the first ``limit`` errors, sender-chosen keys replaced (:data:`EXTRA_KEY`). Never a
    value and never pydantic's message (some quote the input, e.g. a union's tag)."""
    errors = _errors(exc)
    text = "; ".join(f"{location(e, root, hide_extra=True)}: {e['type']}"
                     for e in errors[:limit])
    rest = len(errors) - limit
    return text + (f"; and {rest} more" if rest > 0 else "")
