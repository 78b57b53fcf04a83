"""The model flags every command that runs the engine's agent shares: --provider, --model,
--base-url, --cassette, --cassette-mode, --max-calls, --max-cost, --prices, folded into a
`models.ModelRun` (no logic beyond: models/options.py takes a replay's model from its
cassette's header when no --provider is given, hence --provider's default None)."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any


def add_model_arguments(parser: argparse.ArgumentParser, cassette: bool = True) -> None:
    from ragspine_eval.models.providers import ENV_API_BASE, ENV_MODEL, PROVIDERS
    from ragspine_eval.models.recorder import MODES

    group = parser.add_argument_group("the model (agent mode)")
    group.add_argument("--provider", choices=PROVIDERS, default=None,
                       help="the engine's provider the agent asks: mock (its deterministic "
                            "script, no network), anthropic, litellm (any OpenAI-compatible "
                            "endpoint) or claude-cli; keys are read from the environment only "
                            "(default: mock" + ("; a replay of --cassette: the one its "
                                                "header names)" if cassette else ")"))
    group.add_argument("--model", default=None, metavar="NAME",
                       help=f"the model (litellm: e.g. openai/gpt-4o-mini; default: "
                            f"{ENV_MODEL}, then the engine's default)")
    group.add_argument("--base-url", default=None, metavar="URL",
                       help=f"the provider's endpoint, a gateway or a local server (litellm "
                            f"default: {ENV_API_BASE}); credentials in it are dropped")
    if not cassette:
        return
    group.add_argument("--cassette", type=Path, default=None, metavar="PATH",
                       help="a cassette of the model's calls, one per line (record, replay); "
                            "replayed alone, it names the provider, model and base URL (a "
                            "flag that contradicts its header is exit 2)")
    group.add_argument("--cassette-mode", choices=MODES, default=None,
                       help="record: call the model for what the cassette lacks and keep it; "
                            "replay: never call out, a request not recorded is that case's "
                            "engine error naming what differs; live: call, keep nothing "
                            "(default: replay with --cassette, else live)")
    from ragspine_eval.cli.common import positive_float, positive_int

    group.add_argument("--max-calls", type=positive_int, default=None, metavar="N",
                       help="at most N paid model calls in this run (record, live): the run "
                            "stops before the next one, as an interrupted run (exit 130), and "
                            "the same command again resumes it (with --cassette-mode record, "
                            "paying for no call twice)")
    group.add_argument("--max-cost", type=positive_float, default=None, metavar="X",
                       help="stop the run, likewise, before its paid calls would cost more than "
                            "X in the --prices table's currency (checked before each call "
                            "against the spent cost plus the dearest call so far)")
    group.add_argument("--prices", type=Path, default=None, metavar="FILE",
                       help="a price table, TOML: [models.\"NAME\"] input and output per "
                            "million tokens (none is shipped); the run's cost per run and by "
                            "tag, and what a replay billed (nothing)")


def model_run(args: argparse.Namespace) -> Any:
    """The ModelRun the flags ask for (models.options; exit 2 on a bad one)."""
    from ragspine_eval.models.options import model_run as from_options

    return from_options(args.provider, args.model, args.base_url, args.cassette,
                        args.cassette_mode, getattr(args, "prices", None),
                        getattr(args, "max_calls", None), getattr(args, "max_cost", None))


def provider_spec(args: argparse.Namespace) -> Any:
    """The ProviderSpec of --provider, --model, --base-url, checked (exit 2 naming what to set)."""
    from ragspine_eval.models.providers import ProviderSpec, check

    spec = ProviderSpec(args.provider or "mock", args.model, args.base_url).resolved()
    check(spec)
    return spec


def model_flags(args: argparse.Namespace) -> list[str]:
    """The flags that ask for the same model again (for a record command)."""
    parts = []
    if getattr(args, "provider", None) not in (None, "mock"):
        parts.append(f"--provider {args.provider}")
    for flag, value in (("--model", getattr(args, "model", None)),
                        ("--base-url", getattr(args, "base_url", None)),
                        ("--cassette", getattr(args, "cassette", None)),
                        ("--cassette-mode", getattr(args, "cassette_mode", None)),
                        ("--prices", getattr(args, "prices", None))):
        if value:
            parts.append(f"{flag} {shlex.quote(str(value))}")
    return parts
