"""The model catalogue: what we know about each model, as data (``models.json`` here).

An operator adds or corrects a model without a release by pointing ``llm.models_file``
(``JUDGEFLOW_LLM__MODELS_FILE``) at a JSON file of the same shape (``{"models": [...]}``);
its entries replace the packaged ones with the same id. A dated snapshot id
(``claude-x-1-20270101``) resolves to its base entry. An unknown model is an error, never
a default price.
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


class ModelEntry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    #: USD per million tokens.
    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_write_5m: float = Field(ge=0)
    cache_write_1h: float = Field(ge=0)
    cache_read: float = Field(ge=0)
    #: Share taken off input and output prices by the Batch API (0.5 = 50 % off).
    batch_discount: float = Field(default=0.0, ge=0, le=1)
    #: Shortest prefix the API caches; shorter prefixes are silently not cached.
    min_cache_tokens: int = Field(ge=0)
    #: Thinks by default; thinking tokens count toward max_tokens.
    adaptive_thinking: bool = False
    #: Accepts tool_choice "any"/"tool" (the 5.x models answer 400).
    forced_tool_choice: bool = True
    #: Accepts non-default temperature/top_p/top_k (the 5.x models answer 400).
    sampling_params: bool = True
    efforts: tuple[str, ...] = ()
    default_effort: str | None = None
    deprecated: date | None = None
    retires: date | None = None

    def status(self, today: date) -> Literal["active", "deprecated", "retired"]:
        if self.retires is not None and self.retires <= today:
            return "retired"
        if self.deprecated is not None and self.deprecated <= today:
            return "deprecated"
        return "active"


class Catalogue:
    def __init__(self, entries: dict[str, ModelEntry]) -> None:
        self.entries = entries

    def find(self, model: str) -> ModelEntry | None:
        if model in self.entries:
            return self.entries[model]
        for known in sorted(self.entries, key=len, reverse=True):  # dated snapshot ids
            if model.startswith(known + "-") and model[len(known) + 1:].isdigit():
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
def load(extra: Path | None = None) -> Catalogue:
    """The packaged catalogue, with ``extra``'s entries added or replacing by id."""
    entries = _read(PACKAGED)
    if extra is not None:
        entries.update(_read(Path(extra)))
    return Catalogue(entries)


def model_entry(llm: LLMSettings, model: str | None = None) -> ModelEntry:
    """The catalogue entry of ``model`` (default: the configured one); raises
    :class:`UnknownModel` (an :class:`AgentsError`) when it is not known."""
    return load(llm.models_file).get(model or llm.model)


def cost_usd(entry: ModelEntry, *, input_tokens: int = 0, output_tokens: int = 0,
             cache_read: int = 0, cache_write: int = 0, ttl: TTL = "5m",
             batch: bool = False) -> float:
    """USD for one usage. ``input_tokens`` excludes cache reads and writes (API semantics).
    The batch discount applies to input and output (as the price pages state)."""
    off = 1.0 - entry.batch_discount if batch else 1.0
    write = entry.cache_write_5m if ttl == "5m" else entry.cache_write_1h
    total = (input_tokens * entry.input * off + output_tokens * entry.output * off
             + cache_read * entry.cache_read + cache_write * write)
    return round(total / 1_000_000, 8)
