"""Who is deciding: reviewer tokens from a file of hashes, the SSO header, the pseudonym.

* **Tokens file** (a small team without SSO): one reviewer a line, ``<name> sha256:<hex>``,
  the hex being the SHA-256 of that reviewer's token (tokens are long random strings, so a
  plain hash is enough: there is nothing to guess). ``#`` starts a comment. The file never
  holds a token, so reading it gives nobody access. ``judgeflow dashboard --add-reviewer``
  writes a line and prints the new token once.
* **SSO header**: a reverse proxy that authenticates users names them in a header; its name
  comes from :data:`USER_HEADER_ENV`. The header is trusted only when that is set (see
  :mod:`dashboard.sessions` for when the proxy's bearer token must come with it).
* **Pseudonym**: adjudications carry ``rv-`` + 16 hex digits of HMAC-SHA256(key, name), never
  the name. The key is :data:`KEY_ENV` or, without it, a random key kept in the state
  directory (created once, mode 0600), so that one reviewer keeps one id across restarts.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from pathlib import Path

#: The bearer token a non-loopback bind requires (an environment variable, never a setting;
#: here with the page's other variables, so `judgeflow` can list them without aiohttp).
TOKEN_ENV = "JUDGEFLOW_DASHBOARD_TOKEN"
USER_HEADER_ENV = "JUDGEFLOW_DASHBOARD_USER_HEADER"
REVIEWERS_ENV = "JUDGEFLOW_DASHBOARD_REVIEWERS_FILE"
KEY_ENV = "JUDGEFLOW_DASHBOARD_REVIEWER_KEY"
KEY_FILE = "dashboard-reviewer.key"
_NAME = re.compile(r"^[^\s#][^\x00-\x1f\x7f]{0,199}$")
_LINE = re.compile(r"^(\S+)\s+sha256:([0-9a-f]{64})$")


def hash_token(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode()).hexdigest()


def valid_name(name: str) -> bool:
    """A reviewer name from a header or the file: printable, at most 200 characters."""
    return bool(_NAME.fullmatch(name))


def parse_reviewers(text: str) -> dict[str, str]:
    """Token hash (``sha256:<hex>``) -> reviewer name. Errors name the line, never its text."""
    out: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        found = _LINE.fullmatch(line)
        if not found or not valid_name(found.group(1)):
            raise ValueError(f"line {number}: expected '<name> sha256:<64 hex digits>'")
        digest = "sha256:" + found.group(2)
        if digest in out:
            raise ValueError(f"line {number}: this token hash is already given to a reviewer")
        out[digest] = found.group(1)
    return out


def read_reviewers(path: Path) -> dict[str, str]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read the reviewers file {path}: {exc.strerror}") from None
    try:
        return parse_reviewers(text)
    except ValueError as exc:
        raise ValueError(f"reviewers file {path}: {exc}") from None


def add_reviewer(path: Path, name: str) -> str:
    """Append ``name`` with a new random token to the file; returns the token."""
    if not valid_name(name) or " " in name:
        raise ValueError("a reviewer name is 1-200 printable characters without spaces")
    existing = read_reviewers(path) if path.exists() else {}
    if name in existing.values():
        raise ValueError(f"{name} already has a token in {path}")
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as out:
        out.write(f"{name} {hash_token(token)}\n")
    return token


def match_token(reviewers: dict[str, str], token: str) -> str | None:
    """The reviewer whose token this is (constant-time over the stored hashes)."""
    digest = hash_token(token)
    found = None
    for stored, name in reviewers.items():
        if hmac.compare_digest(stored, digest):
            found = name
    return found


def reviewer_key(env_value: str | None, state_dir: Path, *, create: bool = True) -> bytes:
    """The pseudonym key: the environment's, else the state directory's (made once, by the
    page). ``create=False`` (a reader such as ``judgeflow audit``) only reads it: a key made
    there would map names to ids no page ever used. Raises FileNotFoundError then."""
    if env_value:
        if len(env_value) < 16:
            raise ValueError(f"{KEY_ENV} must be at least 16 characters")
        return env_value.encode()
    path = state_dir / KEY_FILE
    if not path.exists() and not create:
        raise FileNotFoundError(f"no reviewer key found at {path}")
    if not path.exists():
        state_dir.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another dashboard made it first: use theirs
        else:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_hex(32))
    key = path.read_text().strip()
    if len(key) < 32:
        raise ValueError(f"the reviewer key in {path} is too short; delete it to make a new one")
    return key.encode()


def pseudonym(key: bytes, name: str) -> str:
    """The reviewer id adjudications carry: a keyed hash of the name (a SafeId)."""
    return "rv-" + hmac.new(key, name.strip().lower().encode(), hashlib.sha256).hexdigest()[:16]
