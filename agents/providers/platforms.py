"""Claude on Amazon Bedrock and Google Vertex AI, as data (``platforms.json`` here). Pure.

Per platform: the ``anthropic_version`` body field it requires, whether it has Message
Batches, token counting and a Models API, and per catalogue model the platform's own model
id and lifecycle (a platform keeps its own schedule). Prices stay in the model catalogue
(:mod:`agents.providers.catalogue`): judgeflow prices platform calls at the Claude API's
list prices, which is what the platforms' own price pages are compared against.
"""

from __future__ import annotations

import json
from datetime import date
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from agents.errors import AgentsError

PACKAGED = Path(__file__).with_name("platforms.json")
Lifecycle = Literal["active", "deprecated", "retired"]


class PlatformModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    lifecycle: Lifecycle = "active"
    deprecated: date | None = None
    retires: date | None = None
    source: str = ""

    def status(self, today: date) -> Lifecycle:
        """The platform's lifecycle; a past retirement day means retired there."""
        if self.lifecycle == "retired" or (self.retires is not None and self.retires <= today):
            return "retired"
        if self.lifecycle == "deprecated" or (self.deprecated is not None
                                              and self.deprecated <= today):
            return "deprecated"
        return "active"


class Platform(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    anthropic_version: str
    batches: bool
    count_tokens: bool
    models_api: bool
    docs: tuple[str, ...] = ()
    models: dict[str, PlatformModel]

    def model(self, key: str, catalogue_id: str) -> PlatformModel:
        """The platform's entry for a catalogue model, or a one-line error naming those it
        has (an operator picks one of them or adds an entry)."""
        entry = self.models.get(catalogue_id)
        if entry is None:
            raise AgentsError(f"model {catalogue_id!r} has no {key} model id in judgeflow's "
                              f"platform data; {key} models: {', '.join(sorted(self.models))}"
                              " (agents/providers/platforms.json, docs/configuration.md)")
        return entry

    def catalogue_id(self, platform_id: str) -> str | None:
        """The catalogue model a platform model id stands for (None: unknown)."""
        return next((k for k, m in self.models.items() if m.id == platform_id), None)


@cache
def load() -> dict[str, Platform]:
    data = json.loads(PACKAGED.read_text())
    return {k: Platform.model_validate(v) for k, v in data["platforms"].items()}


def get(key: str) -> Platform:
    return load()[key]
