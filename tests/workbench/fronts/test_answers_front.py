"""What notebooks/answers.ipynb shows, computed without a kernel over the realdocs workspace, and
the notebook itself under papermill: it exits non-zero once a claim is lost against its
baseline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from realdocs_workspace import needs_realdocs, realdocs_workspace  # noqa: F401

from ragspine_eval import paths
from ragspine_eval.workbench.fronts import answers as ax
from ragspine_eval.workbench.rendering.notebooks import answers_runs

GOLD = Path(__file__).resolve().parents[2] / "fixtures" / "answers" / "realdocs_answers_v1.json"


@pytest.fixture(scope="module")
def run(realdocs_workspace, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("answers-nb")
    return ax.run_answers(realdocs_workspace.workspace.path, GOLD,
                          baseline_path=tmp / "b.json", report_path=tmp / "r.json", store=False,
                          allow_gold_errors=True)


def keys_name(realdocs_workspace):
    """The name of the keys of a run over the temporary (outside the project) workspace."""
    return f"{GOLD.stem}@{realdocs_workspace.workspace.fingerprint[:8]}"


@needs_realdocs
def test_the_banner_gates_and_failures_say_what_happened(run, realdocs_workspace):
    name = keys_name(realdocs_workspace)
    banner = ax.verdict(run)._repr_html_()
    assert f"NO BASELINE · answers {name}@answers:ask, {name}@answers:narrative" in banner
    gates = ax.gates(run)
    assert set(gates["gate"]) == {"claim_content", "claim_citation", "claim_citation_strict",
                                  "abstention", "question_pass", "fabrication_count"}
    fails = ax.failures(run)
    row = fails[(fails["route"] == "ask") & (fails["id"] == "different-anchors:en")].iloc[0]
    assert row["reason"] == "content and page hit different anchors"
    assert row["stage"].startswith("gold")  # its anchor on page 3 of one-page documents
    assert set(fails[fails["known gap"]]["id"]) == {"gap:zh", "gap-abstain:en"}
    assert set(ax.by(run, "language")["language"]) == {"en", "zh"}


@needs_realdocs
def test_the_heatmap_says_whether_a_baseline_was_compared_with(realdocs_workspace, run,
                                                               tmp_path):
    from ragspine_eval.answers.report import make_answers_entry

    assert "no baseline to compare with" in ax.explorer(run)._repr_html_()
    entry = make_answers_entry(run.report, "narrative")
    entry["passed_ids"]["claim_content"].append("content-miss:en#1")  # passed at baseline time
    baseline = tmp_path / "b.json"
    baseline.write_text(json.dumps({f"{keys_name(realdocs_workspace)}@answers:narrative":
                                    entry}), encoding="utf-8")
    compared = ax.run_answers(realdocs_workspace.workspace.path, GOLD, routes="narrative",
                              baseline_path=baseline, report_path=tmp_path / "r.json",
                              store=False, allow_gold_errors=True)
    html = ax.explorer(compared)._repr_html_()
    assert "no baseline to compare with" not in html
    assert "n cases that passed at baseline time fail now" in html


@needs_realdocs
def test_the_case_view_marks_each_claim_and_sets_pages_side_by_side(run):
    html = ax.case_view(run, "value-hit:en")._repr_html_()
    assert html.count('class="rse-ans-route"') == 2  # ask and narrative
    assert "<mark>15.34</mark>" in html
    assert "pages — expected: 1 · cited: 1" in html
    fragment = ax.case_view(run, "fragment:en")._repr_html_()  # key words marked one by one
    assert "<mark>KERALA</mark>" in fragment and "<mark>777.5</mark>" in fragment
    explorer = ax.explorer(run)._repr_html_()
    assert 'data-case="value-hit:en"' in explorer and "<mark>" in explorer


def test_a_mark_is_escaped_and_never_marks_inside_another():
    assert ax.mark("x <b>y</b> 15.34", ["15.34"]) == "x &lt;b&gt;y&lt;/b&gt; <mark>15.34</mark>"
    assert ax.mark("Kerala 777.5", ["kerala 777.5", "777.5"]) == "<mark>Kerala 777.5</mark>"


def test_the_notebook_runs_on_the_realdocs_workspace_only_where_the_main_job_built_it(tmp_path):
    assert answers_runs(tmp_path) == []
    (tmp_path / "realdocs").mkdir()
    (tmp_path / "realdocs" / "knowledge.db").write_bytes(b"")
    [nb] = answers_runs(tmp_path)
    assert nb.parameters["require_baseline"] is True and nb.name == "answers_realdocs"


@needs_realdocs
@pytest.mark.slow  # 14 s: papermill's failing exit is held for the qa notebook in `make test`
def test_papermill_fails_after_a_change_that_loses_a_claim(realdocs_workspace, tmp_path, run):
    from ragspine_eval.answers.report import make_answers_entry

    entry = make_answers_entry(run.report, "narrative")
    entry["passed_ids"]["claim_content"].append("content-miss:en#1")  # passed at baseline time
    baseline = tmp_path / "b.json"
    baseline.write_text(json.dumps({f"{keys_name(realdocs_workspace)}@answers:narrative":
                                    entry}), encoding="utf-8")
    out = tmp_path / "out.ipynb"
    proc = subprocess.run(
        [sys.executable, "-m", "papermill", "--no-progress-bar", "notebooks/answers.ipynb",
         str(out), "-p", "kb", str(realdocs_workspace.workspace.path), "-p", "golden", str(GOLD),
         "-p", "routes", "narrative", "-p", "baseline_path", str(baseline),
         "-p", "report_path", str(tmp_path / "r.json"), "-p", "store", "False",
         "-p", "allow_gold_errors", "True"],
        cwd=paths.PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "content-miss:en#1 passed at baseline time, fails now" in proc.stderr + proc.stdout


@needs_realdocs
@pytest.mark.slow  # 16 s of Chromium: the qa explorer's offline clicks stay in `make test`
def test_the_html_report_filters_and_opens_a_case_offline(realdocs_workspace, tmp_path):
    from browser import offline_page

    from ragspine_eval.workbench.rendering.notebooks import NotebookRun, execute, render_html

    nb = NotebookRun("answers", paths.PROJECT_ROOT / "notebooks" / "answers.ipynb",
                     {"kb": str(realdocs_workspace.workspace.path), "golden": str(GOLD),
                      "baseline_path": str(tmp_path / "b.json"),
                      "report_path": str(tmp_path / "r.json"), "store": False,
                      "allow_gold_errors": True}, tmp_path)
    execute(nb)
    assert nb.error is None, nb.error
    html = render_html(nb)
    with offline_page(html, height=1400) as seen:
        page = seen.page
        assert "NO BASELINE · answers realdocs@answers:ask" in page.inner_text(".rse-verdict")
        cell = page.locator('.rse-explorer path[aria-label^="gate: narrative claim_citation; '
                            'tag value: language=en;"]').first
        cell.scroll_into_view_if_needed()
        box = cell.bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        shown = [r.get_attribute("data-id") for r in page.locator("tr.rse-row:not([hidden])").all()]
        assert sorted(shown) == ["one-of-two:en", "page-miss:en"]  # their pages: 6 and 4
        page.locator('tr.rse-row[data-id="page-miss:en"]').click()
        view = page.locator('.rse-case-slot[data-case="page-miss:en"]')
        assert view.is_visible()
        text = view.inner_text()
        assert "claim page missing from sources" in text and "pages — expected: 4 · cited: 1" in text
        assert view.locator("mark").first.inner_text() == "18.59"
        assert seen.network == [] and seen.errors == []
