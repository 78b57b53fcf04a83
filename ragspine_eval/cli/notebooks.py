"""`ragspine-eval notebooks`: every notebook run with papermill and rendered to an HTML report."""

from __future__ import annotations

import argparse
from pathlib import Path

from ragspine_eval import paths
from ragspine_eval.cli.common import EXIT_OK, EXIT_REGRESSION

HELP = "run every notebook with papermill and render each to an HTML report"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=paths.OUT_DIR,
                        help="folder for the output notebooks, HTML reports and JSON reports "
                             "(default: out/)")
    own = parser.add_argument_group(
        "documents of your own", "render only the extraction report of these documents, not the "
                                 "main job's notebooks")
    own.add_argument("--doc", type=Path, metavar="FILE",
                     help="a document of your own (.xlsx, .pptx, .pdf), with --ground-truth")
    own.add_argument("--ground-truth", type=Path, metavar="FILE",
                     help="the ground truth of --doc, in the fixtures' format")
    own.add_argument("--manifest", type=Path, metavar="FILE",
                     help="many documents of your own, as `ragspine-eval extraction --manifest` "
                          "reads them: one report with a banner per document")
    own.add_argument("--baseline", type=Path, metavar="FILE",
                     help="the baseline to compare with (default: the manifest's; none for --doc)")
    own.add_argument("--require-baseline", action="store_true",
                     help="a document without a baseline entry fails the run (CI)")
    parser.add_argument("--render", type=Path, metavar="OUTPUT.ipynb",
                        help="only render a notebook papermill has already run (e.g. CI's "
                             "compare against main) to OUTPUT.html beside it; runs nothing")


def run(args: argparse.Namespace) -> int:
    from ragspine_eval.cli.common import BadInput
    from ragspine_eval.workbench.rendering.notebooks import own_documents_plan, render_output, run_all

    if args.render:
        if args.doc or args.ground_truth or args.manifest or args.baseline or args.require_baseline:
            raise BadInput("--render renders one output notebook and runs nothing; drop --doc, "
                           "--ground-truth, --manifest, --baseline and --require-baseline")
        print(render_output(args.render))
        return EXIT_OK
    if args.manifest and (args.doc or args.ground_truth):
        raise BadInput("--manifest names each document and its ground truth; drop --doc and "
                       "--ground-truth")
    if bool(args.doc) != bool(args.ground_truth):
        raise BadInput("--doc and --ground-truth go together: the document and its ground truth")
    if (args.baseline or args.require_baseline) and not (args.doc or args.manifest):
        raise BadInput("--baseline and --require-baseline are for --doc or --manifest; the main "
                       "job's notebooks use the committed baselines")
    own = own_documents_plan(args.out, doc=args.doc, ground_truth=args.ground_truth,
                             manifest=args.manifest, baseline=args.baseline,
                             require_baseline=args.require_baseline)

    def progress(i: int, n: int, run) -> None:  # noqa: ANN001 - a NotebookRun
        params = " ".join(f"{k}={v}" for k, v in run.parameters.items() if k != "report_path")
        print(f"[{i}/{n}] {run.name}: {run.notebook.name} {params}", flush=True)

    runs = run_all(args.out, progress, runs=own or None)
    print()
    width = max((len(r.name) for r in runs), default=0)
    for run in runs:
        verdict = "ok    " if run.passed else "FAILED"
        html = run.html if run.rendered else "(no HTML report: see the error below)"
        print(f"{verdict} {run.name:<{width}} {run.seconds:5.1f} s  {html}")
        if run.error:
            for line in run.error.splitlines():
                print(f"       {line}")
    failed = [r.name for r in runs if not r.passed]
    if failed:
        print(f"FAIL: {len(failed)} of {len(runs)} notebooks failed their gate: {', '.join(failed)}")
        return EXIT_REGRESSION
    print(f"PASS: {len(runs)} notebooks ran and rendered")
    return EXIT_OK
