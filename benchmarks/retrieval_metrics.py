"""`python -m benchmarks.retrieval_metrics [--cases N]`: our retrieval metrics against the IR
libraries, at N cases (10,000 by default): import time (a fresh interpreter each, from -X importtime, the best of 5)
and the time to compute RR, nDCG@10, P@k and Success@k (k = 1, 3, 5, 10) for every case.

Measured, not asserted; the figures and the choice they led to are in benchmarks/RESULTS.md
("Retrieval metrics: own code or a library"). A library that is not installed is reported as
such (ir-measures and pytrec-eval-terrier install from PyPI; ranx needs numba).
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import subprocess
import sys
import time
from typing import Any

from ragspine_eval.retrieval.metrics import KS, first_rank, ndcg_at, precision_at

LIBRARIES = {"ragspine_eval.retrieval.metrics": "ours", "ir_measures": "ir-measures",
             "pytrec_eval": "pytrec-eval-terrier", "ranx": "ranx"}


def import_seconds(module: str, repeats: int = 5) -> float | None:
    """The import's own time in a fresh interpreter, from `python -X importtime` (the sum of
    the top-level imports' cumulative times: what `import module` costs beyond the
    interpreter's start-up), the best of `repeats`; None when the module is not installed."""
    if importlib.util.find_spec(module) is None:
        return None

    def once() -> float:
        done = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                              check=True, capture_output=True, text=True)
        total = 0
        for line in done.stderr.splitlines():
            parts = line.split("|")
            if len(parts) == 3 and parts[2].startswith(" ") and not parts[2].startswith("  ") \
                    and parts[1].strip().isdigit():
                total += int(parts[1])  # a top-level import (not nested): its cumulative us
        return total / 1e6

    baseline = min(_startup() for _ in range(repeats))
    return max(0.0, min(once() for _ in range(repeats)) - baseline)


def _startup() -> float:
    """What the interpreter imports at start-up (site and the editable finders), in seconds."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], check=True,
                          capture_output=True, text=True)
    return sum(int(line.split("|")[1]) for line in done.stderr.splitlines()
               if line.count("|") == 2 and line.split("|")[2].startswith(" ")
               and not line.split("|")[2].startswith("  ")
               and line.split("|")[1].strip().isdigit()) / 1e6


def flags_of(cases: int, seed: int = 7) -> dict[str, list[bool]]:
    rng = random.Random(seed)
    out = {}
    for q in range(cases):
        flags = [rng.random() < 0.2 for _ in range(rng.randint(1, 20))]
        flags[rng.randrange(len(flags))] = True  # every case has a relevant passage
        out[f"q{q}"] = flags
    return out


def ours(flags: dict[str, list[bool]]) -> float:
    start = time.perf_counter()
    for f in flags.values():
        rank = first_rank(f)
        _ = (1 / rank if rank else 0.0, ndcg_at(f), [precision_at(f, k) for k in KS],
             [rank is not None and rank <= k for k in KS])
    return time.perf_counter() - start


def with_ir_measures(flags: dict[str, list[bool]]) -> float | None:
    if importlib.util.find_spec("ir_measures") is None:
        return None
    import ir_measures
    from ir_measures import P, RR, Success, nDCG

    start = time.perf_counter()  # the conversion into qrels and a run is part of the cost
    qrels = {q: {f"d{i}": 1 for i, x in enumerate(f) if x} for q, f in flags.items()}
    run = {q: {f"d{i}": float(100 - i) for i in range(len(f))} for q, f in flags.items()}
    measures = [RR, nDCG @ 10, *(P @ k for k in KS), *(Success @ k for k in KS)]
    list(ir_measures.iter_calc(measures, qrels, run))
    return time.perf_counter() - start


def with_pytrec_eval(flags: dict[str, list[bool]]) -> float | None:
    if importlib.util.find_spec("pytrec_eval") is None:
        return None
    import pytrec_eval

    start = time.perf_counter()
    qrels = {q: {f"d{i}": 1 for i, x in enumerate(f) if x} for q, f in flags.items()}
    run = {q: {f"d{i}": float(100 - i) for i in range(len(f))} for q, f in flags.items()}
    names = {"recip_rank", "ndcg_cut_10", *(f"P_{k}" for k in KS), *(f"success_{k}" for k in KS)}
    pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "ndcg_cut", "P", "success"}).evaluate(run)
    _ = names
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    args = parser.parse_args(argv)
    flags = flags_of(args.cases)
    result: dict[str, Any] = {"cases": args.cases, "import_s": {}, "compute_s": {}}
    for module, name in LIBRARIES.items():
        result["import_s"][name] = import_seconds(module)
    result["compute_s"] = {"ours": min(ours(flags) for _ in range(3)),
                           "ir-measures": with_ir_measures(flags),
                           "pytrec-eval-terrier": with_pytrec_eval(flags)}
    for kind in ("import_s", "compute_s"):
        for name, seconds in result[kind].items():
            shown = "not installed" if seconds is None else f"{seconds * 1000:.0f} ms"
            print(f"{kind[:-2]:8} {name:22} {shown}")
    return result


if __name__ == "__main__":
    main()
