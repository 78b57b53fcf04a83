"""Runs the parameterized notebooks headlessly and renders each to an HTML report.

`plan(out_dir)` lists the runs (each QA mode, each extraction document set, the answers on the
realdocs workspace where the main job built one, then the tool vs agent comparison and the
history: `across_runs`), `execute(run)`
runs one with papermill on the project's kernel, `render_html(run)` turns its output notebook
into a self-contained HTML file, and `run_all` does both for every run, after writing every QA
run's JSON report first (so each QA notebook compares with this run's other mode).
`render_output(path)` renders a notebook papermill ran elsewhere (CI's compare against main:
scripts/ci.sh) into the same HTML report, beside it.
Invariants:
- a notebook whose gate fails, or whose run breaks in any other way (a dead kernel, a notebook
  that is not there, a parameter papermill refuses), is recorded in `NotebookRun.error`, what
  it left is still rendered, and `run_all` goes on to the next; a run that left no output
  notebook has no HTML (`rendered` is False), never the previous run's;
- `run_all` checks that its output folder can be written before it runs anything
  (`baseline.OutputError` otherwise);
- the kernel is always the one `kernel.ensure_kernel()` has just written, whatever the
  notebook's metadata says, so a stale or missing kernelspec cannot break a run;
- the HTML hides code cells, loads nothing from the network (see report_template/), and is
  written atomically, like every file this project writes;
- the HTML opens with the verdict banner, and a failed gate shows as its message, without
  papermill's exception banner or a traceback (`for_readers`); the output notebook keeps both,
  and papermill's non-zero exit is untouched.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragspine_eval.errors import ReportError
from ragspine_eval.files import check_output_folder, write_atomic
from ragspine_eval.paths import PROJECT_ROOT
from ragspine_eval.workbench.rendering.kernel import KERNEL_NAME, ensure_kernel

NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"
TEMPLATE_DIR = Path(__file__).parent
TEMPLATE_NAME = "report_template"


@dataclass
class NotebookRun:
    """One notebook run: what it runs with which parameters, where its outputs go, how it went."""

    name: str
    notebook: Path
    parameters: dict[str, Any]
    out_dir: Path
    error: str | None = None
    seconds: float = 0.0
    rendered: bool = False

    @property
    def output_notebook(self) -> Path:
        return self.out_dir / f"{self.name}.ipynb"

    @property
    def html(self) -> Path:
        return self.out_dir / f"{self.name}.html"

    @property
    def passed(self) -> bool:
        return self.error is None


def plan(out_dir: str | Path) -> list[NotebookRun]:
    """Every notebook run of the main job, in order: each QA mode, then each extraction
    document set."""
    from ragspine_eval.extraction.run import FIXTURE_SETS
    from ragspine_eval.engines import EVAL_MODES

    out = Path(out_dir).resolve()
    runs = [NotebookRun(f"qa_{mode}", NOTEBOOKS_DIR / "qa.ipynb",
                        {"mode": mode, "report_path": str(out / f"qa_{mode}.json")}, out)
            for mode in EVAL_MODES]
    runs += [NotebookRun(f"extraction_{docs}", NOTEBOOKS_DIR / "extraction.ipynb",
                         {"docs": docs, "report_path": str(out / f"extraction_{docs}.json")}, out)
             for docs in FIXTURE_SETS]
    return runs + answers_runs(out) + across_runs(out)


def answers_runs(out: Path) -> list[NotebookRun]:
    """answers.ipynb on the realdocs workspace `make run` builds into the output folder
    (out/realdocs), gated against the committed baseline; none where that folder is absent."""
    workspace = out / "realdocs"
    if not (workspace / "knowledge.db").is_file():
        return []
    return [NotebookRun("answers_realdocs", NOTEBOOKS_DIR / "answers.ipynb",
                        {"kb": str(workspace), "report_path": str(out / "answers_realdocs_nb.json"),
                         "require_baseline": True}, out)]


def across_runs(out: Path) -> list[NotebookRun]:
    """The notebooks across runs: compare.ipynb on this job's tool and agent reports (written
    just before by the QA runs: two runs the job always has, whatever the run store holds;
    informative, so `fail_on_flips` is off: a mode difference is no regression), and
    history.ipynb with its defaults (the committed baseline history and the run store)."""
    return [NotebookRun("compare_tool_agent", NOTEBOOKS_DIR / "compare.ipynb",
                        {"before": str(out / "qa_tool.json"), "after": str(out / "qa_agent.json"),
                         "fail_on_flips": False}, out),
            NotebookRun("history", NOTEBOOKS_DIR / "history.ipynb", {}, out)]


def own_documents_plan(out_dir: str | Path, *, doc: str | Path | None = None,
                       ground_truth: str | Path | None = None, manifest: str | Path | None = None,
                       baseline: str | Path | None = None,
                       require_baseline: bool = False) -> list[NotebookRun]:
    """The one extraction notebook run over documents of one's own: `doc` with its
    `ground_truth`, or every document of a `manifest`; named extraction_<file name>."""
    out = Path(out_dir).resolve()
    source = Path(manifest) if manifest else Path(doc) if doc else None
    if source is None:
        return []
    name = f"extraction_{source.stem if manifest else source.name}"
    params: dict[str, Any] = {"report_path": str(out / f"{name}.json")}
    if manifest:
        params["manifest"] = str(Path(manifest).resolve())
    else:
        params.update(doc=str(Path(doc).resolve()),
                      ground_truth=str(Path(ground_truth).resolve()) if ground_truth else None)
    if baseline:
        params["baseline_path"] = str(Path(baseline).resolve())
    if require_baseline:
        params["require_baseline"] = True
    return [NotebookRun(name, NOTEBOOKS_DIR / "extraction.ipynb", params, out)]


def execute(run: NotebookRun) -> NotebookRun:
    """Run one notebook with papermill; any exception becomes `run.error`. The outputs of an
    earlier run of the same name are removed first, so that what is left is this run's."""
    import papermill as pm

    started = time.perf_counter()
    try:
        run.out_dir.mkdir(parents=True, exist_ok=True)
        for stale in (run.output_notebook, run.html):
            stale.unlink(missing_ok=True)
        pm.execute_notebook(str(run.notebook), str(run.output_notebook), parameters=run.parameters,
                            kernel_name=KERNEL_NAME, cwd=str(PROJECT_ROOT), progress_bar=False,
                            log_output=False)
    except pm.PapermillExecutionError as exc:
        run.error = f"{exc.ename}: {exc.evalue}"
    except Exception as exc:  # noqa: BLE001 - a dead kernel, a missing file ...: all the run's
        run.error = f"{type(exc).__name__}: {exc}"
    finally:
        run.seconds = time.perf_counter() - started
    return run


