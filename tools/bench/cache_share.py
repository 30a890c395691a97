"""How much of the judge's input the prompt cache serves, estimated without an API call.

A request's cacheable prefixes are the system blocks up to each block marked ``cache``
(breakpoints are only placed where the prefix clears the model's minimum, see
:func:`agents.judge.prompt.cache_marks`). A prefix is served from the cache when an earlier
request already sent the same one (a 5-minute cache that a steady worker keeps warm); the
longest such prefix counts. Tokens are estimated as ceil(chars / 3.5), like the fake API.
Pure; used by tests and benchmarks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from agents.judge.prompt import estimate_tokens
from agents.providers.base import LLMRequest


@dataclass(frozen=True)
class CacheShare:
    served: int
    written: int
    total: int

    @property
    def share(self) -> float:
        return self.served / self.total if self.total else 0.0


def cache_share(requests: Iterable[LLMRequest]) -> CacheShare:
    seen: set[str] = set()
    served = written = total = 0
    for r in requests:
        head = json.dumps([r.tools, r.output_schema], sort_keys=True)
        cumulative, hit, keys = estimate_tokens(head), 0, []
        for i, block in enumerate(r.system):
            cumulative += estimate_tokens(block.text)
            if block.cache:
                key = head + json.dumps([b.text for b in r.system[: i + 1]])
                keys.append((key, cumulative))
                if key in seen:
                    hit = cumulative
        biggest = max((n for _, n in keys), default=0)
        served += hit
        written += biggest - hit
        seen.update(k for k, _ in keys)
        total += cumulative + estimate_tokens(json.dumps(list(r.messages)))
    return CacheShare(served, written, total)
