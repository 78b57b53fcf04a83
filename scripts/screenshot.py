"""Screenshot of an HTML report's failure explorer, for the README (docs/explorer.png,
docs/compare.png).

    python scripts/screenshot.py out/qa_agent.html docs/explorer.png [--cell GATE BUCKET]
    python scripts/screenshot.py out/compare.html docs/compare.png --from-top

Opens the report in Debian's headless Chromium with the network cut, optionally clicks a
heatmap cell (e.g. clarification_appropriateness scope=ACME_HK) and opens the first case left
in the table, then saves the explorer (charts, table, the open case) as one PNG; `--from-top`
starts the picture at the top of the page, so that the verdict banner above it is in it too.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--cell", nargs=2, metavar=("GATE", "BUCKET"))
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--from-top", action="store_true",
                        help="start at the top of the page (the verdict banner), not the explorer")
    args = parser.parse_args(argv)
    browser_path = shutil.which("chromium")
    if not args.html.is_file() or browser_path is None:
        print(f"error: {args.html} is not a file, or chromium is not installed "
              f"(apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path, args=["--no-sandbox"])
        try:
            page = browser.new_context(offline=True, viewport={"width": args.width, "height": 900}
                                       ).new_page()
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(
                ("file:", "data:", "blob:")) else r.abort())
            page.goto(args.html.resolve().as_uri())
            page.wait_for_function("""() => Array.from(document.querySelectorAll('.rse-chart'))
                .every(c => c.dataset.live)""", timeout=20_000)
            if args.cell:
                gate, bucket = args.cell
                cell = page.locator(f'.rse-explorer path[aria-label^="gate: {gate}; '
                                    f'tag value: {bucket};"]').first
                cell.scroll_into_view_if_needed()
                box = cell.bounding_box()
                page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                page.locator("tr.rse-row:not([hidden])").first.click()
                page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                page.wait_for_timeout(400)
            top, bottom = page.evaluate("""() => { const box = document.querySelector(
                '.rse-explorer').getBoundingClientRect();
                return [box.top + window.scrollY, box.bottom + window.scrollY]; }""")
            top = 8 if args.from_top else top
            page.screenshot(path=str(args.png), full_page=True, clip={
                "x": 0, "y": max(0, top - 8), "width": args.width, "height": bottom - top + 16})
        finally:
            browser.close()
    print(f"wrote {args.png} ({args.png.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
