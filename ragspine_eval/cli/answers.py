"""`ragspine-eval answers`: flags onto the answer harness (answers/harness.py) and `gated.run`.

    ragspine-eval answers --kb W --golden GOLD [--route ask|narrative|both] [--lang en|zh]
                          [--repeat N] [--engine-config FILE] [--jobs N|auto]
                          [--executor local|dask] [--case-timeout S] [--no-cache]
                          [--provider P --model M --base-url URL]
                          [--cassette PATH --cassette-mode record|replay|live]

Every question of an nl-answers-gold v1/v2 file asked over the workspace, on the engine's ask
route and pinned to the narrative channel, judged claim by claim as the engine's own nl-gold
judge judges (content, page, fragment; abstention; forbidden numbers); claim content, claim
citation, abstention, question pass and the forbidden-number count gated apart under the ratchet
per workspace, route, engine configuration and model (the model flags as `qa` takes them:
docs/models.md). The questions run on the run path QA and retrieval runs run on
(ragspine_eval/pipeline/): worker processes (`--jobs`, auto by default) or Dask, a time limit
per question, progress, each answer kept in the outcome cache as it comes, so a run killed
part-way resumes where it was; the report is the same whatever they are. Exit codes as every
subcommand: 0 pass, 1 a regression or engine errors, 2 bad input, 3 a bug.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from ragspine_eval import paths
from ragspine_eval.cli.common import add_gate_arguments, gate_options, positive_int, shown
from ragspine_eval.cli.run_options import (
    add_output_arguments,
    add_run_arguments,
    add_workspace_argument,
    run_how,
)

HELP = "answers over an engine workspace, judged claim by claim against an nl-answers-gold file"
ROUTE_CHOICES = {"both": ("ask", "narrative"), "ask": ("ask",), "narrative": ("narrative",)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_workspace_argument(parser)
    parser.add_argument("--golden", type=Path, required=True, metavar="GOLD",
                        help="an nl-answers-gold v1/v2 file (required claims with their pages, "
                             "abstentions, forbidden numbers)")
    parser.add_argument("--route", choices=tuple(ROUTE_CHOICES), default="both",
                        help="the engine's ask route, the route pinned to the narrative "
                             "channel, or both (default)")
    parser.add_argument("--lang", choices=("en", "zh"), action="append", default=None,
                        help="ask only this language's questions (repeatable; default: all)")
    parser.add_argument("--repeat", type=positive_int, default=1, metavar="N",
                        help="ask every question N times: per-question pass rates, mean and "
                             "spread, the unstable questions (the gates use the first run; default 1)")
    parser.add_argument("--engine-config", type=Path, default=None, metavar="FILE",
                        help="engine settings, TOML or JSON: profile, contextual_index, "
                             "page_parent, graph, query_translation, reranker, name")
    parser.add_argument("--allow-gold-errors", action="store_true",
                        help="ask the cases the workspace cannot answer (a document it lacks, a "
                             "page past its document's pages) as gold errors, outside every "
                             "rate, instead of stopping before the run (exit 2)")
    add_run_arguments(parser, "; --repeat N never uses it")
    add_output_arguments(parser)
    add_gate_arguments(parser, paths.ANSWERS_BASELINE)
    baseline_beside_gold(parser, "answers")
    from ragspine_eval.cli.model_options import add_model_arguments

    add_model_arguments(parser)


def baseline_beside_gold(parser: argparse.ArgumentParser, harness: str) -> None:
    """`--baseline` defaulting to the run's own file (gated/own_workspace.py `default_baseline`), and
    `--name`, the name its keys start with."""
    for action in parser._actions:
        if "--baseline" in action.option_strings:
            action.default = None
            action.help = (f"baseline file (default: {shown(getattr(paths, f'{harness.upper()}_BASELINE'))} "
                           f"for a workspace inside the project; <gold stem>.{harness}_baseline.json "
                           f"beside the gold file for one outside it)")
    parser.add_argument("--name", default=None,
                        help="the name the run's baseline keys start with (default: the gold "
                             "file's stem, with the workspace's fingerprint, for a workspace "
                             "outside the project; its folder name inside it)")


def run(args: argparse.Namespace) -> int:
    from ragspine_eval import gated
    from ragspine_eval.answers.harness import AnswersHarness, AnswersWhat, answers_run
    from ragspine_eval.cli import common
    from ragspine_eval.cli.model_options import model_run
    from ragspine_eval.engines.engine_config import load_engine_config

    what = AnswersWhat(answers_run(args.kb, args.golden, ROUTE_CHOICES[args.route],
                                   load_engine_config(args.engine_config), model_run(args)),
                       tuple(args.lang) if args.lang else None, args.baseline, args.name,
                       args.allow_gold_errors)
    how = run_how(args, common.progress_bar("answers"), args.repeat)
    run = gated.run(AnswersHarness(), what, how,
                    gated.GatedOutputs(args.report, args.junit, args.summary_md),
                    gated.Gate(gate_options(args), record_command(args), not args.no_store,
                               print))
    return common.finish(run)


def record_command(args: argparse.Namespace) -> str:
    """The command that records this run in its baseline."""
    parts = ["ragspine-eval answers", f"--kb {shlex.quote(str(args.kb))}",
             f"--golden {shlex.quote(str(args.golden))}"]
    if args.route != "both":
        parts.append(f"--route {args.route}")
    for lang in args.lang or ():
        parts.append(f"--lang {lang}")
    if args.engine_config is not None:
        parts.append(f"--engine-config {shlex.quote(str(args.engine_config))}")
    if args.allow_gold_errors:
        parts.append("--allow-gold-errors")
    from ragspine_eval.cli.model_options import model_flags

    parts += model_flags(args)
    if args.baseline is not None:
        parts.append(f"--baseline {shlex.quote(str(args.baseline))}")
    if args.name is not None:
        parts.append(f"--name {shlex.quote(args.name)}")
    return " ".join(parts + ["--update-baseline"])
