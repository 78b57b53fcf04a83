"""`ragspine-eval qa`: flags onto the QA harness's what and how (qa/harness.py) and one
`gated.run`, its lines printed. A Ctrl-C while the cases run ends in one stderr line and exit
130 once the outputs asked for are written (cli/common.finish)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from ragspine_eval import paths
from ragspine_eval.execution.jobs import (
    AUTO,
    AUTO_SERIAL_BELOW,
    AUTO_SERIAL_BELOW_FORKED,
    parse_jobs,
)
from ragspine_eval.cli.common import (
    add_gate_arguments,
    gate_options,
    non_negative_int,
    positive_float,
    positive_int,
    shown,
)

HELP = "score the engine against the QA golden set and gate on the baseline"
DEFAULT_RETRIES = 2  # the HTTP engine's (engines.http.DEFAULT_RETRIES; a test keeps them equal)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ragspine_eval.engines import DEFAULT_ENGINE, EVAL_MODES

    parser.add_argument("--mode", choices=EVAL_MODES, default=None,
                        help="tool: the pipeline without an LLM; agent: answer_question with the "
                             "engine's MockProvider or the --provider model (default: tool; "
                             "agent for an http engine)")
    parser.add_argument("--engine", default=DEFAULT_ENGINE,
                        help="ragspine (in process), http://HOST:PORT (a running RAGSpine "
                             "service) or module:callable (any importable callable) "
                             f"(default: {DEFAULT_ENGINE})")
    parser.add_argument("--golden", type=Path, default=paths.QA_GOLDEN_SET,
                        help=f"golden set JSONL (default: {shown(paths.QA_GOLDEN_SET)})")
    parser.add_argument("--kb", type=Path, default=paths.KB_DIR,
                        help="knowledge base: a folder with facts.csv and narratives.jsonl, or "
                             "an engine workspace (`ragspine ingest`, `ragspine-eval kb build`) "
                             f"(default: {shown(paths.KB_DIR)})")
    parser.add_argument("--engine-config", type=Path, default=None, metavar="FILE",
                        help="engine settings, TOML or JSON (contextual_index, page_parent, "
                             "query_translation reach qa's in-process engine); the baseline "
                             "key gains +NAME, so a configuration is gated against its own "
                             "entry")
    parser.add_argument("--report", type=Path, metavar="FILE",
                        help="write the JSON report here (default: not written)")
    parser.add_argument("--junit", type=Path, metavar="PATH",
                        help="write JUnit XML here: one testcase per case and gate")
    parser.add_argument("--summary-md", type=Path, metavar="PATH",
                        help="write a short Markdown summary here (for a CI step summary)")
    _add_how_arguments(parser)
    parser.add_argument("--judge", default="lexical", metavar="NAME",
                        help="the faithfulness judge, one of `ragspine-eval judge list` "
                             "(default: lexical)")
    parser.add_argument("--judge-threshold", type=float, default=None, metavar="T",
                        help="the judge's lexical threshold, 0 to 1 (default: the judge's own)")
    parser.add_argument("--no-store", action="store_true",
                        help="do not keep this run in the run store (every run is kept by "
                             "default, see `ragspine-eval runs`)")
    add_gate_arguments(parser, paths.QA_BASELINE)
    from ragspine_eval.cli.model_options import add_model_arguments

    add_model_arguments(parser)


def _add_how_arguments(parser: argparse.ArgumentParser) -> None:
    """How the cases run (pipeline.spec.RunHow): jobs, limits, the executor, the cache,
    repeats; none of them changes the report (save --repeat and --fail-fast)."""
    from ragspine_eval.execution.runner import DEFAULT_CASE_TIMEOUT

    parser.add_argument("--jobs", type=jobs_value, default=AUTO, metavar="N|auto",
                        help="cases run at once: threads, or worker processes for the in-process "
                             "engine; the report is the same whatever N is (default: auto, the "
                             f"usable cores for the in-process engine when "
                             f"{AUTO_SERIAL_BELOW_FORKED:,} or more cases are to reach it, "
                             f"{AUTO_SERIAL_BELOW:,} where its workers are spawned, else 1)")
    parser.add_argument("--case-timeout", type=positive_float, default=DEFAULT_CASE_TIMEOUT,
                        metavar="SECONDS",
                        help=f"time limit of one case, retries included; a case past it is "
                             f"recorded as an error (default: {DEFAULT_CASE_TIMEOUT:g})")
    parser.add_argument("--retries", type=non_negative_int, default=None,
                        help="http engine: retries of a case after a connection error or a 5xx "
                             f"(never after a 4xx), with exponential backoff (default: "
                             f"{DEFAULT_RETRIES})")
    parser.add_argument("--fail-fast", action="store_true",
                        help="stop at the first engine error; later cases are recorded as not run")
    parser.add_argument("--executor", choices=("local", "dask"), default="local",
                        help="local: threads or worker processes of this machine (--jobs); "
                             "dask: a Dask LocalCluster of --jobs workers, or the cluster at "
                             "--scheduler (default: local)")
    parser.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                        help="with --executor dask: an existing Dask scheduler to run on "
                             "(default: a LocalCluster on this machine)")
    parser.add_argument("--no-cache", action="store_true",
                        help="call the engine for every case, reusing no stored outcome (the "
                             "outcome cache is on for the in-process engine by default)")
    parser.add_argument("--cache-key", metavar="TEXT",
                        help="http or callable engine: reuse stored outcomes, keyed by TEXT "
                             "naming what is deployed (e.g. a build id); without it they are "
                             "never cached")
    parser.add_argument("--repeat", type=positive_int, default=1, metavar="N",
                        help="run every case N times: a case whose verdict on a gate differs "
                             "between repeats is flaky, listed apart, counted as passing and "
                             "never a regression (one only when it fails in every repeat); "
                             "repeats never reuse the outcome cache (default: 1)")


def run(args: argparse.Namespace) -> int:
    from ragspine_eval import gated
    from ragspine_eval.cli.common import BadInput, finish
    from ragspine_eval.cli.model_options import model_run
    from ragspine_eval.engines import parse_engine
    from ragspine_eval.engines.engine_config import load_engine_config
    from ragspine_eval.judges import registry as judges
    from ragspine_eval.pipeline.spec import RunHow, RunWhat
    from ragspine_eval.qa.harness import QAHarness, QAWhat

    if args.scheduler and args.executor != "dask":
        raise BadInput("--scheduler names a Dask cluster: add --executor dask")
    judge = judges.get(args.judge, args.judge_threshold)  # a bad name: exit 2 before any run
    spec = parse_engine(args.engine, args.mode)  # parsed once: nothing below parses it again
    config = load_engine_config(args.engine_config)
    what = QAWhat(RunWhat(args.golden, args.kb, args.engine, args.mode, judge,
                          config if config.settings() else None, None, model_run(args), spec),
                  args.baseline)
    progress = _progress(args)
    how = RunHow(args.jobs, args.executor, args.scheduler, args.case_timeout, args.retries,
                 args.repeat, False if args.no_cache else None, args.cache_key, args.fail_fast,
                 progress)
    echo = _Echo(progress)
    outputs = gated.GatedOutputs(args.report, args.junit, args.summary_md)
    gate = gated.Gate(gate_options(args), lambda key: record_command(args, spec),
                      not args.no_store, echo)
    try:
        run = gated.run(QAHarness(), what, how, outputs, gate)
    finally:
        echo.end_progress()
    return finish(run)


def _progress(args: argparse.Namespace):  # noqa: ANN202 - a callback or None
    from ragspine_eval.cli import common

    return common.progress_bar(f"qa {args.mode}" if args.mode else "qa")


class _Echo:
    """print, after ending the progress bar's line once (so the table starts on a line of its
    own)."""

    def __init__(self, progress: Any) -> None:
        self._pending = progress is not None

    def end_progress(self) -> None:
        if self._pending:
            print(file=sys.stderr)
            self._pending = False

    def __call__(self, line: str) -> None:
        self.end_progress()
        print(line)


def record_command(args: argparse.Namespace, spec: Any) -> str:
    """The command that records this run in its baseline: the same mode, engine, golden set,
    knowledge base, baseline file and engine limits as this run (each given only where it is
    not the default), so that running it changes the baseline this run was compared with."""
    from ragspine_eval.cli.app import build_parser

    parts = ["ragspine-eval qa", f"--mode {spec.mode}"]
    if spec.kind != "ragspine":
        parts.append(f"--engine {shlex.quote(spec.name)}")
    if getattr(args, "engine_config", None) is not None:
        parts.append(f"--engine-config {shlex.quote(str(args.engine_config))}")
    from ragspine_eval.cli.model_options import model_flags

    parts += model_flags(args)
    for flag, given, default in (("--golden", args.golden, paths.QA_GOLDEN_SET),
                                 ("--kb", args.kb, paths.KB_DIR),
                                 ("--baseline", args.baseline, paths.QA_BASELINE)):
        if os.path.realpath(given) != os.path.realpath(default):
            parts.append(f"{flag} {shlex.quote(str(given))}")
    # how the engine is called: a slow service needs the same limits to answer again (the
    # defaults from this command's own parser when it has one: not every command built again)
    own = getattr(args, "parser", None)
    defaults = own.parse_args([]) if own is not None else build_parser().parse_args(["qa"])
    for flag, name in (("--case-timeout", "case_timeout"), ("--retries", "retries"),
                       ("--judge-threshold", "judge_threshold"), ("--repeat", "repeat")):
        if getattr(args, name) != getattr(defaults, name):
            parts.append(f"{flag} {getattr(args, name):g}")
    if args.judge != defaults.judge:  # the baseline records the judge it was measured with
        parts.insert(2, f"--judge {shlex.quote(args.judge)}")
    return " ".join(parts + ["--update-baseline"])


def jobs_value(text: str) -> int | str:
    """--jobs: a positive number or auto."""
    try:
        return parse_jobs(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be 1 or more, or auto; got {text!r}") from None
