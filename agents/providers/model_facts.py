"""What the Models API says about a model (``GET /v1/models/{id}``), as typed facts (pure).

The response shape is the SDK's ``ModelInfo`` (anthropic 2.x, ``types/model_info.py``):
``lifecycle`` (``active`` | ``deprecated`` | ``retired``, *the* retirement signal: a past
``retires_at`` on a deprecated model means overdue, not retired), ``deprecated_at``,
``retires_at``, ``max_input_tokens``, ``max_tokens`` and ``capabilities`` (``effort.{low,
medium,high,xhigh,max}.supported``, ``structured_outputs``, ``batch``,
``thinking.types.{adaptive,enabled,disabled}``, each ``{"supported": bool}``).

:func:`cross_check` compares them with the catalogue (which holds only what the API does
not serve) and returns one warning line per disagreement.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from agents.providers.catalogue import ModelEntry

EFFORTS = ("low", "medium", "high", "xhigh", "max")


@dataclass(frozen=True)
class ModelFacts:
    id: str
    lifecycle: str = "active"
    deprecated_at: date | None = None
    retires_at: date | None = None
    efforts: tuple[str, ...] = ()
    #: Accepts (and by default uses) adaptive thinking: thinking counts toward max_tokens.
    adaptive_thinking: bool = True
    structured_outputs: bool = False
    batch: bool = True
    max_input_tokens: int | None = None
    max_tokens: int | None = None


#: Used until the Models API has answered (or when it cannot): the strictest assumptions
#: that are still valid requests (no structured outputs, a thinking budget in max_tokens).
UNKNOWN = ModelFacts(id="unknown")


def _day(value: Any) -> date | None:
    if not value:
        return None
    if isinstance(value, datetime):
        return value.date()
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).date()


def _supported(node: Any) -> bool:
    return bool(isinstance(node, dict) and node.get("supported"))


def parse(info: dict[str, Any]) -> ModelFacts:
    """Facts from a ``ModelInfo`` dict (missing capabilities: the conservative defaults)."""
    caps = info.get("capabilities") or {}
    effort = caps.get("effort") or {}
    efforts = tuple(e for e in EFFORTS if _supported(effort.get(e))) \
        if _supported(effort) else ()
    thinking = (caps.get("thinking") or {}).get("types") or {}
    return ModelFacts(
        id=str(info.get("id") or "unknown"),
        lifecycle=str(info.get("lifecycle") or "active"),
        deprecated_at=_day(info.get("deprecated_at")),
        retires_at=_day(info.get("retires_at")),
        efforts=efforts,
        adaptive_thinking=_supported(thinking.get("adaptive")) if caps else True,
        structured_outputs=_supported(caps.get("structured_outputs")),
        batch=_supported(caps.get("batch")) if caps else True,
        max_input_tokens=info.get("max_input_tokens"),
        max_tokens=info.get("max_tokens"))


def cross_check(entry: ModelEntry, facts: ModelFacts) -> list[str]:
    """Where the catalogue and the Models API disagree (one line each; nothing is fatal)."""
    out: list[str] = []
    if entry.batch_discount and not facts.batch:
        out.append(f"the catalogue prices batches of {facts.id} but the Models API says it "
                   "does not support the Batch API")
    limit = facts.max_input_tokens
    for tier in entry.tiers:
        if limit is not None and tier.above_prompt_tokens >= limit:
            out.append(f"the catalogue's price tier above {tier.above_prompt_tokens:,} "
                       f"prompt tokens of {facts.id} is past its {limit:,}-token context")
    if facts.lifecycle != "active" and not entry.replacement:
        out.append(f"{facts.id} is {facts.lifecycle} but the catalogue names no replacement "
                   "(add one with JUDGEFLOW_LLM__MODELS_FILE)")
    if entry.replacement and facts.lifecycle == "active":
        out.append(f"the catalogue names a replacement for {facts.id} "
                   f"({entry.replacement}) but the Models API says it is active")
    return out
