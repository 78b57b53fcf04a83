"""The workbench: reports turned into what an analyst reads, in JupyterLab and in HTML.

session (what a notebook calls: run a mode, load the other mode, show a case, assert the
gate), case_view (one case whole, as a dict and as HTML), frames
(reports as tidy DataFrames), charts (Altair charts of the frames), tables (static and
interactive tables), notebooks (papermill runs and the HTML reports), kernel (the Jupyter kernel
the notebooks are pinned to), report_template/ (the nbconvert template: every script inlined).

`from ragspine_eval import workbench` gives session's functions (`workbench.run_qa(...)`).
"""

from ragspine_eval.workbench.session import (
    ExtractionNotebookRun,
    QARun,
    assert_gate,
    assert_gates,
    default_report_path,
    gate_message,
    load_report,
    other_mode_report,
    run_extraction,
    run_qa,
    setup_display,
    show_case,
)

__all__ = ["ExtractionNotebookRun", "QARun", "assert_gate", "assert_gates",
           "default_report_path", "gate_message", "load_report", "other_mode_report",
           "run_extraction", "run_qa", "setup_display", "show_case"]
