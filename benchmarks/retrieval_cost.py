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

`--parts` measures instead, in one process, what keeping retrieval adds to the harness's own
work on the same 10,000 agent outcomes (the golden set's 71 answered once, cycled), A and B
interleaved `repeats` times and the fastest of each kept, by CPU time (time.process_time):
scoring (`evaluate` with the retrieval steps, against `evaluate` with them switched off and
the outcomes' passages left out), the report (`to_dict` and its JSON written) and the outcome
cache's text of every outcome (what `put` encodes and checksums), with and without passages.
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


def parts(cases: int, repeats: int) -> dict[str, Any]:
    """The harness's extra work, A/B in one process (see the module docstring)."""
    import contextlib
    import dataclasses
    from unittest import mock

    from ragspine_eval.engines.inprocess import RagspineEngine
    from ragspine_eval.execution import cache
    from ragspine_eval.files import write_json_atomic
    from ragspine_eval.golden.cases import load_golden_set
    from ragspine_eval.paths import KB_DIR, QA_GOLDEN_SET
    from ragspine_eval.qa import case_record, report as report_mod
    from ragspine_eval.knowledge.kb import build_eval_kb

    golden = load_golden_set(QA_GOLDEN_SET)
    with tempfile.TemporaryDirectory() as scratch:
        kb = build_eval_kb(KB_DIR, scratch)
        engine = RagspineEngine(kb, "agent")
        answered = [engine.run_case(c) for c in golden]
        refs = kb.narrative_texts()
        engine.close()
    n = -(-cases // len(golden))
    big = [dataclasses.replace(c, id=f"{c.id}-{i}") for i in range(n) for c in golden][:cases]
    with_p = [o for _ in range(n) for o in answered][:cases]
    without_p = [dataclasses.replace(o, passages=None) for o in with_p]

    @contextlib.contextmanager
    def retrieval_off():
        with mock.patch.object(case_record, "case_retrieval", lambda *a: None), \
             mock.patch.object(report_mod, "place_failures", lambda *a: None), \
             mock.patch.object(report_mod, "split_claims_of", lambda *a: None), \
             mock.patch.object(report_mod, "run_retrieval", lambda *a: None):
            yield

    def cpu(fn: Any) -> float:
        started = time.process_time()
        fn()
        return time.process_time() - started

    def score(outcomes: list[Any], off: bool) -> Any:
        with retrieval_off() if off else contextlib.nullcontext():
            return report_mod.evaluate(big, outcomes, "agent", reference_texts=refs)

    def write(report: Any) -> None:
        with tempfile.TemporaryDirectory() as folder:
            write_json_atomic(Path(folder) / "r.json", report.to_dict())

    def texts(outcomes: list[Any]) -> None:
        for out in outcomes:
            cache._checksum(cache._outcome_text(out))

    best: dict[str, float] = {}
    reports = {"on": score(with_p, False), "off": score(without_p, True)}
    for _ in range(repeats):
        for side, outcomes, off in (("on", with_p, False), ("off", without_p, True)):
            for part, fn in (("score", lambda: score(outcomes, off)),
                             ("report", lambda: write(reports[side])),
                             ("cache_text", lambda: texts(outcomes))):
                key = f"{part}_{side}"
                best[key] = min(best.get(key, float("inf")), cpu(fn))
    extra = sum(best[f"{p}_on"] - best[f"{p}_off"] for p in ("score", "report", "cache_text"))
    result = {"cases": len(big), "repeats": repeats, **{k: round(v, 3) for k, v in best.items()},
              "extra_s": round(extra, 3)}
    for part in ("score", "report", "cache_text"):
        print(f"{part:11} with retrieval {best[part + '_on']:6.3f} s CPU, without "
              f"{best[part + '_off']:6.3f} s: +{best[part + '_on'] - best[part + '_off']:.3f} s")
    print(f"the harness's extra work at {len(big):,} agent cases: {extra:.3f} s CPU")
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path)
    parser.add_argument("--parts", action="store_true")
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mode", default="agent")
    args = parser.parse_args(argv)
    if args.parts:
        return parts(args.cases, args.repeats)
    if args.before is None:
        parser.error("--before DIR is needed (or --parts)")
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
