"""`ragspine-eval extraction`: flags onto the extraction harness (extraction/harness.py) and
`gated.run`.

Exit codes as every subcommand: 0 pass (or a baseline bootstrapped or recorded), 1 a
regression or a refused update, 2 bad input (one line, nothing written: flags, output paths and
every input are checked before anything is written).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ragspine_eval import paths
from ragspine_eval.cli.common import (
    BadInput,
    add_gate_arguments,
    gate_options,
    positive_float,
    positive_int,
)

HELP = "score office-document extraction per channel and gate on the baseline"
# the keys of fixtures.DOCUMENT_SETS, spelled out so that building the parser does not import
# the document writers (tests/cli/test_extraction.py keeps the two equal)
FIXTURE_SETS = ("xlsx", "pptx", "pdf")
DOC_CHOICES = (*FIXTURE_SETS, "all")


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
    parser.add_argument("--manifest", type=Path, metavar="FILE",
                        help="score many documents of your own in one run: a JSON "
                             "{\"documents\": [{\"document\", \"ground_truth\"}, ...], "
                             "\"baseline\": FILE}, one baseline entry per document")
    parser.add_argument("--report", type=Path, metavar="FILE",
                        help="write the JSON report here (default: not written)")
    parser.add_argument("--save-facts", type=Path, metavar="FILE",
                        help="write the engine's facts as JSONL (what --facts reads)")
    parser.add_argument("--junit", type=Path, metavar="PATH",
                        help="write JUnit XML here: one testcase per cell and channel, grouped "
                             "per channel, plus one per ground-truth cell for coverage")
    parser.add_argument("--summary-md", type=Path, metavar="PATH",
                        help="write a short Markdown summary here (for a CI step summary)")
    parser.add_argument("--no-store", action="store_true",
                        help="do not keep this run in the run store (every run is kept by "
                             "default, see `ragspine-eval runs`)")
    # the bounds of the worker that reads a document of one's own (doc_worker.DocLimits);
    # the defaults are spelled out so that building the parser imports nothing
    parser.add_argument("--doc-memory-mb", type=positive_int, default=1024, metavar="MIB",
                        help="address-space limit of the worker process in which the engine "
                             "reads each document of your own (default 1024)")
    parser.add_argument("--doc-timeout", type=positive_float, default=120.0, metavar="SECONDS",
                        help="wall-time limit of that worker per document (default 120)")
    parser.add_argument("--doc-max-cells", type=positive_int, default=2_000_000, metavar="N",
                        help="refuse an xlsx sheet whose used range (or conditional-format "
                             "range) the engine would walk past N positions (default 2000000)")
    add_gate_arguments(parser, paths.EXTRACTION_BASELINE)
    # None = "not given": the fixtures' baseline by default, no gate for a document of your own
    parser.set_defaults(baseline=None)


def run(args: argparse.Namespace) -> int:
    from ragspine_eval import gated
    from ragspine_eval.cli.common import finish
    from ragspine_eval.extraction.doc_worker import DocLimits
    from ragspine_eval.extraction.harness import ExtractionHarness, ExtractionWhat

    targets, baseline_path = _targets(args)
    what = ExtractionWhat(tuple(targets), args.facts, baseline_path,
                          DocLimits(args.doc_memory_mb, args.doc_timeout, args.doc_max_cells))
    run = gated.run(ExtractionHarness(), what, None,
                    gated.GatedOutputs(args.report, args.junit, args.summary_md, args.save_facts),
                    gated.Gate(gate_options(args),
                               lambda key: _record_command(args, key, baseline_path),
                               not args.no_store, print))
    return finish(run)


def _targets(args: argparse.Namespace) -> tuple[list, Path | None]:
    """The document sets to score and the baseline file to gate on (None: no gate). A document
    of your own is keyed by its file name (Target.own), also when only its facts are scored."""
    from ragspine_eval.extraction.run import Target, fixture_targets, sets_named_by

    if args.manifest:
        from ragspine_eval.extraction.manifest import load_manifest

        clash = [f for f, v in (("--doc", args.doc), ("--facts", args.facts),
                                ("--ground-truth", args.ground_truth), ("--docs", args.docs))
                 if v]
        if clash:
            raise BadInput(f"--manifest names each document and its ground truth; drop "
                           f"{', '.join(clash)}")
        targets, stated = load_manifest(args.manifest)
        return targets, args.baseline or stated
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
        baseline = args.baseline or paths.EXTRACTION_BASELINE
        if args.facts and not args.docs:
            named = sets_named_by(args.facts)  # only the sets the facts are of
            if named:
                return [t for k in named for t in fixture_targets(k)], baseline
        return fixture_targets(args.docs or "all"), baseline
    if args.require_baseline and args.baseline is None:
        raise BadInput("--require-baseline gates on a baseline: give --baseline FILE (a document "
                       "of your own is not gated on the fixtures' baseline)")
    if not (args.doc or args.facts):
        raise BadInput("--ground-truth scores --doc FILE (through the engine) or --facts FILE; "
                       "give one of them")
    if args.docs:
        raise BadInput("--docs picks fixture sets; with --ground-truth the set is your own")
    return [Target.own(args.doc, args.ground_truth)], args.baseline


def _record_command(args: argparse.Namespace, key: str, baseline_path: Path) -> str:
    parts = ["ragspine-eval extraction"]
    if args.manifest:
        parts += [f"--manifest {args.manifest}", f"--baseline {baseline_path}"]
    elif args.ground_truth:
        parts += [f"--doc {args.doc}" if args.doc else f"--facts {args.facts}",
                  f"--ground-truth {args.ground_truth}", f"--baseline {baseline_path}"]
    else:
        parts.append(f"--docs {key}")
        if args.facts:
            parts.append(f"--facts {args.facts}")
        if args.baseline:
            parts.append(f"--baseline {baseline_path}")
    return " ".join(parts + ["--update-baseline"])


