"""Size limits, in one place: every worker edge enforces them at decode time.

Kafka's default request limit is 1 MiB (producer ``max_request_size``, broker
``message.max.bytes``); a record near it cannot be copied to a DLQ with headers, and a cell
state holding several such answers cannot be written to the table's changelog. The limits
below keep every record we *produce* well under that, so "the output does not fit" is never
a way for an input to stop a worker.
"""

from __future__ import annotations

from typing import Any

from schemas.chart_review import AgentAnswer, JudgeJob

#: Largest record value a worker accepts on an input topic (bigger -> DLQ ``oversized``).
MAX_INPUT_RECORD_BYTES = 512 * 1024
#: Largest agent answer (one criterion, one agent) the detector accepts.
MAX_ANSWER_BYTES = 64 * 1024
#: Free-text fields of an answer, in characters (schemas may declare the same ``max_length``).
MAX_RATIONALE_CHARS = 8_000
MAX_QUOTE_CHARS = 2_000
MAX_EVIDENCE_ITEMS = 32
MAX_REASON_CHARS = 2_000
#: Largest serialized cell state the detector writes to its table (changelog record).
MAX_CELL_STATE_BYTES = 512 * 1024
#: Largest dead-letter record (value + key + headers); a bigger original is truncated.
MAX_DLQ_RECORD_BYTES = 900 * 1024
#: What a truncated dead letter keeps of the original value.
DLQ_TRUNCATED_VALUE_BYTES = 64 * 1024


def text_problems(answer: Any) -> list[str]:
    """Free-text fields of an AgentAnswer-shaped object over their limits (names and sizes
    only: never the text, which may be PHI)."""
    problems = []
    rationale = getattr(answer, "rationale", "") or ""
    if len(rationale) > MAX_RATIONALE_CHARS:
        problems.append(f"rationale has {len(rationale)} chars (limit {MAX_RATIONALE_CHARS})")
    reason = getattr(answer, "low_confidence_reason", None) or ""
    if len(reason) > MAX_REASON_CHARS:
        problems.append(f"low_confidence_reason has {len(reason)} chars "
                        f"(limit {MAX_REASON_CHARS})")
    evidence = tuple(getattr(answer, "evidence", ()) or ())
    if len(evidence) > MAX_EVIDENCE_ITEMS:
        problems.append(f"{len(evidence)} evidence items (limit {MAX_EVIDENCE_ITEMS})")
    for i, ev in enumerate(evidence):
        quote = (ev.get("quote") if isinstance(ev, dict) else getattr(ev, "quote", "")) or ""
        if len(quote) > MAX_QUOTE_CHARS:
            problems.append(f"evidence[{i}].quote has {len(quote)} chars "
                            f"(limit {MAX_QUOTE_CHARS})")
    return problems


def dead_letter_value(value: bytes | None, key: bytes | None,
                      headers: list[tuple[str, bytes]]) -> tuple[bytes | None,
                                                                 list[tuple[str, bytes]]]:
    """The value and headers of a dead letter: the original when it fits, else a truncated
    copy with ``original.size`` and ``truncated.reason`` headers."""
    size = len(value or b"")
    overhead = len(key or b"") + sum(len(k) + len(v) for k, v in headers) + 512
    if value is None or size + overhead <= MAX_DLQ_RECORD_BYTES:
        return value, headers
    return value[:DLQ_TRUNCATED_VALUE_BYTES], [
        *headers, ("original.size", str(size).encode()),
        ("truncated.reason", f"value of {size} bytes exceeds the dead-letter limit of "
                             f"{MAX_DLQ_RECORD_BYTES} bytes".encode())]

#: A worker's handler may take this many LLM deadlines for one record (a call plus a repair
#: round-trip) before the record is dead-lettered and its slot freed.
HANDLER_DEADLINES = 3

#: Largest debrief request (its encounter log, the transcript, is most of it).
MAX_DEBRIEF_REQUEST_BYTES = 256 * 1024

#: Largest adjudication: a reviewer's verdict on one cell (its answers and a comment of at most
#: 2,000 characters); a bigger one (a 1 MB ``final_answer``) is dead-lettered ``oversized``
#: by the calibrate worker, skipped by the judge's gate reader and refused by ``produce``.
MAX_ADJUDICATION_BYTES = 64 * 1024


def job_problems(job: Any) -> list[str]:
    """Free-text limits over every answer of a JudgeJob-shaped object."""
    return [f"answers[{i}].{p}" for i, a in enumerate(getattr(job, "answers", ()))
            for p in text_problems(a)]


def record_problems(record: Any) -> list[str]:
    """The free-text limits the consuming worker applies after decoding ``record`` (detect:
    an answer's; the judge: every answer of a job's), for ``judgeflow produce`` to refuse
    what a worker would dead-letter ``oversized``."""
    if isinstance(record, JudgeJob):
        return job_problems(record)
    if isinstance(record, AgentAnswer):
        return text_problems(record)
    return []
