"""Small engines and callables for the runner and callable-engine tests.

They live in a module of their own, not in a test file, so that `--engine engine_doubles:…`
imports them and a spawned worker process can unpickle them.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.golden.cases import GoldenCase


def echo(case: GoldenCase) -> dict[str, Any]:
    """A dict with some of CaseOutcome's fields; the rest take their defaults."""
    return {"route": "structured", "answer": f"answer to {case.id}"}


def right_value(case: GoldenCase) -> CaseOutcome:
    """The expected value and source of every case that expects one, named in the answer."""
    exp = case.expected
    if "value" not in exp:
        return CaseOutcome(refused=exp["refuse"], clarification_mode=exp["clarification"])
    return CaseOutcome(route="structured", found_value=exp["value"], found_unit=exp["unit"],
                       found_source=dict(exp["source"]), sources=[dict(exp["source"])],
                       answer=f"{exp['value']} {exp['unit']} ({exp['source']['doc']})")


def unknown_fields(case: GoldenCase) -> dict[str, Any]:
    return {"answer": "x", "confidence": 0.9, "latency_ms": 12}


def wrong_type(case: GoldenCase) -> dict[str, Any]:
    return {"answer": "x", "found_value": "1702"}


def not_an_outcome(case: GoldenCase) -> list[str]:
    return ["1702"]


def raises_on_second(case: GoldenCase) -> dict[str, Any]:
    if case.id.endswith("2"):
        raise ConnectionResetError("fork backend went away")
    return echo(case)


def sleeps_on_second(case: GoldenCase) -> dict[str, Any]:
    if case.id.endswith("2"):
        time.sleep(30)
    return echo(case)


NOT_CALLABLE = 42


class ScriptedEngine:
    """Answers echo-like outcomes; raises for ids in `fail`, sleeps for ids in `hang`, ends its
    whole process for ids in `die`, and says the run must stop for ids in `stop`.

    With parallel="processes" it runs in spawned worker processes; each case it starts is
    appended to `trace` (a file), so a test can see which cases actually ran.
    """

    name = "scripted"
    mode = "tool"
    label = "tool@scripted"

    def __init__(self, fail: tuple[str, ...] = (), hang: tuple[str, ...] = (),
                 die: tuple[str, ...] = (), parallel: str = "threads", trace: str | None = None,
                 delay: float = 0.0, stop: tuple[str, ...] = ()):
        self.fail, self.hang, self.die, self.parallel = fail, hang, die, parallel
        self.trace, self.delay, self.stop = trace, delay, stop

    def run_case(self, case: GoldenCase) -> CaseOutcome:
        if self.trace:
            with open(self.trace, "a", encoding="utf-8") as handle:
                handle.write(f"{case.id} {os.getpid()}\n")
        if case.id in self.hang:
            time.sleep(60)
        if case.id in self.die:
            os._exit(3)
        if self.delay:
            time.sleep(self.delay)
        if case.id in self.fail:
            raise RuntimeError(f"engine fault on {case.id}")
        if case.id in self.stop:
            raise BudgetSpent(f"the budget was spent at {case.id}")
        return CaseOutcome(route="structured", answer=f"answer to {case.id}")


class BudgetSpent(RuntimeError):
    """What a model's spent budget raises in the engine (models/budget.BudgetReached): the run
    must stop."""

    stops_run = True


class LoneSurrogateEngine(ScriptedEngine):
    """Answers case "bad" with text no report could hold (a lone surrogate), the rest as
    ScriptedEngine: an outcome the harness must turn into that case's error."""

    def run_case(self, case: GoldenCase) -> CaseOutcome:
        if case.id == "bad":
            return CaseOutcome(route="structured", answer="broken \ud800 text")
        return super().run_case(case)


def traced(trace: str | Path) -> list[str]:
    path = Path(trace)
    return path.read_text(encoding="utf-8").split("\n")[:-1] if path.exists() else []


class DiesOnceEngine(ScriptedEngine):
    """Kills the process it runs in the first time it meets case `victim` (a marker file says it
    already did), then answers like ScriptedEngine: a worker lost mid-run whose cases must run
    again elsewhere."""

    def __init__(self, victim: str, marker: str):
        super().__init__()
        self.victim, self.marker = victim, marker

    def run_case(self, case: GoldenCase) -> CaseOutcome:
        if case.id == self.victim and not os.path.exists(self.marker):
            Path(self.marker).write_text("died once\n", encoding="utf-8")
            os._exit(9)
        return super().run_case(case)


