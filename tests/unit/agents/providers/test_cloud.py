"""The Bedrock and Vertex providers through the SDK's own clients against HTTP-level fakes
that reject what the platforms reject (model in the body, a wrong anthropic_version, missing
or wrong credentials, a bad SigV4 signature, another project or region)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from agents.errors import AgentsError, LLMError
from agents.providers import catalogue, platforms
from agents.providers.anthropic_cloud import CloudProvider
from agents.providers.base import LLMRequest, SystemBlock
from agents.providers.factory import make_provider, require_credentials
from agents.providers.settings import LLMSettings
from agents.settings import Settings
from tests.unit.agents.providers import cloud_env
from tools.fakes.fake_anthropic import Reply

REQ = LLMRequest(system=(SystemBlock("You triage one cell.", cache=True),),
                 messages=({"role": "user", "content": "the case"},), max_tokens=256)


def llm(provider: str, model: str = "claude-haiku-4-5", **kw: Any) -> LLMSettings:
    return LLMSettings(provider=provider, model=model, deadline_seconds=10,  # type: ignore[arg-type]
                       max_attempts=1, check_cache_prefixes=False, **kw)


@pytest.mark.parametrize("bearer", [None, "bedrock-api-key-judgeflow-test"])
async def test_bedrock_invoke_through_the_sdk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                              bearer: str | None) -> None:
    with cloud_env.bedrock(monkeypatch, tmp_path, bearer=bearer) as fake:
        p = CloudProvider(llm("bedrock"), "bedrock")
        try:
            assert p.has_credentials
            r = await p.complete(REQ)
        finally:
            await p.aclose()
    sent = fake.requests[-1]
    assert sent.path == "/model/anthropic.claude-haiku-4-5-20251001-v1:0/invoke"
    assert "model" not in sent.body and sent.body["anthropic_version"] == "bedrock-2023-05-31"
    auth = sent.headers["Authorization"]
    assert auth.startswith("Bearer " if bearer else "AWS4-HMAC-SHA256 Credential=AKID")
    assert r.model == "claude-haiku-4-5" and r.text == "ok" and r.usage.input_tokens > 0


async def test_vertex_raw_predict_with_an_adc_token(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    with cloud_env.vertex(monkeypatch, tmp_path) as fake:
        p = CloudProvider(llm("vertex"), "vertex")
        try:
            r = await p.complete(REQ)
            counted = await p.count_prefix_tokens(REQ)  # Vertex counts tokens itself
        finally:
            await p.aclose()
    token_calls = [q for q in fake.requests if q.path == "/token"]
    predict = [q for q in fake.requests if q.path.endswith(":rawPredict")]
    assert len(token_calls) == 1  # the ADC chain minted one token and reused it
    assert predict[0].path == ("/v1/projects/judgeflow-test/locations/us-east5/publishers/"
                               "anthropic/models/claude-haiku-4-5@20251001:rawPredict")
    assert predict[0].body["anthropic_version"] == "vertex-2023-10-16"
    assert predict[1].path.endswith("/models/count-tokens:rawPredict") and counted > 0
    assert r.model == "claude-haiku-4-5" and r.text == "ok"


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None
         ) -> tuple[int, Any]:
    req = urllib.request.Request(url, json.dumps(body).encode(), method="POST",
                                 headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


class Reached:
    """A responder that counts the requests that got past the platform's door."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, body: dict[str, Any]) -> Reply:
        self.calls += 1
        return Reply.message(text="ok")


GOOD = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}]}
MODEL = "anthropic.claude-haiku-4-5-20251001-v1:0"


