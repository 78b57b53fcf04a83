"""`ragspine-eval golden`: validate a golden set, cross-check it with a knowledge base, count it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragspine_eval import paths
from ragspine_eval.cli.common import EXIT_BAD_INPUT, EXIT_OK, shown

HELP = "validate a golden set and print its counts by case_type and tag"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="golden set JSONL to validate")
    parser.add_argument("--kb", type=Path, default=paths.KB_DIR,
                        help="check every expected source and narrative_doc against this "
                             f"knowledge base (default: {shown(paths.KB_DIR)})")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")


def run(args: argparse.Namespace) -> int:
    from ragspine_eval.golden.cases import GoldenSetError, check_golden_set, summarize
    from ragspine_eval.qa.golden_check import check_against_kb

    golden = args.file
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
