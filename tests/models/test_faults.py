"""Faults of a real model, through the engine's own LiteLLMProvider against the loopback model:
a 429 waits as its Retry-After says, a 5xx or a body that is not JSON is retried, a truncated
answer is asked again with a larger budget (the engine's and its SDK's own policies, measured
here, not ours); what is recorded is only ever the answer that came; a model that keeps failing
is the case's error (ModelCallFailed), never recorded, never the engine's degraded answer."""

from __future__ import annotations

import importlib.util
import time

import pytest

from loopback_llm import LoopbackModel
from ragspine_eval.models import cassette as tape
from ragspine_eval.models.providers import ProviderSpec
from ragspine_eval.models.recorder import ModelCallFailed, ModelRun

pytestmark = pytest.mark.skipif(importlib.util.find_spec("litellm") is None,
                                reason="the models extra (pip install -e '.[models]')")
SYNTHESIS = "请仅基于以下检索片段回答问题。\n问题：q\n检索片段：\n[1] 收入增长 12%（来源：d l）"


@pytest.fixture(scope="module")
def server():
    model = LoopbackModel(seed=2).start()
    yield model
    model.stop()


@pytest.fixture
def recording(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fault-test")
    server.faults.clear()
    run = ModelRun(ProviderSpec("litellm", "openai/loopback", server.base_url),
                   str(tmp_path / "faults.cassette"), "record")
    return run


def ask(run, text=SYNTHESIS, case="c1"):
    return run.provider_for(case, None).chat([{"role": "user", "content": text}])


def recorded(run):
    run.finish(complete=True)
    return list(tape.read(run.cassette).calls.values())


def test_a_429_waits_its_retry_after_and_only_the_answer_is_recorded(server, recording):
    server.faults[:] = ["429"]
    before, started = len(server.requests), time.perf_counter()
    answer = ask(recording)
    assert time.perf_counter() - started >= 1.0  # Retry-After: 1
    assert len(server.requests) - before == 2
    (call,) = recorded(recording)
    assert call["response"]["choices"][0]["message"]["content"] == \
        answer.choices[0].message.content
    assert "收入增长" in answer.choices[0].message.content


@pytest.mark.parametrize("fault", ["500", "malformed"])
def test_a_5xx_or_a_malformed_body_is_retried(server, recording, fault):
    server.faults[:] = [fault]
    answer = ask(recording, SYNTHESIS + fault)
    assert "收入增长" in answer.choices[0].message.content
    assert len(recorded(recording)) == 1


def test_a_truncated_answer_is_asked_again_and_the_whole_one_recorded(server, recording):
    server.faults[:] = ["truncated"]
    answer = ask(recording, SYNTHESIS + "t")
    assert answer.choices[0].finish_reason == "stop"
    (call,) = recorded(recording)
    assert call["response"]["choices"][0]["finish_reason"] == "stop"


def test_a_model_that_keeps_failing_is_the_cases_error_and_nothing_is_recorded(server, recording):
    server.faults[:] = ["500"] * 50
    with pytest.raises(ModelCallFailed, match=r"case c1: provider litellm, model openai/loopback"):
        ask(recording, SYNTHESIS + "down")
    server.faults.clear()
    assert recorded(recording) == []
