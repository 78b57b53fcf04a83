"""Issue 33's invariant, checked by running both: the report and the six gates' verdicts of this
tree's default command equal those of `--jobs 1` at another tree (main before the issue), on
the same golden set, byte for byte outside the timings.

    python -m benchmarks.invariant --before /path/to/old/tree --golden G.jsonl [--mode tool]
                                   [--warm] [--jobs 1]

runs `ragspine-eval qa --no-cache --no-store --report R` twice, once with this tree's package
(the default `--jobs`, i.e. auto, or the `--jobs` given) and once with the old tree's first on
PYTHONPATH and `--jobs 1`, each in a fresh process and a scratch folder, and compares the two JSON reports
after removing what differs between any two runs of the same inputs (provenance.times, and the
commit the provenance names: provenance.git_commit, git_dirty), as JSON text with the keys in
the order written, and the exit codes; this tree's file must also be the standard library's
indented text of its own content (its bytes, not only its values). `--warm` compares the
re-runs where nothing changed instead: each tree runs the command twice on a cache of its own
(without --no-cache) and the second reports are compared (the cache's folder left out too),
which holds the report written from the kept case text (qa/report_file.py) to the old one.
It prints one line per mode and exits 1 when a report differs (the first differing key path
is named). The workspace harnesses (extraction, retrieval, answers over the realdocs workspace)
are compared the same way by benchmarks/workspace_invariant.py.
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
    if isinstance(prov.get("cache"), dict):
        prov["cache"].pop("folder", None)  # each run's own scratch cache (--warm)
    return report


def _run(tree: Path | None, golden: str, mode: str, jobs: list[str], out: Path,
         warm: bool = False) -> int:
    """The command's exit code, its report at `out`; `warm`: run it twice on one cache of its
    own and keep the second (the re-run where nothing changed)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree) + os.pathsep + env.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory(prefix="ragspine-invariant-") as scratch:
        env["RAGSPINE_EVAL_CACHE_DIR"] = str(Path(scratch) / "cache")
        env["RAGSPINE_EVAL_RUNS_DIR"] = str(Path(scratch) / "runs")
        for _ in range(2 if warm else 1):
            proc = subprocess.run(
                [sys.executable, "-c", _RUN, "qa", "--mode", mode, "--golden", golden,
                 *([] if warm else ["--no-cache"]), "--no-store", "--report", str(out), *jobs],
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
    parser.add_argument("--warm", action="store_true",
                        help="compare the re-runs where nothing changed (each tree twice on a "
                             "cache of its own) instead of --no-cache runs")
    parser.add_argument("--jobs", help="this tree's --jobs (default: its default, auto)")
    args = parser.parse_args(argv)
    failed = False
    with tempfile.TemporaryDirectory(prefix="ragspine-invariant-") as scratch:
        for mode in args.mode or ["tool", "agent"]:
            now_path, before_path = Path(scratch) / f"now-{mode}.json", Path(scratch) / "b.json"
            now_code = _run(None, args.golden, mode, ["--jobs", args.jobs] if args.jobs else [],
                            now_path, args.warm)
            before_code = _run(args.before.resolve(), args.golden, mode, ["--jobs", "1"],
                               before_path, args.warm)
            raw = now_path.read_bytes()
            # the file is the standard library's indented text of what it holds: its bytes, not
            # only its values, are what the text comparison below compares
            canonical = raw == (json.dumps(json.loads(raw), indent=2, ensure_ascii=False)
                                + "\n").encode("utf-8")
            now = comparable(json.loads(now_path.read_text(encoding="utf-8")))
            before = comparable(json.loads(before_path.read_text(encoding="utf-8")))
            # the text, keys in their order, not only equal values
            same = (json.dumps(now, indent=2, ensure_ascii=False)
                    == json.dumps(before, indent=2, ensure_ascii=False)
                    and now_code == before_code and canonical)
            where = None if same else (first_difference(now, before) or
                                       ("the exit code" if canonical else "its own text"))
            n = len(now.get("cases") or [])
            print(f"{mode}{' warm' if args.warm else ''}: {n} cases, exit {now_code} (before "
                  f"{before_code}), report "
                  f"{'the same' if same else f'differs at {where}'}")
            failed = failed or not same
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
