"""`ragspine-eval notebooks`: every notebook run with papermill and rendered to an HTML report."""

from __future__ import annotations

import argparse
from pathlib import Path

from ragspine_eval import paths
from ragspine_eval.cli.common import EXIT_OK, EXIT_REGRESSION

HELP = "run every notebook with papermill and render each to an HTML report"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=paths.OUT_DIR,
                        help="folder for the output notebooks, HTML reports and JSON reports "
                             "(default: out/)")


def run(args: argparse.Namespace) -> int:
    from ragspine_eval.workbench.notebooks import run_all

    def progress(i: int, n: int, run) -> None:  # noqa: ANN001 - a NotebookRun
        params = " ".join(f"{k}={v}" for k, v in run.parameters.items() if k != "report_path")
        print(f"[{i}/{n}] {run.name}: {run.notebook.name} {params}", flush=True)

    runs = run_all(args.out, progress)
    print()
    for run in runs:
        verdict = "ok    " if run.passed else "FAILED"
        html = run.html if run.rendered else "(no HTML report: see the error below)"
        print(f"{verdict} {run.name:<16} {run.seconds:5.1f} s  {html}")
        if run.error:
            for line in run.error.splitlines():
                print(f"       {line}")
    failed = [r.name for r in runs if not r.passed]
    if failed:
        print(f"FAIL: {len(failed)} of {len(runs)} notebooks failed their gate: {', '.join(failed)}")
        return EXIT_REGRESSION
    print(f"PASS: {len(runs)} notebooks ran and rendered")
    return EXIT_OK
