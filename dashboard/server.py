"""Building and serving the page: TLS, access, the state, the guarded site (the runner
``cli.dashboard`` calls; options are parsed in ``cli.dashboard``)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import ssl
import sys
from pathlib import Path
from typing import TextIO

from aiohttp import web

from agents.context.charts import ChartStore
from dashboard.audit import AuditPlan
from dashboard.feed import FeedStatus, Hub, run_feed
from dashboard.identity import (
    KEY_ENV,
    REVIEWERS_ENV,
    USER_HEADER_ENV,
    add_reviewer,
    read_reviewers,
    reviewer_key,
)
from dashboard.limits import GuardedSite, Limits
from dashboard.security import (
    TOKEN_ENV,
    AccessLogger,
    access_log,
    allowed_hosts,
    check_bind,
    quiet_server_logs,
)
from dashboard.sessions import Access
from dashboard.web import State, create_app
from dashboard.window import Window
from dashboard.writer import Writer
from schemas.skill import SkillError, load_skill
from streams.exit_codes import ExitCode
from streams.settings import Settings

log = logging.getLogger(__name__)


class _KeyEncrypted(Exception):
    pass


def _no_password() -> str:
    raise _KeyEncrypted


def tls_context(cert: Path | None, key: Path | None) -> ssl.SSLContext | None:
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise ValueError("--tls-cert and --tls-key go together")
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:  # a callback, never None: OpenSSL would prompt on the terminal for an encrypted key
        ctx.load_cert_chain(cert, key, password=_no_password)
    except _KeyEncrypted:
        raise ValueError(f"the key {key} is encrypted: the page takes no key password; give "
                         "it a decrypted copy readable only by this user (openssl pkey -in "
                         "KEY -out PLAIN.key), or terminate TLS at a proxy") from None
    except (OSError, ssl.SSLError) as exc:
        raise ValueError(f"cannot load the TLS certificate or key: "
                         f"{getattr(exc, 'strerror', None) or exc}") from None
    return ctx


def build_state(settings: Settings, args: argparse.Namespace, access: Access) -> State:
    state = State(Window(args.window), ChartStore(settings.charts_dir), Hub(), FeedStatus(),
                  access=access, limits=Limits(max_connections=args.max_connections,
                                               max_per_client=args.max_connections_per_client,
                                               max_streams=args.max_streams),
                  reviewer_key=reviewer_key(os.environ.get(KEY_ENV), settings.state_dir),
                  allowed_hosts=allowed_hosts(args.host, args.allowed_host or ()))
    review = settings.review
    state.decisions.plan = AuditPlan(review.blind_share, review.double_share)
    state.claims.seconds = review.claim_seconds
    state.min_cells = review.min_cells
    state.window.decided = state.decisions.decided  # pending cells are never dropped
    state.writer = Writer(settings.kafka, settings.topics.adjudications)
    state.audit_trail = Writer(settings.kafka, settings.topics.audit)  # no trail, no patient text
    try:
        skill = load_skill(settings.skill_dir)
        state.criteria, state.edge_cases = dict(skill.criteria), dict(skill.edge_cases)
    except SkillError as exc:
        log.warning("dashboard: no usable skill (%s); decisions cannot be checked", exc)
    return state


async def serve(settings: Settings, state: State, *, host: str, port: int,
                from_beginning: bool, out: TextIO, tls: ssl.SSLContext | None = None,
                stop: asyncio.Event | None = None) -> None:
    quiet_server_logs()
    runner = web.AppRunner(create_app(state), access_log_class=AccessLogger,
                           access_log=access_log, handle_signals=False,
                           keepalive_timeout=state.limits.idle_timeout,
                           handler_cancellation=True)  # a page that left frees its stream
    await runner.setup()
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    feed: asyncio.Task[None] | None = None
    try:
        site = GuardedSite(runner, host, port, limits=state.limits, ssl_context=tls)
        await site.start()  # listening first: a bind error never starts a Kafka consumer
        state.guard = site.guard
        feed = asyncio.create_task(run_feed(settings, state.window, state.hub, state.feed,
                                            from_beginning=from_beginning,
                                            record=state.record,
                                            decisions=state.decisions))
        feed.add_done_callback(lambda _: stop.set())  # only a refused login/ACL ends it
        bound = runner.addresses[0]
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        closed = "  (token required)" if state.access.closed else ""
        print(f"judgeflow dashboard: http{'s' if tls else ''}://{shown}:{bound[1]}/{closed}",
              file=out, flush=True)
        await stop.wait()
    finally:
        if feed is not None:
            feed.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await feed
        for writer in (state.writer, state.audit_trail):
            if writer is not None:
                await writer.close()
        await runner.cleanup()
    if feed is not None and feed.done() and not feed.cancelled() and feed.exception():
        raise feed.exception()  # type: ignore[misc]  # printed in one line by the CLI


def _access(args: argparse.Namespace) -> Access:
    token = os.environ.get(TOKEN_ENV) or None
    path = args.reviewers or (Path(os.environ[REVIEWERS_ENV])
                              if os.environ.get(REVIEWERS_ENV) else None)
    reviewers = read_reviewers(path) if path is not None else {}
    header = os.environ.get(USER_HEADER_ENV, "").strip() or None
    if header is not None and not all(c.isalnum() or c == "-" for c in header):
        raise ValueError(f"{USER_HEADER_ENV} must be a header name (letters, digits, '-')")
    return Access(token=token, reviewers=reviewers, user_header=header)


def prepare(args: argparse.Namespace, settings: Settings) -> tuple[State, ssl.SSLContext | None]:
    """Check the options against the bind address and build the state (ValueError: a
    one-line reason to refuse)."""
    if args.window < 1:
        raise ValueError("--window must be at least 1")
    access = _access(args)
    tls = tls_context(args.tls_cert, args.tls_key)
    check_bind(args.host, access.token, reviewers=bool(access.reviewers),
               tls=tls is not None, user_header=access.user_header is not None)
    return build_state(settings, args, access), tls


def add_reviewer_command(args: argparse.Namespace) -> int:
    if args.reviewers is None:
        print("judgeflow dashboard: --add-reviewer needs --reviewers FILE", file=sys.stderr)
        return ExitCode.USAGE
    try:
        token = add_reviewer(args.reviewers, args.add_reviewer)
    except ValueError as exc:
        print(f"judgeflow dashboard: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    print(f"added {args.add_reviewer} to {args.reviewers}; their token (shown once, give it "
          f"to them privately; they open /auth?token=<token> once):\n{token}")
    return ExitCode.OK
