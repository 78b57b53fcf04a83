"""The financial judge's cost (issue 21): on a cold agent run against `lexical`, and in `judge
check` alone.

- cost: `run_qa_eval` plus its JSON report, cold (a fresh empty outcome cache, as a user's first
  run), with `--judge lexical` and with `--judge financial`, each in a fresh process
  (benchmarks.child), interleaved `repeats` times, the fastest of each kept; the figure is
  financial / lexical. Everything but the judge is the same in both runs, so the ratio is the
  judge's share of a real run.
- check: `check_judge` on labelled claims (data/judge's two halves cycled to `n`, each claim made
  unique so that no memo helps), timed after start-up (the imports, the lexicon and rjieba's
  dictionary loaded by judging one claim first): claims per second.

`python -m benchmarks.judge [--n 10000] [--repeats 2] [--claims 2480]` runs both and prints them;
`python -m benchmarks` runs them too (`measure`).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import child
from benchmarks.goldens import cycled_golden_set
from ragspine_eval.paths import DATA_DIR

CLAIM_FILES = ("financial_claims_fit.jsonl", "financial_claims_heldout.jsonl")


def cold(golden: str, mode: str, judge: str) -> dict[str, Any]:
    """One cold run with `judge`: run_qa_eval and its JSON report, in an empty outcome cache."""
    from ragspine_eval.files import write_json_atomic
    from ragspine_eval.qa.run import run_qa_eval

    with tempfile.TemporaryDirectory(prefix="ragspine-bench-judge-") as scratch:
        os.environ["RAGSPINE_EVAL_CACHE_DIR"] = str(Path(scratch) / "cache")
        started, cpu = time.perf_counter(), time.process_time()
        report = run_qa_eval(golden, mode, judge=judge)
        write_json_atomic(Path(scratch) / "report.json", report.to_dict())
        total, cpu = time.perf_counter() - started, time.process_time() - cpu
    faith = report.metrics["faithfulness"]
    # CPU time beside wall time: on a shared machine the wall time of one run moves by half
    return {"n_cases": report.n_cases, "judge": judge, "total_s": round(total, 4),
            "cpu_s": round(cpu, 4), "faithfulness": round(faith.pass_rate, 4)}


def _claims(n: int) -> list[tuple[str, list[str], bool]]:
    from ragspine_eval.judges.registry import read_labelled

    rows = [r for name in CLAIM_FILES if (DATA_DIR / "judge" / name).exists()
            for r in read_labelled(DATA_DIR / "judge" / name)]
    if not rows:
        raise SystemExit("benchmarks.judge: data/judge holds no labelled claims")
    # unique texts: a suffix that is neither a number nor a word of the lexicon
    return [(f"{c} ref{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}{chr(97 + i // 676 % 26)}",
             [*ctx, f"ref{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}{chr(97 + i // 676 % 26)}"],
             label) for i, (c, ctx, label) in ((i, rows[i % len(rows)]) for i in range(n))]


def check(n: int) -> dict[str, Any]:
    """judge check's work on n claims: start-up (imports and one claim), then claims per second."""
    started = time.perf_counter()
    from ragspine_eval.judges.registry import check_judge, get

    judge = get("financial")
    judge.entails("香港2025财年收入为17.02亿美元", ["ACME_HK FY2025 REVENUE: 1702 USD_M"])
    startup = time.perf_counter() - started
    rows = _claims(n)
    started, cpu = time.perf_counter(), time.process_time()
    result = check_judge(rows, judge)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    # wall time is the figure; CPU time says how much of it a busy machine took away
    return {"n_claims": n, "startup_s": round(startup, 3), "judge_s": round(seconds, 3),
            "cpu_s": round(cpu, 3), "claims_per_s": round(n / seconds, 1),
            "claims_per_cpu_s": round(n / cpu, 1),
            "balanced_accuracy": round(result.balanced_accuracy, 4)}


def measure(goldens: Path, say: Any, n: int = 10_000, repeats: int = 2,
            claims: int = 2_480) -> dict[str, Any]:
    """Both measurements, each configuration in its own process (see the module docstring)."""
    golden = str(cycled_golden_set(n, goldens))
    runs: dict[str, list[dict[str, Any]]] = {"lexical": [], "financial": []}
    for _ in range(repeats):
        for judge in runs:
            say(f"judge cost: agent, cold, --judge {judge}, {n:,} cases")
            runs[judge].append(child.run("judge:cold", golden=golden, mode="agent", judge=judge))
    best = {j: min(rs, key=lambda r: r["total_s"]) for j, rs in runs.items()}
    say(f"judge check --judge financial, {claims:,} claims")
    checked = child.run("judge:check", n=claims)
    return {"n_cases": n, "lexical": best["lexical"], "financial": best["financial"],
            "runs_total_s": {j: [r["total_s"] for r in rs] for j, rs in runs.items()},
            "ratio": round(best["financial"]["total_s"] / best["lexical"]["total_s"], 4),
            "cpu_ratio": round(min(r["cpu_s"] for r in runs["financial"])
                               / min(r["cpu_s"] for r in runs["lexical"]), 4),
            "check": checked}


def target_values(measured: dict[str, Any]) -> tuple[dict[str, float], dict[str, str]]:
    """The issue's two targets from `measure`'s result, and where each was measured."""
    return ({"judge_cost_agent": measured["ratio"],
             "judge_check": measured["check"]["claims_per_s"]},
            {"judge_cost_agent": f"{measured['n_cases']:,} cases",
             "judge_check": f"{measured['check']['n_claims']:,} claims"})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.judge",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="cases of the cold agent runs")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--claims", type=int, default=2_480, help="claims judge check reads")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-goldens-") as scratch:
        measured = measure(Path(scratch), lambda what: print(what, flush=True), args.n,
                           args.repeats, args.claims)
    print(json.dumps(measured, indent=1))
    lex, fin = measured["lexical"], measured["financial"]
    print(f"agent, cold, {measured['n_cases']:,} cases: lexical {lex['total_s']:.2f} s, financial "
          f"{fin['total_s']:.2f} s: {measured['ratio']:.3f}x (target <= 1.10x); CPU time "
          f"{measured['cpu_ratio']:.3f}x")
    c = measured["check"]
    print(f"judge check, {c['n_claims']:,} claims: start-up {c['startup_s']:.2f} s, then "
          f"{c['claims_per_s']:,.0f} claims/s (target >= 1,000)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
