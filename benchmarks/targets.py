"""The targets of issue 7 and how a measured value is judged against each.

A target is a bound on one figure: `at_most` or `at_least`. No target is loosened to fit a
measurement; a value that misses its bound is printed as missed, with the value.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Target:
    name: str
    what: str
    bound: float
    kind: str  # "at_most" | "at_least"
    unit: str  # "share" | "ratio" | "s" | "MiB"

    def judge(self, value: float) -> str:
        ok = value <= self.bound if self.kind == "at_most" else value >= self.bound
        return "met" if ok else "missed"

    def show(self, value: float) -> str:
        return fmt(value, self.unit)

    def bound_text(self) -> str:
        return f"{'≤' if self.kind == 'at_most' else '≥'} {fmt(self.bound, self.unit)}"


def fmt(value: float, unit: str) -> str:
    if unit == "share":
        return f"{value:.1%}"
    if unit == "ratio":  # three decimals: 1.005x against a bound of 1.00x must not read 1.00x
        return f"{value:.3f}x"
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "cases":
        return f"{value:,.0f} cases"
    return f"{value:,.0f} {unit}"


TARGETS = (
    Target("overhead_tool", "QA tool mode: harness overhead, share of total time", 0.05,
           "at_most", "share"),
    Target("vs_peer_tool", "QA tool mode: our total / the engine's own harness", 1.0,
           "at_most", "ratio"),
    Target("vs_peer_agent", "QA agent mode: our total / the engine's own harness", 1.0,
           "at_most", "ratio"),
    Target("scaling_tool", "QA tool mode: time per case, largest set / smallest set", 1.1,
           "at_most", "ratio"),
    Target("memory_tool", "QA tool mode: peak memory at the largest set", 1024, "at_most",
           "MiB"),
    Target("parallel", "QA tool mode: --jobs 2 speedup over --jobs 1", 1.7, "at_least",
           "ratio"),
    Target("warm_tool", "QA tool mode: warm re-run, share of the cold run",
           0.05, "at_most", "share"),
    Target("warm_agent", "QA agent mode: warm re-run, share of the cold run",
           0.05, "at_most", "share"),
    Target("one_changed", "QA tool mode: cases re-run after one golden edit", 1,
           "at_most", "cases"),
    Target("resume", "QA tool mode: resumed after a stop at 50%, share of full", 0.55,
           "at_most", "share"),
    Target("dask", "QA agent mode: Dask 2 workers, speedup over --jobs 1", 1.6,
           "at_least", "ratio"),
    Target("extraction_time", "run_eval and its fingerprints at the largest cell count: time",
           5.0, "at_most", "s"),
    Target("extraction_memory", "run_eval at the largest cell count: peak memory", 2048,
           "at_most", "MiB"),
    Target("extraction_memory_23", "run_eval at the largest cell count: peak memory, issue 23",
           1024, "at_most", "MiB"),
    # issue 21 (benchmarks/judge.py)
    Target("judge_cost_agent", "QA agent mode, cold: --judge financial / --judge lexical", 1.10,
           "at_most", "ratio"),
    Target("judge_check", "judge check --judge financial: claims per second after start-up",
           1000, "at_least", "claims/s"),
    # issue 33: each a median of interleaved rounds (ratios.py), its spread beside it
    Target("default_vs_peer_tool", "QA tool mode, default command: ours / the engine's harness",
           0.90, "at_most", "ratio"),
    Target("default_vs_peer_agent", "QA agent mode, default command: ours / the engine's harness",
           0.90, "at_most", "ratio"),
    Target("jobs1_vs_peer_tool", "QA tool mode, --jobs 1: ours / the engine's harness", 1.05,
           "at_most", "ratio"),
    Target("jobs1_vs_peer_agent", "QA agent mode, --jobs 1: ours / the engine's harness", 1.05,
           "at_most", "ratio"),
    Target("overhead_tool_33", "QA tool mode, --jobs 1: harness overhead, issue 33", 0.10,
           "at_most", "share"),
    Target("overhead_agent_33", "QA agent mode, --jobs 1: harness overhead, issue 33", 0.10,
           "at_most", "share"),
    Target("extraction_vs_engine", "run_eval at the largest cell count: ours / the engine's",
           1.0, "at_most", "ratio"),
    Target("extraction_memory_vs_engine",
           "run_eval at the largest cell count: peak memory over the engine's", 100, "at_most",
           "MiB"),
    # issue 44 (benchmarks/answers.py): medians of interleaved rounds, their spread beside
    Target("answers_vs_engine", "answers, default command: ours / the engine's run_route", 1.0,
           "at_most", "ratio"),
    Target("answers_warm", "answers, default command: warm re-run, share of the cold run",
           0.10, "at_most", "share"),
)
BY_NAME = {t.name: t for t in TARGETS}
# Issue 23 ("faster than the engine's own harness again, re-runs in a blink"): its targets, in
# its order; `make bench` prints them in a block of their own and writes them to bench.json.
ISSUE_23 = ("vs_peer_tool", "overhead_tool", "vs_peer_agent", "warm_tool", "warm_agent",
            "resume", "parallel", "dask", "extraction_time", "extraction_memory_23")
# Issue 33 ("faster than the engine's own harness as users run it"): its Done-when lines.
ISSUE_33 = ("default_vs_peer_tool", "default_vs_peer_agent", "jobs1_vs_peer_tool",
            "jobs1_vs_peer_agent", "overhead_tool_33", "overhead_agent_33", "warm_tool",
            "warm_agent", "resume", "extraction_vs_engine", "extraction_memory_vs_engine")
# Issue 44 ("answers on your own documents"): its benchmark's Done-when line.
ISSUE_44 = ("answers_vs_engine", "answers_warm")
ISSUES = {"23": ISSUE_23, "33": ISSUE_33, "44": ISSUE_44}


def verdicts(values: dict[str, float], sizes: dict[str, str],
             spreads: dict[str, tuple[float, float]] | None = None) -> list[dict[str, Any]]:
    """One row per target that was measured: the target, where it was measured, the value and
    met/missed. `sizes` says at which size each was measured ("10,000 cases"); `spreads` the
    (min, max) of the rounds whose median the value is, where it is one."""
    rows = []
    for target in TARGETS:
        if target.name not in values:
            continue
        value = values[target.name]
        row = {**asdict(target), "at": sizes.get(target.name, ""), "value": value,
               "status": target.judge(value)}
        if spreads and target.name in spreads:
            row["spread"] = list(spreads[target.name])
        rows.append(row)
    return rows
