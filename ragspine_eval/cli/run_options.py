"""The flags `retrieval` and `answers` share, written once: the workspace (--kb), how its
questions run (--jobs, --executor, --scheduler, --case-timeout, --no-cache, folded into
pipeline.spec.RunHow's keyword arguments; none of them changes a report), and where the run's
outputs go (--report, --junit, --summary-md, --no-store). No logic beyond."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_workspace_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kb", type=Path, required=True, metavar="W",
                        help="the engine workspace (a folder made by `ragspine ingest` or "
                             "`ragspine-eval kb build`)")


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--report", type=Path, metavar="FILE", help="write the JSON report here")
    parser.add_argument("--junit", type=Path, metavar="PATH", help="write JUnit XML here")
    parser.add_argument("--summary-md", type=Path, metavar="PATH",
                        help="write a short Markdown summary here")
    parser.add_argument("--no-store", action="store_true",
                        help="do not keep this run in the run store")


def add_run_arguments(parser: argparse.ArgumentParser, extra_cache_help: str = "") -> None:
    from ragspine_eval.cli.common import positive_float
    from ragspine_eval.cli.qa import jobs_value
    from ragspine_eval.execution.jobs import AUTO
    from ragspine_eval.execution.runner import DEFAULT_CASE_TIMEOUT

    parser.add_argument("--jobs", type=jobs_value, default=AUTO, metavar="N|auto",
                        help="questions asked at once, in worker processes; the report is the "
                             "same whatever N is (default: auto, the usable cores when enough "
                             "questions are to reach the engine, else 1)")
    parser.add_argument("--executor", choices=("local", "dask"), default="local",
                        help="local: worker processes of this machine (--jobs); dask: a Dask "
                             "LocalCluster of --jobs workers, or the cluster at --scheduler "
                             "(default: local)")
    parser.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                        help="with --executor dask: an existing Dask scheduler to run on")
    parser.add_argument("--case-timeout", type=positive_float, default=DEFAULT_CASE_TIMEOUT,
                        metavar="SECONDS",
                        help=f"time limit of one question, as qa's; a question past it is "
                             f"recorded as an engine error (default: {DEFAULT_CASE_TIMEOUT:g})")
    parser.add_argument("--no-cache", action="store_true",
                        help="ask the engine every question, reusing no stored answer (the "
                             "outcome cache is on by default: a killed run resumes from it"
                             f"{extra_cache_help})")


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The flags as run options (pipeline.spec.RunHow's fields); --scheduler without a Dask
    executor is bad input."""
    from ragspine_eval.cli.common import BadInput

    if args.scheduler and args.executor != "dask":
        raise BadInput("--scheduler names a Dask cluster: add --executor dask")
    return {"jobs": args.jobs, "executor": args.executor, "scheduler": args.scheduler,
            "case_timeout": args.case_timeout, "cache": False if args.no_cache else None}


def run_how(args: argparse.Namespace, progress: Any = None, repeat: int = 1) -> Any:
    """The flags as a pipeline.spec.RunHow (checked when made)."""
    from ragspine_eval.pipeline.spec import RunHow

    return RunHow(progress=progress, repeat=repeat, **run_options(args))