INVOKE_REFUSALS = [
    (f"/model/{MODEL}/invoke", GOOD, {}, 403, "Missing Authentication Token"),
    (f"/model/{MODEL}/invoke", GOOD, {"Authorization": "Bearer wrong"}, 403, "Invalid API Key"),
    (f"/model/{MODEL}/invoke", GOOD, {"Authorization": "AWS4-HMAC-SHA256 Credential=AKID"
     "JUDGEFLOWTEST/20261201/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, "
     "Signature=" + "0" * 64, "x-amz-date": "20261201T000000Z"}, 403, "signature"),
    (f"/model/{MODEL}/invoke", {**GOOD, "model": "claude-haiku-4-5"}, "bearer", 400,
     "[model] is not permitted"),
    (f"/model/{MODEL}/invoke", {**GOOD, "anthropic_version": "2026-10-21"}, "bearer", 400,
     "anthropic_version must be"),
    (f"/model/{MODEL}/invoke", {k: v for k, v in GOOD.items() if k != "anthropic_version"},
     "bearer", 400, "anthropic_version must be"),
    ("/model/anthropic.claude-nope-v1:0/invoke", GOOD, "bearer", 400, "model identifier"),
    # the Claude API's cache diagnostics are not documented on Bedrock
    (f"/model/{MODEL}/invoke", {**GOOD, "diagnostics": {"previous_message_id": None}},
     "bearer", 400, "[diagnostics] is not permitted"),
    ("/v1/messages", {**GOOD, "model": "claude-haiku-4-5"}, "bearer", 404, "unknown operation"),
]


@pytest.mark.parametrize(("change", "status", "says"), [
    ({"token": "ya29.forged"}, 401, "UNAUTHENTICATED"),
    ({"project": "someone-else"}, 404, "NOT_FOUND"),
    ({"region": "europe-west1"}, 404, "NOT_FOUND"),
    ({"body": {"model": "claude-haiku-4-5@20251001"}}, 400, "[model] is not permitted"),
    ({"body": {"anthropic_version": "2026-10-21"}}, 400, "anthropic_version must be"),
    ({"body": {"diagnostics": {"previous_message_id": None}}}, 400,
     "[diagnostics] is not permitted"),
])
def test_the_vertex_fake_rejects_what_vertex_rejects(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, change: dict[str, Any], status: int,
        says: str) -> None:
    with cloud_env.vertex(monkeypatch, tmp_path) as fake:
        fake.responder = reached = Reached()
        fake.issued.add("ya29.good")
        project, region = change.get("project", fake.project), change.get("region", fake.region)
        url = (f"{fake.vertex_base_url}/projects/{project}/locations/{region}/publishers/"
               "anthropic/models/claude-haiku-4-5@20251001:rawPredict")
        body = {"anthropic_version": "vertex-2023-10-16", "max_tokens": 10,
                "messages": [{"role": "user", "content": "hi"}], **change.get("body", {})}
        code, answer = post(url, body,
                            {"Authorization": f"Bearer {change.get('token', 'ya29.good')}"})
    assert code == status and says in json.dumps(answer)
    assert reached.calls == 0  # nothing reached the model


@pytest.mark.parametrize("model", ["claude-haiku-4-5", "claude-sonnet-5-5"])  # both endpoints
async def test_an_unknown_aws_key_is_an_auth_error(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path, model: str) -> None:
    with cloud_env.bedrock(monkeypatch, tmp_path) as fake:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDSOMEONEELSE")
        p = CloudProvider(llm("bedrock", model), "bedrock")
        try:
            with pytest.raises(LLMError) as err:
                await p.complete(REQ)
        finally:
            await p.aclose()
    assert err.value.kind == "auth" and not err.value.retryable
    assert fake.requests and all(q.status == 403 for q in fake.requests)  # none answered


