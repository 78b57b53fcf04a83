"""`ragspine-eval judge`: list the faithfulness judges, or measure one on labelled claims.

`judge list` prints one judge a line, name first, then what it decides. `judge check FILE
[--judge NAME] [--threshold T]` reads a labelled JSONL (claim, context, label) and prints the
judge's balanced accuracy, the recall on each class with its Wilson interval and the confusion
counts (judges.registry.check_labelled), then, when the lines carry `kind` or `lang`, the balanced
accuracy per kind and per language, worst first. Both only read; nothing is written.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ragspine_eval.cli.common import EXIT_OK

HELP = "list the faithfulness judges, or measure one on a labelled JSONL of claims"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ragspine_eval.judges.registry import DEFAULT_JUDGE

    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("list", help="the registered judges, one a line, name first")
    check = actions.add_parser("check", help="balanced accuracy, confusion counts and Wilson "
                                             "intervals of a judge on labelled claims")
    check.add_argument("file", type=Path,
                       help="JSONL, one object a line: claim, context (a string or a list of "
                            "passages), label (true: the context supports the claim); optional "
                            "kind and lang add a balanced accuracy per kind and per language")
    check.add_argument("--judge", default=DEFAULT_JUDGE,
                       help=f"a registered judge (default: {DEFAULT_JUDGE})")
    check.add_argument("--threshold", type=float, default=None,
                       help="the judge's lexical threshold (default: the judge's own)")


def run(args: argparse.Namespace) -> int:
    from ragspine_eval.judges import registry as judges

    if args.action == "list":
        for name in judges.names():
            print(f"{name}\t{judges.DESCRIPTIONS.get(name, '')}".rstrip())
        return EXIT_OK
    judge = judges.get(args.judge, args.threshold)
    for line in judges.check_labelled(args.file, judge).lines():
        print(line)
    return EXIT_OK
