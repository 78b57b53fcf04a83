"""The case view in the rendered QA report, in a real headless Chromium at 1,280 px with the
network cut: every key of a nested value (Expected → source: doc, locator; the citation
evidence) reads as a word, never one letter a line, in every case view, beside the other mode's
too; and the info table at the top reads left-aligned."""

from __future__ import annotations

import json

import pytest
from ragspine_eval import paths
from browser import key_lines, offline_page, case_view_ids, show_case_view

from ragspine_eval import Gate, GatedOutputs, QAHarness, QAWhat, run_gated
from ragspine_eval.pipeline.spec import RunWhat
from ragspine_eval.workbench.rendering.notebooks import NOTEBOOKS_DIR, NotebookRun, run_all


@pytest.fixture(scope="module")
def qa_report(tmp_path_factory):
    """`ragspine-eval notebooks`' agent report, with the tool mode's report beside it, so
    each case view shows both modes side by side (the narrowest layout)."""
    out = tmp_path_factory.mktemp("case-view")
    run_gated(QAHarness(), QAWhat(RunWhat(paths.QA_GOLDEN_SET, mode="tool"), out / "b.json"),
              outputs=GatedOutputs(report=out / "qa_tool.json"), gate=Gate(store=False))
    run = NotebookRun("qa_agent", NOTEBOOKS_DIR / "qa.ipynb",
                      {"mode": "agent", "report_path": str(out / "qa_agent.json"),
                       "store": False}, out)
    [done] = run_all(out, runs=[run])
    assert done.html.exists(), done.error
    return done.html


def test_every_key_of_every_case_view_reads_as_a_word(qa_report):
    with offline_page(qa_report, width=1280) as seen:
        page = seen.page
        ids = case_view_ids(page)
        assert len(ids) >= 5
        nested = 0
        for case_id in ids:
            slot = show_case_view(page, case_id)
            assert page.locator(slot).is_visible()
            keys = key_lines(page, slot)
            assert keys, case_id
            broken = [(k, n) for k, n in keys if n > 2]
            assert not broken, f"{case_id}: keys drawn over more than two lines: {broken}"
            nested += sum(1 for k, _ in keys if k in ("doc", "locator"))
            # both modes side by side: the view fits the window
            assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        assert nested >= 4  # the nested sources were there to measure
        assert seen.network == [] and seen.errors == []


def test_the_info_table_at_the_top_reads_left_aligned(qa_report):
    with offline_page(qa_report, width=1280) as seen:
        aligns = seen.page.evaluate("""() => { const t = Array.from(document.querySelectorAll(
            'table')).find(t => t.innerText.startsWith('field'));
            return Array.from(t.querySelectorAll('td, th')).map(c => getComputedStyle(c).textAlign); }""")
    assert len(aligns) > 10 and set(aligns) == {"left"}


def test_the_line_count_sees_a_key_broken_one_letter_a_line(tmp_path):
    """The check above can fail: with JupyterLab's rule that floats a <dt> at 20% of its box
    (what the case view had to undo), a nested `locator` is drawn over seven lines."""
    page_file = tmp_path / "page.html"
    page_file.write_text(
        "<style>dt{float:left;width:20%} dl{display:grid;grid-template-columns:max-content 1fr}"
        "dd{margin:0;overflow-wrap:anywhere}</style><div class='rse-case'><dl><dt>source</dt>"
        "<dd><dl><dt>locator</dt><dd>slide=4,table=1</dd></dl></dd></dl></div>",
        encoding="utf-8")
    with offline_page(page_file, width=1280) as seen:
        lines = dict(key_lines(seen.page, ".rse-case"))
    assert lines["locator"] == 7 and lines["source"] == 1


@pytest.fixture(scope="module")
def repeated_report(tmp_path_factory):
    """The qa notebook over a callable engine that answers num-003 wrong every second call
    (tests/engine_doubles.py) and num-005 wrong every time, with repeat=3: a flaky case and a
    failing one, each case keeping its three repeats."""
    from ragspine_eval import paths

    out = tmp_path_factory.mktemp("case-view-repeats")
    run = NotebookRun("qa_repeats", NOTEBOOKS_DIR / "qa.ipynb",
                      {"engine": "engine_doubles:right_value_one_flaky", "repeat": 3,
                       "report_path": str(out / "qa_repeats.json"),
                       "baseline_path": str(out / "b.json"), "store": False}, out)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PYTHONPATH", str(paths.PROJECT_ROOT / "tests"))
        env.setenv("RSE_FLAKY_COUNTER", str(out / "calls"))
        env.setenv("RSE_FLAKY_CASE", "num-003")
        env.setenv("RSE_WRONG_VALUE", "num-005")
        [done] = run_all(out, runs=[run])
    assert done.html.exists(), done.error
    return done.html


def test_a_case_with_repeats_shows_them_side_by_side(repeated_report, tmp_path):
    with offline_page(repeated_report, width=1280) as seen:
        page = seen.page
        # the failing case, from the explorer: three columns in one row, left to right
        slot = show_case_view(page, "num-005")
        boxes = page.evaluate("""s => Array.from(document.querySelectorAll(
            s + ' .rse-case-repeat')).map(e => { const b = e.getBoundingClientRect();
            return [b.left, b.top, b.width, e.innerText]; })""", slot)
        assert [b[3].splitlines()[0] for b in boxes] == ["repeat 1 · FAIL", "repeat 2 · FAIL",
                                                         "repeat 3 · FAIL"]
        assert len({round(b[1]) for b in boxes}) == 1  # side by side, one row
        assert boxes[0][0] < boxes[1][0] < boxes[2][0] and min(b[2] for b in boxes) > 150
        # the flaky case (it passes, so the explorer lists it not): folded under the flaky table
        flaky = 'details.rse-flaky-case[data-case-id="num-003"]'
        page.evaluate("s => { document.querySelector(s).open = true; }", flaky)
        page.locator(flaky).scroll_into_view_if_needed()
        shown = page.evaluate("""s => Array.from(document.querySelectorAll(
            s + ' .rse-case-repeat li')).map(e => e.innerText)
            .filter(t => t.startsWith('numeric_accuracy'))""", flaky)
        report = json.loads(repeated_report.with_name("qa_repeats.json").read_text("utf-8"))
        [verdicts] = [f["verdicts"] for f in report["metrics"]["numeric_accuracy"]["flaky"]
                      if f["id"] == "num-003"]
        assert len(set(verdicts)) == 2  # it was flaky: the columns must differ
        assert shown == [f"numeric_accuracy: {'pass' if v else 'fail'}" for v in verdicts]
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        page.locator(flaky).screenshot(path=str(tmp_path / "repeats.png"))
        assert seen.network == [] and seen.errors == []
    assert (tmp_path / "repeats.png").stat().st_size > 0
