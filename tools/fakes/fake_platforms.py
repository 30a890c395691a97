"""HTTP-level fakes of Claude on Amazon Bedrock and Google Vertex AI, so the SDK's own
``AnthropicBedrock``/``AnthropicVertex`` clients run end to end (URL building, SigV4 signing,
OAuth tokens from the ADC chain, error mapping). Each is a :class:`FakeAnthropic` underneath
(same validation, simulated usage, queue and responder) behind the platform's door, which
rejects what the platform rejects (per the pages cited in docs/configuration.md):

Bedrock (``FakeBedrock``; point ``ANTHROPIC_BEDROCK_BASE_URL`` at ``fake.base_url``):

* only ``POST /model/{model-id}/invoke`` (streaming and everything else: 404 here);
* authentication: ``Authorization: Bearer <api key>`` (Bedrock API keys,
  ``AWS_BEARER_TOKEN_BEDROCK``) or a SigV4 ``AWS4-HMAC-SHA256`` signature whose access key,
  region and service (``bedrock``) match and whose signature the fake recomputes with the
  secret key -> otherwise 403 (``UnrecognizedClientException`` / missing token);
* ``model`` in the body -> 400 (the model id is in the URL); ``anthropic_version`` missing or
  not ``bedrock-2023-05-31`` -> 400; an unknown model id -> 400 ``ValidationException``.
  Errors are ``{"message": ...}`` with an ``x-amzn-ErrorType`` header.

Vertex (``FakeVertex``; ``ANTHROPIC_VERTEX_BASE_URL`` = ``fake.vertex_base_url``):

* ``POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/{m}:rawPredict``
  and ``.../models/count-tokens:rawPredict`` (with ``model`` in the body, as the SDK sends);
  another project or region -> 404;
* ``Authorization: Bearer`` must carry a token this fake's OAuth endpoint issued
  (``POST /token``, a JWT-bearer grant verified against the key of the service-account ADC
  file of :meth:`FakeVertex.adc_file`) -> else 401 ``UNAUTHENTICATED``;
* ``model`` in a rawPredict body -> 400; ``anthropic_version`` not ``vertex-2023-10-16`` ->
  400. Errors are ``{"error": {"code", "message", "status"}}``.

Neither platform serves Message Batches here (nor does the SDK's platform client send them).
Bedrock's other endpoint, the bedrock-mantle Messages API, is in
:mod:`tools.fakes.fake_mantle` (a :class:`FakeBedrock` that serves both).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote

from agents.providers import platforms
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

AWS_KEY, AWS_SECRET, AWS_REGION = "AKIDJUDGEFLOWTEST", "judgeflow-test-secret", "us-east-1"
BEARER = "bedrock-api-key-judgeflow-test"
#: The platforms version requests in the body (bedrock-2023-05-31, vertex-2023-10-16); both
#: take the Messages API as of 2023-06-01, which is what the shared fake then checks.
PLATFORM_VERSION = {"anthropic-version": "2023-06-01"}
_SIG = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
                  r"SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$")
_INVOKE = re.compile(r"^/model/([^/]+)/invoke$")
_VERTEX = re.compile(r"^/v1/projects/([^/]+)/locations/([^/]+)/publishers/anthropic/models/"
                     r"([^/:]+):rawPredict$")


#: Claude API body fields the platforms do not document (the cache-diagnostics page names
#: the Claude API only): refused the way Bedrock refuses any unknown key.
UNDOCUMENTED = ("diagnostics",)


def undocumented(body: dict[str, Any]) -> str | None:
    extra = [k for k in UNDOCUMENTED if k in body]
    return f"extraneous key [{extra[0]}] is not permitted" if extra else None


def _body_problems(body: dict[str, Any], version: str) -> str | None:
    if "model" in body:
        return "extraneous key [model] is not permitted (the model is named in the URL)"
    if undocumented(body):
        return undocumented(body)
    if body.get("anthropic_version") != version:
        return f"anthropic_version must be {version!r}"
    return None


class FakeBedrock(FakeAnthropic):
    platform = "bedrock"
    #: The SigV4 service InvokeModel requests are signed for (bedrock-mantle: its own).
    service = "bedrock"

    def __init__(self, *args: Any, region: str = AWS_REGION, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.region = region
        self.data = platforms.get("bedrock")

    @staticmethod
    def error(status: int, kind: str, message: str) -> Reply:
        return Reply(status, {"message": message}, {"x-amzn-ErrorType": f"{kind}:"})

    def answer_request(self, path: str, headers: dict[str, str], body: dict[str, Any],
                       raw: bytes = b"") -> Reply:
        h = {k.lower(): v for k, v in headers.items()}
        denied = self._auth(path, h, raw)
        if denied is not None:
            return denied
        m = _INVOKE.match(path.split("?")[0])
        if m is None:
            return self.error(404, "UnknownOperationException", "unknown operation")
        problem = _body_problems(body, str(self.data.endpoints["invoke"].anthropic_version))
        if problem is not None:
            return self.error(400, "ValidationException", problem)
        model = self.data.catalogue_id(unquote(m.group(1)), "invoke")
        if model is None:
            return self.error(400, "ValidationException",
                              "The provided model identifier is invalid.")
        rest = {k: v for k, v in body.items() if k != "anthropic_version"}
        return self.answer("/v1/messages", {**rest, "model": model}, PLATFORM_VERSION)

    def _auth(self, path: str, h: dict[str, str], raw: bytes,
              service: str | None = None) -> Reply | None:
        service = service or self.service
        auth = h.get("authorization", "")
        if auth.startswith("Bearer "):
            return None if auth[7:] == BEARER else self.error(
                403, "UnrecognizedClientException", "Invalid API Key format")
        m = _SIG.match(auth)
        if m is None or "x-amz-date" not in h:
            return self.error(403, "MissingAuthenticationTokenException",
                              "Missing Authentication Token")
        key, day, region, signed_for, signed, signature = m.groups()
        if key != AWS_KEY or region != self.region or signed_for != service \
                or not h["x-amz-date"].startswith(day):
            return self.error(403, "UnrecognizedClientException",
                              "The security token included in the request is invalid.")
        if not hmac.compare_digest(signature, self._signature(path, h, signed, day, raw,
                                                              service)):
            return self.error(403, "InvalidSignatureException", "The request signature we "
                              "calculated does not match the signature you provided.")
        return None

    def _signature(self, path: str, h: dict[str, str], signed: str, day: str,
                   raw: bytes, service: str) -> str:
        """SigV4 recomputed from the request as received (AWS's documented algorithm)."""
        uri, _, query = path.partition("?")
        canon_uri = "/".join(_q(unquote(seg)) for seg in uri.split("/"))
        names = signed.split(";")
        canonical = "\n".join([
            "POST", canon_uri, query,
            "".join(f"{n}:{' '.join(h.get(n, '').split())}\n" for n in names), signed,
            hashlib.sha256(raw).hexdigest()])
        scope = f"{day}/{self.region}/{service}/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", h["x-amz-date"], scope,
                             hashlib.sha256(canonical.encode()).hexdigest()])
        k = f"AWS4{AWS_SECRET}".encode()
        for part in (day, self.region, service, "aws4_request"):
            k = hmac.new(k, part.encode(), hashlib.sha256).digest()
        return hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()


