"""`--engine module:callable`: what a callable may return, and what becomes a case error."""

from __future__ import annotations

import pytest
from conftest import make_case
from engine_doubles import echo, not_an_outcome, right_value, unknown_fields, wrong_type

from ragspine_eval.engines.base import CaseOutcome, OutcomeError
from ragspine_eval.engines.callable_engine import (
    CallableEngine,
    CallableSpecError,
    load_callable,
)
from ragspine_eval.execution.runner import run_cases


def engine(function) -> CallableEngine:
    return CallableEngine(function, f"engine_doubles:{function.__name__}", "agent")


def test_a_dict_fills_the_named_fields_and_the_rest_take_their_defaults():
    out = engine(echo).run_case(make_case("c1"))
    assert out == CaseOutcome(route="structured", answer="answer to c1")


def test_a_case_outcome_is_taken_as_is():
    out = engine(right_value).run_case(make_case())
    assert (out.found_value, out.found_unit) == (1702.0, "USD_M")


def test_unknown_fields_are_the_cases_error_naming_them():
    out = engine(unknown_fields).run_case(make_case())
    assert out.error.startswith("OutcomeError: engine_doubles:unknown_fields returned unknown "
                                "field(s) 'confidence', 'latency_ms'")


def test_a_wrong_type_is_the_cases_error_naming_the_field():
    out = engine(wrong_type).run_case(make_case())
    assert "field 'found_value' must be a number or null, got '1702'" in out.error


def test_something_else_than_a_dict_is_the_cases_error():
    assert "expected a CaseOutcome or a dict of its fields, got list" in \
        engine(not_an_outcome).run_case(make_case()).error


def test_an_exception_in_the_callable_is_the_cases_error_and_the_run_goes_on():
    from engine_doubles import raises_on_second

    outcomes = run_cases(engine(raises_on_second), [make_case("c1"), make_case("c2"),
                                                    make_case("c3")])
    assert outcomes[1].error.startswith("ConnectionResetError: fork backend went away")
    assert outcomes[0].error is None and outcomes[2].error is None


def test_every_outcome_field_has_a_type_check():
    from dataclasses import fields

    from ragspine_eval.engines.base import _FIELD_CHECKS

    assert set(_FIELD_CHECKS) == {f.name for f in fields(CaseOutcome)}


def test_from_dict_round_trips_a_full_outcome():
    full = CaseOutcome(route="composite", clarification_mode="answer_with_assumptions",
                       answer="a", found_value=1702, found_unit="USD_M",
                       found_source={"doc": "d", "locator": "l"}, refused=False,
                       sources=[{"doc": "d", "locator": "l"}], tool_statuses=["found"],
                       narrative_answer="n", retrieved_context=["c"], error=None)
    assert CaseOutcome.from_dict(full.to_dict()) == full
    with pytest.raises(OutcomeError, match="'refused' must be true or false"):
        CaseOutcome.from_dict({"refused": "no"})


@pytest.mark.parametrize("spec, reason", [
    ("engine_doubles", "expected module:callable"),
    ("no_such_module_xyz:run", "cannot import 'no_such_module_xyz'"),
    ("engine_doubles:nothing_here", "has no attribute 'nothing_here'"),
    ("engine_doubles:NOT_CALLABLE", "NOT_CALLABLE is a int, not a callable"),
])
def test_a_callable_that_cannot_be_loaded_is_named(spec, reason):
    with pytest.raises(CallableSpecError, match=reason):
        load_callable(spec)


def test_a_dotted_attribute_is_followed():
    assert load_callable("engine_doubles:ScriptedEngine.run_case").__name__ == "run_case"
