"""What the demo expects and what it has read back (shared by the run and its report)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Seen:
    """What the demo has read back from the output topics so far."""

    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)  # cell -> last outcome
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)  # job_id -> job
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # job_id -> result
    evaluations: dict[str, dict[str, Any]] = field(default_factory=dict)  # request_id -> eval
    dead: Counter[tuple[str, str]] = field(default_factory=Counter)  # (topic, error.type)
    calibration: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> last record


@dataclass(frozen=True)
class Expect:
    cells: int
    requests: int
