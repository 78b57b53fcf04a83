"""`ragspine-eval`: the parser, one subcommand per module of this package, and the exit codes.

Each subcommand module has `HELP`, `add_arguments(parser)` and `run(args) -> exit code`; a new
subcommand is a new module listed in `SUBCOMMANDS`. `main` turns what escapes a subcommand into
an exit code once (see common.py): a `RagspineEvalError` is bad input (exit 2, one line), and so
is a MemoryError (every reader bounds what an input sizes, so running out of memory means an
input too large for this machine); any other exception is a bug of ragspine-eval (exit 3, the
traceback kept in a file), never exit 1, which means a regression. What a subcommand prints
reaches the terminal through `outputs.escape.EscapedStream`: no raw control character.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import tempfile
import traceback
from collections.abc import Sequence
from importlib import import_module
from typing import Any, NoReturn

from ragspine_eval.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_BUG,
    EXIT_INTERRUPTED,
)
from ragspine_eval.errors import RagspineEvalError

SUBCOMMANDS = ("qa", "extraction", "retrieval", "answers", "kb", "truth", "golden", "gold", "diff",
               "judge",
               "notebooks", "serve", "fixtures", "cache", "runs")

DESCRIPTION = """\
Score the RAGSpine engine against version-controlled golden sets and fail on any regression.

  ragspine-eval qa --mode agent             QA: answers, citations, refusals, groundedness
  ragspine-eval extraction --docs all       extraction: values, colours, merged headers
  ragspine-eval retrieval --kb W --golden Q retrieval only: rank of the first relevant hit
  ragspine-eval answers --kb W --golden G   answers on your documents, claim by claim
  ragspine-eval kb build DOCS --out W       a workspace of your own documents, by the engine
  ragspine-eval golden FILE                 check a golden set before you commit it
  ragspine-eval gold draft --kb W --questions Q --out G   a gold draft, to review page by page
  ragspine-eval diff OLD.json NEW.json      what changed between two runs
  ragspine-eval runs                        the stored runs; diff @tool~1 @tool compares two
  ragspine-eval notebooks --out out/        the HTML reports

Exit codes: 0 pass, 1 a regression, 2 bad input (nothing changed), 3 a bug of ragspine-eval.
Run `ragspine-eval COMMAND --help` for a command's flags."""


class _Parser(argparse.ArgumentParser):
    """argparse with long options matched whole (`--mod` is not `--mode`) and a mistyped flag
    answered with this subcommand's usage and the closest flag it has."""

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def unknown(self, extras: list[str]) -> NoReturn:
        flags = [s for a in self._actions for s in a.option_strings if s.startswith("--")]
        hints = []
        for arg in extras:
            if arg.startswith("--"):
                close = difflib.get_close_matches(arg.split("=", 1)[0], flags, n=1, cutoff=0.6)
                if close:
                    hints.append(f"did you mean {close[0]}?")
        self.error(f"unrecognized arguments: {' '.join(extras)}"
                   + (f"; {' '.join(hints)}" if hints else ""))


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    from ragspine_eval import __version__

    try:
        engine = version("rag-spine")
    except PackageNotFoundError:
        engine = "not installed"
    return f"ragspine-eval {__version__} (engine rag-spine {engine})"


class _VersionAction(argparse._VersionAction):
    """--version, whose text (an installed-package lookup) is read only when it is asked for,
    not on every command (issue 33: a warm re-run spends nothing it does not use)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        self.version = _versions()
        super().__call__(parser, namespace, values, option_string)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ragspine-eval", description=DESCRIPTION,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=_VersionAction,
                        help="print the versions of ragspine-eval and of the engine, and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)
    for name in SUBCOMMANDS:
        module = import_module(f"ragspine_eval.cli.{name}")
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(run=module.run, parser=p)
    return parser


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:
        getattr(args, "parser", parser).unknown(extras)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    from ragspine_eval.outputs.escape import EscapedStream

    # text from inputs reaches the terminal only escaped, whichever line of a subcommand prints it
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = EscapedStream(out), EscapedStream(err, allow_cr=True)
    try:
        return _run(args)
    finally:
        sys.stdout, sys.stderr = out, err


def _run(args: argparse.Namespace) -> int:
    try:
        return args.run(args)
    except RagspineEvalError as exc:
        # one line whatever the input held: escaped for the terminal, cut to a readable length
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except MemoryError:
        # every reader bounds what an input sizes (docs/setup.md, "Hostile input"); an input
        # within those bounds can still exceed a small machine: say so, it is not a bug here
        print("error: out of memory: an input is larger than this machine can hold within the "
              "documented bounds (docs/setup.md, Hostile input); lower the bound that admits it "
              "or split the input; no file was left half-written", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as exc:
        from ragspine_eval.engines.base import NOT_RUN_STOPPED

        reason = getattr(exc, "reason", None)  # execution.runner.RunInterrupted: a run's stop
        what = (f"stopped after {exc.done} of {len(exc.outcomes)} cases "  # type: ignore[attr-defined]
                f"({reason.removeprefix(NOT_RUN_STOPPED)}); the same command again resumes "
                f"the run" if reason else "interrupted")
        print(f"{what}; no baseline or report was changed mid-write", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader of the output went away (`| head`): stop quietly, as other command-line
        # tools do, with the status of a process ended by SIGPIPE; files are written whole or
        # not at all, so none is left half-written
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except Exception as exc:  # noqa: BLE001 - the one place a bug becomes exit 3
        return _bug(exc)


def _one_line(text: str, limit: int = 2000) -> str:
    from ragspine_eval.outputs.escape import terminal

    text = terminal(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _bug(exc: BaseException) -> int:
    """A bug of ragspine-eval: one line saying so and where the traceback is, exit 3."""
    text = "".join(traceback.format_exception(exc))
    try:
        fd, path = tempfile.mkstemp(prefix="ragspine-eval-crash-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        where = f"the traceback is in {path}"
    except OSError:
        where = "the traceback follows"
        print(text, file=sys.stderr)
    print(f"error: this is a bug in ragspine-eval, not a verdict on the engine "
          f"({type(exc).__name__}: {_one_line(str(exc), 200)}); {where}; please report it",
          file=sys.stderr)
    return EXIT_BUG


if __name__ == "__main__":
    sys.exit(main())
