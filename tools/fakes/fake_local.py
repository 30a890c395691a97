"""A stand-in for an Anthropic-compatible server inside the hospital (vLLM, Ollama,
llama.cpp), stdlib HTTP on 127.0.0.1, written from each server's own documentation and
independently of ``agents/providers/servers.json`` (so a wrong entry there fails a test):

* **vLLM** (``vllm/entrypoints/anthropic/protocol.py``): the request fields of
  ``AnthropicMessagesRequest``; any other field (``thinking``, ``cache_control``,
  ``diagnostics``) is dropped unread by pydantic; a content block type outside its list
  (``document``...) is a 400; ``/v1/messages/count_tokens`` exists; ``--api-key`` wants a
  bearer token; another model name is a 404.
* **Ollama** (docs.ollama.com/api/anthropic-compatibility): supported fields only;
  ``tool_choice``, ``metadata``, ``cache_control`` are "not supported" (ignored); no
  count_tokens (Go's plain-text 404); the key is accepted, not validated; usage has input
  and output tokens only; an unknown model is a 404.
* **llama.cpp** (tools/server README, Anthropic Messages API): one loaded model whatever
  the name; ``tool_choice`` auto/any/tool; count_tokens; ``--api-key`` as ``x-api-key`` or
  a bearer token.

None has a Models API in the Anthropic shape nor Message Batches (404). ``Received.ignored``
lists what the server dropped unread of each request, so a test can assert that judgeflow
sends nothing a server ignores.
"""

from __future__ import annotations

import json
import math
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BLOCK = {"type", "text", "source", "id", "tool_use_id", "name", "input", "content",
         "is_error", "thinking", "signature", "data", "tool_name"}
PROFILES: dict[str, dict[str, Any]] = {
    "vllm": {"fields": {"model", "messages", "max_tokens", "metadata", "output_config",
                        "stop_sequences", "stream", "system", "temperature", "tool_choice",
                        "tools", "top_k", "top_p", "kv_transfer_params",
                        "chat_template_kwargs"},
             "blocks": {"text", "image", "tool_use", "tool_result", "tool_reference",
                        "thinking", "redacted_thinking"},
             "count_tokens": True, "auth": ("bearer",), "any_model": False,
             "cache_usage": True},
    "ollama": {"fields": {"model", "max_tokens", "messages", "system", "stream", "temperature",
                          "top_p", "top_k", "stop_sequences", "tools", "thinking"},
               "blocks": None, "count_tokens": False, "auth": (), "any_model": False,
               "cache_usage": False},
    "llamacpp": {"fields": {"model", "messages", "max_tokens", "system", "temperature",
                            "top_p", "top_k", "stop_sequences", "stream", "tools",
                            "tool_choice"},
                 "blocks": None, "count_tokens": True, "auth": ("bearer", "x-api-key"),
                 "any_model": True, "cache_usage": False},
}


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    ignored: list[str] = field(default_factory=list)
    status: int = 0


def _ignored(body: dict[str, Any], fields: set[str]) -> list[str]:
    out = sorted(k for k in body if k not in fields)
    for where in ("system", "messages"):
        items = body.get(where)
        for item in items if isinstance(items, list) else ():
            blocks = item.get("content") if where == "messages" else [item]
            for block in blocks if isinstance(blocks, list) else ():
                out += [f"{where}.{k}" for k in block if k not in BLOCK]
    return out


class FakeLocal:
    def __init__(self, kind: str = "vllm", model: str = "qwen3-8b",
                 api_key: str | None = None) -> None:
        self.kind, self.profile, self.model, self.api_key = kind, PROFILES[kind], model, api_key
        self.requests: list[Received] = []
        #: body -> the reply's text (a tool_use when it returns a dict with "name")
        self.responder: Callable[[dict[str, Any]], Any] = lambda body: "ok"
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeLocal:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def message_requests(self) -> list[Received]:
        return [r for r in self.requests if r.path == "/v1/messages"]

    def _error(self, status: int, message: str) -> tuple[int, Any]:
        if self.kind == "ollama":
            return status, {"error": message}
        kind = {400: "invalid_request_error", 401: "authentication_error",
                404: "not_found_error"}.get(status, "api_error")
        return status, {"type": "error", "error": {"type": kind, "message": message}}

    def answer(self, path: str, headers: dict[str, str], body: dict[str, Any]
               ) -> tuple[int, Any]:
        p = self.profile
        if self.api_key and p["auth"]:
            given = {headers.get("authorization", "").removeprefix("Bearer "),
                     headers.get("x-api-key", "") if "x-api-key" in p["auth"] else ""}
            if self.api_key not in given:
                return self._error(401, "Unauthorized")
        counting = path == "/v1/messages/count_tokens" and p["count_tokens"]
        if path != "/v1/messages" and not counting:
            return 404, "404 page not found" if self.kind == "ollama" else {"detail": "Not Found"}
        if not p["any_model"] and body.get("model") != self.model:
            return self._error(404, f"model '{body.get('model')}' not found")
        if not counting and not isinstance(body.get("max_tokens"), int):
            return self._error(400, "max_tokens: field required")
        for m in body.get("messages") or ():
            for block in m.get("content") if isinstance(m.get("content"), list) else ():
                if p["blocks"] is not None and block.get("type") not in p["blocks"]:
                    return self._error(400, f"unsupported content block {block.get('type')}")
        tokens = math.ceil(len(json.dumps([body.get("system"), body.get("messages"),
                                           body.get("tools")])) / 3.5)
        if counting:
            return 200, {"input_tokens": tokens}
        reply = self.responder(body)
        content = ([{"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:12]}",
                     "name": reply["name"], "input": reply["input"]}]
                   if isinstance(reply, dict) else [{"type": "text", "text": str(reply)}])
        usage: dict[str, Any] = {"input_tokens": tokens, "output_tokens": 7}
        if p["cache_usage"]:
            usage |= {"cache_creation_input_tokens": None, "cache_read_input_tokens": None}
        return 200, {"id": f"msg_{uuid.uuid4().hex[:16]}", "type": "message",
                     "role": "assistant", "model": body.get("model"), "content": content,
                     "stop_reason": "tool_use" if isinstance(reply, dict) else "end_turn",
                     "stop_sequence": None, "usage": usage}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(size) if size else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {}
                headers = {k.lower(): v for k, v in self.headers.items()}
                path = self.path.split("?")[0]
                rec = Received(path, headers, body, _ignored(body, fake.profile["fields"]))
                fake.requests.append(rec)
                rec.status, answer = fake.answer(path, headers, body)
                data = answer.encode() if isinstance(answer, str) else json.dumps(
                    answer).encode()
                self.send_response(rec.status)
                self.send_header("content-type", "text/plain" if isinstance(answer, str)
                                 else "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_GET = _serve

            def log_message(self, *args: Any) -> None:
                pass

        return Handler
