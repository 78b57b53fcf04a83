"""`ragspine-eval retrieval`: flags onto the retrieval harness (retrieval_only/harness.py) and
`gated.run`, its lines printed.

    ragspine-eval retrieval --kb W --golden Q [--top-k K] [--engine-config FILE]
                            [--jobs N|auto] [--executor local|dask] [--no-cache]
                            [--case-timeout SECONDS]

Per question the rank and page rank of the first relevant hit under the question file's rules,
recall@k, page_recall@k, MRR and page MRR, gated under the ratchet per workspace, top_k and
engine configuration. The questions run on the run path QA runs on (ragspine_eval/pipeline/):
worker processes (`--jobs`, auto by default) or Dask, each answer kept in the outcome cache as
it comes, so a run killed part-way resumes where it was; the report is the same whatever they
are. Exit codes as every subcommand: 0 pass, 1 a regression or engine errors,
2 bad input, 3 a bug.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from ragspine_eval import paths
from ragspine_eval.cli.common import add_gate_arguments, gate_options, positive_int
from ragspine_eval.cli.run_options import (
    add_output_arguments,
    add_run_arguments,
    add_workspace_argument,
    run_how,
)

HELP = "retrieval only over an engine workspace: rank of the first relevant hit per question"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_workspace_argument(parser)
    parser.add_argument("--golden", type=Path, required=True, metavar="Q",
                        help="a question file of `ragspine batch` (.jsonl, .json, .csv, .txt) "
                             "or an nl-answers-gold v1/v2 file")
    parser.add_argument("--top-k", type=top_k_value, default=None, metavar="K",
                        help="passages asked per question (default: the engine config's "
                             "top_k, else 10)")
    parser.add_argument("--engine-config", type=Path, default=None, metavar="FILE",
                        help="engine settings, TOML or JSON: profile, contextual_index, "
                             "page_parent, graph, query_translation, reranker, top_k, name")
    add_run_arguments(parser)
    add_output_arguments(parser)
    add_gate_arguments(parser, paths.RETRIEVAL_BASELINE)
    from ragspine_eval.cli.answers import baseline_beside_gold

    baseline_beside_gold(parser, "retrieval")
    from ragspine_eval.cli.model_options import add_model_arguments

    add_model_arguments(parser)


def top_k_value(text: str) -> int:
    """--top-k: a whole number from 1 to engine_config.MAX_TOP_K."""
    from ragspine_eval.engines.engine_config import MAX_TOP_K

    value = positive_int(text)
    if value > MAX_TOP_K:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_TOP_K:,}, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    from ragspine_eval import gated
    from ragspine_eval.cli import common
    from ragspine_eval.cli.model_options import model_run
    from ragspine_eval.engines.engine_config import load_engine_config
    from ragspine_eval.pipeline.spec import RunWhat
    from ragspine_eval.retrieval_only.harness import RetrievalHarness, RetrievalWhat

    what = RetrievalWhat(RunWhat(Path(args.golden), Path(args.kb), "ragspine", None, None,
                                 load_engine_config(args.engine_config), args.top_k,
                                 model_run(args)), args.baseline, args.name)
    how = run_how(args, common.progress_bar("retrieval"))
    run = gated.run(RetrievalHarness(), what, how,
                    gated.GatedOutputs(args.report, args.junit, args.summary_md),
                    gated.Gate(gate_options(args), record_command(args), not args.no_store,
                               print))
    return common.finish(run)


def record_command(args: argparse.Namespace) -> str:
    """The command that records this run in its baseline."""
    parts = ["ragspine-eval retrieval", f"--kb {shlex.quote(str(args.kb))}",
             f"--golden {shlex.quote(str(args.golden))}"]
    if args.top_k is not None:
        parts.append(f"--top-k {args.top_k}")
    if args.engine_config is not None:
        parts.append(f"--engine-config {shlex.quote(str(args.engine_config))}")
    from ragspine_eval.cli.model_options import model_flags

    parts += model_flags(args)
    if args.baseline is not None:
        parts.append(f"--baseline {shlex.quote(str(args.baseline))}")
    if args.name is not None:
        parts.append(f"--name {shlex.quote(args.name)}")
    return " ".join(parts + ["--update-baseline"])
