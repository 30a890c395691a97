"""An HTTP-level fake of both Amazon Bedrock endpoints, so the SDK's own ``AnthropicBedrock``
(InvokeModel, inherited from :class:`tools.fakes.fake_platforms.FakeBedrock`) and
``AnthropicBedrockMantle`` clients run end to end. Point ``ANTHROPIC_BEDROCK_BASE_URL`` at
``fake.base_url`` and ``ANTHROPIC_BEDROCK_MANTLE_BASE_URL`` at ``fake.mantle_base_url``.

The bedrock-mantle endpoint ("Claude in Amazon Bedrock": the Claude API's Messages shape at
``https://bedrock-mantle.{region}.api.aws/anthropic/v1/messages``; pages cited in
docs/configuration.md) rejects, before anything reaches the model:

* a route other than ``POST /anthropic/v1/messages`` and ``.../messages/count_tokens`` ->
  404 (no Message Batches, no Models API here: the platform data says the endpoint lacks
  them, so judgeflow never asks);
* a request without Bedrock's API key (``Authorization: Bearer`` or ``x-api-key``, the
  ``AWS_BEARER_TOKEN_BEDROCK`` key) or a SigV4 signature for service ``bedrock-mantle``
  (a signature for ``bedrock`` — InvokeModel's — is refused), the test access key and region,
  recomputed with the secret -> 403;
* a missing or unknown ``anthropic-version`` header -> 400 (the version is a header here,
  not a body field: a body ``anthropic_version`` -> 400), and under ``2026-10-21`` what that
  version rejects (the shared :class:`FakeAnthropic` checks);
* a ``model`` that is not a bedrock-mantle model id of the platform data: an
  InvokeModel id (ARN-versioned, ``...-v1:0``) -> 400 naming the endpoint that serves it;
  a Claude API id (``claude-sonnet-5-5``) or an unknown one -> 400 ``ValidationException``.

Valid requests are answered by the shared fake under the catalogue model (same validation,
simulated usage, queue and responder); the answer names the Bedrock model id, as the
platform does.
"""

from __future__ import annotations

from typing import Any

from tools.fakes.fake_anthropic import Reply
from tools.fakes.fake_platforms import BEARER, FakeBedrock, undocumented

PREFIX = "/anthropic"
ROUTES = ("/v1/messages", "/v1/messages/count_tokens")


class FakeBedrockMantle(FakeBedrock):
    """Bedrock with both endpoints: ``/model/{id}/invoke`` and ``/anthropic/v1/...``."""

    mantle_service = "bedrock-mantle"

    @property
    def mantle_base_url(self) -> str:
        return self.base_url + PREFIX

    def mantle_requests(self) -> list[Any]:
        return [r for r in self.requests if r.path.startswith(PREFIX + "/")]

    def answer_request(self, path: str, headers: dict[str, str], body: dict[str, Any],
                       raw: bytes = b"") -> Reply:
        if not path.startswith(PREFIX + "/"):
            return super().answer_request(path, headers, body, raw)  # InvokeModel
        h = {k.lower(): v for k, v in headers.items()}
        key = h.get("x-api-key")
        denied = None if key == BEARER else self._auth(path, h, raw, self.mantle_service)
        if key is not None and key != BEARER:
            denied = self.error(403, "UnrecognizedClientException", "Invalid API Key format")
        if denied is not None:
            return denied
        route = path.split("?")[0][len(PREFIX):]
        if route not in ROUTES:
            return self.error(404, "UnknownOperationException", "unknown operation")
        if "anthropic_version" in body:
            return self.error(400, "ValidationException", "anthropic_version is not a body "
                              "field on bedrock-mantle: send the anthropic-version header")
        if route == "/v1/messages" and undocumented(body):
            return self.error(400, "ValidationException", str(undocumented(body)))
        problem, model = self._model(str(body.get("model")))
        if problem is not None:
            return problem
        reply = self.answer(route, {**body, "model": model}, h)
        if isinstance(reply.body, dict) and reply.body.get("type") == "message":
            reply.body["model"] = body["model"]
        return reply

    def _model(self, platform_id: str) -> tuple[Reply | None, str]:
        """The catalogue model a bedrock-mantle id stands for, or the 400 Bedrock gives."""
        model = self.data.catalogue_id(platform_id, "mantle")
        if model is not None:
            return None, model
        if self.data.catalogue_id(platform_id, "invoke") is not None:
            return self.error(400, "ValidationException", f"{platform_id} is not served on "
                              "bedrock-mantle; call it through InvokeModel on "
                              "bedrock-runtime"), ""
        return self.error(400, "ValidationException",
                          "The provided model identifier is invalid."), ""
