"""`ragspine-eval gold review html|apply` and `gold coverage`: the actions of `gold` after a draft.

    gold review html --draft G --kb W --out review.html [--force]
    gold review apply --draft G --kb W --decisions D --out GOLD [--force]
    gold coverage GOLD --kb W [--json]

`review html` writes the offline review page (workbench/views/review_page.py); `review apply`
folds a decisions file into the gold file (drafting/review.py): only the accepted cases, each
edit checked on its page, the review in the changelog; `coverage` prints the documents, pages,
claim kinds, languages and stages a gold file covers (drafting/coverage.py). Listed by
cli/gold.py, whose subcommand they are.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ragspine_eval.cli.common import EXIT_OK


def add_actions(actions: Any) -> None:
    review = actions.add_parser("review", help="the review page of a draft, or its decisions "
                                               "folded into the gold file")
    steps = review.add_subparsers(dest="review_command", required=True, metavar="STEP")
    page = steps.add_parser("html", help="an offline HTML page: each case beside its page, "
                                         "accept, edit, reject, export the decisions")
    apply = steps.add_parser("apply", help="the gold file of the accepted cases, the review in "
                                           "its changelog")
    for parser in (page, apply):
        parser.add_argument("--draft", type=Path, required=True, metavar="G",
                            help="the draft (`gold draft --out G`)")
        parser.add_argument("--kb", type=Path, required=True, metavar="W",
                            help="the workspace the draft was made from (its pages)")
        parser.add_argument("--out", type=Path, required=True, metavar="FILE",
                            help="the file to write")
        parser.add_argument("--force", action="store_true", help="replace --out if it exists")
    apply.add_argument("--decisions", type=Path, required=True, metavar="D",
                       help="the decisions file the review page exported (or the notebook saved)")
    coverage = actions.add_parser("coverage", help="the documents, pages, claim kinds, "
                                                   "languages and stages a gold file covers")
    coverage.add_argument("gold", type=Path, metavar="GOLD")
    coverage.add_argument("--kb", type=Path, required=True, metavar="W",
                          help="the workspace whose pages are counted")
    coverage.add_argument("--json", action="store_true", help="print the counts as JSON")


def run(args: argparse.Namespace) -> int:
    from ragspine_eval.drafting.pages import read_pages

    if args.gold_command == "coverage":
        from ragspine_eval.drafting.coverage import coverage_of

        covered = coverage_of(args.gold, read_pages(args.kb))
        if args.json:
            print(json.dumps(covered.__dict__, ensure_ascii=False, indent=1))
        else:
            print(f"{args.gold}: {covered.cases} cases")
            for line in covered.lines():
                print(line)
        return EXIT_OK
    if args.review_command == "html":
        return _html(args)
    return _apply(args)


def _html(args: argparse.Namespace) -> int:
    from ragspine_eval.drafting.draft_file import check_out, fingerprint
    from ragspine_eval.drafting.pages import read_pages
    from ragspine_eval.drafting.review import read_draft
    from ragspine_eval.files.atomic import write_atomic
    from ragspine_eval.workbench.fronts.review import review_page

    check_out(args.out, force=args.force, inputs=[args.draft, args.kb])
    text, draft = read_draft(args.draft)
    html = review_page(draft, read_pages(args.kb), args.draft.name, fingerprint(text))
    write_atomic(args.out, html)
    print(f"review page: {args.out} ({len(draft['cases'])} cases); open it in a browser, decide "
          f"each case, export the decisions, then: ragspine-eval gold review apply --draft "
          f"{args.draft} --kb {args.kb} --decisions DECISIONS --out GOLD")
    return EXIT_OK


def _apply(args: argparse.Namespace) -> int:
    from ragspine_eval.drafting.draft_file import check_out, write_draft
    from ragspine_eval.drafting.pages import read_pages
    from ragspine_eval.drafting.review import apply_review, read_decisions, read_draft

    check_out(args.out, force=args.force, inputs=[args.draft, args.kb, args.decisions])
    text, draft = read_draft(args.draft)
    decisions = read_decisions(args.decisions, text, draft)
    gold = apply_review(draft, decisions, read_pages(args.kb))
    write_draft(args.out, gold, force=args.force)
    kept = len(gold["cases"])
    print(f"gold: {args.out}: {kept} of {len(draft['cases'])} cases accepted "
          f"({sum(d.decision == 'reject' for d in decisions.decisions)} rejected, "
          f"{len(draft['cases']) - len(decisions.decisions)} undecided and left out), reviewed "
          f"by {decisions.reviewer}; check it with: ragspine-eval golden {args.out} --kb {args.kb}")
    return EXIT_OK
