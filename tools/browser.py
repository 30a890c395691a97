"""Drive Debian's chromium (the system browser) headless with playwright's driver.

Nothing is downloaded: playwright's Python wheel carries its driver, and the browser is the
``chromium`` Debian package (``.ci/run`` / ``scripts/bootstrap.sh`` install it when they can).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CHROMIUM = os.environ.get("JUDGEFLOW_TEST_CHROMIUM") or shutil.which("chromium") or ""
#: Keep chromium quiet on a closed network and in a container.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage"]


def missing_reason() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not CHROMIUM or not Path(CHROMIUM).exists():
        return ("Debian chromium is not installed (apt-get install chromium; "
                "scripts/bootstrap.sh does it when run as root)")
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    return None


async def launch(playwright: object, user_data_dir: Path) -> object:
    """A headless persistent context on the system chromium with a fresh profile."""
    chromium = playwright.chromium  # type: ignore[attr-defined]
    return await chromium.launch_persistent_context(
        str(user_data_dir), executable_path=CHROMIUM, headless=True, args=ARGS,
        viewport={"width": 1500, "height": 1000})
