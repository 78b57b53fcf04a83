"""Profile one benchmark configuration with py-spy (every thread, sampled, the engine included).

    python -m benchmarks.profile qa:ours --mode tool --n 10000
    python -m benchmarks.profile qa:peer --mode agent --n 1000
    python -m benchmarks.profile extraction:score --n 100000

writes out/bench/profile-<task>-<n>.txt (py-spy's collapsed stacks, for flamegraph tools or
speedscope) and prints the functions with the most samples of their own, which is where a hot
path shows. QA tasks run over a cycled golden set of n cases, as in the benchmark.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.goldens import cycled_golden_set
from ragspine_eval.paths import OUT_DIR


def own_time(collapsed: str, top: int = 20) -> list[tuple[str, int]]:
    """(function, samples) with the most samples as the innermost frame."""
    counts: Counter[str] = Counter()
    for line in collapsed.splitlines():
        stack, _, samples = line.rpartition(" ")
        if stack:
            counts[stack.rsplit(";", 1)[-1]] += int(samples)
    return counts.most_common(top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("task", choices=["qa:ours", "qa:floor", "qa:peer", "extraction:score"])
    parser.add_argument("--mode", choices=["tool", "agent"], default="tool")
    parser.add_argument("--n", type=int, default=10_000, help="cases, or cells (default 10,000)")
    parser.add_argument("--rate", type=int, default=250, help="samples a second (default 250)")
    args = parser.parse_args(argv)
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    out = OUT_DIR / "bench" / f"profile-{args.task.replace(':', '-')}-{args.n}.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-profile-") as scratch:
        kwargs = ({"n": args.n} if args.task.startswith("extraction") else
                  {"golden": str(cycled_golden_set(args.n, Path(scratch))), "mode": args.mode})
        command = [spy, "record", "--rate", str(args.rate), "--format", "raw", "--output",
                   str(out), "--", sys.executable, "-m", "benchmarks.child", args.task,
                   json.dumps(kwargs), str(Path(scratch) / "result.json")]
        done = subprocess.run(command, cwd=Path(__file__).resolve().parents[1])
    if done.returncode != 0:
        print(f"py-spy exited {done.returncode}; is it installed (pip install -e '.[dev]')?",
              file=sys.stderr)
        return done.returncode
    total = sum(int(line.rpartition(" ")[2]) for line in out.read_text().splitlines() if line)
    print(f"\n{total} samples; collapsed stacks in {out}\nown samples  function")
    for function, samples in own_time(out.read_text()):
        print(f"{samples / total:10.1%}  {function}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
