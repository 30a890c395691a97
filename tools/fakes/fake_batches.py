"""The Message Batches endpoints of the fake Anthropic API.

* ``POST /v1/messages/batches`` ``{"requests": [{"custom_id", "params"}]}``: every request's
  params go through the same validation as ``POST /v1/messages`` (an invalid one ends as an
  ``errored`` result, as the real API reports per-request problems); duplicate or malformed
  custom ids -> 400.
* ``GET /v1/messages/batches/{id}``: the batch; it ends after ``polls`` retrievals (0: at
  once) unless ``hold`` is set. At the end every request is answered by the fake's queue /
  responder and completed like a live message (usage simulated), unless ``outcomes`` scripts
  ``expired`` / ``errored`` for its custom id (popped: the next batch succeeds).
* ``GET /v1/messages/batches/{id}/results``: JSON lines ``{"custom_id", "result"}``.

Limits and time, as the batch-processing page states them (``now`` is the fake's clock: a
test moves it forward):

* more than ``max_requests`` (100,000) requests -> 400 ``invalid_request_error``; a create
  body over ``max_bytes`` (256 MB, its UTF-8 bytes) -> 413 ``request_too_large`` "Request
  exceeds the maximum allowed number of bytes." (the errors page). Both default (None) to
  ``agents.providers.batch_limits``, read per request: the client's chunker reads the same
  figures, so a test lowers both with one ``monkeypatch`` of that module;
* a batch not ended ``expiry`` (24 h) after creation ends with its unanswered entries
  ``expired`` (``hold`` keeps a batch processing until then);
* ``results_window`` (29 days) after creation the batch is archived (``archived_at``) and
  its results answer 404 ``not_found_error``.

``submitted`` lists every custom id ever submitted, ``succeeded`` every one answered.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agents.providers import batch_limits
from tools.fakes import fake_rules as rules

_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass
class Raw:
    """A non-JSON body (the results JSONL)."""

    data: bytes
    content_type: str = "application/binary"


@dataclass
class _Batch:
    id: str
    requests: list[dict[str, Any]]
    polls_left: int
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # custom id -> result
    ended: bool = False
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    ended_at: datetime | None = None


class Batches:
    def __init__(self, fake: Any) -> None:
        self.fake = fake
        self.polls = 0
        self.hold = False
        self.outcomes: dict[str, list[str]] = {}
        self.batches: dict[str, _Batch] = {}
        self.submitted: list[str] = []
        self.succeeded: list[str] = []
        #: None: the documented figures of agents.providers.batch_limits (read per request)
        self.max_requests: int | None = None
        self.max_bytes: int | None = None
        self.expiry = batch_limits.EXPIRY
        self.results_window = batch_limits.RESULTS_WINDOW
        #: The fake's clock (tests replace it to move time forward).
        self.now: Callable[[], datetime] = lambda: datetime.now(UTC)

    def answer(self, route: str, body: dict[str, Any], version: str | None = None) -> Any:
        parts = route.rstrip("/").split("/")  # '', v1, messages, batches, id?, results?
        if len(parts) == 4:
            return self._create(body, version)
        batch = self.batches.get(parts[4])
        if batch is None:
            return rules._reply(404, {"type": "error", "error": {
                "type": "not_found_error", "message": f"batch {parts[4]} not found"}})
        now = self.now()
        if not batch.ended and now >= batch.created_at + self.expiry:
            self._finish(batch, expire=True)
        if len(parts) == 6 and parts[5] == "results":
            if not batch.ended:
                return rules.invalid("batch has not ended")
            if now >= batch.created_at + self.results_window:
                return rules._reply(404, {"type": "error", "error": {
                    "type": "not_found_error",
                    "message": f"results of batch {batch.id} are no longer available"}})
            lines = [json.dumps({"custom_id": r["custom_id"], "result": batch.results[
                r["custom_id"]]}) for r in batch.requests]
            return rules._reply(200, Raw(("\n".join(lines) + "\n").encode()))
        if not batch.ended and not self.hold:
            if batch.polls_left <= 0:
                self._finish(batch)
            batch.polls_left -= 1
        return rules._reply(200, self._view(batch))

    def _create(self, body: dict[str, Any], version: str | None = None) -> Any:
        reqs = body.get("requests")
        if not isinstance(reqs, list) or not reqs:
            return rules.invalid("requests: a non-empty list is required")
        ids = [r.get("custom_id") for r in reqs if isinstance(r, dict)]
        if len(ids) != len(reqs) or not all(isinstance(i, str) and _CUSTOM_ID.match(i)
                                            for i in ids):
            return rules.invalid("custom_id must match ^[a-zA-Z0-9_-]{1,64}$")
        if len(set(ids)) != len(ids):
            return rules.invalid("custom_id values must be unique within a batch")
        max_requests = self.max_requests or batch_limits.MAX_REQUESTS
        if len(reqs) > max_requests:
            return rules.invalid(f"requests: a batch holds at most {max_requests:,} "
                                 f"requests, got {len(reqs):,}")
        # the body's UTF-8 bytes as the SDK sends it (compact JSON, non-ASCII unescaped)
        size = len(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())
        if size > (self.max_bytes or batch_limits.MAX_BYTES):
            return rules._reply(batch_limits.TOO_LARGE_STATUS, {"type": "error", "error": {
                "type": batch_limits.TOO_LARGE_TYPE,
                "message": batch_limits.TOO_LARGE_MESSAGE}})
        batch = _Batch(f"msgbatch_{uuid.uuid4().hex[:24]}", reqs, self.polls,
                       created_at=self.now())
        self.batches[batch.id] = batch
        self.submitted.extend(str(i) for i in ids)
        for r in reqs:  # the same validation as POST /v1/messages, per request
            params = r.get("params") or {}
            entry = self.fake.model(str(params.get("model")))
            rejected = (rules.version_problem(params, version) if self.fake.strict else None) \
                or (rules.not_found(str(params.get("model"))) if entry is None
                    else rules.validate(params, entry, self.fake.state, version))
            if rejected is not None:
                batch.results[r["custom_id"]] = {"type": "errored", "error": rejected.body}
        return rules._reply(200, self._view(batch))

    def _finish(self, batch: _Batch, expire: bool = False) -> None:
        """End the batch: answer every entry (``expire``: 24 h passed, none answered)."""
        for r in batch.requests:
            cid, params = r["custom_id"], r["params"]
            if cid in batch.results:
                continue
            if expire:
                batch.results[cid] = {"type": "expired"}
                continue
            forced = self.outcomes.get(cid)
            if forced:
                kind = forced.pop(0)
                batch.results[cid] = {"type": kind} if kind == "expired" else {
                    "type": "errored", "error": {"type": "error", "error": {
                        "type": "api_error", "message": "scripted batch failure"}}}
                continue
            reply = self.fake._next(params)
            if reply.status == 200 and isinstance(reply.body, dict) and \
                    reply.body.get("type") == "message":
                entry = self.fake.model(str(params.get("model")))
                reply = rules.complete(reply, params, entry, self.fake.state)
                batch.results[cid] = {"type": "succeeded", "message": reply.body}
                self.succeeded.append(cid)
            else:
                batch.results[cid] = {"type": "errored", "error": reply.body}
        batch.ended = True
        batch.ended_at = self.now()

    def _view(self, batch: _Batch) -> dict[str, Any]:
        kinds = [res["type"] for res in batch.results.values()] if batch.ended else []
        counts = {k: kinds.count(k) for k in ("succeeded", "errored", "canceled", "expired")}
        counts["processing"] = 0 if batch.ended else len(batch.requests)
        def stamp(t: datetime | None) -> str | None:
            return t.strftime("%Y-%m-%dT%H:%M:%SZ") if t is not None else None

        gone = self.now() >= batch.created_at + self.results_window
        return {"id": batch.id, "type": "message_batch",
                "processing_status": "ended" if batch.ended else "in_progress",
                "request_counts": counts, "created_at": stamp(batch.created_at),
                "expires_at": stamp(batch.created_at + self.expiry),
                "ended_at": stamp(batch.ended_at),
                "archived_at": stamp(batch.created_at + self.results_window) if gone else None,
                "cancel_initiated_at": None,
                "results_url": (f"{self.fake.base_url}/v1/messages/batches/{batch.id}/results"
                                if batch.ended else None)}
