"""`ragspine-eval diff`: two JSON reports compared case by case. Each side is a report path
(.json, or a stored .json.gz), a stored run's id or id prefix, or a short reference such as
@latest, @tool~1 or @agent (runs.refs); a bad reference exits 2 naming the closest runs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragspine_eval.cli.common import EXIT_OK, EXIT_REGRESSION

HELP = ("compare two JSON reports (QA or extraction) case by case: flips, rate changes, "
        "McNemar p; exit 1 when any case went from pass to fail or the new run has engine "
        "errors")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", help="the earlier JSON report (of `ragspine-eval qa` or "
                                    "`extraction --report`), or a stored run: an id, @latest~1, "
                                    "@tool~1, ... (`ragspine-eval runs` lists them)")
    parser.add_argument("new", help="the later report of the same harness, any mode, or a "
                                    "stored run (@latest, @agent, an id)")
    parser.add_argument("--json", action="store_true", help="print the diff as JSON")


def run(args: argparse.Namespace) -> int:
    from ragspine_eval.outputs.diff import diff_reports, diff_table
    from ragspine_eval.runs import refs

    sides = [refs.resolve(ref) for ref in (args.old, args.new)]
    reports = [refs.read_report_file(found.path if isinstance(found, refs.RunSummary) else found)
               for found in sides]
    names = [ref if isinstance(found, Path) else
             f"run {found.id}" if ref == found.id else f"{ref} = run {found.id}"
             for ref, found in zip((args.old, args.new), sides)]
    diff = diff_reports(*reports, names=tuple(names))
    if args.json:
        print(json.dumps(diff.to_dict(), ensure_ascii=False, indent=2))
    else:
        print("\n".join(diff_table(diff)))
    return EXIT_REGRESSION if diff.regressed or diff.new_errors else EXIT_OK
