"""The answer step: the engine opened only when some case must reach it, each answer stored as
it comes, outcomes in case order."""

from __future__ import annotations

from contextlib import contextmanager

from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.pipeline.answer import answer, run_options
from ragspine_eval.pipeline.plan import Plan
from ragspine_eval.pipeline.spec import RunHow


class Echo:
    name = label = "echo"
    mode = "tool"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def run_case(self, case):
        self.asked.append(case.id)
        return CaseOutcome(answer=case.id)


class Case:
    def __init__(self, id_: str) -> None:
        self.id, self.tags = id_, {}


def opener(engine, opened: list[bool]):
    @contextmanager
    def open_engine():
        opened.append(True)
        yield engine
    return open_engine


def test_when_the_caches_answer_every_case_the_engine_is_never_opened():
    opened: list[bool] = []
    cases = [Case("a"), Case("b")]
    planned = Plan(cases, cache=object(), scoring="s", known=[None, None], scored=["x", "y"])
    progress: list[tuple[int, int, int]] = []
    how = RunHow(progress=lambda *a: progress.append(a))
    got = answer(planned, how, run_options(how, 0, False, False), opener(Echo(), opened))
    assert opened == [] and got.engine is None
    assert got.reused == [True, True] and progress == [(2, 2, 0)]


def test_without_a_cache_every_case_is_answered_in_case_order():
    engine, opened = Echo(), []
    cases = [Case(c) for c in "abcdef"]
    how = RunHow(jobs=3)
    got = answer(Plan(cases), how, run_options(how, 6, False, False), opener(engine, opened))
    assert opened == [True]
    assert [o.answer for o in got.outcomes] == list("abcdef")
    assert got.reused == [False] * 6 and sorted(engine.asked) == list("abcdef")


def test_repeats_answer_every_case_that_many_times():
    engine = Echo()
    how = RunHow(repeat=3)
    got = answer(Plan([Case("a"), Case("b")]), how, run_options(how, 2, False, False),
                 opener(engine, []))
    assert len(got.runs) == 3 and len(engine.asked) == 6


def test_a_case_that_stops_the_run_ends_it_as_interrupted_on_every_executor():
    """The runner stops handing out cases (execution/test_runner.py); Dask's outcomes come back
    at the end: either way the answer step ends the run as an interrupted one, which resumes."""
    from engine_doubles import ScriptedEngine

    cases = [Case(f"c{i}") for i in range(1, 5)]
    how = RunHow()
    got = answer(Plan(cases), how, run_options(how, 4, False, False),
                 opener(ScriptedEngine(stop=("c2",)), []))
    assert got.interrupted
    assert [o.error for o in got.outcomes][0] is None
    assert all(o.error.startswith("not run: the run stopped") for o in got.outcomes[1:])
