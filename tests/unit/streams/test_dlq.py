"""The one dead-letter builder: original bytes and typed headers; oversized values cut."""

from __future__ import annotations

from dataclasses import dataclass

from schemas.dlq import DeadLetterHeaders
from streams import limits
from streams.dlq import dead_letter


@dataclass
class Rec:
    value: bytes | None
    topic: str = "in"
    partition: int = 2
    offset: int = 41
    key: bytes | None = b"k"


def test_a_dead_letter_keeps_the_record_and_names_its_source() -> None:
    letter = dead_letter(Rec(b'{"x": 1}'), "schema_error", "missing x", "in.dlq")
    assert (letter.topic, letter.key, letter.value) == ("in.dlq", b"k", b'{"x": 1}')
    h = DeadLetterHeaders.from_kafka(letter.headers)
    assert (h.error_type, h.source_topic, h.source_partition, h.source_offset) == (
        "schema_error", "in", 2, 41)


def test_an_oversized_value_is_truncated_with_its_size() -> None:
    size = limits.MAX_DLQ_RECORD_BYTES + 1
    letter = dead_letter(Rec(b"x" * size), "oversized", "too big", "in.dlq")
    assert letter.value is not None and len(letter.value) == limits.DLQ_TRUNCATED_VALUE_BYTES
    assert dict(letter.headers)["original.size"] == str(size).encode()
