"""One call that runs the QA harness: load the golden set, build the KB, run, score.

`run_qa_eval` loads the golden set, builds the KB's stores in a scratch folder, runs the cases
on an engine (runner.py) and evaluates them (report.py) with a faithfulness judge (judges.py);
the report carries its provenance, the judge included (no baseline yet: gated_run adds it). Nothing is written here.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragspine_eval.outputs.provenance import (
    Clock,
    InputRef,
    Provenance,
    display_path,
    golden_fingerprint,
)
from ragspine_eval.paths import KB_DIR
from ragspine_eval.qa.engines.base import Engine
from ragspine_eval.qa.golden import load_golden_set
from ragspine_eval.qa.groundedness import EntailmentJudge
from ragspine_eval.qa.report import QAEvalReport, evaluate


def run_qa_eval(
    golden_path: str | Path,
    mode: str | None = None,
    *,
    kb_dir: str | Path = KB_DIR,
    engine: str | Engine = "ragspine",
    jobs: int = 1,
    case_timeout: float | None = None,
    retries: int | None = None,
    fail_fast: bool = False,
    progress: Callable[[int, int, int], None] | None = None,
    judge: str | EntailmentJudge | None = None,
) -> QAEvalReport:
    """Load the golden set, build the KB's stores in a scratch folder, run and score every case.

    `engine` is an --engine string ("ragspine", "http://HOST:PORT", "module:callable"; see
    engines.factory) or an Engine object; `mode` defaults to the engine's first mode. `progress`
    is called with (cases done, cases in total, errors so far). The report carries its
    provenance (no baseline yet: the caller that gates adds it). `judge` is the faithfulness
    judge: a registered name (qa.judges; None: the default, lexical) or an object with
    `entails(claim, context)`; the provenance names it.
    """
    from ragspine_eval.qa import judges
    from ragspine_eval.qa.engines.factory import build_engine, parse_engine
    from ragspine_eval.qa.kb import build_eval_kb
    from ragspine_eval.qa.runner import DEFAULT_CASE_TIMEOUT, RunOptions
    from ragspine_eval.qa.runner import run_cases as run

    if judge is None or isinstance(judge, str):
        judge = judges.get(judge or judges.DEFAULT_JUDGE)
    clock = Clock()
    options = RunOptions(jobs, case_timeout or DEFAULT_CASE_TIMEOUT, fail_fast)
    spec = parse_engine(engine, mode) if isinstance(engine, str) else None
    cases = load_golden_set(golden_path)
    with tempfile.TemporaryDirectory(prefix="ragspine-eval-kb-") as scratch:
        kb = build_eval_kb(kb_dir, scratch)
        if spec is not None:
            eng = build_engine(spec, kb, case_timeout=options.case_timeout, retries=retries)
            mode = spec.mode
        else:
            eng = engine  # type: ignore[assignment]
            mode = mode or eng.mode
        try:
            outcomes = run(eng, cases, options, progress)
        finally:
            close = getattr(eng, "close", None)
            if spec is not None and callable(close):
                close()
    name = getattr(eng, "name", eng.label)
    report = evaluate(cases, outcomes, mode, reference_texts=kb.narrative_texts(), judge=judge,
                      engine=name)
    # the in-process engine is the installed rag-spine; any other is named by what it is
    in_process = spec is not None and spec.kind == "ragspine"
    report.provenance = qa_provenance(
        report, golden_path, InputRef(display_path(kb_dir), kb.fingerprint), clock,
        judge=judges.describe(judge),
        **({} if in_process else {"engine": name, "engine_version": None}))
    return report


def qa_provenance(report: QAEvalReport, golden_path: str | Path, kb: InputRef | None,
                  clock: Clock | None = None, **engine: Any) -> Provenance:
    """The provenance of a QA report; `engine` may name engine=, engine_version= and judge=."""
    from ragspine_eval.outputs.provenance import collect

    fps = {c.id: c.fingerprint for c in report.cases}
    golden = InputRef(display_path(golden_path), golden_fingerprint(fps), report.n_cases)
    return collect(harness="qa", mode=report.mode, golden=golden, kb=kb, clock=clock, **engine)
