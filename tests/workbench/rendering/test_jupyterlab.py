"""The explorer in JupyterLab itself: a real JupyterLab on loopback with a token this test
chooses, notebooks/qa.ipynb opened in Debian's Chromium through playwright, Run All, then a
tooltip on hover and a click that filters the failure table. Slow (about a minute): marked
`jupyterlab`, and still part of a normal run; one notebook, one mode."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager

import pytest
from browser import CHROMIUM_ARGS, case_view_ids, chromium, key_lines, show_case_view

from ragspine_eval import paths
from ragspine_eval.workbench.rendering.kernel import DISPLAY_NAME, KERNEL_NAME, ensure_kernel

pytestmark = pytest.mark.jupyterlab  # registered in pyproject.toml


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path, request):
    """JupyterLab serving a copy of qa.ipynb, or of the notebook given as the fixture's param
    (so an autosave never writes into the repository): (base url, token)."""
    name = getattr(request, "param", "qa.ipynb")
    ensure_kernel()
    shutil.copy(paths.PROJECT_ROOT / "notebooks" / name, tmp_path / name)
    token, port = secrets.token_hex(16), free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(paths.PROJECT_ROOT), os.environ.get("PYTHONPATH")) if p)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}",
         *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else [])],
        env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start within 60 s")
        # the notebook's kernel started before the page opens: jupyter_server's /api/kernels
        # fails (500) when the page lists kernels while one is starting, and JupyterLab then
        # asks which kernel to use
        session = urllib.request.Request(
            f"{base}/api/sessions?token={token}", method="POST",
            headers={"Content-Type": "application/json"},
            data=json.dumps({"path": name, "type": "notebook", "name": name,
                             "kernel": {"name": KERNEL_NAME}}).encode())
        urllib.request.urlopen(session, timeout=60)
        for _ in range(60):
            with urllib.request.urlopen(f"{base}/api/kernels?token={token}", timeout=5) as r:
                if [k["execution_state"] for k in json.load(r)] == ["idle"]:
                    break
            time.sleep(0.5)
        yield base, token
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@contextmanager
def ran_all(lab, name: str, charts: str = ".rse-explorer"):
    """`name` open in JupyterLab in Chromium, every cell run, the charts under the `charts`
    selector live: yields (page, the requests that tried to leave the machine)."""
    from playwright.sync_api import sync_playwright

    base, token = lab
    outside: list[str] = []

    def route(r):  # noqa: ANN001 - a playwright Route
        if r.request.url.startswith((base, "ws://127.0.0.1", "data:", "blob:")):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.route("**/*", route)
            page.goto(f"{base}/lab/tree/{name}?token={token}")
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                                   timeout=60_000)
            page.wait_for_function(f"""() => document.querySelector('.jp-NotebookPanel-toolbar')
                ?.innerText.includes({DISPLAY_NAME!r})""", timeout=30_000)
            page.click(".lm-MenuBar-itemLabel:text-is('Run')")
            page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
            page.wait_for_selector(f"{charts} .rse-chart[data-live]", state="attached",
                                   timeout=180_000)
            page.wait_for_function(f"""() => Array.from(document.querySelectorAll(
                '{charts} .rse-chart')).every(c => c.dataset.live)""", timeout=30_000)
            yield page, outside
        finally:
            browser.close()


def test_run_all_in_jupyterlab_gives_tooltips_and_a_click_that_filters(lab):
    with ran_all(lab, "qa.ipynb") as (page, outside):
        rows = page.locator(".rse-explorer tr.rse-row")
        total = rows.count()
        cell = page.locator('.rse-explorer path[aria-label^="gate: '
                            'clarification_appropriateness; tag value: qtype=attribution;"]'
                            ).first
        cell.scroll_into_view_if_needed()
        box = cell.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.wait_for_selector("#vg-tooltip-element.visible", timeout=10_000)
        tip = page.inner_text("#vg-tooltip-element")
        assert "clarification_appropriateness" in tip and "qtype=attribution" in tip
        page.mouse.click(x, y)
        shown = page.evaluate("""() => Array.from(document.querySelectorAll(
            '.rse-explorer tr.rse-row')).filter(r => !r.hidden).map(
            r => [r.dataset.gate, JSON.parse(r.dataset.buckets)])""")
        assert 0 < len(shown) < total
        assert all(g == "clarification_appropriateness" and "qtype=attribution" in b
                   for g, b in shown)
        # the "failures by stage and gate" chart filters the same table (story 14)
        page.click(".rse-explorer .rse-clear")
        segment = page.locator('.rse-explorer path[aria-label*="gate: answer_accuracy; '
                               'stage: retrieval;"]').first
        segment.scroll_into_view_if_needed()
        box = segment.bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        shown = page.evaluate("""() => Array.from(document.querySelectorAll(
            '.rse-explorer tr.rse-row')).filter(r => !r.hidden).map(
            r => [r.dataset.id, r.dataset.gate, r.dataset.stage])""")
        assert shown == [["nar-006", "answer_accuracy", "retrieval"]]
        page.click(".rse-explorer .rse-clear")
        assert page.locator(".jp-Notebook .jp-RenderedSVG, .jp-Notebook .jp-RenderedImage"
                            ).count() == 0  # every chart live, none a picture unseen
        # every case view's nested keys read as words here too (JupyterLab's own CSS
        # floats a <dt> at 20% of its box), and the info table reads left-aligned
        ids = case_view_ids(page, ".rse-explorer")
        assert len(ids) >= 5
        for case_id in ids:
            slot = show_case_view(page, case_id, ".rse-explorer")
            broken = [(k, n) for k, n in key_lines(page, slot) if n > 2]
            assert not broken, f"{case_id}: {broken}"
        aligns = page.evaluate("""() => Array.from(Array.from(document.querySelectorAll(
            '.jp-Notebook table')).find(t => t.innerText.startsWith('field'))
            .querySelectorAll('td, th')).map(c => getComputedStyle(c).textAlign)""")
        assert len(aligns) > 10 and set(aligns) == {"left"}
    assert outside == []


@pytest.mark.parametrize("lab", ["extraction.ipynb"], indirect=True)
def test_the_extraction_explorer_filters_and_opens_a_cell_in_jupyterlab(lab):
    """The fixtures' run (pptx has wrong colour cells): a click on a mismatch bar keeps its
    cells, a row opens the cell in its slide table with its neighbours."""
    with ran_all(lab, "extraction.ipynb") as (page, outside):
        assert page.locator(".rse-verdict h2").first.text_content() == "PASS"
        total = page.locator(".rse-explorer tr.rse-row").count()
        bar = page.locator('.rse-explorer path[aria-label*="document set · sheet: pptx · '
                           'slide1_table2; channel: color_mapping"]').first
        bar.scroll_into_view_if_needed()
        bar.click()
        shown = page.evaluate("""() => Array.from(document.querySelectorAll(
            '.rse-explorer tr.rse-row')).filter(r => !r.hidden).map(r => r.dataset.id)""")
        assert 0 < len(shown) < total
        assert all(i.startswith("pptx:slide1_table2!") for i in shown)
        page.locator(f'.rse-explorer tr.rse-row[data-id="{shown[0]}"]').click()
        view = page.locator(f'.rse-case-slot[data-case="{shown[0]}"]')
        assert view.is_visible() and "slide 1, table 2" in view.inner_text()
        assert view.locator("table.rse-cell-grid td").count() >= 4
    assert outside == []


@pytest.fixture
def two_stored_runs(tmp_path):
    """Two QA runs of one key in the test's run store, the second answering num-001 wrong:
    compare.ipynb's default pair."""
    from builders import stored_qa_run

    stored_qa_run(tmp_path, "a")
    stored_qa_run(tmp_path, "b", wrong="num-001")


