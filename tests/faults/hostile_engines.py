"""Callables that misbehave as an engine might, for the fault tests (`--engine
faults.hostile_engines:NAME`). Each answers the first cases like tests/engine_doubles.echo and
misbehaves on the case whose id ends in "2"."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.golden.cases import GoldenCase


def _echo(case: GoldenCase) -> dict[str, Any]:
    return {"route": "structured", "answer": case.question}


def escape_in_error(case: GoldenCase) -> dict[str, Any]:
    if case.id.endswith("2"):
        raise RuntimeError("\x1b[2J\x1b]0;pwned\x07 screen cleared")
    surrogate = "\ud800" if case.id == "num-001" else ""  # unwritable: that case's error
    return _echo(case) | {"answer": f"a\x1b[31m red \x00 answer{surrogate}"}


def wrong_types_outcome(case: GoldenCase) -> CaseOutcome:
    if case.id.endswith("2"):
        return CaseOutcome(answer=None, sources=None, tool_statuses=5)  # type: ignore[arg-type]
    return CaseOutcome(**_echo(case))


def calls_sys_exit(case: GoldenCase) -> dict[str, Any]:
    if case.id.endswith("2"):
        sys.exit(3)
    return _echo(case)


def raises_keyboard_interrupt(case: GoldenCase) -> dict[str, Any]:
    if case.id.endswith("2"):
        raise KeyboardInterrupt
    return _echo(case)


def calls_os_exit(case: GoldenCase) -> dict[str, Any]:
    if case.id.endswith("2"):
        os._exit(3)
    return _echo(case)


def hangs(case: GoldenCase) -> dict[str, Any]:
    if case.id.endswith("2"):
        time.sleep(600)
    return _echo(case)


