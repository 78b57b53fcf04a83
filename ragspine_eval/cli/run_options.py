"""The flags that say how a workspace's questions run, shared by `retrieval` and `answers`:
--jobs, --executor, --scheduler, --case-timeout, --no-cache, folded into pipeline.spec.RunHow's
keyword arguments (no logic beyond). None of them changes a report."""

from __future__ import annotations

import argparse
from typing import Any


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
