"""Two trees of this project measured against each other, interleaved: this checkout and another
(main before a change), the same benchmark tasks, each in a fresh process of its own tree.

    python -m benchmarks.trees --before /path/to/old/tree [--rounds 3] [--n 10000]
                               [--resume-n 30000] [--only qa,reuse,resume] [--out FILE]

Per round every task runs once in each tree, the trees' order alternating each round; each task
is `benchmarks.child.run(task, ...)` of that tree (its `benchmarks/` and its `ragspine_eval/`
first on the path, as benchmarks/invariant.py runs it), so both trees are measured by their own
benchmark code under about the same load. Per task it prints each tree's median and spread, and
the median (min-max) of the per-round ratios now / before (ratios.py: a ratio is never taken
between rounds). The tasks are the qa and reuse sections' own (benchmarks/__main__.py) at one
size each: `qa:ours` (tool with `--jobs 1` instrumented: its time and harness overhead; tool
and agent with the default `--jobs auto`), `reuse:warm` (tool and agent: warm / cold, whole
processes) and `reuse:resume` (tool: stopped at half and resumed, resumed / full).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# (name, section, task, the figure compared, kwargs less the golden set; "resume" marks the
# resume size)
TASKS: list[tuple[str, str, str, str, dict[str, Any]]] = [
    ("qa tool --jobs 1", "qa", "qa:ours", "total_s", {"mode": "tool", "jobs": 1}),
    ("qa tool --jobs 1 overhead", "qa", None, "overhead", {}),  # read from the run above
    ("qa tool default", "qa", "qa:ours", "total_s",
     {"mode": "tool", "jobs": "auto", "instrument": False}),
    ("qa agent default", "qa", "qa:ours", "total_s",
     {"mode": "agent", "jobs": "auto", "instrument": False}),
    ("reuse warm tool (warm/cold)", "reuse", "reuse:warm", "share", {"mode": "tool"}),
    ("reuse warm agent (warm/cold)", "reuse", "reuse:warm", "share", {"mode": "agent"}),
    ("reuse resume tool (resumed/full)", "resume", "reuse:resume", "after_kill_share",
     {"mode": "tool", "resume": True}),
]


def run_in(tree: Path, task: str, **kwargs: Any) -> dict[str, Any]:
    """`benchmarks.child.run(task, **kwargs)` of `tree`, in a process started in it."""
    env = {**os.environ, "PYTHONPATH": str(tree) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    code = ("import json, sys; from benchmarks import child; "
            "print(json.dumps(child.run(sys.argv[1], **json.loads(sys.argv[2]))))")
    done = subprocess.run([sys.executable, "-c", code, task, json.dumps(kwargs)], cwd=tree,
                          env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.trees")
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--resume-n", type=int, default=30_000)
    parser.add_argument("--only", default="qa,reuse,resume",
                        help="sections, comma-separated: qa, reuse (warm), resume")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    from benchmarks.goldens import cycled_golden_set

    sections = set(args.only.split(","))
    trees = {"now": ROOT, "before": args.before.resolve()}
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    with tempfile.TemporaryDirectory(prefix="ragspine-trees-") as scratch:
        golden = str(cycled_golden_set(args.n, Path(scratch)))
        resume_golden = str(cycled_golden_set(args.resume_n, Path(scratch)))
        for round_ in range(args.rounds):
            order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
            for name, section, task, _, kwargs in TASKS:
                if task is None or section not in sections:
                    continue
                kw = dict(kwargs)
                g = resume_golden if kw.pop("resume", False) else golden
                for tree in order:
                    result = run_in(trees[tree], task, golden=g, **kw)
                    result["load_average"] = [round(x, 2) for x in os.getloadavg()]
                    runs.setdefault(name, {}).setdefault(tree, []).append(result)
                    print(f"round {round_ + 1} {name} {tree}: "
                          f"{ {k: result.get(k) for k in ('total_s', 'overhead', 'share', 'after_kill_share', 'resumed_s', 'full_s', 'cold_s', 'warm_s') if k in result} }",
                          flush=True)
    summary = summarize(runs)
    for line in summary["lines"]:
        print(line)
    if args.out:
        args.out.write_text(json.dumps({"runs": runs, "summary": summary["table"]}, indent=2))
    return 0


def summarize(runs: dict[str, dict[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    table, lines = {}, []
    for name, _, task, figure, _ in TASKS:
        source = name if task is not None else name.rsplit(" ", 1)[0]
        if source not in runs:
            continue
        now = [r.get(figure) for r in runs[source]["now"]]
        before = [r.get(figure) for r in runs[source]["before"]]
        if None in now or None in before:
            continue
        ratios = [a / b for a, b in zip(now, before) if b]
        row = {"now": now, "before": before, "now_median": statistics.median(now),
               "before_median": statistics.median(before),
               "ratio_median": round(statistics.median(ratios), 4),
               "ratio_min": round(min(ratios), 4), "ratio_max": round(max(ratios), 4)}
        table[name] = row
        lines.append(f"{name} ({figure}): now {row['now_median']:.4g} ({min(now):.4g}-"
                     f"{max(now):.4g}), before {row['before_median']:.4g} ({min(before):.4g}-"
                     f"{max(before):.4g}); now/before {row['ratio_median']:.3f} "
                     f"({row['ratio_min']:.3f}-{row['ratio_max']:.3f})")
    return {"table": table, "lines": lines}


if __name__ == "__main__":
    sys.exit(main())