def _q(segment: str) -> str:
    from urllib.parse import quote

    return quote(segment, safe="-_.~")


class FakeVertex(FakeAnthropic):
    platform = "vertex"

    def __init__(self, *args: Any, project: str = "judgeflow-test",
                 region: str = "us-east5", **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.project, self.region = project, region
        self.data = platforms.get("vertex")
        self.issued: set[str] = set()
        self.public_key: Any = None

    @property
    def vertex_base_url(self) -> str:
        return self.base_url + "/v1"

    def adc_file(self, directory: Path) -> Path:
        """A service-account ADC file (for ``GOOGLE_APPLICATION_CREDENTIALS``) with a fresh
        RSA key and this fake as its ``token_uri``: the real google-auth chain signs a JWT
        assertion, this fake verifies it with the public key and issues an access token —
        offline. (An ``authorized_user`` file would not do: google-auth always sends those
        to Google's own token endpoint.)"""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.public_key = key.public_key()
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
        path = directory / "adc.json"
        path.write_text(json.dumps({
            "type": "service_account", "project_id": self.project,
            "private_key_id": "judgeflow-test-key", "private_key": pem,
            "client_email": f"judge@{self.project}.iam.gserviceaccount.com",
            "client_id": "1", "token_uri": f"{self.base_url}/token"}))
        return path

    @staticmethod
    def error(status: int, state: str, message: str) -> Reply:
        return Reply(status, {"error": {"code": status, "message": message, "status": state}})

    def answer_request(self, path: str, headers: dict[str, str], body: dict[str, Any],
                       raw: bytes = b"") -> Reply:
        route = path.split("?")[0]
        if route == "/token":
            return self._token(body)
        auth = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
        if not auth.startswith("Bearer ") or auth[7:] not in self.issued:
            return self.error(401, "UNAUTHENTICATED", "Request had invalid authentication "
                              "credentials. Expected OAuth 2 access token.")
        m = _VERTEX.match(route)
        if m is None or m.group(1) != self.project or m.group(2) != self.region:
            return self.error(404, "NOT_FOUND", "Publisher model not found for this project "
                              "and location.")
        if m.group(3) == "count-tokens":
            model = self.data.catalogue_id(str(body.get("model")))
            if model is None:
                return self.error(404, "NOT_FOUND", "Publisher model not found.")
            rest = {k: v for k, v in body.items() if k != "anthropic_version"}
            return self.answer("/v1/messages/count_tokens", {**rest, "model": model},
                               PLATFORM_VERSION)
        problem = _body_problems(body, str(self.data.endpoints["rawpredict"].anthropic_version))
        if problem is not None:
            return self.error(400, "INVALID_ARGUMENT", problem)
        model = self.data.catalogue_id(unquote(m.group(3)))
        if model is None:
            return self.error(404, "NOT_FOUND", "Publisher model not found.")
        rest = {k: v for k, v in body.items() if k != "anthropic_version"}
        return self.answer("/v1/messages", {**rest, "model": model}, PLATFORM_VERSION)

    def _token(self, body: dict[str, Any]) -> Reply:
        """OAuth 2.0 JWT-bearer grant: the assertion must be signed by the ADC file's key."""
        form = {k: v[0] for k, v in parse_qs(str(body.get("_unparsed", ""))).items()}
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" or \
                not self._valid_assertion(form.get("assertion", "")):
            return Reply(400, {"error": "invalid_grant"})
        token = "ya29.judgeflow-" + secrets.token_hex(8)
        self.issued.add(token)
        return Reply(200, {"access_token": token, "expires_in": 3600, "token_type": "Bearer"})

    def _valid_assertion(self, jwt: str) -> bool:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        parts = jwt.split(".")
        if len(parts) != 3 or self.public_key is None:
            return False
        try:
            self.public_key.verify(_b64(parts[2]), f"{parts[0]}.{parts[1]}".encode(),
                                   padding.PKCS1v15(), hashes.SHA256())
            claims = json.loads(_b64(parts[1]))
        except (InvalidSignature, ValueError):
            return False
        # Google's token endpoint is the audience, wherever the request is sent
        return bool(claims.get("aud") == "https://oauth2.googleapis.com/token"
                    and "cloud-platform" in str(claims.get("scope")))


def _b64(text: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
