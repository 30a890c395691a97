"""Start-up checks of the LLM provider, shared by the judge and debrief workers.

:func:`check_provider` (before consuming anything):

* the model must be in the catalogue and known to the Models API: unknown (404) or retired
  (catalogue or API says so) is an :class:`AgentsError` -> one line, exit status 2;
* deprecated -> a WARNING naming the retirement date;
* ``llm.effort`` must be one the model accepts;
* wires the ``judgeflow_llm_halted`` gauge (1 after a spend-limit/billing stop, 0 again
  once a call is answered).

:func:`report_cache_prefixes`: for each cache breakpoint of a request (system blocks with
``cache=True``), count the prefix up to it (tools + system) with count_tokens and log whether
it clears the model's minimum cacheable length: below it the API silently caches nothing.
The provider runs it once per distinct prefix; the judge may call it with its own request.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from agents.errors import AgentsError, LLMError
from agents.providers.base import LLMRequest, Provider
from agents.providers.factory import is_offline, model_entry
from schemas.ids import derive_id
from streams.metrics import Metrics
from streams.settings import LLMSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PrefixReport:
    #: 1-based number of the breakpoint (system block index + 1).
    breakpoint: int
    tokens: int
    minimum: int

    @property
    def caches(self) -> bool:
        return self.tokens >= self.minimum


def prefix_key(request: LLMRequest) -> str:
    raw = json.dumps([[(b.text, b.cache) for b in request.system], request.tools],
                     sort_keys=True, default=str)
    return derive_id(raw, length=None)


async def report_cache_prefixes(provider: Any, request: LLMRequest,
                                *, label: str = "") -> list[PrefixReport]:
    """Count every cacheable prefix of ``request`` and log whether it caches. Never raises
    (a count that fails is logged at DEBUG: this is diagnostics, not a gate)."""
    minimum = provider.entry.min_cache_tokens if provider.entry is not None else 0
    worker = label or request.labels.get("worker", "llm")
    out: list[PrefixReport] = []
    for i, block in enumerate(request.system):
        if not block.cache:
            continue
        prefix = LLMRequest(system=request.system[:i + 1], messages=(), tools=request.tools)
        try:
            tokens = await provider.count_prefix_tokens(prefix)
        except (LLMError, OSError) as exc:
            log.debug("%s: cannot count cache prefix %d: %s", worker, i + 1, exc)
            continue
        report = PrefixReport(i + 1, tokens, minimum)
        out.append(report)
        if report.caches:
            log.info("%s: cache breakpoint %d: prefix %d tokens >= %d (%s minimum): caches",
                     worker, report.breakpoint, tokens, minimum, provider.model)
        else:
            log.warning("%s: cache breakpoint %d: prefix %d tokens < %d (%s minimum): the API "
                        "will NOT cache it", worker, report.breakpoint, tokens, minimum,
                        provider.model)
    return out


def _day(value: Any) -> date | None:
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).date()


async def check_model(provider: Any, llm: LLMSettings, today: date | None = None) -> None:
    """Raise :class:`AgentsError` (one line) if the model cannot be used; warn if deprecated."""
    today = today or datetime.now(UTC).date()
    entry = model_entry(llm, provider.model)  # UnknownModel is an AgentsError
    if llm.effort is not None and llm.effort not in entry.efforts:
        raise AgentsError(f"llm.effort {llm.effort!r} is not accepted by {entry.id} (accepts: "
                          f"{', '.join(entry.efforts) or 'no effort option'})")
    if entry.status(today) == "retired":
        raise AgentsError(f"model {provider.model!r} retired on {entry.retires}; set "
                          "JUDGEFLOW_LLM__MODEL to a current model")
    try:
        info = await provider.retrieve_model()
    except LLMError as exc:
        if exc.kind == "not_found":
            raise AgentsError(f"model {provider.model!r} is unknown to the Models API (404); "
                              "set JUDGEFLOW_LLM__MODEL to a current model") from None
        if exc.kind == "auth":
            raise AgentsError(f"the Models API refused our key ({exc.message})") from None
        log.warning("cannot check model %s with the Models API (%s); relying on the catalogue",
                    provider.model, exc.kind)
        info = {}
    retires = entry.retires or _day(info.get("retires_at"))
    if info.get("lifecycle") == "retired" or (retires is not None and retires <= today):
        raise AgentsError(f"model {provider.model!r} retired on {retires or 'an earlier date'}; "
                          "set JUDGEFLOW_LLM__MODEL to a current model")
    deprecated = entry.deprecated or _day(info.get("deprecated_at"))
    if info.get("lifecycle") == "deprecated" or (deprecated is not None
                                                 and deprecated <= today):
        log.warning("model %s is deprecated; it retires on %s: move to a current model before "
                    "then", provider.model, retires or "a date not yet announced")


async def check_provider(provider: Provider, llm: LLMSettings,
                         metrics: Metrics | None = None) -> None:
    """The start-up check of a worker's provider (offline: nothing to check)."""
    if is_offline(provider) or not hasattr(provider, "retrieve_model"):
        return
    await check_model(provider, llm)
    if metrics is not None and hasattr(provider, "on_halt"):
        gauge = metrics.llm_halted
        provider.on_halt.append(lambda err: gauge.labels(provider.name, err.kind).set(1))
        if hasattr(provider, "on_resume"):
            provider.on_resume.append(
                lambda err: gauge.labels(provider.name, err.kind).set(0))
