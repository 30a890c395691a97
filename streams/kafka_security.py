"""What the security settings mean to aiokafka and to Faust: TLS context, SASL arguments,
OAUTHBEARER token providers. Used only by :mod:`streams.kafka_clients`.

Secrets are read when a client is built (a rotated mounted password reaches the next
connection's client) and are never logged: the providers' and contexts' reprs name no value.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import importlib
import inspect
import ssl
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiokafka.conn import AbstractTokenProvider
from aiokafka.errors import KafkaError

from streams.errors import StreamsError
from streams.kafka_settings import (
    KafkaSettings,
    read_secret_file,
    sasl_password,
    sasl_username,
    ssl_key_password,
)


class KafkaSetupError(StreamsError):
    """A security setting that cannot be used (unreadable key, bad token hook): one line."""


class TokenProviderError(KafkaSetupError, KafkaError):
    """No OAUTHBEARER token to send (the hook raised, the file is unreadable): one line.

    Also a KafkaError, so that aiokafka's own reconnects take it as a failed connection and
    retry (an unreachable identity provider may come back while a worker runs); the first
    connection (:func:`streams.kafka_access.probe`) stops the command on it. The message
    names the exception's type only, never its text: a token fetcher's errors may carry a
    client secret (in a URL, a request it echoes) or a token (in a response body)."""

    def __str__(self) -> str:
        return Exception.__str__(self)  # the one line, without KafkaError's class prefix


def ssl_context(k: KafkaSettings) -> ssl.SSLContext | None:
    """The TLS context for SSL/SASL_SSL: system CAs or ``ssl_cafile``, the client certificate
    for mutual TLS, hostname verification unless ``ssl_check_hostname`` is off."""
    if not k.uses_tls:
        return None
    try:
        ctx = ssl.create_default_context(
            cafile=str(k.ssl_cafile) if k.ssl_cafile is not None else None)
        if k.ssl_certfile is not None:
            # "" rather than None: OpenSSL would prompt on the terminal for an encrypted key
            ctx.load_cert_chain(str(k.ssl_certfile),
                                str(k.ssl_keyfile) if k.ssl_keyfile is not None else None,
                                password=ssl_key_password(k) or "")
    except ssl.SSLError as exc:
        # the one TLS file a password is about: say which case (a key that decrypts but
        # belongs to another certificate is KEY_VALUES_MISMATCH, not a wrong password)
        if _key_is_encrypted(k) and exc.reason != "KEY_VALUES_MISMATCH":
            raise KafkaSetupError(
                "the client key is encrypted and the password in "
                "JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD(_FILE) does not decrypt it"
                if ssl_key_password(k) is not None else "the client key is encrypted: set "
                "JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD or JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD_FILE"
            ) from None
        raise KafkaSetupError(f"TLS files unusable ({exc.reason or exc}): check "
                              "JUDGEFLOW_KAFKA__SSL_CAFILE/_CERTFILE/_KEYFILE "
                              "(PEM, key matching the certificate, key password)") from None
    ctx.check_hostname = k.ssl_check_hostname
    ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


def _key_is_encrypted(k: KafkaSettings) -> bool:
    key = k.ssl_keyfile or k.ssl_certfile
    try:
        return key is not None and "ENCRYPTED" in key.read_text(encoding="ascii",
                                                                  errors="replace")
    except OSError:
        return False


class FileTokenProvider(AbstractTokenProvider):  # type: ignore[misc]
    """OAUTHBEARER token read from a file at every (re)authentication (projected tokens)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def token(self) -> str:
        try:
            value = await asyncio.to_thread(read_secret_file, self.path)
        except (OSError, UnicodeError) as exc:  # the path is not echoed: it may be a secret
            raise TokenProviderError("cannot read the OAUTHBEARER token file "
                                     "JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_FILE "
                                     f"({type(exc).__name__})") from None
        if not value.strip():
            raise TokenProviderError("the OAUTHBEARER token file "
                                     "JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_FILE is empty")
        return value

    def __repr__(self) -> str:
        return f"FileTokenProvider({self.path})"


