"""A local fake of the Anthropic API (stdlib HTTP on 127.0.0.1) that behaves like the real
one where our code can get it wrong. Point the real SDK at it with ``base_url=fake.base_url``
(or ``ANTHROPIC_BASE_URL``) so retries, error mapping and response parsing really run.

    with FakeAnthropic() as fake:
        fake.enqueue(Reply.message(text="..."))          # next Messages request gets this
        fake.enqueue(Reply.error(429, retry_after=1))     # ... then this
        fake.responder = lambda body: Reply.message(...)  # used when the queue is empty
        ... run code with base_url=fake.base_url ...
        fake.requests  # list of Received(body=dict, headers=dict, path=str)

Like the real API (model facts from :mod:`tools.fakes.fake_models`, written from the docs
independently of our catalogue):

* Strict about the API version (``strict``, default True), keyed on the ``anthropic-version``
  header: missing or unknown -> 400; under ``2026-10-21`` (what the SDK 2.x sends)
  ``temperature``/``top_p``/``top_k`` at any value, a ``document`` block in an assistant
  message and non-empty ``citations`` on a user text block -> 400 ``invalid_request_error``
  (Messages, count_tokens and every batched request); under ``2023-06-01`` non-default
  sampling params on a model that refuses them -> 400.
* ``POST /v1/messages`` first validates (:mod:`tools.fakes.fake_rules`): unknown or retired
  model -> 404 ``not_found_error``; forced ``tool_choice`` on a model that refuses it,
  a manual thinking budget or an effort the model does not list,
  JSON-schema keywords structured outputs / strict tools do not
  accept, more than 4 ``cache_control`` breakpoints, a continued turn whose thinking blocks
  are missing or modified -> 400 ``invalid_request_error``. Rejected requests never reach
  the queue or the responder.
* Replies to adaptive-thinking models start with a signed ``thinking`` block.
* Usage is simulated unless the reply scripts it: tokens = ceil(characters / 3.5) of the
  request's JSON; a prefix up to a ``cache_control`` breakpoint that reaches the model's
  minimum is written to the cache on first use and read afterwards; below it nothing caches.
* ``POST /v1/messages/count_tokens`` returns that same estimate; ``GET /v1/models/{id}``
  returns the model's ``ModelInfo`` (lifecycle, dates, capabilities, token limits; 404 if
  unknown), ``GET /v1/models`` lists them.
* Cache diagnostics: a request with ``diagnostics.previous_message_id`` gets
  ``diagnostics.cache_miss_reason`` (``model_changed``/``system_changed``/``tools_changed``/
  ``messages_changed`` with ``cache_missed_input_tokens``, ``previous_message_not_found``)
  or ``diagnostics: null`` when nothing diverged.
* Rate limits (:mod:`tools.fakes.fake_tier`): ``FakeAnthropic(tier=Tier(rpm=..., itpm=...,
  otpm=..., minute_seconds=...))`` enforces a token bucket per dimension on Messages
  requests (after validation, before the queue): a request that does not fit gets a 429
  ``rate_limit_error`` with the ``retry-after`` until the bucket has room, and costs
  nothing. The default tier is large enough never to bind.
* Outages: while ``fake.outage`` holds a reply (``Reply.error(529)``, ``Reply.error(503)``,
  ``Reply.spend_limit()``...) every Messages request that passes validation gets it instead
  of an answer; ``None`` (the default) ends the outage. ``Received.status`` is the status
  each request was answered with, so a test can count what was paid (200s);
  ``Received.billed`` is set once a message was generated for it, also when its client died
  before the answer was written (what the real API bills: a call in flight at a kill).
* The Message Batches endpoints (``/v1/messages/batches``...) are in
  :mod:`tools.fakes.fake_batches` (``fake.batches``): same validation per request.
* Every answer carries ``request-id`` and ``anthropic-ratelimit-*`` headers (the buckets
  after the answer's output was charged); 429 and 529 carry ``retry-after``
  (``default_retry_after`` seconds unless the reply sets one); error bodies are
  ``{"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}``, with
  ``error.details.error_code`` when the reply names a cause (``Reply.spend_limit()``,
  ``Reply.ramp_limit()``): where the SDK reads ``APIStatusError.error_code`` from.

Run standalone (for worker subprocesses / benchmarks)::

    python -m tools.fakes.fake_anthropic --port 0 --latency 0.5 --mode judge-ok \
        --rpm 50 --itpm 30000 --otpm 8000 --minute-seconds 60
"""

