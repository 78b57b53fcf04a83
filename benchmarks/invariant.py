"""Issue 33's invariant, checked by running both: the report and the six gates' verdicts of this
tree's default command equal those of `--jobs 1` at another tree (main before the issue), on
the same golden set, byte for byte outside the timings.

    python -m benchmarks.invariant --before /path/to/old/tree --golden G.jsonl [--mode tool]

runs `ragspine-eval qa --no-cache --no-store --report R` twice, once with this tree's package
(the default `--jobs`, i.e. auto) and once with the old tree's first on PYTHONPATH and
`--jobs 1`, each in a fresh process and a scratch folder, and compares the two JSON reports
after removing what differs between any two runs of the same inputs (provenance.times, and the
commit the provenance names: provenance.git_commit, git_dirty), as JSON text with the keys in
the order written, and the exit codes. It prints one line per mode and exits 1 when
a report differs (the first differing key path is named).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_RUN = "import sys; from ragspine_eval.cli import main; sys.exit(main(sys.argv[1:]))"


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    prov = report.get("provenance") or {}
    prov.pop("times", None)
    prov.pop("git_commit", None)  # the trees' own commits differ by definition
    prov.pop("git_dirty", None)
    return report


def _run(tree: Path | None, golden: str, mode: str, jobs: list[str], out: Path) -> int:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree) + os.pathsep + env.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory(prefix="ragspine-invariant-") as scratch:
        env["RAGSPINE_EVAL_CACHE_DIR"] = str(Path(scratch) / "cache")
        env["RAGSPINE_EVAL_RUNS_DIR"] = str(Path(scratch) / "runs")
        proc = subprocess.run(
            [sys.executable, "-c", _RUN, "qa", "--mode", mode, "--golden", golden, "--no-cache",
             "--no-store", "--report", str(out), *jobs],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc.returncode


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    if type(a) is not type(b):
        return path or "(top)"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}"
            found = first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}[len {len(a)} != {len(b)}]"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.invariant")
    parser.add_argument("--before", type=Path, required=True, help="the old tree (a checkout)")
    parser.add_argument("--golden", default=str(ROOT / "data/golden/qa_golden_set.jsonl"))
    parser.add_argument("--mode", action="append", choices=["tool", "agent"])
    args = parser.parse_args(argv)
    failed = False
    with tempfile.TemporaryDirectory(prefix="ragspine-invariant-") as scratch:
        for mode in args.mode or ["tool", "agent"]:
            now_path, before_path = Path(scratch) / f"now-{mode}.json", Path(scratch) / "b.json"
            now_code = _run(None, args.golden, mode, [], now_path)
            before_code = _run(args.before.resolve(), args.golden, mode, ["--jobs", "1"],
                               before_path)
            now = comparable(json.loads(now_path.read_text(encoding="utf-8")))
            before = comparable(json.loads(before_path.read_text(encoding="utf-8")))
            # the text, keys in their order, not only equal values
            same = (json.dumps(now, indent=2, ensure_ascii=False)
                    == json.dumps(before, indent=2, ensure_ascii=False)
                    and now_code == before_code)
            where = None if same else (first_difference(now, before) or "the exit code")
            n = len(now.get("cases") or [])
            print(f"{mode}: {n} cases, exit {now_code} (before {before_code}), report "
                  f"{'the same' if same else f'differs at {where}'}")
            failed = failed or not same
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