class HookTokenProvider(AbstractTokenProvider):  # type: ignore[misc]
    """OAUTHBEARER token returned by a user's ``module:callable`` (str or awaitable str).

    A plain function runs in a worker thread (a blocking HTTP call to an identity provider
    must not stall the event loop every worker's consumers and producers share)."""

    def __init__(self, spec: str, timeout: float = 8.0) -> None:
        self.spec = spec
        self.hook = load_hook(spec)
        #: Below the connection timeout, so a hook that hangs is named as the cause rather
        #: than reported as a broker that does not answer.
        self.timeout = timeout
        self._thread: threading.Thread | None = None

    async def token(self) -> str:
        late = (f"the OAUTHBEARER token provider JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_PROVIDER="
                f"{self.spec} returned no token within {self.timeout:g}s")
        if self._thread is not None and self._thread.is_alive():
            raise TokenProviderError(late)  # a hung call: no second thread per reconnect
        deadline = asyncio.timeout(self.timeout)
        try:
            async with deadline:
                value = await self._call()
        except TimeoutError:
            if deadline.expired():  # ours, not a timeout the hook itself raised
                raise TokenProviderError(late) from None
            raise TokenProviderError(f"the OAUTHBEARER token provider "
                                     f"JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_PROVIDER={self.spec} "
                                     "failed: TimeoutError") from None
        except Exception as exc:  # the type only: see TokenProviderError
            raise TokenProviderError(f"the OAUTHBEARER token provider "
                                     f"JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_PROVIDER={self.spec} "
                                     f"failed: {type(exc).__name__}") from None
        if not isinstance(value, str) or not value:
            raise TokenProviderError(f"the OAUTHBEARER token provider "
                                     f"JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_PROVIDER={self.spec} "
                                     "returned no token")
        return value

    async def _call(self) -> Any:
        if inspect.iscoroutinefunction(self.hook):
            return await self.hook()
        value = await _in_daemon_thread(self.hook, self)
        return await value if inspect.isawaitable(value) else value

    def __repr__(self) -> str:
        return f"HookTokenProvider({self.spec})"


async def _in_daemon_thread(fn: Callable[[], Any], owner: HookTokenProvider) -> Any:
    """``fn()`` in a thread of its own (``owner._thread``) that does not keep the process
    alive: a hook that hangs would otherwise hold the exit of a command that already
    reported it (the default executor's threads are joined at exit). It sees the caller's
    context variables, as ``asyncio.to_thread`` would give it."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if done.done():  # timed out meanwhile
            return
        if error is None:
            done.set_result(value)
        else:
            done.set_exception(error)

    context = contextvars.copy_context()

    def run() -> None:
        try:
            value, error = context.run(fn), None
        except BaseException as exc:  # handed to the awaiting task
            value, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop closed while the hook ran
            loop.call_soon_threadsafe(settle, value, error)

    owner._thread = threading.Thread(target=run, name="oauthbearer-token-provider",
                                     daemon=True)
    owner._thread.start()
    return await done


def load_hook(spec: str) -> Callable[[], Any]:
    """``package.module:callable`` -> the callable; a one-line error when it is not there.

    This is a user-supplied plug-in point (like a WSGI app spec), not judgeflow's own wiring."""
    module_name, _, attr = spec.partition(":")
    try:
        hook = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise KafkaSetupError(f"JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_PROVIDER={spec}: cannot load "
                              f"it ({type(exc).__name__})") from None
    if not callable(hook):
        raise KafkaSetupError(f"JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_PROVIDER={spec} is not callable")
    return hook  # type: ignore[no-any-return]


def token_provider(k: KafkaSettings) -> AbstractTokenProvider | None:
    if k.sasl_mechanism != "OAUTHBEARER":
        return None
    if k.sasl_oauth_token_file is not None:
        return FileTokenProvider(k.sasl_oauth_token_file)
    assert k.sasl_oauth_token_provider is not None  # settings validation
    return HookTokenProvider(k.sasl_oauth_token_provider,
                             timeout=max(1.0, 0.8 * k.connect_timeout_seconds))


