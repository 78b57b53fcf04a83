"""The committed notebooks: thin, without outputs, pinned to the project's kernel, and runnable
by papermill from the repository root or from notebooks/, with the gate asserted last."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from ragspine_eval import paths
from ragspine_eval.workbench.rendering.kernel import KERNEL_NAME

NOTEBOOKS = sorted((paths.PROJECT_ROOT / "notebooks").glob("*.ipynb"))
PARAMETERS = {"qa.ipynb": {"mode", "engine", "golden_path", "baseline_path", "kb_dir", "report_path",
                           "judge", "repeat", "require_baseline", "store", "provider", "model",
                           "base_url", "cassette", "cassette_mode", "prices"},
              "extraction.ipynb": {"docs", "facts_path", "doc", "ground_truth", "manifest",
                                   "baseline_path", "require_baseline", "report_path", "store"},
              "compare.ipynb": {"before", "after", "fail_on_flips"},
              "history.ipynb": {"qa_history", "extraction_history", "runs_dir", "runs_shown"},
              "retrieval.ipynb": {"kb", "golden", "top_k", "engine_config", "baseline_path",
                                  "report_path", "require_baseline", "store"},
              "answers.ipynb": {"kb", "golden", "routes", "engine_config", "baseline_path",
                                "report_path", "require_baseline", "store", "provider", "model",
                                "base_url", "cassette", "cassette_mode", "prices",
                                "allow_gold_errors", "judge", "labels_path"},
              "review.ipynb": {"draft", "kb", "decisions_path"}}
# what each notebook's last cell calls: its gate (history and review have none: history draws,
# review's decisions are saved by its button and applied by `gold review apply`); every gated
# run's notebook calls the one gate, workbench.assert_gate (fronts/gate.py), the same way
GATED = {"qa.ipynb": "run", "extraction.ipynb": "ex", "retrieval.ipynb": "run",
         "answers.ipynb": "run"}
LAST_CELL = {**{name: f"print(workbench.assert_gate({var}, require_baseline))"
                for name, var in GATED.items()},
             "compare.ipynb": "compare.assert_no_flips(pair, fail_on_flips)",
             "history.ipynb": "history.changes_table",
             "review.ipynb": "session.coverage()"}
PAPERMILL = [sys.executable, "-m", "papermill", "--no-progress-bar"]


@pytest.fixture(params=NOTEBOOKS, ids=lambda p: p.name)
def notebook(request):
    return request.param, nbformat.read(request.param, as_version=4)


def test_notebooks_carry_no_outputs(notebook):
    path, nb = notebook
    dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
             and (c.outputs or c.execution_count is not None)]
    assert not dirty, f"{path.name}: cells {dirty} carry outputs; clear them before committing"


def test_notebooks_pin_the_project_kernel(notebook):
    _, nb = notebook
    assert nb.metadata["kernelspec"]["name"] == KERNEL_NAME


def test_first_code_cell_is_the_tagged_parameters_cell(notebook):
    path, nb = notebook
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert "parameters" in first.metadata.get("tags", [])
    names = {line.split("=")[0].strip() for line in first.source.splitlines()
             if "=" in line and not line.lstrip().startswith("#")}
    assert names == PARAMETERS[path.name]


def test_notebooks_hold_calls_not_logic(notebook):
    _, nb = notebook
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    for forbidden in ("def ", "class ", "import pandas", "import altair", "lambda", ".groupby(",
                      "if "):
        assert forbidden not in code


def test_the_last_cell_asserts_the_gate(notebook):
    path, nb = notebook
    assert LAST_CELL[path.name] in nb.cells[-1].source


@pytest.mark.parametrize("name", sorted(GATED))
def test_a_gated_notebooks_last_cell_calls_the_one_gate_and_nothing_else(name):
    """Its last cell is `print(workbench.assert_gate(<run>, require_baseline))` exactly: no
    notebook's own gate, no other call; and no other cell calls a gate of its own."""
    import ast

    nb = nbformat.read(paths.PROJECT_ROOT / "notebooks" / name, as_version=4)
    last = nb.cells[-1]
    assert last.cell_type == "code" and last.source.strip() == LAST_CELL[name]
    calls = [ast.unparse(n.func) for n in ast.walk(ast.parse(last.source))
             if isinstance(n, ast.Call)]
    assert calls == ["print", "workbench.assert_gate"]
    earlier = "\n".join(c.source for c in nb.cells[:-1] if c.cell_type == "code")
    assert "assert_gate" not in earlier


