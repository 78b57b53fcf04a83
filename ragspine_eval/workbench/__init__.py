"""The workbench: reports turned into what an analyst reads, in JupyterLab and in HTML.

session (what a notebook calls: run a mode, the verdict banner, the explorer, a case, the
other mode, the gate), frames (reports as tidy DataFrames), charts (Altair charts of the
frames), embed (live Vega charts with no network), drilldown (the verdict banner and the
clickable failure explorer), case_view (one case whole), second_opinion (where another judge
disagrees with the gate's), linked (charts that filter a table, shared by the explorers),
extraction_runs and extraction_explorer (the extraction notebook's documents, banners and
explorer), cell_view (one extraction cell in its document), answers_explorer (the answers
notebook: banner, gates per route, failures with their stage, the linked explorer and the case
view with marked claims and both routes), model_usage (the model's tokens, cost and latency
per stage and by tag), tables (static and interactive
tables), notebooks (papermill runs and the HTML reports), kernel (the Jupyter kernel the
notebooks are pinned to), report_template/ (the nbconvert template: every script inlined).

`from ragspine_eval import workbench` gives session's functions (`workbench.run_qa(...)`), and
`model_run` (models.options: a notebook's provider, model and cassette parameters as the
`model=` of `run_qa`).
"""

from ragspine_eval.models.options import model_run

from ragspine_eval.workbench.extraction_explorer import (
    extraction_verdict,
    mismatch_explorer,
    table_structure,
)
from ragspine_eval.workbench.session import (
    ExtractionNotebookRun,
    QARun,
    assert_gate,
    assert_gates,
    assert_gates_of,
    cases_apart,
    default_report_path,
    explorer,
    gate_message,
    load_report,
    mode_comparison,
    other_mode_report,
    run_extraction,
    run_qa,
    second_opinion,
    setup_display,
    show_case,
    verdict,
)

__all__ = ["ExtractionNotebookRun", "QARun", "assert_gate", "assert_gates", "cases_apart",
           "default_report_path", "explorer", "gate_message", "load_report", "mode_comparison",
           "other_mode_report", "run_extraction", "run_qa", "setup_display", "show_case",
           "verdict", "assert_gates_of", "extraction_verdict", "mismatch_explorer",
           "table_structure", "second_opinion", "model_run"]
