"""The cassette at the provider seam: record keeps each successful call, replay never calls out
and names what differs on a miss, a failed call is never recorded, the default is untouched."""

from __future__ import annotations

import pytest
from corespine import ChatCompletion, Choice, ProviderError, ResponseMessage, Usage

from ragspine_eval.models import cassette as tape
from ragspine_eval.models.providers import ProviderSpec
from ragspine_eval.models.recorder import (
    CassetteMiss,
    ModelCallFailed,
    ModelRun,
    ModelRunError,
    RecordedProvider,
    completion_from,
)

SPEC = ProviderSpec("litellm", "openai/m", "http://127.0.0.1:9/v1")


class Scripted:
    """An engine-shaped provider: answers `reply`, or raises ProviderError when told."""

    max_tokens = 50

    def __init__(self, reply="answer", fail=False):
        self.reply, self.fail, self.calls = reply, fail, 0

    def chat(self, messages, *, tools=None):
        self.calls += 1
        if self.fail:
            raise ProviderError("upstream 500")
        return ChatCompletion(choices=(Choice(0, ResponseMessage(content=self.reply)),),
                              usage=Usage(10, 3, 13), model="m", id="x")


def ask(run, inner, case="c1", text="question", repeat=0):
    return RecordedProvider(inner, run, case, repeat).chat([{"role": "user", "content": text}])


def test_record_then_replay_answers_the_same_without_calling(tmp_path):
    path = str(tmp_path / "c.txt")
    rec = ModelRun(SPEC, path, "record")
    inner = Scripted("recorded answer")
    first = ask(rec, inner)
    rec.finish(complete=True)
    replay = ModelRun(SPEC, path, "replay")
    never = Scripted(fail=True)
    again = ask(replay, never)
    assert never.calls == 0 and again == first
    assert again.usage == Usage(10, 3, 13)  # the tokens a replay reports are the recorded ones


def test_a_replay_miss_names_the_case_the_key_and_what_differs(tmp_path):
    path = str(tmp_path / "c.txt")
    rec = ModelRun(SPEC, path, "record")
    ask(rec, Scripted(), case="nar-1", text="line one\n[1] the passage as recorded")
    rec.finish(complete=True)
    replay = ModelRun(SPEC, path, "replay")
    with pytest.raises(CassetteMiss) as miss:
        ask(replay, Scripted(), case="nar-1", text="line one\n[1] the passage changed")
    said = str(miss.value)
    assert said.startswith("case nar-1: cassette") and "(key " in said
    assert "retrieved passage [1] in message 1 (user): recorded '[1] the passage as recorded', " \
           "now '[1] the passage changed'" in said
    with pytest.raises(CassetteMiss, match="no request of this case at all"):
        ask(replay, Scripted(), case="other")


def test_each_repeat_keeps_its_own_answer(tmp_path):
    path = str(tmp_path / "c.txt")
    rec = ModelRun(SPEC, path, "record")
    ask(rec, Scripted("first"), repeat=0)
    ask(rec, Scripted("second"), repeat=1)
    rec.finish(complete=True)
    replay = ModelRun(SPEC, path, "replay")
    answers = [ask(replay, Scripted(fail=True), repeat=k).choices[0].message.content
               for k in (0, 1)]
    assert answers == ["first", "second"]
    with pytest.raises(CassetteMiss, match="the repeat: recorded 0, now 2|the repeat: recorded 1"):
        ask(replay, Scripted(), repeat=2)


def test_a_failed_call_is_never_recorded_and_is_an_error_not_a_degraded_answer(tmp_path):
    path = str(tmp_path / "c.txt")
    rec = ModelRun(SPEC, path, "record")
    with pytest.raises(ModelCallFailed, match="the call failed and was not recorded"):
        ask(rec, Scripted(fail=True))
    assert not isinstance(ModelCallFailed("x"), ProviderError)  # the engine does not swallow it
    rec.finish(complete=True)
    assert tape.read(path).calls == {}


def test_a_resumed_recording_pays_nothing_twice(tmp_path):
    path = str(tmp_path / "c.txt")
    killed = ModelRun(SPEC, path, "record")
    ask(killed, Scripted("paid once"))  # the run dies here: no finish, the journal stays
    from ragspine_eval.models import recorder

    recorder._forget(path)  # a new process: nothing in memory
    resumed = ModelRun(SPEC, path, "record")
    inner = Scripted("paid twice")
    assert ask(resumed, inner).choices[0].message.content == "paid once"
    assert inner.calls == 0
    resumed.finish(complete=True)
    assert len(tape.read(path).calls) == 1


def test_live_calls_and_keeps_nothing(tmp_path):
    live = ModelRun(SPEC, None, "live")
    inner = Scripted()
    ask(live, inner)
    ask(live, inner)
    assert inner.calls == 2 and list(tmp_path.iterdir()) == []


def test_the_default_hands_the_engine_its_bare_mock_provider():
    from ragspine.agent.llm_provider import MockProvider

    assert type(ModelRun().provider_for("c", None)) is MockProvider


def test_modes_are_checked_and_replay_needs_a_cassette(tmp_path):
    with pytest.raises(ModelRunError, match="use one of record, replay, live"):
        ModelRun(SPEC, "c.txt", "once")
    with pytest.raises(ModelRunError, match="--cassette-mode replay needs --cassette PATH"):
        ModelRun(SPEC, None, "replay")
    with pytest.raises(tape.CassetteError, match="no such cassette"):
        ModelRun(SPEC, str(tmp_path / "none.txt"), "replay").check()


def test_a_tool_call_round_trips_through_the_cassette():
    from dataclasses import asdict

    from corespine import FunctionCall, ToolCall

    made = ChatCompletion(choices=(Choice(0, ResponseMessage(content=None, tool_calls=(
        ToolCall("t1", FunctionCall("query_metric", '{"metric": "REVENUE"}')),)),
        "tool_calls"),), usage=None, model="m", id="i", created=5)
    assert completion_from(asdict(made)) == made
