"""--jobs 1 against --jobs 2: the in-process engine's parallel runs (spawned worker processes).

The runs themselves are qa.ours with instrument=False (run_qa_eval plus its JSON report, as
`ragspine-eval qa --jobs N --report` does), so the speedup is the user's figure, serial loading,
scoring and writing included. `startup` measures what a parallel run pays before its first
answer: two workers spawned, each importing the engine and opening its stores, one case each.
"""

from __future__ import annotations

import tempfile
import time
from typing import Any

from ragspine_eval.paths import KB_DIR


def startup(golden: str, mode: str) -> dict[str, Any]:
    """Wall time of a two-case run with two workers: start-up plus one case per worker."""
    from ragspine_eval.engines.inprocess import RagspineEngine
    from ragspine_eval.golden.cases import load_golden_set
    from ragspine_eval.knowledge.kb import build_eval_kb
    from ragspine_eval.execution.runner import RunOptions, run_cases

    cases = load_golden_set(golden)[:2]
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-kb-") as scratch:
        engine = RagspineEngine(build_eval_kb(KB_DIR, scratch), mode)
        started = time.perf_counter()
        run_cases(engine, cases, RunOptions(jobs=2))
        seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 4)}
