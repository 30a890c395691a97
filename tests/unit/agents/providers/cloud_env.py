"""Environments for the Bedrock and Vertex fakes: credentials that need no network (static
AWS keys; a service-account ADC file whose token endpoint is the fake) and the SDK's base
URL variables (both Bedrock endpoints, Vertex) pointing at the fakes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tools.fakes.fake_mantle import FakeBedrockMantle
from tools.fakes.fake_platforms import AWS_KEY, AWS_REGION, AWS_SECRET, FakeVertex

CLOUD_VARS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
              "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_BEARER_TOKEN_BEDROCK",
              "GOOGLE_APPLICATION_CREDENTIALS", "CLOUD_ML_REGION",
              "ANTHROPIC_VERTEX_PROJECT_ID", "ANTHROPIC_BEDROCK_BASE_URL",
              "ANTHROPIC_BEDROCK_MANTLE_BASE_URL", "ANTHROPIC_AWS_API_KEY",
              "ANTHROPIC_VERTEX_BASE_URL")


def clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No credential of the machine leaks in (nor out to a real endpoint)."""
    for name in CLOUD_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud"))
    monkeypatch.setenv("NO_GCE_CHECK", "true")


@contextmanager
def bedrock(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *,
            bearer: str | None = None, **kw: object) -> Iterator[FakeBedrockMantle]:
    """Both Bedrock endpoints (InvokeModel and bedrock-mantle) on one fake."""
    clean(monkeypatch, tmp_path)
    # The SDK keeps one boto3 session per argument set for the process (credentials from the
    # environment are read once); each test starts from its own environment.
    from anthropic.lib.aws import _auth

    _auth._get_session.cache_clear()
    with FakeBedrockMantle(**kw) as fake:  # type: ignore[arg-type]
        monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_BEDROCK_MANTLE_BASE_URL", fake.mantle_base_url)
        monkeypatch.setenv("AWS_REGION", AWS_REGION)
        if bearer is not None:
            monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", bearer)
        else:
            monkeypatch.setenv("AWS_ACCESS_KEY_ID", AWS_KEY)
            monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
        yield fake


@contextmanager
def vertex(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
           **kw: object) -> Iterator[FakeVertex]:
    clean(monkeypatch, tmp_path)
    with FakeVertex(**kw) as fake:  # type: ignore[arg-type]
        monkeypatch.setenv("ANTHROPIC_VERTEX_BASE_URL", fake.vertex_base_url)
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(fake.adc_file(tmp_path)))
        monkeypatch.setenv("CLOUD_ML_REGION", fake.region)
        monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", fake.project)
        yield fake
