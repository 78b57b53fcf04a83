"""`ragspine-eval gold`: draft an nl-answers-gold file, review it page by page, see what it covers.

    ragspine-eval gold draft --kb W --questions Q --out G [--route ask|narrative] [--force]
                             [--engine-config FILE] [the model flags] [--jobs N] [--no-cache]
    ragspine-eval gold draft --kb W --from-documents --out G [--per-document N] [--seed S]
                             [--abstentions N] [--provider ... --cassette ...]
    ragspine-eval gold review html --draft G --kb W --out review.html [--force]
    ragspine-eval gold review apply --draft G --kb W --decisions D --out GOLD [--force]
    ragspine-eval gold coverage GOLD --kb W [--json]

A draft is never trusted: every case is marked for review in the file's changelog, and only the
cases a review accepts reach the gold file, with who, when and what changed. Nothing replaces
an existing file without --force, and every file is written whole or not at all. Exit codes: 0
done, 2 bad input (a malformed, stale or hostile question file, workspace or decisions file:
file, line and reason; nothing written), 3 a bug.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ragspine_eval.cli.common import EXIT_OK, BadInput, positive_int

HELP = "draft an nl-answers-gold file from questions or documents, review it, see its coverage"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ragspine_eval.cli.model_options import add_model_arguments
    from ragspine_eval.cli.run_options import add_workspace_argument

    actions = parser.add_subparsers(dest="gold_command", required=True, metavar="ACTION")
    draft = actions.add_parser("draft", help="a gold draft from questions or from documents, "
                                             "every case marked for review")
    add_workspace_argument(draft)
    source = draft.add_mutually_exclusive_group(required=True)
    source.add_argument("--questions", type=Path, metavar="Q",
                        help="the questions: a `ragspine batch` question file (.jsonl, .json, "
                             ".csv) or a plain list (.txt, one question a line), zh or en")
    source.add_argument("--from-documents", action="store_true",
                        help="questions written from each document's facts, in its language "
                             "and the other one, and out-of-scope abstentions")
    draft.add_argument("--out", type=Path, required=True, metavar="G",
                       help="the draft to write (an nl-answers-gold v2 file)")
    draft.add_argument("--force", action="store_true", help="replace --out if it exists")
    draft.add_argument("--route", choices=("ask", "narrative"), default="ask",
                       help="with --questions: the engine's ask route (default) or the route "
                            "pinned to the narrative channel")
    draft.add_argument("--per-document", type=positive_int, default=6, metavar="N",
                       help="with --from-documents: facts drafted per document (default 6)")
    draft.add_argument("--abstentions", type=positive_int, default=3, metavar="N",
                       help="with --from-documents: out-of-scope abstentions (default 3)")
    draft.add_argument("--seed", type=int, default=0,
                       help="with --from-documents: which facts and templates (default 0)")
    draft.add_argument("--engine-config", type=Path, default=None, metavar="FILE",
                       help="engine settings, TOML or JSON (as `answers` takes them)")
    draft.add_argument("--jobs", type=positive_int, default=1, metavar="N",
                       help="questions asked at once, in worker processes (default 1)")
    draft.add_argument("--no-cache", action="store_true",
                       help="ask the engine every question again (default: reuse the answers "
                            "the outcome cache holds for these questions, workspace and model)")
    add_model_arguments(draft)
    from ragspine_eval.cli import gold_review

    gold_review.add_actions(actions)


def run(args: argparse.Namespace) -> int:
    if args.gold_command != "draft":
        from ragspine_eval.cli import gold_review

        return gold_review.run(args)
    return run_draft(args)


def run_draft(args: argparse.Namespace) -> int:
    from ragspine_eval.cli.model_options import model_run
    from ragspine_eval.drafting.draft_file import check_out, draft_document, write_draft
    from ragspine_eval.drafting.pages import read_pages
    from ragspine_eval.drafting.questions import pages_count
    from ragspine_eval.engines.engine_config import load_engine_config

    model = model_run(args)  # a cassette's header contradicted: exit 2 before anything runs
    inputs = [args.kb, *([args.questions] if args.questions else [])]
    check_out(args.out, force=args.force, inputs=inputs)
    pages = read_pages(args.kb)
    if not pages.pages:
        raise BadInput(f"{args.kb}: no document of this workspace has pages (its chunks name "
                       f"slides or nothing), so no claim can name a page; build it with "
                       f"`ragspine-eval kb build`, which keeps pages in the locators")
    if args.questions is not None:
        from ragspine_eval.drafting.questions import draft_from_questions

        cases, skipped = draft_from_questions(
            args.kb, args.questions, route=args.route, model=model,
            config=load_engine_config(args.engine_config), pages=pages,
            how={"jobs": args.jobs, "cache": False if args.no_cache else None})
    else:
        from ragspine_eval.drafting.documents import draft_from_documents

        cases, skipped = draft_from_documents(pages, per_document=args.per_document,
                                              abstentions=args.abstentions, seed=args.seed,
                                              model=model)
    for skip in skipped:
        where = f" (line {skip.line})" if skip.line else ""
        print(f"not drafted: {skip.case_id}{where}: {skip.reason}")
    if not cases:
        raise BadInput(f"no case could be drafted ({len(skipped)} not drafted, reasons above); "
                       f"nothing written")
    write_draft(args.out, draft_document(cases, pages_count(pages)), force=args.force)
    kinds = {c: sum(1 for x in cases if x.case_class == c) for c in ("positive", "abstain")}
    print(f"draft: {args.out}: {len(cases)} cases ({kinds['positive']} answered, "
          f"{kinds['abstain']} abstentions), every one marked for review; "
          f"{len(skipped)} questions not drafted")
    print(f"review it: ragspine-eval gold review html --draft {args.out} --kb {args.kb} "
          f"--out review.html (or notebooks/review.ipynb)")
    return EXIT_OK
