"""Opens a rendered HTML report in a real headless Chromium with the network cut off.

Used by the notebook tests: a report must draw every chart and load nothing from the network.
`offline_page` gives the live page to a test that hovers and clicks; `open_offline` gathers
what a reader sees once it has loaded.
Chromium is Debian's package (.ci/run installs it); where it is absent the caller skips with a
message saying how to get it.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@dataclass
class Offline:
    page: Any  # a playwright Page
    network: list[str]  # requests that tried to leave the file
    errors: list[str]  # uncaught errors in the page


@dataclass
class PageCheck:
    title: str
    text: str
    charts: list[dict]  # one per chart: {"live" (vega-embed drew it), "width", "height"}
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


@contextmanager
def offline_page(html: Path, width: int = 1280, height: int = 900) -> Iterator[Offline]:
    """The report open in headless Chromium, offline, every request that leaves the file
    recorded and aborted; waits until the page has loaded and its live charts are drawn."""
    from playwright.sync_api import sync_playwright

    seen = Offline(None, [], [])

    def route(r):  # noqa: ANN001 - a playwright Route
        url = r.request.url
        if url.startswith(("file:", "data:", "blob:")):
            r.continue_()
        else:
            seen.network.append(url)
            r.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(offline=True, viewport={"width": width, "height": height}
                                       ).new_page()
            page.route("**/*", route)
            page.on("pageerror", lambda e: seen.errors.append(str(e)))
            page.goto(html.resolve().as_uri())
            page.wait_for_load_state("load")
            page.wait_for_function("""() => Array.from(document.querySelectorAll('.rse-chart'))
                .every(c => c.dataset.live)""", timeout=20_000)
            seen.page = page
            yield seen
        finally:
            browser.close()


def open_offline(html: Path) -> PageCheck:
    with offline_page(html) as seen:
        page = seen.page
        charts = page.evaluate("""() => Array.from(document.querySelectorAll('.rse-chart')).map(
            c => { const svg = c.querySelector('svg'); const box = svg ? svg.getBoundingClientRect()
                   : {width: 0, height: 0};
                   return {live: !!c.dataset.live, width: box.width, height: box.height}; })""")
        count = "s => document.querySelectorAll(s).length"
        tables = page.evaluate(count, "table.dataTable")
        searches = page.evaluate(count, "div.dt-search input")
        filters = page.evaluate(count, "table.dataTable thead input")
        lengths = page.evaluate("""() => Array.from(document.querySelectorAll(
            'div.dt-length select')).map(s => s.options[s.selectedIndex]?.text ?? '')""")
        return PageCheck(page.title(), page.inner_text("body"), charts, tables, searches,
                         filters, lengths, seen.network, seen.errors)


# A canvas draws each character of a label in the font the page gave it. Real glyphs of
# different characters differ; a missing glyph is drawn as the same empty box (or nothing)
# whatever the character, and as a private-use character no font draws.
GLYPHS_JS = """([text, font]) => {
  const canvas = document.createElement('canvas');
  canvas.width = 48; canvas.height = 48;
  const g = canvas.getContext('2d', {willReadFrequently: true});
  const draw = ch => { g.clearRect(0, 0, 48, 48); g.font = font; g.fillStyle = '#000';
    g.fillText(ch, 4, 36);
    return Array.from(g.getImageData(0, 0, 48, 48).data).filter((v, i) => i % 4 === 3)
      .map(v => v > 96 ? 1 : 0).join(''); };
  const chars = Array.from(new Set(Array.from(text).filter(c => /\\p{Script=Han}/u.test(c))));
  const missing = draw('\\uE000');
  const drawn = chars.map(draw);
  return {chars: chars.length, distinct: new Set(drawn).size,
          like_missing: drawn.filter(d => d === missing).length,
          inked: drawn.filter(d => d.includes('1')).length};
}"""


def han_glyphs(page: Any, selector: str) -> dict:
    """How the Chinese characters of the first element matching `selector` draw in its own
    font: {chars, distinct, like_missing, inked}. Real glyphs: distinct == inked == chars and
    like_missing == 0."""
    element = page.locator(selector).first
    text = element.inner_text()
    font = element.evaluate("e => { const s = getComputedStyle(e); return s.fontSize + ' ' + s.fontFamily; }")
    return page.evaluate(GLYPHS_JS, [text, font])


# How many lines a key's text is drawn over: the distinct tops of its text's line boxes
KEY_LINES_JS = """([scope, keys]) => Array.from(document.querySelectorAll(`${scope} :is(${keys})`))
  .map(e => { const r = document.createRange(); r.selectNodeContents(e);
    return [e.innerText, new Set(Array.from(r.getClientRects()).filter(b => b.width > 0)
      .map(b => Math.round(b.top))).size]; })"""


def key_lines(page: Any, scope: str, keys: str = "dt, th") -> list[tuple[str, int]]:
    """(text, lines it is drawn over) of every key (`keys`) under the elements `scope` matches:
    a case view's nested keys must read as words, not one letter a line."""
    return [tuple(pair) for pair in page.evaluate(KEY_LINES_JS, [scope, keys])]


def case_view_ids(page: Any, root: str = "") -> list[str]:
    """The ids of the case views the failure explorer under `root` holds (its filter cleared,
    so that every row can be clicked): open each with `show_case_view`."""
    page.evaluate("r => document.querySelector(`${r} .rse-clear`)?.click()", root)
    ids = page.evaluate("""r => Array.from(document.querySelectorAll(`${r} .rse-case-slot`))
        .map(s => s.dataset.case)""", root)
    return ids


def show_case_view(page: Any, case_id: str, root: str = "") -> str:
    """Open one case's view (its row clicked, its <details> opened); returns its selector."""
    page.locator(f'{root} tr.rse-row[data-id="{case_id}"]'.strip()).first.click()
    slot = f'{root} .rse-case-slot[data-case="{case_id}"]'.strip()
    page.evaluate("s => document.querySelectorAll(s + ' details')"
                  ".forEach(d => { d.open = true; })", slot)
    return slot
