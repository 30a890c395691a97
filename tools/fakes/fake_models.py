"""The fake API's models (``models_api.json`` here): what ``GET /v1/models/{id}`` serves and
how the fake Messages API treats each model. Independent of our catalogue on purpose."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("models_api.json")
EFFORTS = ("low", "medium", "high", "xhigh", "max")


@dataclass
class FakeModel:
    #: The ModelInfo body (mutable: a test may set ``info["lifecycle"] = "retired"``).
    info: dict[str, Any]
    forced_tool_choice: bool
    #: Accepts non-default sampling parameters under API version 2023-06-01.
    sampling_params: bool
    min_cache_tokens: int

    @property
    def id(self) -> str:
        return str(self.info["id"])

    @property
    def lifecycle(self) -> str:
        return str(self.info["lifecycle"])

    def _caps(self) -> dict[str, Any]:
        caps: dict[str, Any] = self.info.get("capabilities") or {}
        return caps

    @property
    def efforts(self) -> tuple[str, ...]:
        effort = self._caps().get("effort") or {}
        return tuple(e for e in EFFORTS if (effort.get(e) or {}).get("supported"))

    @property
    def adaptive_thinking(self) -> bool:
        types = (self._caps().get("thinking") or {}).get("types") or {}
        return bool((types.get("adaptive") or {}).get("supported"))

    @property
    def manual_thinking(self) -> bool:
        types = (self._caps().get("thinking") or {}).get("types") or {}
        return bool((types.get("enabled") or {}).get("supported"))

    @property
    def structured_outputs(self) -> bool:
        return bool((self._caps().get("structured_outputs") or {}).get("supported"))

    @property
    def batch(self) -> bool:
        return bool((self._caps().get("batch") or {}).get("supported"))

    @property
    def max_tokens(self) -> int:
        return int(self.info.get("max_tokens") or 128_000)


def _build(raw: dict[str, Any]) -> FakeModel:
    info = {k: v for k, v in raw.items() if k != "_behaviour"}
    b = raw.get("_behaviour") or {}
    return FakeModel(info, bool(b.get("forced_tool_choice")), bool(b.get("sampling_params")),
                     int(b.get("min_cache_tokens") or 0))


@cache
def _raw() -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(DATA.read_text())["models"])


def load() -> dict[str, FakeModel]:
    """A fresh, mutable copy of every fake model, by id."""
    return {m["id"]: _build(copy.deepcopy(m)) for m in _raw()}
