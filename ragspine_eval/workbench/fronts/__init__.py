"""What each notebook calls: one module per notebook, each run the way the CLI runs it.

qa (notebooks/qa.ipynb: run a mode, the verdict banner, the explorer, a case, the other mode),
extraction (extraction.ipynb: fixture sets, a document of one's own or a manifest,
documents the engine fails on kept apart), answers (answers.ipynb: an answer run over a
workspace, its gates per route, failures with their stage, the linked explorer and case view;
answer_labels: the judge's verdicts labelled with widgets),
retrieval (retrieval.ipynb: a retrieval-only run over a workspace), compare, compare_view and
retrieval_compare (compare.ipynb: two runs case by case), history (history.ipynb: the gates over
time); and gate, the one gate the last cell of the qa, extraction, retrieval and answers
notebooks asserts (`workbench.assert_gate(run, require_baseline)` over any of their runs).
A front uses views/; no view imports a front.
"""
