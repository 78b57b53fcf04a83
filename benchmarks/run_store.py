"""What keeping a run in the run store costs a large QA run, side by side with writing its
`--report` JSON, and why gzip level 1.

`python -m benchmarks.run_store --n 10000` scores n cases (the in-process engine answers the
committed golden set once, case i of n reuses the outcome of committed case i mod 71, as in
benchmarks/report.py), then, in one process and interleaved `--repeats` times (the fastest of
each kept, on a machine others share): `to_dict` (once per run; the store builds it once
more when --report is not written by the same dict), `write_json_atomic` of the report as
`--report` writes it (indent 2), and `runs.store_report` at gzip levels 1, 6 and 9, each into a
store already holding `--existing` runs (so listing and retention are in the figure). It
prints one JSON object: seconds, sizes in MiB and the ratios.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.goldens import cycled_golden_set


def report_dict(golden: Path, mode: str) -> tuple[dict[str, Any], float]:
    """The report of `golden` (a cycled set) as a dict, and the seconds to_dict took."""
    from ragspine_eval.paths import KB_DIR, QA_GOLDEN_SET
    from ragspine_eval.qa.engines.factory import build_engine, parse_engine
    from ragspine_eval.qa.golden import load_golden_set
    from ragspine_eval.qa.kb import build_eval_kb
    from ragspine_eval.qa.report import evaluate
    from ragspine_eval.qa.runner import RunOptions, run_cases

    committed = load_golden_set(QA_GOLDEN_SET)
    cases = load_golden_set(golden)
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-kb-") as scratch:
        kb = build_eval_kb(KB_DIR, scratch)
        engine = build_engine(parse_engine("ragspine", mode), kb, case_timeout=120)
        answers = run_cases(engine, committed, RunOptions(1, 120, False))
        references = kb.narrative_texts()
    by_id = {c.id: out for c, out in zip(committed, answers, strict=True)}
    report = evaluate(cases, [by_id[c.id.split("#")[0]] for c in cases], mode,
                      reference_texts=references)
    gc.collect()
    started = time.perf_counter()
    data = report.to_dict()
    return data, time.perf_counter() - started


def timed(step: Any) -> float:
    started = time.perf_counter()
    step()
    return time.perf_counter() - started


def measure(n: int, mode: str, repeats: int, existing: int, folder: Path) -> dict[str, Any]:
    from ragspine_eval.files import write_json_atomic
    from ragspine_eval.runs import store as run_store

    data, to_dict_s = report_dict(cycled_golden_set(n, folder), mode)
    small = {"mode": mode, "n_cases": 0, "metrics": {}}
    levels = (1, 6, 9)
    roots = {level: folder / f"store-{level}" for level in levels}
    for root in roots.values():  # a store in use: `existing` small runs of other keys
        for i in range(existing):
            run_store.store_report(small, kind="qa", key=f"other{i % 5}", root=root,
                                   prune_after=False)
    times: dict[str, list[float]] = {"report": [], **{f"gzip{lv}": [] for lv in levels}}
    sizes: dict[str, float] = {}
    for _ in range(repeats):
        path = folder / "report.json"
        times["report"].append(timed(lambda: write_json_atomic(path, data)))
        sizes["report"] = path.stat().st_size / 2**20
        for level in levels:
            run_store.GZIP_LEVEL = level
            kept: list[Any] = []
            times[f"gzip{level}"].append(timed(lambda: kept.append(
                run_store.store_report(data, kind="qa", key=mode, root=roots[level]))))
            sizes[f"gzip{level}"] = kept[0].size / 2**20
    best = {k: min(v) for k, v in times.items()}
    return {"n_cases": n, "mode": mode, "existing_runs": existing, "repeats": repeats,
            "to_dict_s": round(to_dict_s, 3),
            "seconds": {k: round(v, 3) for k, v in best.items()},
            "all_seconds": {k: [round(x, 3) for x in v] for k, v in times.items()},
            "mib": {k: round(v, 2) for k, v in sizes.items()},
            "store_over_report_write": {k: round(best[k] / best["report"], 3)
                                        for k in best if k != "report"},
            "compression_ratio": {k: round(sizes["report"] / sizes[k], 1)
                                  for k in sizes if k != "report"}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run_store",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="cases (default: 10000)")
    parser.add_argument("--mode", choices=("tool", "agent"), default="tool")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--existing", type=int, default=200,
                        help="runs already in the store (default: 200)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-store-") as scratch:
        result = measure(args.n, args.mode, args.repeats, args.existing, Path(scratch))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
