"""The API's prompt-cache diagnostics, per cacheable prefix (pure bookkeeping; tested).

A request carrying ``diagnostics: {"previous_message_id": <id or null>}`` gets back
``diagnostics.cache_miss_reason`` when its prompt diverged from that earlier request's
(``model_changed``, ``system_changed``, ``tools_changed``, ``messages_changed``, with
``cache_missed_input_tokens``; ``previous_message_not_found``; ``unavailable``), or
``diagnostics: null`` when nothing diverged (cache-diagnostics guide; SDK 2.x
``types/diagnostics.py``). We pass, per prefix (tools + system blocks), the id of the last
answer with the same prefix, so:

* ``model_changed`` / ``system_changed`` / ``tools_changed`` mean our cached prefix broke
  (a bug: a timestamp in the system prompt, reordered tools): WARNING, once per prefix and
  reason;
* ``messages_changed`` is expected (each request asks about another cell after the
  cached prefix): DEBUG;
* a second request whose prefix matched (no prefix reason) but read nothing from the cache
  although the prefix was counted above the catalogue's minimum: WARNING, once per prefix
  (the minimum in the catalogue is probably too low; the 5.5 models' minimums are not
  confirmed by the documentation we could read).

Only reason types and token counts are logged: never prompt content.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from agents.providers.base import LLMRequest
from schemas.ids import derive_id

log = logging.getLogger(__name__)
PREFIX_REASONS = frozenset({"model_changed", "system_changed", "tools_changed"})


def prefix_key(request: LLMRequest) -> str:
    raw = json.dumps([[(b.text, b.cache) for b in request.system], request.tools],
                     sort_keys=True, default=str)
    return derive_id(raw, length=None)


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


@dataclass
class _Prefix:
    last_id: str | None = None
    answers: int = 0
    #: tokens up to the last breakpoint, as counted by count_tokens (None: not counted)
    counted: int | None = None
    warned: set[str] = field(default_factory=set)


class CacheLog:
    """One per provider: the last answer per prefix and what the API said about it."""

    def __init__(self, minimum: int = 0) -> None:
        self.minimum = minimum
        self.prefixes: dict[str, _Prefix] = {}
        #: cache_miss_reason types seen (for ``llm check`` and tests)
        self.reasons: list[str] = []

    def key(self, request: LLMRequest) -> str | None:
        """The prefix key of a request with a cache breakpoint (None: nothing cached)."""
        return prefix_key(request) if any(b.cache for b in request.system) else None

    def previous(self, key: str) -> str | None:
        entry = self.prefixes.get(key)
        return entry.last_id if entry is not None else None

    def counted(self, key: str, tokens: int) -> None:
        self.prefixes.setdefault(key, _Prefix()).counted = tokens

    def observe(self, key: str, message: Any, model: str) -> str | None:
        """Record one answer; log what its diagnostics say. Returns the reason type."""
        entry = self.prefixes.setdefault(key, _Prefix())
        entry.last_id = _get(message, "id") or entry.last_id
        entry.answers += 1
        reason = _get(_get(message, "diagnostics"), "cache_miss_reason")
        kind = str(_get(reason, "type")) if reason is not None else None
        usage = _get(message, "usage")
        read = int(_get(usage, "cache_read_input_tokens") or 0)
        written = int(_get(usage, "cache_creation_input_tokens") or 0)
        if kind is not None:
            self.reasons.append(kind)
            missed = _get(reason, "cache_missed_input_tokens")
            if kind in PREFIX_REASONS and kind not in entry.warned:
                entry.warned.add(kind)
                log.warning("prompt cache: %s (%s input tokens not read from the cache): the "
                            "cached prefix differs from the previous request's", kind, missed)
            else:
                log.debug("prompt cache: %s (%s tokens)", kind, missed)
        prefix_matched = kind is None or kind not in PREFIX_REASONS
        if (entry.answers > 1 and prefix_matched and read == 0 and written == 0
                and entry.counted is not None and entry.counted >= self.minimum
                and "minimum" not in entry.warned):
            entry.warned.add("minimum")
            log.warning("prompt cache: a %d-token prefix matched the previous request but "
                        "nothing was cached or read: %s's minimum cacheable prefix is "
                        "probably above the catalogue's %d tokens", entry.counted, model,
                        self.minimum)
        return kind