def render_html(run: NotebookRun) -> Path:
    """The output notebook as an HTML report: code hidden, charts inline, no network."""
    import nbformat
    from nbconvert import HTMLExporter

    notebook = for_readers(nbformat.read(run.output_notebook, as_version=4))
    exporter = HTMLExporter(extra_template_basedirs=[str(TEMPLATE_DIR)],
                            template_name=TEMPLATE_NAME, exclude_input=True,
                            exclude_input_prompt=True, exclude_output_prompt=True)
    html, _ = exporter.from_notebook_node(notebook, resources={"metadata": {"name": run.name}})
    write_atomic(run.html, html)
    run.rendered = True
    return run.html


def render_output(output_notebook: str | Path) -> Path:
    """An output notebook that papermill wrote (run by hand or by CI, passed or failed) rendered
    as `render_html` renders the main job's: <name>.html beside it. ReportError when the file
    is not there or is not a notebook (the HTML is then not written)."""
    import nbformat

    path = Path(output_notebook)
    if not path.is_file():
        raise ReportError(f"{path}: no such output notebook; run the notebook with papermill "
                            f"first (papermill notebooks/compare.ipynb {path} -p before ... "
                            f"-p after ...)")
    try:
        nbformat.read(path, as_version=4)
    except Exception as exc:  # noqa: BLE001 - nbformat raises many kinds for a broken file
        raise ReportError(f"{path}: not a notebook papermill wrote ({type(exc).__name__}: "
                            f"{exc}); run it again") from exc
    name = path.name.removesuffix(".ipynb")
    return render_html(NotebookRun(name, path, {}, path.parent))


