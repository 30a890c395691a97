"""Every error the page server answers is ``{"error": "<one line>"}`` (docs/api.md).

One place for that promise, at the three levels an error can come from:

* :func:`json_errors`, the outermost middleware: any ``HTTPException`` of 400 or more
  (ours: 401 no token, 401 wrong token at ``/auth``, 421 foreign ``Host``; aiohttp's: 404 no
  such route or file, 405, 413 body too large) becomes JSON with the same status and headers
  (``WWW-Authenticate``, ``Allow``); an unexpected exception becomes a 500 whose body and
  log line name no more than its type (exception text may hold patient data).
* :func:`protocol_error`: a request aiohttp could not parse (400 bad request line, 431...)
  answered by the connection's handler, never by a route (:mod:`dashboard.limits`). The
  message is the status phrase only: the request line may carry ``/auth?token=...``.
* :data:`REFUSAL_BODY`: the connection refused over ``--max-connections``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from http import HTTPStatus

import orjson
from aiohttp import web

log = logging.getLogger(__name__)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: Headers of an aiohttp exception that describe its own (plain-text) body.
_BODY_HEADERS = frozenset({"content-type", "content-length"})


def error_body(message: str) -> bytes:
    return orjson.dumps({"error": message})


def error_response(status: int, message: str,
                   headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(status=status, body=error_body(message),
                        content_type="application/json", headers=headers)


def _one_line(exc: web.HTTPException) -> str:
    """Our own text, or the status phrase for aiohttp's default (``"404: Not Found"``)."""
    text = (exc.text or "").strip()
    if not text or text.startswith(f"{exc.status}:"):
        return (exc.reason or HTTPStatus(exc.status).phrase).lower()
    return text.splitlines()[0]


@web.middleware
async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except (ConnectionError, TimeoutError):
        raise  # a client that left: not an error of ours (dashboard.security.GONE)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise  # redirects (the 303 of /auth) stay what they are
        kept = {k: v for k, v in exc.headers.items() if k.lower() not in _BODY_HEADERS}
        return error_response(exc.status, _one_line(exc), kept)
    except Exception as exc:  # a bug: no traceback or text in the answer or the log
        log.error("request failed (%s)", type(exc).__name__)
        return error_response(500, "internal error")


def protocol_error(status: int) -> web.Response:
    """A JSON answer to a request that never reached a route; the connection closes."""
    try:
        phrase = HTTPStatus(status).phrase.lower()
    except ValueError:
        phrase = "error"
    response = error_response(status, phrase)
    response.force_close()
    return response


REFUSAL_BODY = error_body("too many connections")
