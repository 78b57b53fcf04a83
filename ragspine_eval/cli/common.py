"""What every subcommand shares: exit codes, the gate flags, flag types, progress.

Exit codes, the same for every subcommand: 0 pass (or a baseline bootstrapped or recorded),
1 a regression or a refused baseline update, 2 bad input (one clear line, no traceback, and no
file left changed), 3 a bug of ragspine-eval itself (never mistaken for a verdict), 130
interrupted, 141 the reader of the output went away (`| head`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragspine_eval import paths
from ragspine_eval.errors import RagspineEvalError

EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT, EXIT_BUG = 0, 1, 2, 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a tool whose reader left


class BadInput(RagspineEvalError):
    """Flags that contradict each other; the message is the one line the user sees."""


def shown(path: Path) -> str:
    """A default path as a user reads it in --help: relative to the project root."""
    try:
        return str(path.relative_to(paths.PROJECT_ROOT))
    except ValueError:
        return str(path)


def add_gate_arguments(parser: argparse.ArgumentParser, default_baseline: Path) -> None:
    parser.add_argument("--baseline", type=Path, default=default_baseline,
                        help=f"baseline file (default: {shown(default_baseline)})")
    parser.add_argument("--update-baseline", action="store_true",
                        help="record this run in the baseline; only ever raises it")
    parser.add_argument("--ratchet", action="store_true",
                        help="after a passing run that improved, raise the baseline automatically")
    parser.add_argument("--allow-regression", action="store_true",
                        help="with --update-baseline: record a reviewed lowering (needs --reason)")
    parser.add_argument("--accept-golden-change", action="store_true",
                        help="record removed or edited golden cases (needs --reason)")
    parser.add_argument("--reason", help="why the baseline moves; kept in the history file")
    parser.add_argument("--require-baseline", action="store_true",
                        help="fail (exit 1) when the baseline has no entry for this run instead "
                             "of recording one; for CI, where a recorded entry is never committed")


def gate_options(args: argparse.Namespace):  # noqa: ANN201 - a GateOptions
    """The gate flags as GateOptions (checked by the gated run before it runs)."""
    from ragspine_eval.ratchet import GateOptions

    return GateOptions(update=args.update_baseline, ratchet=args.ratchet,
                       allow_regression=args.allow_regression, reason=args.reason,
                       accept_golden_change=args.accept_golden_change,
                       require_baseline=args.require_baseline)


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def progress_bar(label: str) -> Callable[[int, int, int], None] | None:
    """A progress bar on a terminal; silent in CI logs and pipes."""
    if not sys.stderr.isatty():
        return None
    from ragspine_eval.outputs.console import progress_line

    def tick(done: int, total: int, errors: int) -> None:
        print(f"\r{progress_line(label, done, total, errors)}", end="", file=sys.stderr, flush=True)

    return tick


def finish(gated: Any) -> int:
    """A gated run's exit code (gated/harness.py `GatedRun`): for a run that did not finish
    (Ctrl-C, or its model budget spent), whose outputs were written, its one stderr line and
    exit 130; otherwise the run's own code."""
    if gated.status == "complete":
        return gated.exit_code
    print(interrupted_line(gated.report, [path for _label, path in gated.written],
                           gated.harness.unit), file=sys.stderr)
    return EXIT_INTERRUPTED


def interrupted_line(report: Any, written: list[Path], unit: str = "cases") -> str:
    """The one stderr line of a run that did not finish, whose outputs were written."""
    done = report.finished
    files = [str(path) for path in written]
    wrote = (f"wrote {', '.join(files)} with them and the other {report.n_cases - done} "
             f"as not run" if files else "no report was asked for (--report)")
    what = f"stopped ({report.stopped_by})" if report.stopped_by else "interrupted (Ctrl-C)"
    return (f"{what} after {done} of {report.n_cases} {unit}: {wrote}; the baseline was not "
            f"changed")  # how to resume is the report's to say (interrupted_sentence)
