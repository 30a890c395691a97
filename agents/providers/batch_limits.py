"""The Message Batches API's documented limits, in one place: the client's chunker
(:func:`agents.providers.anthropic_batch.chunk`) and the fake batches API
(``tools/fakes/fake_batches.py``) both read them here, at call time, so a test that lowers
them (``monkeypatch.setattr(batch_limits, "MAX_BYTES", 64 * 1024)``) exercises the split
against the fake's refusal.

Sources (checked 2026-12-01): the batch-processing page,
https://platform.claude.com/docs/en/build-with-claude/batch-processing ("limited to either
100,000 Message requests or 256 MB in size, whichever is reached first"; a batch expires
after 24 hours; results are available for 29 days after creation), and the errors page,
https://platform.claude.com/docs/en/api/errors (413 ``request_too_large``, "Request exceeds
the maximum allowed number of bytes"; request size limits: Batch API 256 MB). No SDK import
here: the fake reads this module too.
"""

from __future__ import annotations

from datetime import timedelta

MAX_REQUESTS = 100_000
#: 256 MB, read as the smaller 256 * 10^6 bytes so either reading of "MB" holds; the size
#: of a batch is the UTF-8 bytes of its create body as the SDK sends it (compact JSON).
MAX_BYTES = 256_000_000
EXPIRY = timedelta(hours=24)
RESULTS_WINDOW = timedelta(days=29)
#: The API's answer to a create body over MAX_BYTES (the errors page).
TOO_LARGE_STATUS = 413
TOO_LARGE_TYPE = "request_too_large"
TOO_LARGE_MESSAGE = "Request exceeds the maximum allowed number of bytes."
