"""What a results topic already holds, per result series (prompt version).

Workers and replays read their output topic once at start (:func:`scan_series`) to learn
which result ids exist (a job redelivered or replayed under the same version is not paid for
twice) and, per input (job id / request id), the latest result of every version, so a new
result can name the one it supersedes. A dashboard tells series apart by the same fields,
which are also Kafka headers (:func:`result_headers`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from streams.kafka_clients import KafkaTarget
from streams.topics import read_to_end

#: Kafka header names every LLM result carries (judge and debrief alike).
RESULT_ID, PROMPT_VERSION, SUPERSEDES = "result_id", "prompt_version", "supersedes"


@dataclass
class Series:
    ids: set[str] = field(default_factory=set)
    #: input id -> {prompt version: latest result id}, versions in order of appearance
    by_input: dict[str, dict[str, str]] = field(default_factory=dict)
    #: prompt version -> results published under it
    counts: dict[str, int] = field(default_factory=dict)
    #: prompt version -> [output tokens, LLM calls] summed over its results
    output_tokens: dict[str, list[int]] = field(default_factory=dict)

    def add(self, input_id: str, version: str, rid: str,
            usage: dict[str, Any] | None = None) -> None:
        self.ids.add(rid)
        versions = self.by_input.setdefault(input_id, {})
        versions.pop(version, None)  # re-inserted last: the latest
        versions[version] = rid
        self.counts[version] = self.counts.get(version, 0) + 1
        if usage:
            acc = self.output_tokens.setdefault(version, [0, 0])
            acc[0] += int(usage.get("output_tokens") or 0)
            acc[1] += int(usage.get("llm_calls") or 0)

    def supersedes(self, input_id: str, version: str) -> str | None:
        """The latest result for ``input_id`` under another version (None: first result)."""
        others = [rid for v, rid in self.by_input.get(input_id, {}).items() if v != version]
        return others[-1] if others else None


async def scan_series(kafka: KafkaTarget, topic: str, id_field: str, input_field: str,
                      timeout: float = 120.0) -> Series:
    series = Series()
    async for rec in read_to_end(kafka, [topic], timeout):
        try:
            data = orjson.loads(rec.value or b"")
        except orjson.JSONDecodeError:
            continue
        if not isinstance(data, dict):
            continue
        rid, inp, ver = data.get(id_field), data.get(input_field), data.get("prompt_version")
        if isinstance(rid, str) and isinstance(inp, str) and isinstance(ver, str):
            usage = data.get("usage")
            series.add(inp, ver, rid, usage if isinstance(usage, dict) else None)
    return series


def result_headers(rid: str, version: str, input_header: str, input_id: str,
                   supersedes: str | None) -> tuple[tuple[str, bytes], ...]:
    out = [(RESULT_ID, rid), (PROMPT_VERSION, version), (input_header, input_id)]
    if supersedes:
        out.append((SUPERSEDES, supersedes))
    return tuple((k, v.encode()) for k, v in out)
