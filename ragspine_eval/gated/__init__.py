"""Gated runs: one harness run from start to verdict, the way the CLI and the notebooks do it.

harness (`Harness`: what a harness gives the gated run; `GatedRun`, its result and the one exit
rule; `Gate`: how a run is gated),
runner (`run(harness, what, how, outputs, gate)`: check, run, write, gate, keep, the one
protocol every harness goes through), outputs (`GatedOutputs`, the files a run writes) and
own_workspace (where a run over an engine workspace keeps its baseline, and its keys' name). The
harnesses themselves live in their folders (qa/harness.py, retrieval_only/harness.py,
answers/harness.py, extraction/harness.py), on this floor. They orchestrate everything below
them (the harnesses, the ratchet, outputs, the run store), so they sit above all of it.

The names below are imported on first use, so that importing one part does not import all.
"""

from ragspine_eval.lazy import lazy_exports

_WHERE = {
    "run": "runner",
    "Harness": "harness",
    "GatedRun": "harness",
    "Gate": "harness",
    "GatedOutputs": "outputs",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE)
