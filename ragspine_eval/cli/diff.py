"""`ragspine-eval diff`: two JSON reports compared case by case."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragspine_eval.cli.common import EXIT_OK, EXIT_REGRESSION

HELP = ("compare two JSON reports (QA or extraction) case by case: flips, rate changes, "
        "McNemar p; exit 1 when any case went from pass to fail or the new run has engine "
        "errors")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", type=Path, help="the earlier JSON report (of `ragspine-eval qa` or `extraction --report`)")
    parser.add_argument("new", type=Path, help="the later JSON report of the same harness, any mode")
    parser.add_argument("--json", action="store_true", help="print the diff as JSON")


def run(args: argparse.Namespace) -> int:
    from ragspine_eval.outputs.diff import diff_reports, diff_table

    diff = diff_reports(args.old, args.new)
    if args.json:
        print(json.dumps(diff.to_dict(), ensure_ascii=False, indent=2))
    else:
        print("\n".join(diff_table(diff)))
    return EXIT_REGRESSION if diff.regressed or diff.new_errors else EXIT_OK
