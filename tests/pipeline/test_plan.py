"""The plan step: which cases the caches answer, and so which reach the engine."""

from __future__ import annotations

import pytest

from ragspine_eval.pipeline.plan import Plan, outcome_cache, plan
from ragspine_eval.pipeline.spec import RunHow


def test_without_a_store_every_case_is_to_run():
    planned = plan(["a", "b", "c"], None)
    assert planned.todo == [0, 1, 2] and not planned.answered
    assert planned.have() == [None, None, None]


def test_a_case_is_to_run_only_when_neither_its_outcome_nor_its_scoring_is_known():
    planned = Plan(["a", "b", "c", "d"], cache=object(), scoring="s",
                   known=["out-a", None, None, None], scored=[None, "sc-b", None, None])
    assert planned.todo == [2, 3]
    assert planned.have() == ["out-a", "sc-b", None, None]
    assert not planned.answered
    whole = Plan(["a"], cache=object(), scoring="s", known=[None], scored=["sc-a"])
    assert whole.answered and whole.todo == []


def test_the_cache_is_not_opened_nor_the_engine_named_when_the_run_uses_none():
    def never() -> None:
        raise AssertionError("identity looked up")

    assert outcome_cache(never, "tool", "kb", RunHow(cache=False)) is None
    assert outcome_cache(never, "tool", "kb", RunHow(repeat=2)) is None  # repeats: no cache
    assert outcome_cache(lambda: None, "tool", "kb", RunHow()) is None  # nothing names it


@pytest.mark.parametrize("bad", [{"jobs": 0}, {"jobs": "many"}, {"case_timeout": -1},
                                 {"repeat": 0}])
def test_how_a_run_runs_is_checked_when_it_is_made(bad):
    with pytest.raises(ValueError):
        RunHow(**bad)
