"""A model change is named as drift, and a model run is gated against its own entry."""

from __future__ import annotations

from ragspine_eval.pipeline.spec import RunWhat
from ragspine_eval.models.providers import ProviderSpec
from ragspine_eval.models.recorder import ModelRun
from ragspine_eval.ratchet.compare import drift_of

ENTRY = {"metrics": {"faithfulness": 0.9}, "n_cases": 1, "passed_ids": {}, "golden": {}}


def test_another_model_than_the_entrys_is_drift_and_the_mock_is_no_model():
    then = {**ENTRY, "model": {"provider": "litellm", "model": "openai/a"}}
    now = {**ENTRY, "model": {"provider": "litellm", "model": "openai/b"}}
    (drift,) = drift_of(then, now)
    assert drift["kind"] == "model"
    assert "model changed since the baseline was recorded: litellm openai/a -> litellm " \
           "openai/b" in drift["text"]
    (to_mock,) = drift_of(then, ENTRY)
    assert "-> mock (the engine's script)" in to_mock["text"]
    assert drift_of(ENTRY, ENTRY) == [] and drift_of(then, then) == []


def test_a_model_run_has_a_baseline_key_of_its_own_and_the_mock_keeps_the_committed_one():
    real = ModelRun(ProviderSpec("litellm", "openai/m", "http://127.0.0.1:1/v1"))
    assert RunWhat("g.jsonl", model=real).keyed("agent") == "agent~litellm:openai/m"
    assert RunWhat("g.jsonl", model=ModelRun()).keyed("agent") == "agent"
    assert RunWhat("g.jsonl").keyed("agent") == "agent"
