"""Claude on Amazon Bedrock and Google Vertex AI, as data (``platforms.json`` here). Pure.

A platform has one or more **endpoints** — Bedrock has two: InvokeModel on bedrock-runtime
(ARN-versioned ids, the legacy integration) and the bedrock-mantle Messages API ("Claude in
Amazon Bedrock", where the 5.x models are) — each with the SDK client that speaks it, the
``anthropic_version`` body field it requires (None: the version is the ``anthropic-version``
header, as on the Claude API), whether the model id travels in the URL or the body, and
whether it has Message Batches, token counting and a Models API. Per catalogue model: the
endpoint that serves it, the platform's own model id and lifecycle (a platform keeps its own
schedule). Prices stay in the model catalogue (:mod:`agents.providers.catalogue`): judgeflow
prices platform calls at the Claude API's list prices, which is what the platforms' own
price pages are compared against.

An operator adds or overrides entries without a release with ``llm.platforms_file``
(``JUDGEFLOW_LLM__PLATFORMS_FILE``): a JSON file of the same shape holding only what changes,
``{"platforms": {"vertex": {"models": {"claude-x": {"id": ..., "source": ...}}}}}``; its
models and endpoints add to or replace the packaged ones by key (:func:`load`).
"""

from __future__ import annotations

import json
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from agents.errors import AgentsError
from schemas.errors import describe

PACKAGED = Path(__file__).with_name("platforms.json")
Lifecycle = Literal["active", "deprecated", "retired"]
#: The SDK client for an endpoint (agents.providers.anthropic_cloud.make_client).
Client = Literal["bedrock", "bedrock-mantle", "vertex"]


class PlatformModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    #: The platform endpoint serving it (None: the platform's only endpoint).
    endpoint: str | None = None
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


class Endpoint(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    client: Client
    #: The body's ``anthropic_version`` (None: the ``anthropic-version`` header decides).
    anthropic_version: str | None
    #: ``url``: the model id is a path segment and ``model`` must not be in the body.
    model_in: Literal["url", "body"]
    batches: bool
    count_tokens: bool
    models_api: bool
    #: Documents the Claude API's ``diagnostics`` body field (cache-miss reasons); where it
    #: does not, the field is not sent (an undocumented key may be refused).
    diagnostics: bool = False
    docs: tuple[str, ...] = ()


class Platform(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    endpoints: dict[str, Endpoint]
    models: dict[str, PlatformModel]

    @model_validator(mode="after")
    def _endpoints_named(self) -> Platform:
        for key, m in self.models.items():
            if m.endpoint is None and len(self.endpoints) != 1:
                raise ValueError(f"{key}: name its endpoint ({', '.join(self.endpoints)})")
            if m.endpoint is not None and m.endpoint not in self.endpoints:
                raise ValueError(f"{key}: unknown endpoint {m.endpoint!r}")
        return self

    @property
    def docs(self) -> tuple[str, ...]:
        return tuple(d for e in self.endpoints.values() for d in e.docs)

    def model(self, key: str, catalogue_id: str) -> PlatformModel:
        """The platform's entry for a catalogue model, or a one-line error naming those it
        has (an operator picks one of them or adds an entry)."""
        entry = self.models.get(catalogue_id)
        if entry is None:
            raise AgentsError(f"model {catalogue_id!r} has no {key} model id in judgeflow's "
                              f"platform data; {key} models: {', '.join(sorted(self.models))}"
                              " (add one with JUDGEFLOW_LLM__PLATFORMS_FILE, see "
                              "docs/configuration.md)")
        return entry

    def endpoint_key(self, entry: PlatformModel) -> str:
        """The endpoint serving ``entry``: its own, else the platform's first."""
        return entry.endpoint or next(iter(self.endpoints))

    def endpoint_of(self, entry: PlatformModel) -> Endpoint:
        return self.endpoints[self.endpoint_key(entry)]

    def catalogue_id(self, platform_id: str, endpoint: str | None = None) -> str | None:
        """The catalogue model a platform model id stands for on ``endpoint`` (any endpoint
        when None); None: unknown there."""
        return next((k for k, m in self.models.items() if m.id == platform_id and (
            endpoint is None or self.endpoint_key(m) == endpoint)), None)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise AgentsError(f"cannot read the platforms file {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise AgentsError(f"the platforms file {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("platforms"), dict):
        raise AgentsError(f"the platforms file {path} must be {{\"platforms\": {{...}}}}")
    return data["platforms"]  # type: ignore[no-any-return]


def merged(packaged: dict[str, Any], extra: dict[str, Any], where: str) -> dict[str, Any]:
    """``packaged`` with ``extra``'s platforms merged in: their models and endpoints add to
    or replace the packaged ones by key (a platform judgeflow has no client for is refused)."""
    out = {k: dict(v) for k, v in packaged.items()}
    for key, change in extra.items():
        if key not in out:
            raise AgentsError(f"{where}: unknown platform {key!r}; platforms: "
                              f"{', '.join(sorted(out))}")
        if not isinstance(change, dict):
            raise AgentsError(f"{where}: platform {key!r} must be an object")
        for part in ("endpoints", "models"):
            out[key][part] = {**out[key].get(part, {}), **change.get(part, {})}
        if "name" in change:
            out[key]["name"] = change["name"]
    return out


@cache
def load(extra: Path | None = None) -> dict[str, Platform]:
    """The packaged platform data, with ``extra``'s entries added or replacing by key."""
    data = json.loads(PACKAGED.read_text())["platforms"]
    if extra is not None:
        data = merged(data, _read(Path(extra)), f"the platforms file {extra}")
    out: dict[str, Platform] = {}
    for key, value in data.items():
        try:
            out[key] = Platform.model_validate(value)
        except ValidationError as exc:  # only an operator's file can make the data invalid
            raise AgentsError(f"the platforms file {extra}: platform {key!r}: "
                              f"{describe(exc, limit=1, root='')}") from None
    return out


def get(key: str, extra: Path | None = None) -> Platform:
    return load(extra)[key]
