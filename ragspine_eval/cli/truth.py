"""`ragspine-eval truth`: draft a ground truth from a document, or check one against it.

    ragspine-eval truth draft DOC [--out FILE] [--sheet NAME ...] [--range A1:F20] [--table N]
    ragspine-eval truth check GT --doc DOC

Both read the document with readers independent of the engine (extraction/readers.py). Exit
codes: 0 done (a check may have warnings: a stated value that differs from what the reader
sees), 2 bad input (a locator that does not exist, a cell under a merge, a document that will
not open; nothing written).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragspine_eval.cli.common import EXIT_BAD_INPUT, EXIT_OK, positive_int

HELP = "draft a ground truth from a document, or check one against it"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="truth_command", required=True, metavar="ACTION")
    draft = sub.add_parser("draft", help="a ground-truth draft of an .xlsx, .pptx or .pdf, "
                                         "every cell unreviewed")
    draft.add_argument("doc", type=Path, metavar="DOC")
    draft.add_argument("--out", type=Path, metavar="FILE",
                       help="write the draft here (default: print it)")
    draft.add_argument("--sheet", action="append", metavar="NAME",
                       help="only this sheet or table (repeatable), e.g. balance or "
                            "slide23_table1")
    draft.add_argument("--range", dest="cell_range", metavar="A1:F20",
                       help="only this range of each sheet or table (R1C1:R20C6 for tables)")
    draft.add_argument("--table", type=positive_int, metavar="N",
                       help="only the N-th table (or sheet) of the document, 1-based")
    check = sub.add_parser("check", help="check a ground truth's locators, merges and values "
                                         "against its document")
    check.add_argument("ground_truth", type=Path, metavar="GT")
    check.add_argument("--doc", type=Path, required=True, metavar="DOC")


def run(args: argparse.Namespace) -> int:
    from ragspine_eval.extraction.truth import check_truth, draft_truth
    from ragspine_eval.files import write_json_atomic

    if args.truth_command == "draft":
        draft = draft_truth(args.doc, args.sheet, args.cell_range, args.table)
        if args.out is None:
            print(json.dumps(draft, ensure_ascii=False, indent=1))
        else:
            write_json_atomic(args.out, draft)
            print(f"draft: {args.out} ({len(draft['cells'])} cells, all unreviewed; check "
                  f"each and set \"reviewed\": true)")
        return EXIT_OK
    result = check_truth(args.ground_truth, args.doc)
    for line in result.lines():
        print(line)
    return EXIT_OK if result.ok else EXIT_BAD_INPUT
