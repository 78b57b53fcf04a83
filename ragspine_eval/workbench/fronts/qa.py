"""What the notebooks call: one function per notebook section, nothing a notebook computes itself.

`run_qa` runs a mode, writes its JSON report, and compares it with the stored baseline without
ever writing the baseline (recording a baseline is the CLI's job, on purpose: a notebook run is
exploration or CI, never a review). A `QANotebookRun` has the shape the one gate of every
notebook reads (fronts/gate.py: `workbench.assert_gate(run, require_baseline)`, the last cell);
a mode with no baseline passes. `show_case` shows one case whole (workbench.case_view). Relative paths are taken from
the project root (see paths.from_root), so a notebook behaves the same from any working folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ragspine_eval import ratchet as bl
from ragspine_eval.paths import OUT_DIR, from_root
from ragspine_eval.qa.report import QAEvalReport
from ragspine_eval.workbench.views.html import Html


@dataclass
class QANotebookRun:
    """One QA run as a notebook sees it; `key` is its baseline key (the mode, or e.g.
    "agent@http" for another engine)."""

    report: QAEvalReport
    report_path: Path
    baseline_path: Path
    stored: dict[str, Any] | None
    comparison: bl.BaselineComparison | None
    key: str
    kept: Any = None  # the run as the run store keeps it (runs.RunSummary; None: not kept)
    harness: ClassVar[str] = "qa"

    # what the gate reads (fronts/gate.py): one key, no document failures
    @property
    def keys(self) -> dict[str, str]:
        return {"qa": self.key}

    @property
    def comparisons(self) -> dict[str, bl.BaselineComparison | None]:
        return {"qa": self.comparison}

    @property
    def engine_errors(self) -> list[str]:
        return [c.id for c in self.report.errors]

    @property
    def failures(self) -> dict[str, str]:
        return {}

    @property
    def record_hint(self) -> str:
        return (f"ragspine-eval qa --mode {self.report.mode} --update-baseline (and the same "
                f"--engine, --engine-config, model flags, --golden and --baseline as this run)")


def default_report_path(key: str) -> Path:
    return OUT_DIR / f"qa_{key.replace('@', '_at_').replace(':', '_').replace('/', '_')}.json"


def run_qa(mode: str | None, golden_path: str | Path, baseline_path: str | Path,
           kb_dir: str | Path, report_path: str | Path | None = None,
           engine: str = "ragspine", store: bool = True, **run_options: Any) -> QANotebookRun:
    """Validate the stored entry, run and score the mode on `engine` (an --engine string),
    write the report, compare: the CLI's gated run without recording. `run_options` are
    run_qa_eval's (jobs, case_timeout, ...). Interrupting the kernel mid-run writes the report
    of what ran (interrupted, the rest not run), then lets the KeyboardInterrupt go on.
    The run is kept in the run store (runs/) unless `store` is False."""
    from ragspine_eval import gated
    from ragspine_eval.pipeline.spec import RunHow, RunWhat
    from ragspine_eval.qa.harness import QAHarness, QAWhat

    what_of = {name: run_options.pop(name) for name in ("judge", "engine_config", "model",
                                                        "retrieval_k") if name in run_options}
    what = QAWhat(RunWhat(from_root(golden_path), from_root(kb_dir), engine, mode,
                          what_of.get("judge"), what_of.get("engine_config"),
                          what_of.get("retrieval_k"), what_of.get("model")),
                  from_root(baseline_path))
    # the baseline key names the engine configuration and the model too (a model's run gets
    # a report of its own, out/qa_agent~litellm_openai_m.json)
    key = QAHarness().keys(what)["qa"]
    out = from_root(report_path) if report_path else default_report_path(key)
    run = gated.run(QAHarness(), what, RunHow(**run_options), gated.GatedOutputs(report=out),
                    gated.Gate(store=store)).or_interrupt()
    return QANotebookRun(run.report, out, run.baseline_path, run.stored.get("qa"), run.comparison,
                         key, run.kept)


def load_report(path: str | Path) -> QAEvalReport | None:
    """A saved QA report, or None when there is none (e.g. the other mode has not run yet).
    `path` may also name a stored run: an id, an id prefix or a short reference such as
    `@latest` or `@agent~1` (runs.refs); a reference that names no run raises RunRefError."""
    if str(path).startswith("@") or not from_root(path).exists() and _run_id_like(path):
        from ragspine_eval import runs

        return QAEvalReport.from_dict(runs.load_report(path))
    path = from_root(path)
    if not path.exists():
        return None
    if path.suffix == ".gz":
        from ragspine_eval import runs

        return QAEvalReport.from_dict(runs.read_report_file(path))
    return QAEvalReport.from_dict(json.loads(path.read_text(encoding="utf-8")))


def _run_id_like(ref: str | Path) -> bool:
    """A bare word (no folder, no .json): read as a run id or prefix, not a missing file."""
    text = str(ref)
    return "/" not in text and not text.endswith((".json", ".gz"))


def other_mode_report(run: QANotebookRun) -> QAEvalReport | None:
    """The in-process engine's report of the other QA mode, next to this run's report, if it
    exists (None for other engines: they have one mode)."""
    if run.key not in ("tool", "agent"):
        return None
    other = "agent" if run.key == "tool" else "tool"
    return load_report(run.report_path.with_name(f"qa_{other}.json"))


def show_case(run: QANotebookRun, case_id: str) -> Any:
    """One case whole (question, expected, every verdict with its evidence and its status at
    baseline, the full answer, the retrieved context marked, the other mode beside it when its
    report exists), as an IPython HTML display; see workbench.case_view."""
    from IPython.display import HTML

    from ragspine_eval.workbench.views.case_view import case_detail, case_html

    return HTML(case_html(case_detail(run.report, case_id, run.stored, other_mode_report(run))))


def verdict(run: QANotebookRun) -> Html:
    """The banner a QA report opens with: PASS / FAIL, mode, engine, each regressed gate."""
    from ragspine_eval.workbench.views.drilldown import verdict_html

    return Html(verdict_html(run.report, run.stored, run.comparison, run.key))


FLAKY_CASES_SHOWN = 50  # flaky cases whose case view (every repeat side by side) is embedded


def cases_apart(run: QANotebookRun) -> Html:
    """The cases kept apart from pass and fail, as tables under the banner: engine errors (no
    verdict) and flaky verdicts (differed between repeats; never regressions), each flaky
    case's view folded under its id (every repeat side by side: the explorer lists failing
    verdicts only, and a flaky case passes). Empty when the run has neither, so a notebook
    shows it unconditionally."""
    from html import escape

    from ragspine_eval.workbench.views import frames, tables
    from ragspine_eval.workbench.views.case_view import case_detail, case_html

    parts = []
    if run.report.errors:
        parts.append(f"<h4>Engine errors: {len(run.report.errors)} cases with no verdict</h4>"
                     + tables.static(frames.engine_errors(run.report)).to_html())
    if run.report.flaky:
        parts.append("<h4>Flaky verdicts: they differed between repeats (counted as passing, "
                     "never a regression)</h4>"
                     + tables.static(frames.flaky_cases(run.report)).to_html())
        ids = sorted({i for ids in run.report.flaky.values() for i in ids})
        parts += [f'<details class="rse-flaky-case" data-case-id="{escape(i)}"><summary>'
                  f"{escape(i)}: its case view, every repeat side by side</summary>"
                  f"{case_html(case_detail(run.report, i, run.stored))}</details>"
                  for i in ids[:FLAKY_CASES_SHOWN]]
        if len(ids) > FLAKY_CASES_SHOWN:
            parts.append(f"<p>The first {FLAKY_CASES_SHOWN} of {len(ids)} flaky cases shown; "
                         f"show_case(run, id) shows any case.</p>")
    return Html("".join(parts))


def explorer(run: QANotebookRun) -> Html:
    """The clickable heatmap and failure bars over the failure table and each case's view."""
    from ragspine_eval.workbench.views.drilldown import explorer_html

    return Html(explorer_html(run.report, run.stored, other_mode_report(run)))


def mode_comparison(run: QANotebookRun) -> Html:
    """Tool vs agent: the paired comparison with the other mode's saved report, if there."""
    from ragspine_eval.workbench.views.drilldown import mode_comparison as compare

    return Html(compare(run.report, other_mode_report(run), run.report_path))


def second_opinion(run: QANotebookRun, judge: str = "financial") -> Html:
    """Beside the gate's verdict: the claims on which `judge` disagrees with the gate's judge
    ("the gate passed 3 claims the financial judge rejects"), each opening its case view;
    see workbench.second_opinion. The gate and the baselines are untouched."""
    from ragspine_eval.workbench.views.second_opinion import second_opinion_html

    return Html(second_opinion_html(run.report, run.stored, other_mode_report(run), judge))
