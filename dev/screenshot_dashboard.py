"""Take docs/img/dashboard.png from a running review page (e.g. `judgeflow demo --dashboard`).

    .venv/bin/python dev/screenshot_dashboard.py http://127.0.0.1:8765/ docs/img/dashboard.png

Opens the first cell whose evidence has a highlighted excerpt, then captures the page.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.browser import launch


async def main(url: str, out: Path) -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        context: Any = await launch(pw, Path(tempfile.mkdtemp()) / "profile")
        page = await context.new_page()
        await page.set_viewport_size({"width": 1600, "height": 1000})
        await page.goto(url)
        await page.wait_for_selector("body[data-ready='1']")
        rows = await (await page.request.get(url + "api/rows")).json()
        for row in rows["rows"]:
            cell = await (await page.request.get(url + "api/cell/" + row["id"])).json()
            if any(e["note"] and e["note"]["highlight"] for e in cell["evidence"]):
                await page.click(f"#queue tbody tr[data-id='{row['id']}']")
                await page.wait_for_selector("#detail:not([hidden]) .excerpt mark")
                break
        out.parent.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(out))
        await context.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