async def test_bedrock_without_token_counting_estimates_and_has_no_batches(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with cloud_env.bedrock(monkeypatch, tmp_path) as fake:
        p = CloudProvider(llm("bedrock"), "bedrock")
        try:
            assert await p.count_prefix_tokens(REQ) > 0  # a local estimate, no request
            assert p.supports_batches is False
            with pytest.raises(LLMError, match="no Message Batches API"):
                await p.submit_batch([("a", REQ)])
            info = await p.retrieve_model()
        finally:
            await p.aclose()
    assert fake.requests == []
    assert info["lifecycle"] == "active" and info["id"] == MODEL


@pytest.mark.parametrize(("provider", "model", "says"), [
    ("bedrock", "claude-opus-5", "has no bedrock model id"),
    ("vertex", "claude-opus-5", "has no vertex model id"),  # not on Vertex's list
    ("bedrock", "claude-nope-1", "not in the model catalogue"),
])
def test_a_model_the_platform_lacks_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path, provider: str, model: str,
                                                says: str) -> None:
    with cloud_env.bedrock(monkeypatch, tmp_path):
        monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "p")
        monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")
        with pytest.raises(AgentsError) as err:
            make_provider(Settings(llm=llm(provider, model)))
    assert says in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(("provider", "unset", "says"), [
    ("bedrock", "AWS_REGION", "llm.provider bedrock needs a region: set JUDGEFLOW_LLM__REGION "
     "or AWS_REGION (or the AWS profile's region)"),
    ("vertex", "ANTHROPIC_VERTEX_PROJECT_ID", "needs a project"),
    ("vertex", "CLOUD_ML_REGION", "llm.provider vertex needs a region: set "
     "JUDGEFLOW_LLM__REGION or CLOUD_ML_REGION"),
])
def test_missing_region_or_project_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                               provider: str, unset: str, says: str) -> None:
    env = cloud_env.bedrock if provider == "bedrock" else cloud_env.vertex
    with env(monkeypatch, tmp_path):
        monkeypatch.delenv(unset)
        with pytest.raises(AgentsError) as err:
            make_provider(Settings(llm=llm(provider)))
    assert says in str(err.value) and "\n" not in str(err.value)
    assert "constructor" not in str(err.value) and "`" not in str(err.value)  # not the SDK's


@pytest.mark.parametrize("model", ["claude-haiku-4-5", "claude-sonnet-5-5"])
def test_no_credentials_refuses_to_start_naming_the_chain(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path, model: str) -> None:
    with cloud_env.bedrock(monkeypatch, tmp_path):
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            monkeypatch.delenv(name)
        provider = make_provider(Settings(llm=llm("bedrock", model)))
        with pytest.raises(AgentsError, match="AWS_BEARER_TOKEN_BEDROCK"):
            require_credentials(provider)


def test_platform_lifecycles_are_the_platforms_own() -> None:
    from datetime import date

    m = platforms.PlatformModel(id="x", retires=date(2027, 1, 1))
    assert m.status(date(2026, 12, 31)) == "active" and m.status(date(2027, 1, 1)) == "retired"
    assert platforms.PlatformModel(id="x", lifecycle="deprecated").status(date.today()) == (
        "deprecated")
    for key in ("bedrock", "vertex"):
        p = platforms.get(key)
        assert p.docs and all(not e.batches and not e.models_api for e in p.endpoints.values())
        assert all(p.catalogue_id(m.id) == k for k, m in p.models.items())
        assert all(catalogue.load().find(k) is not None for k in p.models)  # all priced
    # Bedrock: the ARN-versioned models on InvokeModel, the 5.x models on bedrock-mantle
    bedrock = platforms.get("bedrock")
    for model in ("claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5-5"):
        entry = bedrock.models[model]
        assert entry.endpoint == "mantle" and bedrock.endpoint_of(entry).model_in == "body"
    assert bedrock.endpoint_of(bedrock.models["claude-sonnet-4-5"]).client == "bedrock"
    with pytest.raises(ValueError, match="name its endpoint"):
        platforms.Platform.model_validate({
            "name": "x", "endpoints": {k: bedrock.endpoints[k].model_dump() for k in
                                       ("invoke", "mantle")},
            "models": {"m": {"id": "m"}}})


