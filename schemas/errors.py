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


def location(error: ErrorDetails, root: str = ROOT) -> str:
    """The dotted field path of one error (``answers.0.quote``); ``root`` when it has none."""
    return ".".join(map(str, error["loc"])) or root


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


