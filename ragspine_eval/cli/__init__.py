"""The command line, `ragspine-eval`: one module per subcommand, each thin over the library.

app (the parser and the exit codes), common (what every subcommand shares), model_options and
run_options (the model flags and the run flags of the commands that take them), then one module
per subcommand: qa, extraction, golden, diff, notebooks, serve, fixtures, retrieval, answers, kb,
runs. A new subcommand is a
module with HELP, add_arguments(parser) and run(args), listed in app.SUBCOMMANDS.
"""

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The `ragspine-eval` entry point (see main.py)."""
    from ragspine_eval.cli.app import main as run

    return run(argv)
