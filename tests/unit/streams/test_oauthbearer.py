"""OAUTHBEARER: an error challenge fails the login (RFC 7628), token providers fail in one
line naming the cause (never the exception's text), a plain hook runs off the event loop."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from aiokafka import conn as aio_conn
from aiokafka import errors as kerr

from streams import oauthbearer
from streams.kafka_security import FileTokenProvider, HookTokenProvider, TokenProviderError
from streams.oauthbearer import ChallengeAwareAuthenticator, challenge_status

SECRET = "client_secret=s3cr3t-value"


class Tokens(aio_conn.AbstractTokenProvider):  # type: ignore[misc]
    async def token(self) -> str:
        return "tok"


@pytest.mark.parametrize(("text", "status"), [
    ('{"status":"invalid_token"}', "invalid_token"),
    ('[Error 58] SaslAuthenticationFailed: {"status": "insufficient_scope", "scope": "a b"}',
     "insufficient_scope"),
    ('{"status":"invalid token\\n<script>"}', None),  # only an RFC 6749 code is echoed
    ("Authentication failed: invalid credentials", None),
    ("", None),
])
def test_challenge_status(text: str, status: str | None) -> None:
    assert challenge_status(text) == status


async def test_an_accepted_token_ends_the_exchange() -> None:
    auth = ChallengeAwareAuthenticator(sasl_oauth_token_provider=Tokens())
    assert await auth.step(None) == (b"n,,\x01auth=Bearer tok\x01\x01", True)
    assert await auth.step(b"") is None  # Kafka's answer to a good token: no bytes


async def test_bytes_without_a_status_after_a_good_token_are_not_an_error() -> None:
    auth = ChallengeAwareAuthenticator(sasl_oauth_token_provider=Tokens())
    await auth.step(None)
    assert await auth.step(b"welcome") is None  # a broker that says more on success


async def test_an_error_challenge_gets_the_dummy_response_then_fails() -> None:
    auth = ChallengeAwareAuthenticator(sasl_oauth_token_provider=Tokens())
    await auth.step(None)
    assert await auth.step(b'{"status":"invalid_token"}') == (b"\x01", True)
    # a broker that accepts the dummy response (Kafka fails it itself) still fails here
    with pytest.raises(kerr.SaslAuthenticationFailed, match="invalid_token"):
        await auth.step(b"")


class FakeSaslConnection(aio_conn.AIOKafkaConnection):  # type: ignore[misc]
    """aiokafka's own SASL exchange against scripted broker answers, as Kafka 4.4 gave them
    for the token ``garbage``: the error challenge, then SASL_AUTHENTICATION_FAILED."""

    def __init__(self, answers: list[tuple[int, bytes, str | None]]) -> None:
        super().__init__("127.0.0.1", 1, security_protocol="SASL_SSL",
                         sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=Tokens())
        self.answers = answers
        self.sent: list[bytes] = []

    async def send(self, request: Any, expect_response: bool = True) -> Any:
        if request.API_KEY == 17:  # SaslHandshake
            return SimpleNamespace(error_code=0, enabled_mechanisms=["OAUTHBEARER"],
                                   API_VERSION=1)
        self.sent.append(request._payload)  # SaslAuthenticate's auth bytes
        code, data, message = self.answers.pop(0)
        return SimpleNamespace(error_code=code, sasl_auth_bytes=data, error_message=message)


async def test_aiokafka_reports_a_rejected_token_as_a_failed_login() -> None:
    assert oauthbearer.install_oauth_error_challenge()
    conn = FakeSaslConnection([(0, b'{"status":"invalid_token"}', None),
                               (58, b"", '{"status":"invalid_token"}')])
    with pytest.raises(kerr.SaslAuthenticationFailed) as err:
        await conn._do_sasl_handshake()
    assert conn.sent[1] == b"\x01" and challenge_status(str(err.value)) == "invalid_token"
    good = FakeSaslConnection([(0, b"", None)])
    await good._do_sasl_handshake()  # an accepted token: no error
    assert good.sent == [b"n,,\x01auth=Bearer tok\x01\x01"]


def _raises() -> str:
    raise RuntimeError(f"IdP unreachable ({SECRET})")


async def _raises_async() -> str:
    raise ConnectionError(SECRET)


def _returns_none() -> Any:
    return None


_threads: list[int] = []


def _blocking() -> str:
    _threads.append(threading.get_ident())
    return "sync-token"


def _provider(hook: str) -> HookTokenProvider:
    return HookTokenProvider(f"{__name__}:{hook}")


@pytest.mark.parametrize(("hook", "words"), [
    ("_raises", "failed: RuntimeError"),
    ("_raises_async", "failed: ConnectionError"),
    ("_returns_none", "returned no token"),
])
async def test_a_failing_hook_is_one_line_without_its_text(hook: str, words: str) -> None:
    with pytest.raises(TokenProviderError) as err:
        await _provider(hook).token()
    line = str(err.value)
    assert line == (f"the OAUTHBEARER token provider JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_PROVIDER="
                    f"{__name__}:{hook} {words}")
    # nor in a traceback that shows the chain
    assert "s3cr3t" not in line and err.value.__cause__ is None
    assert err.value.__context__ is None or err.value.__suppress_context__
    # aiokafka's reconnects catch KafkaError: a running client retries, it does not crash
    assert isinstance(err.value, kerr.KafkaError)


async def test_a_plain_hook_runs_off_the_event_loop() -> None:
    loop_thread = threading.get_ident()
    assert await _provider("_blocking").token() == "sync-token"
    assert _threads and _threads[-1] != loop_thread


_release = threading.Event()


def _hangs() -> str:
    _release.wait()  # an identity provider that never answers (released at the end)
    return "late"


async def test_a_hook_that_hangs_is_named_within_its_timeout() -> None:
    provider = HookTokenProvider(f"{__name__}:_hangs", timeout=0.2)
    try:
        with pytest.raises(TokenProviderError) as err:
            await provider.token()
        assert str(err.value).endswith(f"{__name__}:_hangs returned no token within 0.2s")
        hung = [t for t in threading.enumerate() if t.name == "oauthbearer-token-provider"]
        assert hung and all(t.daemon for t in hung)  # it cannot hold the process's exit
        with pytest.raises(TokenProviderError) as again:  # a reconnect while it still hangs
            await provider.token()
        assert str(again.value) == str(err.value)
        assert [t for t in threading.enumerate()
                if t.name == "oauthbearer-token-provider"] == hung  # no second thread
    finally:
        _release.set()


def _times_out() -> str:
    raise TimeoutError("the identity provider's own HTTP timeout")


async def test_a_hook_s_own_timeout_is_its_failure_not_ours() -> None:
    with pytest.raises(TokenProviderError) as err:
        await HookTokenProvider(f"{__name__}:_times_out", timeout=5).token()
    assert str(err.value).endswith("_times_out failed: TimeoutError")


def test_the_hook_timeout_is_below_the_connection_timeout() -> None:
    from streams.kafka_security import token_provider
    from streams.kafka_settings import KafkaSettings

    k = KafkaSettings(bootstrap_servers="127.0.0.1:9093", security_protocol="SASL_SSL",
                      sasl_mechanism="OAUTHBEARER",
                      sasl_oauth_token_provider=f"{__name__}:_blocking",
                      connect_timeout_seconds=10)
    provider = token_provider(k)
    assert isinstance(provider, HookTokenProvider) and provider.timeout == 8.0


@pytest.mark.parametrize(("content", "words"), [
    (None, "cannot read the OAUTHBEARER token file JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_FILE "
           "(FileNotFoundError)"),
    ("\n", "the OAUTHBEARER token file JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_FILE is empty"),
])
async def test_an_unusable_token_file_is_one_line(tmp_path: Path, content: str | None,
                                                  words: str) -> None:
    path = tmp_path / "a-token-pasted-as-a-path"
    if content is not None:
        path.write_text(content)
    with pytest.raises(TokenProviderError) as err:
        await FileTokenProvider(path).token()
    assert str(err.value) == words and path.name not in str(err.value)


def test_installed_connections_use_the_challenge_aware_step() -> None:
    assert oauthbearer.install_oauth_error_challenge()
    made = aio_conn.AIOKafkaConnection.authenticator_oauth(
        SimpleNamespace(_sasl_oauth_token_provider=Tokens()))
    assert isinstance(made, ChallengeAwareAuthenticator)


def test_an_unchecked_aiokafka_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(oauthbearer, "_installed", False)
    monkeypatch.setattr(oauthbearer.aiokafka, "__version__", "9.9.9")
    before = aio_conn.AIOKafkaConnection.authenticator_oauth
    assert not oauthbearer.install_oauth_error_challenge()
    assert aio_conn.AIOKafkaConnection.authenticator_oauth is before
