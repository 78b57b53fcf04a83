"""`ragspine-eval notebooks`: every notebook run and rendered, failures reported after all are
rendered, and HTML reports that draw every chart in a real browser with the network cut off."""

from __future__ import annotations

import json

import pytest
from browser import open_offline

from ragspine_eval import paths
from ragspine_eval.cli import main
from ragspine_eval.workbench.rendering.notebooks import (
    NOTEBOOKS_DIR,
    NotebookRun,
    execute,
    render_html,
    run_all,
)

GOLDEN = paths.QA_GOLDEN_SET
XSS = "<script>document.title='pwned'</script>"
STALE_START = "2000-01-01T00:00:00+00:00"


def qa_run(tmp_path, name: str, **parameters) -> NotebookRun:
    return NotebookRun(name, NOTEBOOKS_DIR / "qa.ipynb",
                       {"mode": "agent", "report_path": str(tmp_path / f"{name}.json"), **parameters},
                       tmp_path)


@pytest.fixture(scope="module")
def main_job_reports(tmp_path_factory):
    """`ragspine-eval notebooks` once, as the main job runs it: (exit code, stdout, out folder)."""
    import contextlib
    import io

    out = tmp_path_factory.mktemp("main-job")
    # an agent report an earlier run left behind: the tool notebook must not compare with it
    from ragspine_eval.qa.run import run_qa_eval

    stale = run_qa_eval(GOLDEN, "agent").to_dict()
    stale["provenance"]["times"]["started_at"] = STALE_START
    (out / "qa_agent.json").write_text(json.dumps(stale), encoding="utf-8")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["notebooks", "--out", str(out)])
    return code, printed.getvalue(), out


def test_the_command_runs_every_notebook_and_prints_the_html_paths(main_job_reports):
    code, printed, out = main_job_reports
    assert code == 0
    names = ["qa_tool", "qa_agent", "extraction_xlsx", "extraction_pptx", "extraction_pdf",
             "compare_tool_agent", "history"]
    for i, name in enumerate(names, start=1):
        html = out / f"{name}.html"
        assert html.exists() and str(html) in printed and f"[{i}/7] {name}" in printed
        assert (out / f"{name}.ipynb").exists()
        assert (out / f"{name}.json").exists() or i > 5  # compare and history write no report
    assert "PASS: 7 notebooks" in printed


@pytest.mark.parametrize("name", ["qa_tool", "extraction_xlsx", "extraction_pptx", "extraction_pdf"])
def test_every_main_job_report_draws_its_charts_offline(main_job_reports, name):
    _, _, out = main_job_reports
    page = open_offline(out / f"{name}.html")
    assert len(page.charts) >= 2
    assert all(c["live"] and c["width"] > 100 and c["height"] > 50 for c in page.charts)
    assert page.network == [] and page.errors == []
    assert "no regression against the baseline" in page.text
    assert "golden set" in page.text and "git commit" in page.text  # the provenance header


def test_each_qa_report_compares_with_this_runs_other_mode(main_job_reports):
    """The tool notebook runs first, yet finds the agent report of this same run."""
    _, _, out = main_job_reports
    for name in ("qa_tool", "qa_agent"):
        text = open_offline(out / f"{name}.html").text
        assert "No report of the other mode" not in text
        assert "tool run" in text and "agent run" in text
        assert "No case has a different verdict in the two modes." in text
        assert STALE_START[:10] not in text  # not the report an earlier run left in out/


def test_the_main_job_compares_its_two_modes_and_draws_the_history(main_job_reports):
    _, _, out = main_job_reports
    page = open_offline(out / "compare_tool_agent.html")
    assert page.text.lstrip().startswith("PASS: no case went from pass to fail")
    assert "mode differs: tool vs agent" in page.text and STALE_START[:10] not in page.text
    history = open_offline(out / "history.html")
    assert len(history.charts) >= 3 and all(c["live"] for c in history.charts)
    assert page.network == history.network == [] and page.errors == history.errors == []


def test_a_failing_gate_is_reported_after_every_notebook_was_rendered(tmp_path):
    raised = tmp_path / "raised.json"
    data = json.loads(paths.QA_BASELINE.read_text(encoding="utf-8"))
    data["agent"]["metrics"]["answer_accuracy"] = 1.0
    raised.write_text(json.dumps(data), encoding="utf-8")
    runs = run_all(tmp_path, runs=[qa_run(tmp_path, "failing", baseline_path=str(raised)),
                                   qa_run(tmp_path, "passing")])
    assert [r.passed for r in runs] == [False, True]
    assert "AssertionError" in runs[0].error and "answer_accuracy" in runs[0].error
    assert all(r.html.exists() for r in runs)
    assert "answer_accuracy" in runs[0].html.read_text(encoding="utf-8")