@pytest.mark.parametrize("lab", ["compare.ipynb"], indirect=True)
def test_compare_in_jupyterlab_draws_live_and_a_click_filters_the_flips(two_stored_runs, lab):
    def click(page, gate: str, bucket: str) -> list[str]:  # noqa: ANN001 - a playwright Page
        cell = page.locator(f'.rse-compare path[aria-label^="gate: {gate}; tag value: '
                            f'{bucket};"]').first
        cell.scroll_into_view_if_needed()
        box = cell.bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        return page.evaluate("""() => Array.from(document.querySelectorAll(
            '.rse-compare tr.rse-row')).filter(r => !r.hidden).map(r => r.dataset.id)""")

    with ran_all(lab, "compare.ipynb", charts=".rse-compare") as (page, outside):
        assert "FAIL: 1 case went from pass to fail" in page.inner_text(".rse-verdict")
        assert click(page, "citation_validity", "scope=ACME_HK") == []
        assert click(page, "numeric_accuracy", "scope=ACME_HK") == ["num-001"]
        page.wait_for_selector(".jp-OutputArea-output:has-text('AssertionError')",
                               timeout=60_000)  # the last cell: the gate names the case
        assert "went from pass to fail: num-001" in page.inner_text(".jp-Notebook")
    assert outside == []