PAPERMILL_ERROR_TAG = "papermill-error-cell-tag"
GATE_ERROR = "AssertionError"  # what workbench.assert_gate raises
BANNER_CLASS = 'class="rse-verdict'
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = ('<p class="rse-widget-note"><i>Here the notebook shows controls (ipywidgets) that '
               'need a running kernel: open the notebook in JupyterLab to use them.</i></p>')


def for_readers(notebook: Any) -> Any:
    """The output notebook as the HTML report shows it (the .ipynb itself is left as it is).

    - The verdict banner (workbench.verdict) moves to the top of the page.
    - A failed gate (the AssertionError of workbench.assert_gate) reads as its message: papermill's
      "An Exception was encountered" banner and its anchor are dropped, and the traceback is
      replaced by the gate's own lines. Any other error keeps banner and traceback: there the
      traceback is what a reader needs.
    - A widget (ipywidgets: the answers notebook's labels, the review notebook) needs a kernel:
      its output reads as a line saying so, and the widgets' saved state is dropped (with it
      nbconvert would load the widget manager from a CDN, and a report fetches nothing).
    """
    import copy

    import nbformat

    nb = copy.deepcopy(notebook)
    nb.metadata.pop("widgets", None)
    gate_failed = any(o.get("output_type") == "error" and o.get("ename") == GATE_ERROR
                      for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    if gate_failed:
        nb.cells = [c for c in nb.cells if PAPERMILL_ERROR_TAG not in c.metadata.get("tags", [])]
    banner = None
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for out in cell.get("outputs", []):
            html = out.get("data", {}).get("text/html", "")
            html = "".join(html) if isinstance(html, list) else html
            if banner is None and BANNER_CLASS in html:
                banner = out
                continue
            if out.get("output_type") == "error" and out.get("ename") == GATE_ERROR:
                out = nbformat.v4.new_output("stream", name="stdout", text=out.get("evalue", ""))
            if WIDGET_VIEW in out.get("data", {}):
                out = nbformat.v4.new_output("display_data", data={"text/html": WIDGET_NOTE})
            outputs.append(out)
        cell.outputs = outputs
    if banner is not None:
        nb.cells.insert(0, nbformat.v4.new_code_cell(outputs=[banner]))
    return nb


def write_qa_reports_first(runs: list[NotebookRun]) -> None:
    """Write the JSON report of every QA run before any QA notebook runs.

    A QA notebook compares its mode with the other mode's report next to its own. Run in
    order, the first would find no report of the second, or one an earlier run left there;
    written first, each finds this run's. The notebook then runs the same inputs again and
    writes the same report. A run that cannot be prepared is left to fail in its notebook,
    where its error is shown.
    """
    from ragspine_eval import paths, workbench

    for run in runs:
        if run.notebook.name != "qa.ipynb" or "report_path" not in run.parameters:
            continue
        arguments = {"mode": None, "golden_path": paths.QA_GOLDEN_SET,
                     "baseline_path": paths.QA_BASELINE, "kb_dir": paths.KB_DIR,
                     "engine": "ragspine", **run.parameters}
        try:
            workbench.run_qa(**arguments)
        except Exception:  # noqa: BLE001 - the notebook runs it again and shows the error
            continue


def run_all(out_dir: str | Path,
            progress: Callable[[int, int, NotebookRun], None] | None = None,
            runs: list[NotebookRun] | None = None) -> list[NotebookRun]:
    """Execute and render every run (default: `plan(out_dir)`), even after one has failed.
    Raises OutputError, before anything runs, when an output folder cannot be written."""
    runs = plan(out_dir) if runs is None else runs
    for folder in dict.fromkeys([Path(out_dir), *(run.out_dir for run in runs)]):
        check_output_folder(folder, "notebook and HTML report")
    ensure_kernel()
    write_qa_reports_first(runs)
    for i, run in enumerate(runs, start=1):
        if progress:
            progress(i, len(runs), run)
        execute(run)
        if run.output_notebook.exists():
            try:
                render_html(run)
            except Exception as exc:  # noqa: BLE001 - recorded; the other runs still render
                failed = f"rendering {run.output_notebook} failed: {type(exc).__name__}: {exc}"
                run.error = f"{run.error}\n{failed}" if run.error else failed
    return runs