def test_html_report_draws_every_chart_offline(main_job_reports):
    page = open_offline(main_job_reports[2] / "qa_agent.html")
    # gate bars, heatmap, failures per qtype, failures by stage and gate, intervals by tag
    assert len(page.charts) == 5
    assert all(c["live"] and c["width"] > 100 and c["height"] > 100 for c in page.charts)
    # the tool-vs-agent flips, when there are any, are a sortable DataTable
    assert page.searches == page.tables
    assert page.page_lengths == ["15"] * page.tables  # the box shows the page length in use
    # the explorer's table, every row shown: the ten of the six gates and the retrieval gate's two
    assert "All 12 failing verdicts" in page.text
    assert page.network == [] and page.errors == []


def test_html_report_hides_code_and_shows_the_gate_verdict(main_job_reports):
    page = open_offline(main_job_reports[2] / "qa_agent.html")
    assert "workbench.run_qa(" not in page.text
    assert "agent: no regression against the baseline" in page.text
    # the verdict first: the page opens with the PASS banner, mode and engine
    assert page.text.lstrip().startswith("PASS\nagent mode · engine ragspine")


def test_script_in_a_question_or_answer_shows_as_text(tmp_path):
    golden = tmp_path / "golden.jsonl"
    case = {"id": "xss-001", "question": f"{XSS}香港监管动态", "case_type": "refusal",
            "expected": {"clarification": "none", "refuse": True},
            "tags": {"topic": "REG", "scope": "ACME_HK", "qtype": "regulatory"},
            "reference_date": "2026-06-12"}
    golden.write_text(json.dumps(case, ensure_ascii=False) + "\n", encoding="utf-8")
    run = execute(qa_run(tmp_path, "xss", golden_path=str(golden),
                         baseline_path=str(tmp_path / "none.json")))
    assert run.passed, run.error
    page = open_offline(render_html(run))
    assert page.title != "pwned"
    assert XSS in page.text  # shown to the reader, in the question and the echoed answer


TCP_WARNING = "Kernel is running over TCP without encryption"


def test_a_rendered_notebook_carries_no_kernel_transport_warning(tmp_path, capfd):
    """The kernel starts over IPC (kernel_ipc), so ipykernel has no plain-TCP warning to print:
    not on the terminal the kernel shares with `make run`, not in the notebook, not in the HTML."""
    run = NotebookRun("history", NOTEBOOKS_DIR / "history.ipynb", {}, tmp_path)
    [run] = run_all(tmp_path, runs=[run])
    out, err = capfd.readouterr()
    assert run.passed and run.rendered, run.error
    # ipykernel logs it to the kernel's stderr, the terminal's (where it showed, once a notebook);
    # the notebook and its HTML are checked too, so it cannot move there unseen
    for where, text in (("terminal", out + err),
                        ("notebook", run.output_notebook.read_text(encoding="utf-8")),
                        ("html", run.html.read_text(encoding="utf-8"))):
        assert TCP_WARNING not in text, where


# --- a run that breaks in any way is recorded, and the others still run --------------------------


def dying_notebook(folder) -> NotebookRun:
    """A two-cell notebook whose kernel dies in its second cell (papermill's DeadKernelError)."""
    import nbformat

    from ragspine_eval.workbench.rendering.kernel import KERNEL_NAME

    params = nbformat.v4.new_code_cell("x = 1")
    params.metadata["tags"] = ["parameters"]
    nb = nbformat.v4.new_notebook(cells=[params, nbformat.v4.new_code_cell("import os; os._exit(3)")])
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": KERNEL_NAME,
                                 "language": "python"}
    path = folder / "dies.ipynb"
    nbformat.write(nb, path)
    return NotebookRun("dies", path, {"x": 2}, folder / "out")


def test_any_exception_becomes_the_runs_error_and_run_all_goes_on(tmp_path):
    missing = NotebookRun("missing", tmp_path / "no_such.ipynb", {}, tmp_path / "out")
    dies = dying_notebook(tmp_path)
    (tmp_path / "out").mkdir()
    stale = missing.html
    stale.write_text("yesterday's report", encoding="utf-8")
    runs = run_all(tmp_path / "out", runs=[missing, dies])
    assert [r.passed for r in runs] == [False, False]
    assert runs[0].error.startswith("FileNotFoundError") and "no_such.ipynb" in runs[0].error
    assert not runs[0].rendered and not stale.exists()  # no stale HTML passes for this run's
    assert runs[1].error.startswith("DeadKernelError")
    assert runs[1].rendered and runs[1].html.exists()  # what the dead kernel left is rendered


def test_notebooks_into_a_folder_that_cannot_be_made_exit_2(capsys, tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder", encoding="utf-8")
    code = main(["notebooks", "--out", str(blocker / "out")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(f"error: {blocker / 'out'}: ") and "is a file, not a folder" in err
