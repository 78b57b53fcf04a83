"""extraction_eval.run_eval on synthetic cell facts against their ground truth.

`synthetic(n)` is a deterministic ground truth of n cells over sheets of 10,000 cells (50
columns), shaped like the fixtures' cells: numbers and labels, a colour tag on every 7th cell, a
merged header on every 11th, a `feature` on each; and the facts an extractor would return for
it: every 97th value wrong, every 53rd cell's tag lost, every 211th cell missing, and one fact
with no ground truth per 1,000 cells. Only run_eval is timed; peak memory is the whole
process's (inputs included), and `inputs_rss_mib` is what it held before run_eval started.

`score` times ours (ragspine_eval.extraction.scoring.run_eval); `peer` times the engine's own
(ragspine.eval.extraction_eval.run_eval) on the same cells built the same way, each in a
process of its own (child.py), so that the two peak memories compare: both include the same
inputs. The engine's scores the three channels with `==` and keeps each mismatch; ours also
validates every record, keeps every scored cell (as columns) and coverage (missing and
unexpected locators). Ours fingerprints every ground-truth cell for the baseline when the
report's `golden` is first read (issue 33): `golden_s` times that read, after run_eval, and
`run_eval_and_golden_s` is the sum, the work the cell-by-cell run_eval did in one call.
"""

from __future__ import annotations

import resource
import time
from typing import Any

SHEET_CELLS = 10_000
COLUMNS = 50


def _column(i: int) -> str:
    name = ""
    i += 1
    while i:
        i, rest = divmod(i - 1, 26)
        name = chr(65 + rest) + name
    return name


def synthetic(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(facts, ground-truth cells) of n cells; see the module docstring."""
    columns = [_column(c) for c in range(COLUMNS)]
    truth: list[dict[str, Any]] = []
    facts: list[dict[str, Any]] = []
    for i in range(n):
        row, col = divmod(i % SHEET_CELLS, COLUMNS)
        merged = i % 11 == 0
        cell = {"sheet": f"Sheet{i // SHEET_CELLS}", "cell_ref": f"{columns[col]}{row + 1}",
                "value": round(i * 1.25, 2) if i % 3 else f"label {i}",
                "tags": {"product_line": "new"} if i % 7 == 0 else {},
                "merge_span": [1, 2] if merged else None, "is_merged_origin": merged,
                "feature": "merged_header" if merged else "value"}
        truth.append(cell)
        if i % 211 == 0:
            continue
        fact = dict(cell)
        if i % 97 == 0:
            fact["value"] = -1.0
        if i % 53 == 0:
            fact["tags"] = {}
        facts.append(fact)
        if i % 1000 == 999:
            facts.append({**cell, "sheet": "Extra", "cell_ref": f"A{i}"})
    return facts, truth


def score(n: int) -> dict[str, Any]:
    from ragspine_eval.extraction.scoring import run_eval

    started = time.perf_counter()
    facts, truth = synthetic(n)
    generated = time.perf_counter() - started
    inputs_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    report = run_eval(facts, {"document": "synthetic", "cells": truth})
    seconds = time.perf_counter() - started
    started = time.perf_counter()
    hashed = len(report.golden.digests)  # the fingerprints, hashed when first read
    golden = time.perf_counter() - started
    assert hashed == 8 * n
    return {"n_cells": n, "run_eval_s": round(seconds, 4), "generate_s": round(generated, 3),
            "golden_s": round(golden, 4), "run_eval_and_golden_s": round(seconds + golden, 4),
            "cells_per_s": round(n / seconds), "inputs_rss_mib": round(inputs_rss, 1),
            "accuracy": {c: round(m.accuracy, 4) for c, m in report.channels.items()},
            "coverage": round(report.coverage.rate, 4)}


def peer(n: int) -> dict[str, Any]:
    from ragspine.eval.extraction_eval import run_eval as engine_run_eval

    facts, truth = synthetic(n)
    inputs_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    report = engine_run_eval(facts, {"document": "synthetic", "cells": truth})
    seconds = time.perf_counter() - started
    return {"n_cells": n, "run_eval_s": round(seconds, 4), "cells_per_s": round(n / seconds),
            "inputs_rss_mib": round(inputs_rss, 1),
            "accuracy": {c: round(m.accuracy, 4) for c, m in report.channels.items()}}