async def test_the_platform_schedule_decides_not_the_claude_apis(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    """claude-sonnet-4-5 retired on the Claude API (catalogue: 2026-11-30) but the platform
    data says active on Bedrock: it starts there; retired or deprecated there decides."""
    from datetime import date

    from agents.providers.startup import check_model

    with cloud_env.bedrock(monkeypatch, tmp_path):
        s = llm("bedrock", "claude-sonnet-4-5")
        p = CloudProvider(s, "bedrock")
        try:
            await check_model(p, s, today=date(2026, 12, 1))  # starts
            p.platform_model = p.platform_model.model_copy(update={
                "lifecycle": "deprecated", "retires": date(2027, 3, 1)})
            with caplog.at_level("WARNING"):
                await check_model(p, s, today=date(2026, 12, 1))
            assert "deprecated on bedrock; it retires there on 2027-03-01" in caplog.text
            with pytest.raises(AgentsError, match="is retired on bedrock since 2027-03-01"):
                await check_model(p, s, today=date(2027, 3, 1))
        finally:
            await p.aclose()


# -- Claude in Amazon Bedrock: the bedrock-mantle Messages API (the 5.x models) ----------

@pytest.mark.parametrize("bearer", [None, "bedrock-api-key-judgeflow-test"])
async def test_bedrock_mantle_through_the_sdk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                              bearer: str | None) -> None:
    """The default model goes through AnthropicBedrockMantle: the Claude API's shape (model
    in the body, anthropic-version header, no body version), SigV4 for bedrock-mantle or
    Bedrock's API key; token counting is the endpoint's own."""
    with cloud_env.bedrock(monkeypatch, tmp_path, bearer=bearer) as fake:
        p = CloudProvider(llm("bedrock", "claude-sonnet-5-5"), "bedrock")
        try:
            assert p.has_credentials and p.endpoint.client == "bedrock-mantle"
            r = await p.complete(REQ)
            counted = await p.count_prefix_tokens(REQ)
        finally:
            await p.aclose()
    sent, count = fake.mantle_requests()
    assert sent.path == "/anthropic/v1/messages" and sent.status == 200
    assert sent.body["model"] == "anthropic.claude-sonnet-5-5"
    assert "anthropic_version" not in sent.body
    assert sent.headers["anthropic-version"] == "2026-10-21"
    auth = sent.headers["Authorization"]
    assert auth.startswith("Bearer " if bearer else "AWS4-HMAC-SHA256 Credential=AKID")
    if not bearer:
        assert "/us-east-1/bedrock-mantle/aws4_request" in auth
    assert count.path == "/anthropic/v1/messages/count_tokens" and counted > 0
    # the answer names the Bedrock id; the result names the catalogue model (priced by it)
    assert r.model == "claude-sonnet-5-5" and r.text == "ok" and r.usage.input_tokens > 0
    assert [q.path for q in fake.requests if "/invoke" in q.path] == []


MANTLE_BODY = {"model": "anthropic.claude-sonnet-5-5", "max_tokens": 10,
               "messages": [{"role": "user", "content": "hi"}]}
KEY = {"Authorization": "Bearer bedrock-api-key-judgeflow-test",
       "anthropic-version": "2026-10-21"}
INVOKE_SIG = ("AWS4-HMAC-SHA256 Credential=AKIDJUDGEFLOWTEST/20261201/us-east-1/bedrock/"
              "aws4_request, SignedHeaders=host;x-amz-date, Signature=" + "0" * 64)


MANTLE_REFUSALS = [
    ("/anthropic/v1/messages", MANTLE_BODY, {"anthropic-version": "2026-10-21"}, 403,
     "Missing Authentication Token"),
    ("/anthropic/v1/messages", MANTLE_BODY, {**KEY, "Authorization": "Bearer wrong"}, 403,
     "Invalid API Key"),
    ("/anthropic/v1/messages", MANTLE_BODY, {"x-api-key": "wrong",
                                             "anthropic-version": "2026-10-21"}, 403,
     "Invalid API Key"),
    # signed for InvokeModel's service, not bedrock-mantle
    ("/anthropic/v1/messages", MANTLE_BODY, {"Authorization": INVOKE_SIG,
                                             "x-amz-date": "20261201T000000Z",
                                             "anthropic-version": "2026-10-21"}, 403,
     "security token included in the request is invalid"),
    ("/anthropic/v1/messages", MANTLE_BODY, {k: v for k, v in KEY.items()
                                             if k != "anthropic-version"}, 400,
     "anthropic-version: header is required"),
    ("/anthropic/v1/messages", {**MANTLE_BODY, "anthropic_version": "bedrock-2023-05-31"},
     KEY, 400, "not a body field on bedrock-mantle"),
    ("/anthropic/v1/messages", {**MANTLE_BODY, "model": MODEL}, KEY, 400,
     "call it through InvokeModel"),
    ("/anthropic/v1/messages", {**MANTLE_BODY, "model": "claude-sonnet-5-5"}, KEY, 400,
     "model identifier is invalid"),
    ("/anthropic/v1/messages", {**MANTLE_BODY, "temperature": 0.0}, KEY, 400,
     "temperature"),
    ("/anthropic/v1/messages", {**MANTLE_BODY, "diagnostics": {"previous_message_id": None}},
     KEY, 400, "[diagnostics] is not permitted"),
    ("/anthropic/v1/messages/batches", {"requests": []}, KEY, 404, "unknown operation"),
    ("/anthropic/v1/models/anthropic.claude-sonnet-5-5", {}, KEY, 404, "unknown operation"),
    # a 5.x model is not on InvokeModel
    ("/model/anthropic.claude-sonnet-5-5/invoke",
     {k: v for k, v in GOOD.items()}, "bearer", 400, "model identifier"),
]