def aiokafka_auth(k: KafkaSettings) -> dict[str, Any]:
    """The keyword arguments every aiokafka client (consumer, producer, admin, raw
    connection) takes for these settings."""
    auth: dict[str, Any] = {"security_protocol": k.security_protocol}
    ctx = ssl_context(k)
    if ctx is not None:
        auth["ssl_context"] = ctx
    if k.uses_sasl:
        auth["sasl_mechanism"] = k.sasl_mechanism
        if k.sasl_mechanism == "OAUTHBEARER":
            auth["sasl_oauth_token_provider"] = token_provider(k)
        else:
            auth["sasl_plain_username"] = sasl_username(k)
            auth["sasl_plain_password"] = sasl_password(k)
    return auth


def faust_credentials(k: KafkaSettings) -> Any:
    """Faust's ``broker_credentials`` for these settings (None for PLAINTEXT). Faust turns
    them into the same aiokafka arguments (faust.transport.drivers.aiokafka)."""
    from faust.auth import OAuthCredentials, SASLCredentials, SSLCredentials

    ctx = ssl_context(k)
    if not k.uses_sasl:
        return SSLCredentials(ctx) if ctx is not None else None
    if k.sasl_mechanism == "OAUTHBEARER":
        return OAuthCredentials(oauth_cb=token_provider(k), ssl_context=ctx)
    return SASLCredentials(username=sasl_username(k), password=sasl_password(k),
                           ssl_context=ctx, mechanism=k.sasl_mechanism)


def librdkafka_properties(k: KafkaSettings) -> dict[str, str]:
    """The same connection as librdkafka properties (kcat ``-X``, confluent-kafka), secrets
    included: for handing a working config to another client, never for logging. For
    OAUTHBEARER only ``sasl.mechanisms``: where the token comes from is in
    :func:`librdkafka_gaps`."""
    props = {"bootstrap.servers": k.bootstrap_servers, "security.protocol": k.security_protocol}
    if k.uses_sasl:
        props["sasl.mechanisms"] = str(k.sasl_mechanism)
        if k.sasl_mechanism != "OAUTHBEARER":
            props["sasl.username"] = sasl_username(k) or ""
            props["sasl.password"] = sasl_password(k) or ""
    if k.uses_tls:
        files = {"ssl.ca.location": k.ssl_cafile, "ssl.certificate.location": k.ssl_certfile,
                 "ssl.key.location": k.ssl_keyfile}
        props |= {name: str(path) for name, path in files.items() if path is not None}
        if (password := ssl_key_password(k)) is not None:
            props["ssl.key.password"] = password
        props["ssl.endpoint.identification.algorithm"] = (
            "https" if k.ssl_check_hostname else "none")
    return props


def librdkafka_gaps(k: KafkaSettings) -> list[str]:
    """What :func:`librdkafka_properties` cannot carry, one line per setting in use: the
    OAUTHBEARER token sources have no librdkafka property (librdkafka takes a token only
    from an application callback, its own OIDC client-credentials login or an unsecured
    test token), so a kcat user has no equivalent and a confluent-kafka user writes an
    ``oauth_cb``. Empty when the properties are the whole translation."""
    if k.sasl_mechanism != "OAUTHBEARER":
        return []
    callback = ("confluent-kafka: pass oauth_cb=<a function of the config string returning "
                "(token, expiry in seconds since the epoch)>{}; kcat: no equivalent (only "
                "sasl.oauthbearer.method=oidc, which fetches its own token)")
    if k.sasl_oauth_token_file is not None:
        return ["JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_FILE has no librdkafka property: "
                + callback.format(f" that reads {k.sasl_oauth_token_file} each call")]
    return [f"JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_PROVIDER={k.sasl_oauth_token_provider} is a "
            "Python hook, no librdkafka property: " + callback.format(" that calls it")]
