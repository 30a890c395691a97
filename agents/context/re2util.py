"""RE2 programs for searching notes: linear time whatever the pattern, bounded memory.

Python's ``re`` backtracks (a model-written pattern could run for hours on a large chart)
and is slow case-insensitively (a 4 MB chart took seconds per cell to rank by keywords);
RE2 is neither. One place for the options every note search uses.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import re2  # type: ignore[import-untyped]

OPTIONS = re2.Options()
OPTIONS.case_sensitive = False
OPTIONS.max_mem = 8 << 20  # a pattern whose automaton needs more is refused
OPTIONS.log_errors = False  # a refused pattern is the caller's to handle, not a log line
error = re2.error


def compile_pattern(pattern: str) -> Any:
    """The RE2 program of ``pattern`` (raises :data:`error` when RE2 refuses it)."""
    return re2.compile(pattern, OPTIONS)


@lru_cache(maxsize=4096)
def words(needle: str) -> Any:
    """A program matching ``needle``'s words in order, any whitespace between them (None:
    no words)."""
    parts = needle.split()
    return compile_pattern(r"\s+".join(re2.escape(w) for w in parts)) if parts else None
