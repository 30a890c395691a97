"""aiokafka 0.14 takes an OAUTHBEARER error challenge (RFC 7628 §3.2.2) for success: fail it.

OAUTHBEARER as RFC 7628 has it: a token the broker rejects fails the login.

A broker that rejects an OAUTHBEARER token does not answer with an error at once: it sends
an error *challenge*, a JSON object such as ``{"status":"invalid_token"}`` (RFC 7628 §3.2.2),
and the client must answer it with a dummy response, a single %x01 byte (§3.2.3); only then
does the broker fail the authentication (Kafka's ``OAuthBearerSaslServer`` answers it with
SASL_AUTHENTICATION_FAILED and the JSON as the error message). aiokafka 0.14's
``OAuthAuthenticator`` ignores whatever the server answers to the token and logs
"Authenticated via OAUTHBEARER"; Kafka then serves that connection as unauthenticated (its
metadata names no broker and no cluster id), and the command fails later with an error that
names the wrong cause (a missing topic, a node that is not ready).

:func:`install_oauth_error_challenge` makes aiokafka's OAUTHBEARER step answer a non-empty
challenge with %x01, so the broker's SASL_AUTHENTICATION_FAILED reaches aiokafka as the
:class:`~aiokafka.errors.SaslAuthenticationFailed` every other refused login raises; should
a broker accept the dummy response instead, the step raises it itself. Only
:mod:`streams.kafka_clients` installs it (before its first connection), only on the aiokafka
versions checked. :func:`challenge_status` reads the ``status`` for the one-line error.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import aiokafka
from aiokafka import conn as _conn
from aiokafka.errors import SaslAuthenticationFailed

log = logging.getLogger(__name__)

CHECKED_AIOKAFKA = ("0.14.0",)
#: RFC 7628 §3.2.3: the client's answer to an error challenge.
DUMMY_RESPONSE = b"\x01"
#: an RFC 6749 error code (invalid_token, insufficient_scope, ...): nothing else is echoed
_STATUS = re.compile(r'"status"\s*:\s*"([A-Za-z0-9_.-]{1,64})"')
_installed = False


def challenge_status(text: str) -> str | None:
    """The ``status`` of an RFC 7628 error challenge (or of the broker's error message that
    repeats it), or None when ``text`` carries none."""
    found = _STATUS.search(text)
    return found.group(1) if found else None


class ChallengeAwareAuthenticator(_conn.OAuthAuthenticator):  # type: ignore[misc]
    """aiokafka's OAUTHBEARER step (token and extensions as before) that fails on an error
    challenge instead of taking it for success."""

    def __init__(self, *, sasl_oauth_token_provider: Any) -> None:
        super().__init__(sasl_oauth_token_provider=sasl_oauth_token_provider)
        self._challenge: bytes | None = None

    async def step(self, payload: bytes | None) -> tuple[bytes, bool] | None:
        if not self._token_sent:
            return await super().step(payload)  # type: ignore[no-any-return]
        if self._challenge is not None:  # the broker took the dummy response: fail anyway
            raise SaslAuthenticationFailed(self._challenge.decode("utf-8", "replace"))
        # Kafka answers an accepted token with no bytes; an error challenge is JSON with a
        # status. Other bytes (a broker that says more on success) are not an error.
        if payload and challenge_status(bytes(payload).decode("utf-8", "replace")):
            self._challenge = bytes(payload)
            return DUMMY_RESPONSE, True
        return None


def install_oauth_error_challenge() -> bool:
    """Make every aiokafka connection's OAUTHBEARER login honour error challenges (once per
    process); returns whether it is active."""
    global _installed
    if _installed:
        return True
    if aiokafka.__version__ not in CHECKED_AIOKAFKA:
        log.warning("OAUTHBEARER error-challenge handling not installed: checked only with "
                    "aiokafka %s, found %s", CHECKED_AIOKAFKA, aiokafka.__version__)
        return False

    def authenticator_oauth(self: Any) -> ChallengeAwareAuthenticator:
        return ChallengeAwareAuthenticator(
            sasl_oauth_token_provider=self._sasl_oauth_token_provider)

    _conn.AIOKafkaConnection.authenticator_oauth = authenticator_oauth
    _installed = True
    return True
