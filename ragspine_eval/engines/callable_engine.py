"""Any importable Python callable as an engine: `--engine package.module:function`.

The callable takes one GoldenCase and returns a CaseOutcome, or a dict of CaseOutcome's fields:
a missing field takes CaseOutcome's default, an unknown field or a value of the wrong type is
that case's error, naming the field. An exception raised by the callable is that case's error
too; the run goes on. The attribute after the colon may be dotted (`module:Class.method`).

A callable that can be pickled runs in a worker process, so that os._exit, a crash or a hang
ends that case only (see CallableEngine). The module is imported from the Python path, then from the current directory, so a team's fork
or a wrapper script next to the golden set works without installing it. The baseline key is
"<mode>@<module>:<attribute>": the mode names what the callable does, and the callable never
compares against the in-process baseline.
"""

from __future__ import annotations

import importlib
import os
import pickle
import sys
from collections.abc import Callable
from typing import Any

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.engines.base import CaseOutcome, OutcomeError
from ragspine_eval.golden.cases import GoldenCase


class CallableSpecError(RagspineEvalError, ValueError):
    """A module:callable that cannot be imported or called; the message says what to fix."""


class CallableEngine:
    """Wraps `function(case) -> CaseOutcome | dict`.

    The callable runs in a worker process whenever it can be pickled (any module-level
    function or class attribute), even for one job: a callable that calls os._exit, crashes
    the interpreter or hangs then ends that case alone (the runner starts a fresh worker), never
    the run. One that cannot be pickled (a lambda handed in by a library caller) runs in
    threads, where sys.exit, a KeyboardInterrupt it raises, an exception or a hang are still
    that case's error."""

    isolated = True  # worker processes for one job too (runner.run_cases)

    def __init__(self, function: Callable[[GoldenCase], Any], spec: str, mode: str):
        self.function = function
        self.name, self.mode = spec, mode
        self.label = f"{mode}@{spec}"
        self.parallel = "processes" if _picklable(function) else "threads"

    def run_case(self, case: GoldenCase) -> CaseOutcome:
        result = self.function(case)  # an exception is the runner's to record as the case error
        if isinstance(result, CaseOutcome):
            return result
        try:
            return CaseOutcome.from_dict(result)
        except OutcomeError as exc:
            return CaseOutcome(error=f"OutcomeError: {self.name} returned {exc}")


def _picklable(function: Any) -> bool:
    try:
        pickle.dumps(function)
    except Exception:  # noqa: BLE001 - pickle raises several kinds; any means "no"
        return False
    return True


def load_callable(spec: str) -> Callable[[GoldenCase], Any]:
    """Import `module:attribute`; raise CallableSpecError naming what is missing."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise CallableSpecError(f"--engine {spec!r}: expected module:callable, "
                                f"e.g. my_fork.eval_adapter:answer")
    try:
        module = _import(module_name)
    except ImportError as exc:
        raise CallableSpecError(f"--engine {spec!r}: cannot import {module_name!r} ({exc}); "
                                f"is it on PYTHONPATH or in the current directory?") from None
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise CallableSpecError(f"--engine {spec!r}: {module_name} has no attribute "
                                    f"{attribute!r}") from None
    if not callable(target):
        raise CallableSpecError(f"--engine {spec!r}: {attribute} is a "
                                f"{type(target).__name__}, not a callable")
    return target


def _import(module_name: str) -> Any:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        top = module_name.split(".")[0]
        cwd = os.getcwd()
        if exc.name != top or cwd in sys.path:
            raise
        sys.path.insert(0, cwd)
        return importlib.import_module(module_name)
