"""Models that stay inside: an Anthropic-compatible server (vLLM, Ollama, llama.cpp) through
the same SDK (``llm.provider`` ``local``).

Everything else is the Anthropic provider's (retries, pacing, error kinds, accounting); what
differs is data (:mod:`agents.providers.local_servers`):

* the address is ``llm.base_url``; the model is declared by ``llm.model`` (no catalogue
  entry, no Models API call): priced at zero, or at the operator's models file entry; one
  small request at start checks the server answers for it (:meth:`check_declared`);
* no Claude credential ever travels: the client gets an explicit credential (the server's
  own ``llm.local_api_key`` as a bearer token) or none, with the ``Authorization`` header
  omitted, so the SDK never reads ``ANTHROPIC_API_KEY`` or a profile for this server;
* what the server lacks is not sent: ``cache_control`` (no prompt caching), ``tool_choice``
  (Ollama), ``diagnostics``, ``output_config.format`` (structured outputs: validated and
  repaired in code, as for any model without them), ``output_config.effort`` and
  ``thinking`` (a declared model has neither); no count_tokens -> prefix sizes are
  estimated (3.5 characters a token); no batches -> ``replay --batch`` runs live calls.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

import anthropic

from agents.errors import AgentsError
from agents.providers import catalogue, local_servers
from agents.providers.anthropic import AnthropicProvider, classify
from agents.providers.base import LLMRequest, NoBatchesAPI
from agents.providers.limits import Budget
from agents.providers.settings import LLMSettings

log = logging.getLogger(__name__)


def make_client(llm: LLMSettings, base_url: str) -> Any:
    key = llm.local_api_key.get_secret_value() if llm.local_api_key else None
    # an explicit credential (even "none") keeps the SDK from reading the Claude API's key,
    # a profile or a federation token from the environment for this server
    headers: dict[str, Any] = {} if key else {"Authorization": anthropic.Omit()}
    return anthropic.AsyncAnthropic(auth_token=key or "", base_url=base_url,
                                    default_headers=headers,
                                    max_retries=llm.sdk_max_retries,
                                    timeout=llm.deadline_seconds)


class LocalProvider(NoBatchesAPI, AnthropicProvider):
    """The Anthropic provider, pointed at a server inside the hospital."""

    #: check_model: the model is declared, not looked up (no Models API, no catalogue)
    declared = True
    supports_batches = False
    #: always a declared entry (the base's may be None: a model missing from the catalogue)
    entry: catalogue.ModelEntry

    def __init__(self, settings: LLMSettings, *, client: Any = None,
                 budget: Budget | None = None, base_url: str | None = None) -> None:
        url = base_url or settings.base_url
        if not url:
            raise AgentsError("llm.provider local needs the server's address: set "
                              "JUDGEFLOW_LLM__BASE_URL (e.g. http://127.0.0.1:8000)")
        if urlsplit(url).path.rstrip("/").endswith("/v1"):  # the SDK adds /v1/messages
            raise AgentsError("JUDGEFLOW_LLM__BASE_URL ends in /v1: give the server's address "
                              f"without it ({url.rstrip('/')[:-3]})")
        if not settings.model.strip():
            raise AgentsError("llm.provider local needs the model's name as the server knows "
                              "it: set JUDGEFLOW_LLM__MODEL")
        self.server = local_servers.server(settings.server)
        super().__init__(settings, budget=budget, client=client or make_client(settings, url))
        self.name = "local"
        self.base_url = url
        self.entry = catalogue.declared_entry(settings)
        self.facts = local_servers.local_facts(settings.model, settings.server)
        #: what ``llm check`` reports the server lacks (the cloud endpoints' shape)
        self.endpoint = self.server
        self.sends_diagnostics = self.server.diagnostics

    def params(self, request: LLMRequest) -> dict[str, Any]:
        params = super().params(request)
        if not self.server.prompt_caching:  # no breakpoint anywhere: system or messages
            for block in params.get("system", ()):
                block.pop("cache_control", None)
            for message in params["messages"]:
                if isinstance(message.get("content"), list):
                    message["content"] = [
                        {k: v for k, v in b.items() if k != "cache_control"}
                        if isinstance(b, dict) else b for b in message["content"]]
        if not self.server.tool_choice:
            params.pop("tool_choice", None)
        return params

    async def check_declared(self, origin: Any = None) -> None:
        """The start-up check of a declared model: one small request the server must answer
        (count_tokens where it has it, else or on its 404 a one-token message). A server
        that refuses our key or does not serve the model stops the worker in one line; one
        not reachable yet is a warning (it may still be starting; the calls retry)."""
        if self.settings.effort is not None:
            log.warning("llm.effort %s is not sent to %s (%s): a declared model has no "
                        "effort levels", self.settings.effort, self.server.name, self.model)
        where = f"{self.server.name} at {self.base_url}"
        try:
            await self._probe()
        except anthropic.AnthropicError as exc:
            error = classify(exc)
            if error.kind == "auth":
                raise AgentsError(f"the local server ({where}) refused our key "
                                  f"({error.message}): set JUDGEFLOW_LLM__LOCAL_API_KEY to "
                                  "the key it was started with") from None
            if error.kind == "not_found":
                setting = origin.model if origin is not None else "JUDGEFLOW_LLM__MODEL"
                raise AgentsError(f"the local server ({where}) does not serve model "
                                  f"{self.model!r} ({error.message}): set {setting} to a "
                                  "model it serves, or JUDGEFLOW_LLM__BASE_URL to the "
                                  "server's own address") from None
            log.warning("local: cannot check model %s on %s yet (%s); starting anyway, the "
                        "calls retry", self.model, where, error.message)
            return
        log.info("local: model %s declared on %s (no Models API; priced at $%g/$%g per "
                 "MTok in/out)", self.model, where, self.entry.input, self.entry.output)

    async def _probe(self) -> None:
        client = self.client.with_options(max_retries=0)  # a start-up answer, not a retry
        ping: Any = [{"role": "user", "content": "ping"}]
        if self.server.count_tokens:
            try:
                await client.messages.count_tokens(model=self.model, messages=ping)
                return
            except anthropic.NotFoundError:
                pass  # an unknown model, or a release (early vLLM) or proxy without the route
        await client.messages.create(model=self.model, max_tokens=1, messages=ping)

    def _check_prefixes(self, request: LLMRequest) -> None:
        if self.server.prompt_caching:
            super()._check_prefixes(request)

    async def count_prefix_tokens(self, request_prefix: LLMRequest) -> int:
        if self.server.count_tokens:
            return await super().count_prefix_tokens(request_prefix)
        p = self.params(request_prefix)
        # no placeholder turn: an empty message list counts nothing here
        return self.estimate_prefix_tokens(p, p.get("messages") or "")

    async def retrieve_model(self) -> dict[str, Any]:
        return {"id": self.model, "type": "model", "lifecycle": "active"}

    async def load_facts(self) -> Any:
        return self.facts

    @property
    def batch_host(self) -> str:  # type: ignore[override]
        return self.server.name

    @property
    def has_credentials(self) -> bool:
        return True  # a key only when the server asks for one (a 401 says so)
