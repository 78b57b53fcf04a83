"""`ragspine-eval extraction` and `ragspine-eval fixtures`: thin subcommands over the library.

cli.py registers them through `_module_commands()`. Exit codes as every subcommand: 0 pass (or a
baseline bootstrapped or recorded, or fixtures written), 1 a regression, a refused update or
fixtures that differ from the generator, 2 bad input (one line, nothing written: flags, output
paths and every input are checked before anything is written).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragspine_eval import paths
from ragspine_eval.cli import (
    EXIT_OK,
    EXIT_REGRESSION,
    BadInput,
    _gate_arguments,
    gate_options,
    write_outputs,
)

# the keys of fixtures.DOCUMENT_SETS, spelled out so that building the parser does not import
# the document writers (tests/test_cli_extraction.py keeps the two equal)
FIXTURE_SETS = ("xlsx", "pptx", "pdf")
DOC_CHOICES = (*FIXTURE_SETS, "all")


# --- extraction --------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--docs", choices=DOC_CHOICES, default=None,
                        help="which fixture document set to score (default: all)")
    parser.add_argument("--facts", type=Path, metavar="FILE",
                        help="score the facts in FILE (JSON or JSONL, from any extractor) "
                             "instead of running the engine")
    parser.add_argument("--doc", type=Path, metavar="FILE",
                        help="run the engine over your own .xlsx, .pptx or .pdf "
                             "(with --ground-truth)")
    parser.add_argument("--ground-truth", type=Path, metavar="FILE",
                        help="ground truth for --doc or --facts, in the fixtures' format; gated "
                             "only when --baseline is given")
    parser.add_argument("--report", type=Path, help="write the JSON report here")
    parser.add_argument("--save-facts", type=Path, metavar="FILE",
                        help="write the engine's facts as JSONL (what --facts reads)")
    parser.add_argument("--junit", type=Path, metavar="PATH",
                        help="write JUnit XML here: one testcase per cell and channel, grouped "
                             "per channel, plus one per ground-truth cell for coverage")
    parser.add_argument("--summary-md", type=Path, metavar="PATH",
                        help="write a short Markdown summary here (for a CI step summary)")
    _gate_arguments(parser, paths.EXTRACTION_BASELINE)
    # None = "not given": the fixtures' baseline by default, no gate for a document of your own
    parser.set_defaults(baseline=None)


def run(args: argparse.Namespace) -> int:
    from ragspine_eval import baseline as bl
    from ragspine_eval.console import extraction_table, mismatch_details
    from ragspine_eval.extraction_eval import make_baseline_entry
    from ragspine_eval.extraction_records import ExtractionInputError
    from ragspine_eval.extraction_run import score_engine, score_facts_file

    targets, baseline_path = _targets(args)
    saved: dict[str, list] = {}
    try:
        bl.check_outputs({"report": args.report, "facts": args.save_facts, "junit": args.junit,
                          "summary": args.summary_md}, baseline=baseline_path)
        options = ({t.key: gate_options(args, _record_command(args, t.key, baseline_path))
                    for t in targets} if baseline_path is not None else {})
        stored_all = bl.load_baselines(baseline_path) if baseline_path else {}
        for target in targets:
            if target.key in stored_all:
                bl.validate_entry(baseline_path, target.key, stored_all[target.key])
        if args.facts:
            result = score_facts_file(args.facts, targets)
        else:
            result = score_engine(targets, on_facts=saved.__setitem__)
    except (ExtractionInputError, bl.BaselineError, bl.OutputError) as exc:
        raise BadInput(str(exc)) from None

    for target in targets:
        print("\n".join(extraction_table(target.key, result.reports[target.key],
                                         stored_all.get(target.key), result.engine)))
    result.baselines = {t.key: (stored_all.get(t.key) or {}).get("metrics") for t in targets}
    if baseline_path is not None:
        result.with_baseline(baseline_path, stored_all)
    print("\n".join(result.provenance.lines()))
    exit_code = EXIT_OK
    verdicts = []
    gates: dict[str, bl.GateResult] = {}
    for target in targets:
        if baseline_path is None:
            verdicts.append(f"no baseline gate for {target.key} (a document of your own): pass "
                            f"--baseline FILE to keep one")
            continue
        try:
            gate = bl.run_gate(baseline_path, target.key,
                               make_baseline_entry(result.reports[target.key]),
                               options[target.key])
        except bl.BaselineError as exc:
            raise BadInput(str(exc)) from None
        for line in gate.lines:
            print(line)
        if gate.comparison is not None:
            for line in mismatch_details(result.reports[target.key],
                                         gate.comparison.case_regressions):
                print(line)
        result.gate[target.key] = {"status": gate.status, "exit_code": gate.exit_code,
                                   "lines": gate.lines}
        gates[target.key] = gate
        verdicts.append(f"{'PASS' if gate.exit_code == 0 else 'FAIL'}: extraction "
                        f"{target.key} gate {gate.status}")
        exit_code = max(exit_code, gate.exit_code)

    def save_facts(path: Path) -> str:
        lines = [json.dumps(f, ensure_ascii=False) for t in targets for f in saved.get(t.key, [])]
        bl.write_atomic(path, "".join(line + "\n" for line in lines))
        return f"{len(lines)} facts"

    write_outputs((args.report, "report", lambda p: bl.write_json_atomic(p, result.to_dict())),
                  (args.save_facts, "facts", save_facts))
    _write_ci_files(args, result, gates)
    print("\n".join(verdicts))
    return exit_code


def _write_ci_files(args: argparse.Namespace, result, gates: dict) -> None:  # noqa: ANN001
    """--junit and --summary-md of an extraction run."""
    from ragspine_eval.junit import write_extraction_junit
    from ragspine_eval.summary_md import write_extraction_summary

    comparisons = {key: gate.comparison for key, gate in gates.items()}
    write_outputs((args.junit, "junit", lambda p: write_extraction_junit(p, result, comparisons)),
                  (args.summary_md, "summary", lambda p: write_extraction_summary(p, result, gates)))


def _targets(args: argparse.Namespace) -> tuple[list, Path | None]:
    """The document sets to score and the baseline file to gate on (None: no gate). A document
    of your own is keyed by its file name (Target.own), also when only its facts are scored."""
    from ragspine_eval.extraction_records import ExtractionInputError
    from ragspine_eval.extraction_run import Target, fixture_targets

    if args.doc and args.facts:
        raise BadInput("--doc runs the engine over a document and --facts scores a facts file: "
                       "give one of them")
    if args.save_facts and args.facts:
        raise BadInput("--save-facts writes the engine's facts; with --facts the engine does "
                       "not run")
    if args.doc and not args.ground_truth:
        raise BadInput(f"--doc {args.doc} needs --ground-truth FILE (the fixtures' format: "
                       f"{{\"cells\": [{{\"sheet\", \"cell_ref\", \"value\", ...}}]}})")
    if args.ground_truth is None:
        return fixture_targets(args.docs or "all"), args.baseline or paths.EXTRACTION_BASELINE
    if not (args.doc or args.facts):
        raise BadInput("--ground-truth scores --doc FILE (through the engine) or --facts FILE; "
                       "give one of them")
    if args.docs:
        raise BadInput("--docs picks fixture sets; with --ground-truth the set is your own")
    try:
        return [Target.own(args.doc, args.ground_truth)], args.baseline
    except ExtractionInputError as exc:
        raise BadInput(str(exc)) from None


def _record_command(args: argparse.Namespace, key: str, baseline_path: Path) -> str:
    parts = ["ragspine-eval extraction"]
    if args.ground_truth:
        parts += [f"--doc {args.doc}" if args.doc else f"--facts {args.facts}",
                  f"--ground-truth {args.ground_truth}", f"--baseline {baseline_path}"]
    else:
        parts.append(f"--docs {key}")
        if args.facts:
            parts.append(f"--facts {args.facts}")
        if args.baseline:
            parts.append(f"--baseline {baseline_path}")
    return " ".join(parts + ["--update-baseline"])


# --- fixtures ----------------------------------------------------------------------------------


def add_fixtures_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=paths.FIXTURES_DIR,
                        help="folder to write into or check (default: data/fixtures)")
    parser.add_argument("--docs", choices=DOC_CHOICES, default="all",
                        help="which document set (default: all)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when a committed fixture or ground truth "
                             "differs from what the generator makes now")


def run_fixtures(args: argparse.Namespace) -> int:
    from ragspine_eval import fixtures

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
