"""The model catalogue: what we know about each model, as data (``models.json`` here).

An operator adds or corrects a model without a release by pointing ``llm.models_file``
(``JUDGEFLOW_LLM__MODELS_FILE``) at a JSON file of the same shape (``{"models": [...]}``);
its entries replace the packaged ones with the same id. A dated snapshot id
(``claude-x-1-20270101``: eight digits) resolves to its base entry; a minor version
(``claude-fable-5-2``) is a model of its own, never a snapshot of ``claude-fable-5``. An
unknown model is an error, never a default price. A local server's model is *declared*
(``llm.provider`` ``local``): :func:`declared_entry` prices it at zero, or at the operator's
models file entry with its id; never at a packaged Claude price.
"""

from __future__ import annotations

import json
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.errors import AgentsError
from agents.providers.settings import LLMSettings
from schemas.errors import location

PACKAGED = Path(__file__).with_name("models.json")
TTL = Literal["5m", "1h"]


class UnknownModel(AgentsError):
    """The model is not in the catalogue (a configuration mistake: one clear line)."""


class Rates(BaseModel):
    """USD per million tokens, one price tier."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_write_5m: float = Field(ge=0)
    cache_write_1h: float = Field(ge=0)
    cache_read: float = Field(ge=0)


class Tier(Rates):
    """The rates of a request whose prompt is longer than ``above_prompt_tokens`` (every
    token of that request, output included, pays them: the pricing page's long-prompt rule)."""

    above_prompt_tokens: int = Field(gt=0)


class ModelEntry(Rates):
    """What the Models API does not serve: prices, the cache minimum, forced tool choice and
    the replacement to name when the model goes away. Lifecycle and capabilities (efforts,
    thinking, structured outputs, batch, token limits) come from the Models API at start
    (:mod:`agents.providers.model_facts`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    #: Share taken off every token of a batched request (0.5 = 50 % off).
    batch_discount: float = Field(default=0.0, ge=0, le=1)
    #: Higher price tiers by prompt length, lowest threshold first.
    tiers: tuple[Tier, ...] = ()
    #: Shortest prefix the API caches; shorter prefixes are silently not cached.
    min_cache_tokens: int = Field(ge=0)
    #: Read on the official prompt-caching page (False: a third-party figure or one carried
    #: over from the previous version; the cache-prefix report says it is unconfirmed).
    min_cache_confirmed: bool = False
    #: Accepts tool_choice "any"/"tool" (the 5.5 models answer 400). Not in the Models API.
    forced_tool_choice: bool = True
    #: The model to move to when this one is deprecated or retired.
    replacement: str | None = None
    #: Where the prices were read, and when.
    source: str = ""
    checked: date | None = None
    note: str = ""

    def rates(self, prompt_tokens: int) -> Rates:
        """The rates a request with ``prompt_tokens`` of prompt pays."""
        chosen: Rates = self
        for tier in self.tiers:
            if prompt_tokens > tier.above_prompt_tokens:
                chosen = tier
        return chosen


class Catalogue:
    def __init__(self, entries: dict[str, ModelEntry]) -> None:
        self.entries = entries

    def find(self, model: str) -> ModelEntry | None:
        if model in self.entries:
            return self.entries[model]
        for known in sorted(self.entries, key=len, reverse=True):  # dated snapshot ids
            suffix = model[len(known) + 1:]
            if model.startswith(known + "-") and len(suffix) == 8 and suffix.isdigit():
                return self.entries[known]
        return None

    def get(self, model: str) -> ModelEntry:
        entry = self.find(model)
        if entry is None:
            raise UnknownModel(f"model {model!r} is not in the model catalogue; known: "
                               f"{', '.join(sorted(self.entries))} (add it with "
                               "JUDGEFLOW_LLM__MODELS_FILE, see docs/configuration.md)")
        return entry


def _read(path: Path) -> dict[str, ModelEntry]:
    try:
        data: Any = json.loads(path.read_text())
        return {e["id"]: ModelEntry.model_validate(e) for e in data["models"]}
    except OSError as exc:
        raise UnknownModel(f"cannot read the models file {path}: {exc.strerror}") from None
    except (ValueError, KeyError, TypeError) as exc:
        detail = (f"{exc.error_count()} invalid field(s), first: "
                  f"{location(exc.errors(include_input=False)[0], root='')}"
                  if isinstance(exc, ValidationError) else type(exc).__name__)
        raise UnknownModel(f"the models file {path} is not a valid catalogue "
                           f"({{\"models\": [...]}}): {detail}") from None


@cache
def operator_entries(path: Path) -> dict[str, ModelEntry]:
    """Only the entries of the operator's models file (no packaged ones)."""
    return _read(Path(path))


@cache
def load(extra: Path | None = None) -> Catalogue:
    """The packaged catalogue, with ``extra``'s entries added or replacing by id."""
    entries = _read(PACKAGED)
    if extra is not None:
        entries.update(_read(Path(extra)))
    return Catalogue(entries)


def model_entry(llm: LLMSettings, model: str | None = None) -> ModelEntry:
    """The catalogue entry of ``model`` (default: the configured one); raises
    :class:`UnknownModel` (an :class:`AgentsError`) when it is not known. A local server's
    model is declared, not catalogued (:func:`declared_entry`):
    zero or the operator's prices, never the Claude catalogue's."""
    if llm.provider == "local":
        return declared_entry(llm, model)
    return load(llm.models_file).get(model or llm.model)


def declared_entry(llm: LLMSettings, model: str | None = None) -> ModelEntry:
    """A local server's model: the operator's models file entry (configured prices), else
    zero. The packaged catalogue is never consulted: a local model copied under a Claude
    name (``ollama cp qwen3 claude-3-5-sonnet``) is still the local model."""
    name = model or llm.model
    configured = operator_entries(llm.models_file).get(name) if llm.models_file else None
    if configured is not None:
        return configured
    return ModelEntry(id=name, input=0, output=0, cache_write_5m=0, cache_write_1h=0,
                      cache_read=0, min_cache_tokens=0, forced_tool_choice=False,
                      source="declared by JUDGEFLOW_LLM__MODEL (llm.provider local)")


def cost_usd(entry: ModelEntry, *, input_tokens: int = 0, output_tokens: int = 0,
             cache_read: int = 0, cache_write: int = 0, ttl: TTL = "5m",
             batch: bool = False) -> float:
    """USD for one request's usage. ``input_tokens`` excludes cache reads and writes (API
    semantics); the prompt length that picks the tier is their sum. The batch discount
    applies to all usage, cache reads and writes included (the batch-processing page:
    "all usage is charged at 50% of standard API prices")."""
    r = entry.rates(input_tokens + cache_read + cache_write)
    write = r.cache_write_5m if ttl == "5m" else r.cache_write_1h
    total = (input_tokens * r.input + output_tokens * r.output + cache_read * r.cache_read
             + cache_write * write)
    if batch:
        total *= 1.0 - entry.batch_discount
    return round(total / 1_000_000, 8)
