"""Start-up checks of the LLM provider, shared by the judge and debrief workers.

:func:`check_provider` (before consuming anything):

* the model must be in the catalogue (its price) and known to the Models API: unknown
  (404) or ``lifecycle`` retired is an :class:`AgentsError` -> one line naming a
  replacement, exit status 2;
* deprecated -> a WARNING naming the retirement date (overdue when it has passed);
* ``llm.effort`` must be one the Models API lists for the model;
* the catalogue is cross-checked against the Models API (a WARNING per disagreement);
* wires the ``judgeflow_llm_halted`` gauge (1 after a spend-limit/billing stop, 0 again
  once a call is answered).

:func:`report_cache_prefixes`: for each cache breakpoint of a request (system blocks with
``cache=True``), count the prefix up to it (tools + system) with count_tokens and log whether
it clears the model's minimum cacheable length: below it the API silently caches nothing.
The provider runs it once per distinct prefix; the judge may call it with its own request.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from agents.errors import AgentsError, LLMError
from agents.providers.base import LLMRequest, Provider, is_offline
from agents.providers.cache_diagnostics import prefix_key
from agents.providers.catalogue import model_entry
from agents.providers.model_facts import cross_check
from agents.providers.settings import LLMSettings
from streams.metrics import Metrics

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


async def report_cache_prefixes(provider: Any, request: LLMRequest, *, label: str = "",
                                log_lines: bool = True) -> list[PrefixReport]:
    """Count every cacheable prefix of ``request`` and log whether it caches (``log_lines``
    False: only return them, for a caller that prints them itself, e.g. ``llm check``).
    Never raises (a count that fails is logged at DEBUG: this is diagnostics, not a gate)."""
    minimum = provider.entry.min_cache_tokens if provider.entry is not None else 0
    #: an unconfirmed catalogue minimum is said as such: the verdict may be wrong
    which = "minimum" if provider.entry is None or provider.entry.min_cache_confirmed \
        else "minimum, unconfirmed"
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
        cache_log = getattr(provider, "cache_log", None)
        if cache_log is not None:  # the diagnostics of later answers check it
            cache_log.counted(prefix_key(request), tokens)
        if not log_lines:
            continue
        if report.caches:
            log.info("%s: cache breakpoint %d: prefix %d tokens >= %d (%s %s): caches",
                     worker, report.breakpoint, tokens, minimum, provider.model, which)
        else:
            log.warning("%s: cache breakpoint %d: prefix %d tokens < %d (%s %s): the API "
                        "will NOT cache it", worker, report.breakpoint, tokens, minimum,
                        provider.model, which)
    return out


@dataclass(frozen=True)
class Origin:
    """The settings that chose a provider's model and effort, named by its one-line start-up
    errors (a per-criterion override is fixed in its own entry, not in llm.model)."""

    model: str = "JUDGEFLOW_LLM__MODEL"
    effort: str = "llm.effort"

    def replace_hint(self, replacement: str | None) -> str:
        if self.model == Origin.model:
            return (f"set e.g. {self.model}={replacement}" if replacement
                    else f"set {self.model} to a current model")
        return f"set {self.model} to {f'e.g. {replacement}' if replacement else 'a current model'}"

    def named(self, model: str) -> str:
        """``'m'``, plus where it came from when that is not llm.model."""
        return f"{model!r}" + ("" if self.model == Origin.model else f" ({self.model})")


DEFAULT_ORIGIN = Origin()


async def check_model(provider: Any, llm: LLMSettings, today: date | None = None, *,
                      origin: Origin = DEFAULT_ORIGIN) -> None:
    """Raise :class:`AgentsError` (one line) if the model cannot be used; warn if deprecated.

    The Models API decides: ``lifecycle`` ``retired`` refuses to start (naming the model and
    the catalogue's replacement); ``deprecated`` starts with a warning naming the retirement
    date, also when that date has passed (overdue, not retired). Its capabilities become
    the provider's facts (``provider.facts``); the catalogue is cross-checked against them.
    ``origin`` names the settings the model and effort came from in the errors."""
    today = today or datetime.now(UTC).date()
    entry = model_entry(llm, provider.model)  # UnknownModel is an AgentsError
    if getattr(provider, "platform_model", None) is not None:
        provider.check_lifecycle(today, origin)  # a cloud platform keeps its own schedule
        return
    if getattr(provider, "declared", False):
        await provider.check_declared(origin)  # a local server's model: declared, asked
        return
    try:
        facts = await provider.load_facts()
    except LLMError as exc:
        if exc.kind == "not_found":
            raise AgentsError(f"model {origin.named(provider.model)} is unknown to the Models "
                              f"API (404); {origin.replace_hint(entry.replacement)}") from None
        if exc.kind == "auth":
            raise AgentsError(f"the Models API refused our key ({exc.message})") from None
        log.warning("cannot check model %s with the Models API (%s); assuming it is "
                    "available, without structured outputs", provider.model, exc.kind)
        return
    if facts.lifecycle == "retired":
        when = f" on {facts.retires_at}" if facts.retires_at else ""
        raise AgentsError(f"model {origin.named(provider.model)} is retired{when}; "
                          f"{origin.replace_hint(entry.replacement)}")
    if facts.lifecycle == "deprecated":
        move = f"move to {entry.replacement}" if entry.replacement else "move to a current model"
        if facts.retires_at is not None and facts.retires_at <= today:
            log.warning("model %s is deprecated and its retirement (scheduled %s) is overdue: "
                        "calls may start failing at any time; %s", provider.model,
                        facts.retires_at, move)
        else:
            log.warning("model %s is deprecated; it retires on %s: %s before then",
                        provider.model, facts.retires_at or "a date not yet announced", move)
    if llm.effort is not None and llm.effort not in facts.efforts:
        raise AgentsError(f"{origin.effort} {llm.effort!r} is not accepted by {provider.model} "
                          f"(the Models API lists: {', '.join(facts.efforts) or 'no effort'})")
    if llm.structured_output and not facts.structured_outputs:
        log.warning("the Models API says %s has no structured outputs: requests go without "
                    "output_config.format (the judge's answers are still validated in code; "
                    "set JUDGEFLOW_LLM__STRUCTURED_OUTPUT=false for the sentinel format)",
                    provider.model)
    for line in cross_check(entry, facts):
        log.warning("model catalogue vs Models API: %s", line)


async def check_provider(provider: Provider, llm: LLMSettings,
                         metrics: Metrics | None = None, *,
                         origin: Origin = DEFAULT_ORIGIN) -> None:
    """The start-up check of a worker's provider (offline: nothing to check)."""
    if is_offline(provider) or not hasattr(provider, "load_facts"):
        return
    await check_model(provider, llm, origin=origin)  # the caller closes it (factory.release)
    if metrics is not None and hasattr(provider, "on_halt"):
        gauge = metrics.llm_halted
        provider.on_halt.append(lambda err: gauge.labels(provider.name, err.kind).set(1))
        if hasattr(provider, "on_resume"):
            provider.on_resume.append(
                lambda err: gauge.labels(provider.name, err.kind).set(0))
