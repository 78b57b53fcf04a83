"""Opens a rendered HTML report in a real headless Chromium with the network cut off.

Used by the notebook tests: a report must draw every chart and load nothing from the network.
Chromium is Debian's package (.ci/run installs it); where it is absent the caller skips with a
message saying how to get it.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@dataclass
class PageCheck:
    title: str
    text: str
    charts: list[dict]  # one per chart image: {"complete", "width", "height"}
    tables: int  # interactive tables that DataTables initialised
    searches: int  # their global search boxes
    column_filters: int  # filter boxes in their column headers
    page_lengths: list[str]  # what each table's "entries per page" box shows
    network: list[str] = field(default_factory=list)  # requests that tried to leave the file
    errors: list[str] = field(default_factory=list)


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.skip("Chromium is not installed here; .ci/run installs Debian's `chromium` package "
                    "(apt-get install chromium) so CI always runs this check")
    return path


def open_offline(html: Path) -> PageCheck:
    from playwright.sync_api import sync_playwright

    network: list[str] = []
    errors: list[str] = []

    def route(r):  # noqa: ANN001 - a playwright Route
        url = r.request.url
        if url.startswith(("file:", "data:", "blob:")):
            r.continue_()
        else:
            network.append(url)
            r.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(offline=True).new_page()
            page.route("**/*", route)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(html.resolve().as_uri())
            page.wait_for_load_state("load")
            charts = page.evaluate("""() => Array.from(
                document.querySelectorAll('.jp-RenderedSVG img')).map(
                i => ({complete: i.complete, width: i.naturalWidth, height: i.naturalHeight}))""")
            count = "s => document.querySelectorAll(s).length"
            tables = page.evaluate(count, "table.dataTable")
            searches = page.evaluate(count, "div.dt-search input")
            filters = page.evaluate(count, "table.dataTable thead input")
            lengths = page.evaluate("""() => Array.from(document.querySelectorAll(
                'div.dt-length select')).map(s => s.options[s.selectedIndex]?.text ?? '')""")
            return PageCheck(page.title(), page.inner_text("body"), charts, tables, searches,
                             filters, lengths, network, errors)
        finally:
            browser.close()
