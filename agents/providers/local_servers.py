"""Models that stay inside: what an Anthropic-compatible server accepts, as data. Pure.

``servers.json`` (here) says per server kind (vLLM, Ollama, llama.cpp, or ``generic``, the
strictest) whether it counts tokens, honours ``cache_control``, ``output_config.format``,
``tool_choice``, ``diagnostics``, and has batches or a Models API. The provider
(:mod:`agents.providers.anthropic_local`) sends nothing a server lacks; features it lacks
are off (prompt caching, batches) or replaced as for every model (structured outputs:
the answer is validated and repaired in code).

The model is *declared*, not looked up: ``JUDGEFLOW_LLM__MODEL`` names it, and
:func:`agents.providers.catalogue.declared_entry` prices it at zero unless the operator's
models file (``JUDGEFLOW_LLM__MODELS_FILE``) has an entry with that id (configured prices).
:func:`local_facts` are the ``ModelFacts`` the Models API would have served.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from agents.errors import AgentsError
from agents.providers.model_facts import ModelFacts

PACKAGED = Path(__file__).with_name("servers.json")
ServerKind = Literal["vllm", "ollama", "llamacpp", "generic"]


class LocalServer(BaseModel):
    """One server kind. The endpoint-shaped fields (``name``, ``batches``, ``count_tokens``,
    ``models_api``) read like a cloud platform's endpoint, so ``llm check`` says what each
    lacks the same way."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    count_tokens: bool
    prompt_caching: bool
    structured_outputs: bool
    tool_choice: bool
    batches: bool
    models_api: bool
    diagnostics: bool
    docs: tuple[str, ...] = ()
    notes: str = ""


@cache
def servers() -> dict[str, LocalServer]:
    data = json.loads(PACKAGED.read_text())
    return {k: LocalServer.model_validate(v) for k, v in data["servers"].items()}


def server(kind: str) -> LocalServer:
    known = servers()
    if kind not in known:
        raise AgentsError(f"llm.server {kind!r} is not a known server; known: "
                          f"{', '.join(sorted(known))}")
    return known[kind]


def local_facts(model: str, kind: str, max_tokens: int | None = None) -> ModelFacts:
    """What judgeflow assumes of a declared model: no effort levels, no adaptive thinking
    (no ``thinking`` field is sent), structured outputs and batches as the server says."""
    s = server(kind)
    return ModelFacts(id=model, lifecycle="active", efforts=(), adaptive_thinking=False,
                      structured_outputs=s.structured_outputs, batch=s.batches,
                      max_tokens=max_tokens)
