"""`ragspine-eval golden`: validate a golden set, cross-check it with a knowledge base, count it.

A QA golden set (the project's JSONL) is checked against a KB folder (facts.csv,
narratives.jsonl); an engine question file (`ragspine batch`'s .jsonl/.json/.csv/.txt, or
nl-answers-gold v1/v2) against an engine workspace (`--kb W`): each document named exists, each
page is in range, each expected text is in some chunk (retrieval/question_check.py); for an
nl-answers-gold file, what `answers` checks before it asks anything (answers/gold_check.py):
each document a case names is in the workspace, each claim's page is a page of its document
(gold errors), and each claim's text is on its page (gold doubts, listed apart: a run reports
them and goes on). Every unknown key of an nl-answers-gold file is listed, with its line."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragspine_eval import paths
from ragspine_eval.cli.common import EXIT_BAD_INPUT, EXIT_OK, shown

HELP = "validate a golden set and print its counts by case_type and tag"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="golden set JSONL, or an engine question file "
                                                "(.jsonl, .json, .csv, .txt; nl-answers-gold)")
    parser.add_argument("--kb", type=Path, default=None,
                        help="check every expected source and narrative_doc against this "
                             f"knowledge base (default: {shown(paths.KB_DIR)}); for a question "
                             "file, the engine workspace its questions are asked of")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")


def run(args: argparse.Namespace) -> int:
    from ragspine_eval.golden.cases import GoldenSetError, check_golden_set, summarize
    from ragspine_eval.golden.question_files import is_question_file
    from ragspine_eval.qa.golden_check import check_against_kb
    from ragspine_eval.knowledge.workspace import is_workspace

    golden = args.file
    if is_question_file(golden) or (args.kb is not None and is_workspace(args.kb)):
        return run_question_file(args)
    args.kb = args.kb if args.kb is not None else paths.KB_DIR
    check = check_golden_set(golden)
    if not check.cases and not check.errors:
        raise GoldenSetError(golden, None, None, "the golden set holds no case; write one "
                                                 "JSON object a line (see docs/qa.md, Writing cases)")
    problems = check_against_kb(golden, args.kb, check.cases)
    invalid = [str(err) for err in check.errors]
    summary = summarize(case for _, case in check.cases)
    if args.json:
        print(json.dumps({**summary, "invalid_lines": invalid, "kb_problems": problems},
                         ensure_ascii=False, indent=2))
    else:
        print(f"{golden}: {summary['n_cases']} valid cases"
              + (f", {len(invalid)} invalid line(s)" if invalid else ""))
        print("by case_type: " + ", ".join(f"{k} {v}" for k, v in summary["by_case_type"].items()))
        for key, counts in summary["by_tag"].items():
            print(f"by {key}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        for problem in invalid:
            print(f"INVALID {problem}")
        for problem in problems:
            print(f"KB MISMATCH {problem}")
        if invalid or problems:
            stops = " (an invalid line stops every run that loads this file)" if invalid else ""
            print(f"{len(invalid) + len(problems)} problem(s): fix each and run this again{stops}")
    return EXIT_BAD_INPUT if invalid or problems else EXIT_OK


def run_question_file(args: argparse.Namespace) -> int:
    """A question file: every invalid line, every question its workspace cannot answer, counts."""
    from collections import Counter

    from ragspine_eval.golden.question_files import check_question_file
    from ragspine_eval.retrieval.question_check import check_against_workspace
    from ragspine_eval.knowledge.workspace import read_workspace

    cases, errors = check_question_file(args.file)
    problems: list[str] = []
    doubts: list[str] = []
    if args.kb is not None:
        ws = read_workspace(args.kb)
        problems = check_against_workspace(args.file, ws, cases)
        if not errors and _is_answers_gold(args.file):
            from ragspine_eval.answers.gold_check import check_gold
            from ragspine_eval.golden.nl_answers import load_answer_cases

            gold = check_gold(args.file, load_answer_cases(args.file), ws)
            problems += gold.problem_lines()
            doubts = gold.doubt_lines() + gold.versions
    invalid = [str(e) for e in errors]
    by_basis = Counter(c.basis for c in cases)
    by_tag: dict[str, Counter] = {}
    for case in cases:
        for key, value in case.tags.items():
            by_tag.setdefault(key, Counter())[value] += 1
    if args.json:
        print(json.dumps({"n_cases": len(cases), "by_basis": dict(by_basis),
                          "by_tag": {k: dict(v) for k, v in by_tag.items()},
                          "invalid_lines": invalid, "kb_problems": problems,
                          "gold_doubts": doubts},
                         ensure_ascii=False, indent=2))
    else:
        print(f"{args.file}: {len(cases)} valid questions"
              + (f", {len(invalid)} invalid line(s)" if invalid else ""))
        print("by basis: " + ", ".join(f"{k} {v}" for k, v in sorted(by_basis.items()))
              + ("" if not by_basis.get("none") else
                 " (none: neither pages nor an expected text, so not judged)"))
        for key, counts in sorted(by_tag.items()):
            print(f"by {key}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        if args.kb is None:
            print("not checked against a workspace (give --kb W)")
        for problem in invalid:
            print(f"INVALID {problem}")
        for problem in problems:
            print(f"KB MISMATCH {problem}")
        for doubt in doubts:
            print(f"GOLD DOUBT {doubt}")
        if doubts:
            print(f"{len(doubts)} gold doubt(s): a claim the workspace's text does not bear "
                  f"out; `answers` runs them and puts their failures at the stage \"gold\"")
        if invalid or problems:
            print(f"{len(invalid) + len(problems)} problem(s): fix each and run this again")
    return EXIT_BAD_INPUT if invalid or problems else EXIT_OK


def _is_answers_gold(path: Path) -> bool:
    """An nl-answers-gold file (its claims are also checked against the workspace's text)."""
    if path.suffix.lower() != ".json":
        return False
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return False
    return '"nl-answers-gold-v' in head