def right_value_refusals_time_out(case: GoldenCase) -> CaseOutcome:
    """`right_value`, except that with RSE_STAGING_DOWN set every case that expects a refusal
    times out, as a cold staging service did (issue 15)."""
    if os.environ.get("RSE_STAGING_DOWN") and case.expected["refuse"]:
        raise TimeoutError("staging did not answer within 30 s")
    if case.id == os.environ.get("RSE_WRONG_VALUE"):  # one real regression beside the errors
        return right_value(case).__class__(route="structured", found_value=-1.0)
    return right_value(case)


def right_value_one_flaky(case: GoldenCase) -> CaseOutcome:
    """`right_value`, except that the case named by RSE_FLAKY_CASE answers a wrong value on
    every second call (the calls counted in the file RSE_FLAKY_COUNTER): an engine behind a
    sampling LLM, in miniature. Counted in a file since each repeat may use fresh workers.
    The case named by RSE_WRONG_VALUE is wrong on every call."""
    if case.id == os.environ.get("RSE_WRONG_VALUE"):  # wrong in every repeat
        return CaseOutcome(route="structured", found_value=-1.0)
    if case.id == os.environ.get("RSE_FLAKY_CASE"):
        counter = Path(os.environ["RSE_FLAKY_COUNTER"])
        calls = int(counter.read_text() or 0) if counter.exists() else 0
        counter.write_text(str(calls + 1))
        if calls % 2:
            return CaseOutcome(route="structured", found_value=-1.0)
    return right_value(case)


def slow_right_value(case: GoldenCase) -> CaseOutcome:
    """`right_value` after RSE_SLOW_SECONDS (default 0.5) of thought, each case it starts
    appended to the file RSE_TRACE when set: a run long enough to be interrupted, and a trace
    that says how far it got."""
    if os.environ.get("RSE_TRACE"):
        with open(os.environ["RSE_TRACE"], "a", encoding="utf-8") as handle:
            handle.write(f"{case.id} {os.getpid()}\n")
    time.sleep(float(os.environ.get("RSE_SLOW_SECONDS", "0.5")))
    return right_value(case)


class SlowToStart:
    """A callable whose copy in a worker process takes RSE_START_SECONDS (default 3) to unpickle:
    a worker that is still starting (importing a heavy engine, say) when Ctrl-C comes."""

    def __init__(self) -> None:
        self.name = "slow-to-start"  # some state, or unpickling never calls __setstate__

    def __call__(self, case: GoldenCase) -> CaseOutcome:
        return right_value(case)

    def __setstate__(self, state: dict[str, Any]) -> None:
        time.sleep(float(os.environ.get("RSE_START_SECONDS", "3")))
        self.__dict__.update(state)


SLOW_TO_START = SlowToStart()



WRONG_CASE_ENV = "ENGINE_DOUBLE_WRONG_CASE"


def right_value_unless_told(case: GoldenCase) -> CaseOutcome:
    """right_value, except for the case named by $ENGINE_DOUBLE_WRONG_CASE, whose value is 10%
    off in the same sentence: two runs of one baseline key (same --engine) in which exactly
    that case goes from pass to fail."""
    out = right_value(case)
    if case.id == os.environ.get(WRONG_CASE_ENV) and out.found_value is not None:
        out.found_value = round(out.found_value * 1.1, 1)
        out.answer = f"{out.found_value} {out.found_unit} ({case.expected['source']['doc']})"
    return out


@dataclass
class Tagged:
    """An outcome type of another harness than QA's (engines/base.Outcome): its answer, and the
    id of the case it is for, which only its own `failed(case, error)` can know when the runner
    ends a case."""

    FORMAT: ClassVar[str] = "tagged-1"
    answer: str = ""
    case_id: str | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"answer": self.answer, "case_id": self.case_id, "error": self.error}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Tagged:
        return cls(**data)

    @classmethod
    def failed(cls, case: Any, error: str) -> Tagged:
        return cls(case_id=case.id, error=error)


class TaggedEngine(ScriptedEngine):
    """ScriptedEngine whose outcomes are `Tagged`: what the runner makes of its faults must be
    Tagged too, each for its case."""

    outcome_type = Tagged

    def run_case(self, case: GoldenCase) -> Any:
        out = super().run_case(case)
        return Tagged(out.answer, case.id)
