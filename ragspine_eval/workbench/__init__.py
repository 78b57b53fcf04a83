"""The workbench: reports turned into what an analyst reads, in JupyterLab and in HTML.

Three rooms, from the top down (a room imports only the rooms below it):
- rendering/: notebooks run with papermill and rendered to one offline HTML file each
  (notebooks, report_template/), and the Jupyter kernel they are pinned to (kernel,
  kernel_ipc); it calls a front only to write every QA report before the notebooks that
  compare the two modes run;
- fronts/: what each notebook calls, one module per notebook (qa, extraction, answers,
  retrieval, compare with compare_view and retrieval_compare, history): run the harness the
  way the CLI does without recording, then one call per section; and gate, the one gate
  every gated notebook's last cell asserts (`workbench.assert_gate(run, require_baseline)`);
- views/: reusable pieces that turn a report into frames (pandas), charts (Altair, live and
  offline: embed), tables, banners and explorers (drilldown, linked, extraction_explorer), the
  case views (case_view, cell_view, retrieval_view, second_opinion), model_usage, and html
  (`Html`, `setup_display`).

`from ragspine_eval import workbench` gives what the qa and extraction notebooks call
(`workbench.run_qa(...)`, `workbench.setup_display()`), the gate every gated notebook's last
cell calls (`workbench.assert_gate`, and `gate_message`: what it says of one key), and
`model_run` (models.options: a notebook's provider, model and cassette parameters as the
`model=` of `run_qa`).
"""

from ragspine_eval.models.options import model_run
from ragspine_eval.workbench.fronts.extraction import (
    ExtractionNotebookRun,
    run_extraction,
)
from ragspine_eval.workbench.fronts.gate import assert_gate, gate_message
from ragspine_eval.workbench.fronts.qa import (
    QANotebookRun,
    cases_apart,
    default_report_path,
    explorer,
    load_report,
    mode_comparison,
    other_mode_report,
    run_qa,
    second_opinion,
    show_case,
    verdict,
)
from ragspine_eval.workbench.views.extraction_explorer import (
    extraction_verdict,
    mismatch_explorer,
    table_structure,
)
from ragspine_eval.workbench.views.html import setup_display

__all__ = ["ExtractionNotebookRun", "QANotebookRun", "assert_gate", "cases_apart",
           "default_report_path", "explorer", "gate_message", "load_report",
           "mode_comparison", "other_mode_report", "run_extraction", "run_qa", "setup_display",
           "show_case", "verdict", "extraction_verdict", "mismatch_explorer",
           "table_structure", "second_opinion", "model_run"]