@pytest.mark.parametrize(("path", "body", "headers", "status", "says"),
                         INVOKE_REFUSALS + MANTLE_REFUSALS)
def test_the_bedrock_fake_rejects_what_each_bedrock_endpoint_rejects(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, path: str, body: dict[str, Any],
        headers: Any, status: int, says: str) -> None:
    with cloud_env.bedrock(monkeypatch, tmp_path) as fake:
        fake.responder = reached = Reached()
        h = {"Authorization": "Bearer bedrock-api-key-judgeflow-test"} if headers == "bearer" \
            else headers
        code, answer = post(fake.base_url + path, body, h)
    assert code == status and says in json.dumps(answer), answer
    assert reached.calls == 0  # nothing reached the model


def test_the_mantle_fake_takes_bedrocks_api_key_as_x_api_key(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """AWS's curl example sends the key as x-api-key and version 2023-06-01."""
    with cloud_env.bedrock(monkeypatch, tmp_path) as fake:
        code, answer = post(fake.mantle_base_url + "/v1/messages", MANTLE_BODY, {
            "x-api-key": "bedrock-api-key-judgeflow-test", "anthropic-version": "2023-06-01"})
    assert code == 200 and answer["model"] == "anthropic.claude-sonnet-5-5"


async def test_mantle_has_no_batches_and_no_models_api(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    with cloud_env.bedrock(monkeypatch, tmp_path) as fake:
        p = CloudProvider(llm("bedrock", "claude-haiku-5-5"), "bedrock")
        try:
            assert p.supports_batches is False
            with pytest.raises(LLMError, match=r"Claude in Amazon Bedrock .* no Message "
                               r"Batches API"):
                await p.submit_batch([("a", REQ)])
            info = await p.retrieve_model()
        finally:
            await p.aclose()
    assert fake.requests == []
    assert (info["id"], info["lifecycle"]) == ("anthropic.claude-haiku-5-5", "active")


def test_missing_region_on_mantle_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    with cloud_env.bedrock(monkeypatch, tmp_path):
        monkeypatch.delenv("AWS_REGION")
        monkeypatch.delenv("ANTHROPIC_BEDROCK_MANTLE_BASE_URL")
        with pytest.raises(AgentsError) as err:
            make_provider(Settings(llm=llm("bedrock", "claude-sonnet-5-5")))
    assert str(err.value) == ("llm.provider bedrock needs a region: set JUDGEFLOW_LLM__REGION "
                              "or AWS_REGION (or the AWS profile's region)")


async def test_per_criterion_models_on_both_bedrock_endpoints(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """llm.criterion_models: each model gets its own provider, so Haiku 4.5 on InvokeModel
    and Sonnet 5.5 on bedrock-mantle judge side by side against one Bedrock account."""
    import anthropic

    with cloud_env.bedrock(monkeypatch, tmp_path) as fake:
        providers = [make_provider(Settings(llm=llm("bedrock", m)))
                     for m in ("claude-haiku-4-5", "claude-sonnet-5-5")]
        try:
            invoke, mantle = providers
            assert isinstance(invoke.client, anthropic.AsyncAnthropicBedrock)  # type: ignore[attr-defined]
            assert isinstance(mantle.client, anthropic.AsyncAnthropicBedrockMantle)  # type: ignore[attr-defined]
            answers = [await p.complete(REQ) for p in providers]
        finally:
            for p in providers:
                await p.aclose()  # type: ignore[attr-defined]
    assert [a.model for a in answers] == ["claude-haiku-4-5", "claude-sonnet-5-5"]
    assert [q.path for q in fake.requests] == [f"/model/{MODEL}/invoke",
                                               "/anthropic/v1/messages"]
