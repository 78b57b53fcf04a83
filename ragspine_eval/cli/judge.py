"""`ragspine-eval judge`: list the faithfulness judges, or measure one on labelled claims.

`judge list` prints one judge a line, name first, then what it decides. `judge check FILE
[--judge NAME] [--threshold T]` reads a labelled JSONL (claim, context, label) and prints the
judge's balanced accuracy, the recall on each class with its Wilson interval and the confusion
counts (judges.registry.check_labelled), then, when the lines carry `kind` or `lang`, the balanced
accuracy per kind and per language, worst first, and, when lines come from review (they carry
`judged`: judges/labels.py), the judge's accuracy on the team's disagreements (the verdicts
marked wrong) and on the confirmed ones. `judge merge FILE... --out OUT [--force]` folds
labelled files (the case view's exported labels) into one (judges/label_files.py: one line per
claim and context; two lines that label the same claim and context differently exit 2 naming
both). `list` and `check` only read; `merge` writes OUT whole, never over one of its inputs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ragspine_eval.cli.common import EXIT_OK

HELP = ("list the faithfulness judges, measure one on a labelled JSONL of claims, or merge "
        "labelled files")


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
    merge = actions.add_parser("merge", help="fold labelled files (the case view's exported "
                                             "labels) into one, one line per claim and context")
    merge.add_argument("files", type=Path, nargs="+", metavar="FILE",
                       help="labelled JSONL files, in order: the first line of a claim and "
                            "context is kept, an agreeing repeat dropped")
    merge.add_argument("--out", type=Path, required=True, metavar="OUT",
                       help="the merged labelled file (never one of the FILEs)")
    merge.add_argument("--force", action="store_true", help="replace OUT if it exists")


def run(args: argparse.Namespace) -> int:
    from ragspine_eval.judges import registry as judges

    if args.action == "list":
        for name in judges.names():
            print(f"{name}\t{judges.DESCRIPTIONS.get(name, '')}".rstrip())
        return EXIT_OK
    if args.action == "merge":
        from ragspine_eval.judges.label_files import merge_labels, write_labels

        merged = merge_labels(args.files)
        write_labels(args.out, merged.lines, inputs=args.files, force=args.force)
        print(f"labels: {args.out}: {len(merged.lines)} labelled claims from {merged.files} "
              f"files ({merged.duplicates} agreeing repeats dropped); measure a judge on them "
              f"with: ragspine-eval judge check {args.out} --judge NAME")
        return EXIT_OK
    judge = judges.get(args.judge, args.threshold)
    for line in judges.check_labelled(args.file, judge).lines():
        print(line)
    return EXIT_OK
