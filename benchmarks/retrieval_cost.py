"""`python -m benchmarks.retrieval_cost --before DIR [--cases N] [--repeats R]`: what keeping
retrieval costs a cold agent run (issue 30's bound: at most 5% more time, at most 20% more
report), measured against the same benchmark run on the code before it.

DIR is a checkout of the code before the issue (e.g. `git archive 303e74f | tar -x -C DIR`):
its own `benchmarks.child qa:ours` runs there, with that code, and this tree's here, each in a
fresh process over the same cycled golden set (N cases, 10,000 by default), agent mode, the
outcome cache on in a new empty folder (a user's first run), the JSON report written. The
two run interleaved, R times each (3 by default), and the fastest of each is compared (on a
shared machine the fastest run is the least disturbed); CPU time is given beside wall time.
Measured, not asserted: figures in benchmarks/RESULTS.md ("Retrieval kept").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.child import ROOT
from benchmarks.goldens import cycled_golden_set


def one_run(tree: Path, golden: Path, mode: str) -> dict[str, Any]:
    """`benchmarks.child qa:ours` of the code in `tree`, in its own process; its result with
    the child's CPU time."""
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-retrieval-") as scratch:
        out = Path(scratch) / "result.json"
        env = {**os.environ, "PYTHONPATH": str(tree)}
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "benchmarks.child", "qa:ours",
                                 json.dumps({"golden": str(golden), "mode": mode}), str(out)],
                                cwd=tree, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0 or not out.exists():
            raise RuntimeError(f"{tree}: the run failed: {proc.stderr.read().decode()[-2000:]}")
        result = json.loads(out.read_text())
        return {**result, "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
                "process_s": round(time.perf_counter() - started, 3)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mode", default="agent")
    args = parser.parse_args(argv)
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-golden-") as folder:
        golden = cycled_golden_set(args.cases, Path(folder))
        for _ in range(args.repeats):
            for side, tree in (("before", args.before.resolve()), ("after", ROOT)):
                runs[side].append(one_run(tree, golden, args.mode))
                r = runs[side][-1]
                print(f"{side:6} {r['total_s']:8.2f} s  cpu {r['cpu_s']:8.2f} s  report "
                      f"{r['report_mib']:.2f} MiB", flush=True)
    best = {side: min(rs, key=lambda r: r["total_s"]) for side, rs in runs.items()}
    cpu = {side: min(r["cpu_s"] for r in rs) for side, rs in runs.items()}
    summary = {
        "cases": args.cases, "mode": args.mode, "repeats": args.repeats,
        "time_ratio": best["after"]["total_s"] / best["before"]["total_s"],
        "cpu_ratio": cpu["after"] / cpu["before"],
        "report_ratio": best["after"]["report_mib"] / best["before"]["report_mib"],
        "runs": runs,
    }
    print(f"after / before, fastest of {args.repeats}: time {summary['time_ratio']:.3f}x "
          f"({best['after']['total_s']:.2f} s vs {best['before']['total_s']:.2f} s), CPU "
          f"{summary['cpu_ratio']:.3f}x, report {summary['report_ratio']:.3f}x "
          f"({best['after']['report_mib']:.2f} vs {best['before']['report_mib']:.2f} MiB)")
    return summary


if __name__ == "__main__":
    main()