def test_every_notebook_is_committed():
    assert {p.name for p in NOTEBOOKS} == set(PARAMETERS)


# --- papermill, end to end on the real engine --------------------------------------------------


def papermill(tmp_path: Path, *params: str, cwd: Path = paths.PROJECT_ROOT,
              notebook: str = "notebooks/qa.ipynb") -> subprocess.CompletedProcess:
    out = tmp_path / "out.ipynb"
    args = [*PAPERMILL, notebook, str(out), "-p", "mode", "agent",
            "-p", "report_path", str(tmp_path / "qa_agent.json"), *params]
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_papermill_runs_qa_from_the_repository_root(tmp_path, own_run_store):
    proc = papermill(tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Kernel is running over TCP" not in proc.stderr  # the kernel starts over IPC
    report = json.loads((tmp_path / "qa_agent.json").read_text(encoding="utf-8"))
    assert report["mode"] == "agent" and report["n_cases"] >= 60
    last = nbformat.read(tmp_path / "out.ipynb", as_version=4).cells[-1]
    assert "agent: no regression against the baseline" in last.outputs[0]["text"]
    # the kernel inherited RAGSPINE_EVAL_RUNS_DIR: the run is kept in this test's store
    from ragspine_eval.runs import list_runs, load_report

    [kept] = list_runs(root=own_run_store)
    assert (kept.key, kept.verdict) == ("agent", "pass") and load_report(kept.id) == report


def test_papermill_runs_qa_from_the_notebooks_folder(tmp_path, own_run_store):
    proc = papermill(tmp_path, "-p", "store", "False", cwd=paths.PROJECT_ROOT / "notebooks",
                     notebook="qa.ipynb")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads((tmp_path / "qa_agent.json").read_text(encoding="utf-8"))["n_cases"] >= 60
    assert list(own_run_store.iterdir()) == []  # store=False: nothing kept


def test_a_baseline_above_the_observed_rate_fails_papermill_naming_the_gate(tmp_path):
    baseline = tmp_path / "qa_baseline.json"
    data = json.loads(paths.QA_BASELINE.read_text(encoding="utf-8"))
    data["agent"]["metrics"]["numeric_accuracy"] = 1.0
    baseline.write_text(json.dumps(data), encoding="utf-8")
    proc = papermill(tmp_path, "-p", "baseline_path", str(baseline))
    assert proc.returncode != 0
    last = nbformat.read(tmp_path / "out.ipynb", as_version=4).cells[-1]
    error = next(o for o in last.outputs if o["output_type"] == "error")
    assert error["ename"] == "AssertionError"
    assert "REGRESSION [agent] numeric_accuracy: 1.0000 -> 0.9737" in error["evalue"]


def test_papermill_runs_extraction_and_names_a_regressed_channel(tmp_path):
    baseline = tmp_path / "extraction_baseline.json"
    data = json.loads(paths.EXTRACTION_BASELINE.read_text(encoding="utf-8"))
    data["pptx"]["metrics"]["color_mapping"] = 1.0
    baseline.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "out.ipynb"
    args = [*PAPERMILL, "notebooks/extraction.ipynb", str(out), "-p", "docs", "pptx",
            "-p", "baseline_path", str(baseline), "-p", "report_path", str(tmp_path / "x.json")]
    proc = subprocess.run(args, cwd=paths.PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    error = next(o for o in nbformat.read(out, as_version=4).cells[-1].outputs
                 if o["output_type"] == "error")
    assert "REGRESSION [pptx] color_mapping: 1.0000 -> 0.8667" in error["evalue"]
    report = json.loads((tmp_path / "x.json").read_text(encoding="utf-8"))
    assert set(report["documents"]) == {"pptx"} and report["provenance"]["harness"] == "extraction"
