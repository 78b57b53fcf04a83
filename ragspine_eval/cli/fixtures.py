"""`ragspine-eval fixtures`: regenerate the office-document fixtures, or --check them."""

from __future__ import annotations

import argparse
from pathlib import Path

from ragspine_eval import paths
from ragspine_eval.cli.common import EXIT_OK, EXIT_REGRESSION
from ragspine_eval.cli.extraction import DOC_CHOICES, FIXTURE_SETS

HELP = "regenerate the office-document fixtures and their ground truth, or --check them"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=paths.FIXTURES_DIR,
                        help="folder to write into or check (default: data/fixtures)")
    parser.add_argument("--docs", choices=DOC_CHOICES, default="all",
                        help="which document set (default: all)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when a committed fixture or ground truth "
                             "differs from what the generator makes now")


def run(args: argparse.Namespace) -> int:
    from ragspine_eval.extraction import fixtures

    keys = FIXTURE_SETS if args.docs == "all" else (args.docs,)
    statuses = (fixtures.check if args.check else fixtures.generate)(args.out, keys)
    explain = {
        "identical": "identical to the generator's output",
        "same_content": "same content, other bytes (a library version serialises differently); "
                        "regenerate with `ragspine-eval fixtures` to make it byte-identical",
        "differs": "DIFFERS from what the generator makes now; regenerate with "
                   "`ragspine-eval fixtures` and review the diff",
        "missing": "MISSING; generate it with `ragspine-eval fixtures`",
        "written": "written",
        "unchanged": "unchanged",
    }
    for status in statuses:
        print(f"{status.key:<5} {status.path}: {explain[status.status]}")
    return EXIT_OK if all(s.ok for s in statuses) else EXIT_REGRESSION