from __future__ import annotations

import argparse
import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tools.fakes import fake_rules as rules
from tools.fakes.fake_batches import Batches, Raw
from tools.fakes.fake_models import FakeModel
from tools.fakes.fake_models import load as load_models
from tools.fakes.fake_reply import Reply
from tools.fakes.fake_tier import Tier


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float
    #: the HTTP status it was answered with (0 until the answer was written: a request
    #: still waiting when its client died was never answered)
    status: int = 0
    #: a message was generated for it, so the real API bills it, whether or not its client
    #: was still there to read the answer (a worker killed with the call in flight)
    billed: bool = False


Responder = Callable[[dict[str, Any]], Reply]


def _default_responder(body: dict[str, Any]) -> Reply:
    return Reply.message(text="ok")


class FakeAnthropic:
    def __init__(self, port: int = 0, responder: Responder | None = None,
                 latency: float = 0.0, models: dict[str, FakeModel] | None = None,
                 tier: Tier | None = None, strict: bool = True) -> None:
        self.queue: deque[Reply] = deque()
        self.responder: Responder = responder or _default_responder
        self.latency = latency
        self.requests: list[Received] = []
        self.models: dict[str, FakeModel] = dict(models or load_models())
        #: Reject what the request's anthropic-version rejects (see the module doc).
        self.strict = strict
        #: retry-after (s) sent with a 429/529 whose reply sets none; None = no header.
        self.default_retry_after: float | None = 1.0
        self.state = rules.State(tier=tier or Tier())
        self.batches = Batches(self)
        #: message id -> request fingerprint (cache diagnostics)
        self.fingerprints: dict[str, dict[str, Any]] = {}
        #: while set, the reply to every valid Messages request (an outage); None: answer
        self.outage: Reply | None = None
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
        return [r for r in self.requests if r.path.split("?")[0].endswith("/v1/messages")]

    def model(self, model_id: str) -> FakeModel | None:
        """The model a Messages request may use (None: unknown or retired -> 404)."""
        entry = self.models.get(model_id)
        return None if entry is None or entry.lifecycle == "retired" else entry

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self.queue:
                return self.queue.popleft()
        return self.responder(body)

    def answer(self, path: str, body: dict[str, Any],
               headers: dict[str, str] | None = None) -> Reply:
        """The reply to one request (validation, then queue/responder, then simulation)."""
        route = path.split("?")[0]
        version = rules.version_of(headers or {})
        if self.strict and (bad := rules.version_header_problem(version)) is not None:
            return bad
        if route.rstrip("/") == "/v1/models":
            return rules.model_list(self)
        if route.startswith("/v1/models/"):
            return rules.model_info(self, route.rsplit("/", 1)[1])
        if route.startswith("/v1/messages/batches"):
            return self.batches.answer(route, body, version)  # type: ignore[no-any-return]
        if self.strict and (bad := rules.version_problem(body, version)) is not None:
            return bad
        entry = self.model(str(body.get("model")))
        if entry is None:
            return rules.not_found(str(body.get("model")))
        if route.endswith("/v1/messages/count_tokens"):
            return Reply(200, {"input_tokens": rules.estimate(rules.segments(body))})
        rejected = rules.validate(body, entry, self.state, version) or rules.admit(
            body, entry, self.state)
        if rejected is not None:
            return rejected
        outage = self.outage
        if outage is not None:
            return outage
        reply = self._next(body)
        if reply.status == 200 and isinstance(reply.body, dict) and \
                reply.body.get("type") == "message":
            reply = rules.complete(reply, body, entry, self.state)
            reply.body["diagnostics"] = self.diagnose(body, reply.body["id"])
        return reply

    def diagnose(self, body: dict[str, Any], message_id: str) -> dict[str, Any] | None:
        """Fingerprint the request (when it asks for diagnostics) and compare it with the
        one it names (:func:`tools.fakes.fake_rules.cache_miss_reason`)."""
        asked = body.get("diagnostics")
        if not isinstance(asked, dict):
            return None
        mine = rules.fingerprint(body)
        with self._lock:
            self.fingerprints[message_id] = mine
            before = self.fingerprints.get(str(asked.get("previous_message_id")))
        if asked.get("previous_message_id") is None:
            return None
        reason = rules.cache_miss_reason(before, mine)
        return None if reason is None else {"cache_miss_reason": reason}
    def answer_request(self, path: str, headers: dict[str, str], body: dict[str, Any],
                       raw: bytes = b"") -> Reply:
        """The HTTP entry point; a subclass that checks headers or signatures (a platform
        fake's authentication) overrides this, then calls :meth:`answer`."""
        return self.answer(path, body, {k.lower(): v for k, v in headers.items()})

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._serve({}, b"")

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                self._serve(body, raw)

            def _serve(self, body: dict[str, Any], raw_body: bytes) -> None:
                received = Received(self.path, dict(self.headers), body, time.time())
                with fake._lock:
                    fake.requests.append(received)
                reply = fake.answer_request(self.path, dict(self.headers), body, raw_body)
                received.billed = reply.status == 200 and isinstance(reply.body, dict) and \
                    reply.body.get("type") == "message"
                wait = reply.delay or fake.latency
                if wait:
                    time.sleep(wait)
                raw = isinstance(reply.body, Raw)
                request_id = f"req_{uuid.uuid4().hex[:24]}"
                body_out = reply.body
                if isinstance(body_out, dict) and body_out.get("type") == "error":
                    body_out = {**body_out, "request_id": request_id}
                data = reply.body.data if raw else json.dumps(body_out).encode()
                headers = {**rules.rate_headers(fake.state, reply), **reply.headers}
                if reply.status in (429, 529) and "retry-after" not in headers and \
                        fake.default_retry_after is not None:
                    headers["retry-after"] = f"{fake.default_retry_after:g}"
                # set before the client can read the answer (a test reading it right after
                # its call returns must see it); undone if the answer could not be written
                received.status = reply.status
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", reply.body.content_type if raw
                                     else "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.send_header("request-id", request_id)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    received.status = 0  # the client gave up (timeout test): never answered

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


def add_tier_args(parser: argparse.ArgumentParser) -> None:
    d = Tier()
    parser.add_argument("--rpm", type=int, default=d.rpm, help="requests per minute")
    parser.add_argument("--itpm", type=int, default=d.itpm, help="input tokens per minute")
    parser.add_argument("--otpm", type=int, default=d.otpm, help="output tokens per minute")
    parser.add_argument("--minute-seconds", type=float, default=d.minute_seconds,
                        help="length of the rate-limit minute in real seconds (shorter: a "
                        "benchmark sees minutes of traffic in seconds)")


def tier_from(args: argparse.Namespace) -> Tier:
    return Tier(args.rpm, args.itpm, args.otpm, args.minute_seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description="Run the fake Anthropic Messages API.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per response")
    parser.add_argument("--mode", default="ok", help=f"responder: {', '.join(MODES)}")
    add_tier_args(parser)
    args = parser.parse_args()
    fake = FakeAnthropic(args.port, MODES[args.mode], args.latency,
                         tier=tier_from(args)).start()
    print(fake.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    main()
