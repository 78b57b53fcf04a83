"""Gated runs: one harness run from start to verdict, the way the CLI and the notebooks do it.

qa (`run_gated_qa`: load the baselines, run, score, compare, record, write every output),
retrieval (`run_gated_retrieval`, the same for a workspace's retrieval), answers
(`run_gated_answers`: an answer run, gated per route) and extraction (`run_gated_extraction`,
the same for documents); base (`GatedRun`: the fields and the exit rule every gated run of
one key shares); steps (what every gated run does around its harness: the options and stored
entries checked first, a key gated, the baseline put back when an output fails). They orchestrate everything below them (the harnesses, the ratchet, outputs,
the run store), so they sit above all of it.

The names below are imported on first use, so that importing one part does not import all.
"""

from ragspine_eval.lazy import lazy_exports

_WHERE = {
    "QAGatedRun": "qa",
    "run_gated_qa": "qa",
    "ExtractionGatedRun": "extraction",
    "run_gated_extraction": "extraction",
    "run_gated_answers": "answers",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE)
