"""A local fake of the Anthropic Messages API (stdlib HTTP on 127.0.0.1) for tests and
benchmarks. Point the real SDK at it with ``base_url=fake.base_url`` (or the env var
``ANTHROPIC_BASE_URL``) so retries, error mapping and response parsing really run.

    with FakeAnthropic() as fake:
        fake.enqueue(Reply.message(text="..."))          # next request gets this
        fake.enqueue(Reply.error(429, retry_after=1))     # ... then this
        fake.responder = lambda body: Reply.message(...)  # used when the queue is empty
        ... run code with base_url=fake.base_url ...
        fake.requests  # list of Received(body=dict, headers=dict, path=str)

Run standalone (for worker subprocesses / benchmarks)::

    python -m tests.fakes.fake_anthropic --port 0 --latency 0.5 --mode judge-ok
"""

from __future__ import annotations

import argparse
import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    #: Seconds to wait before answering (timeouts, latency benchmarks).
    delay: float = 0.0

    @classmethod
    def message(cls, *, text: str | None = None, tool_use: dict[str, Any] | None = None,
                stop_reason: str | None = None, model: str = "claude-fake-1",
                input_tokens: int = 1000, output_tokens: int = 200,
                cache_read: int = 0, cache_write: int = 0, delay: float = 0.0) -> Reply:
        """A Messages API response. ``tool_use`` = ``{"name": ..., "input": {...}}``."""
        content: list[dict[str, Any]] = []
        if text is not None:
            content.append({"type": "text", "text": text})
        if tool_use is not None:
            content.append({"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}",
                            "name": tool_use["name"], "input": tool_use["input"]})
        reason = stop_reason or ("tool_use" if tool_use is not None else "end_turn")
        return cls(200, {
            "id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant",
            "model": model, "content": content, "stop_reason": reason, "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens,
                      "cache_read_input_tokens": cache_read,
                      "cache_creation_input_tokens": cache_write},
        }, {}, delay)

    @classmethod
    def error(cls, status: int, *, retry_after: float | None = None,
              message: str = "scripted error", delay: float = 0.0) -> Reply:
        kinds = {400: "invalid_request_error", 401: "authentication_error",
                 403: "permission_error", 404: "not_found_error", 429: "rate_limit_error",
                 500: "api_error", 529: "overloaded_error"}
        headers = {"x-should-retry": "true"} if status in (429, 500, 502, 503, 529) else {}
        if retry_after is not None:
            headers["retry-after"] = f"{retry_after:g}"
        body = {"type": "error", "error": {"type": kinds.get(status, "api_error"),
                                           "message": message}}
        return cls(status, body, headers, delay)


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float


Responder = Callable[[dict[str, Any]], Reply]


def _default_responder(body: dict[str, Any]) -> Reply:
    return Reply.message(text="ok")


class FakeAnthropic:
    def __init__(self, port: int = 0, responder: Responder | None = None,
                 latency: float = 0.0) -> None:
        self.queue: deque[Reply] = deque()
        self.responder: Responder = responder or _default_responder
        self.latency = latency
        self.requests: list[Received] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self.queue.extend(replies)

    def message_requests(self) -> list[Received]:
        return [r for r in self.requests if r.path.endswith("/v1/messages")]

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self.queue:
                return self.queue.popleft()
        return self.responder(body)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                with fake._lock:
                    fake.requests.append(Received(self.path, dict(self.headers), body,
                                                  time.time()))
                reply = fake._next(body)
                wait = reply.delay or fake.latency
                if wait:
                    time.sleep(wait)
                data = json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.send_header("request-id", f"req_{uuid.uuid4().hex[:16]}")
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        return Handler

    def start(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


#: Named responders for standalone use; other test modules may add to this mapping.
MODES: dict[str, Responder] = {"ok": _default_responder}


def _judge_ok(body: dict[str, Any]) -> Reply:
    """A JudgeAnalysis that is valid for any criterion (the judge worker accepts it)."""
    return Reply.message(text=json.dumps({
        "suggested_answer": None, "reasoning": "The evidence in the notes is mixed.",
        "evidence_pointers": [], "agent_correctness": "n_a",
        "classification_hint": "true_ambiguity", "judge_confidence": "low"}))


MODES["judge-ok"] = _judge_ok


def main() -> None:
    parser = argparse.ArgumentParser(description="Run the fake Anthropic Messages API.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per response")
    parser.add_argument("--mode", default="ok", help=f"responder: {', '.join(MODES)}")
    args = parser.parse_args()
    fake = FakeAnthropic(args.port, MODES[args.mode], args.latency).start()
    print(fake.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    main()
