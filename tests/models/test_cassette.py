"""The cassette file: one call per line, sorted, a header that names the engine, the models and
when; read back as written; journal folded in whole; refused when it is not a cassette."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval.models import cassette as tape
from ragspine_eval.models.request import make_request, request_key

ids = st.text(alphabet="abcdefghij-0123456789", min_size=1, max_size=8)


def a_call(case: str, text: str, answer: str | None, repeat: int = 0) -> dict:
    """A call line as the recorder writes it: its request, the request's key, a response."""
    request = make_request({"provider": "litellm", "model": "openai/m", "base_url": None},
                           [{"role": "user", "content": text}], None, {"max_tokens": 64}, repeat)
    return {"case": case, "key": request_key(request), "request": request,
            "response": {"choices": [{"finish_reason": "stop", "index": 0, "message": {
                "content": answer, "role": "assistant", "tool_calls": None}}],
                "created": 0, "id": "", "model": "", "object": "chat.completion",
                "usage": {"completion_tokens": 3, "prompt_tokens": 9, "total_tokens": 12}},
            "stage": "synthesis", "seconds": 0.5}


calls = st.lists(st.builds(a_call, ids, st.text(max_size=30),
                           st.one_of(st.none(), st.text(max_size=30))), max_size=6)
HEADER = {"engine": "rag-spine 0.17.2", "models": "litellm openai/m", "recorded": "2026-12-05"}


@given(calls)
def test_a_cassette_reads_back_as_it_was_written_one_sorted_call_per_line(recorded):
    written = tape.Cassette(dict(HEADER))
    for call in recorded:
        written.add(call)
    text = written.text()
    read = tape.parse(text)
    assert read.calls == written.calls and read.header == HEADER
    lines = text.split("\n")[:-1]  # a call's text may hold U+2028: lines end at \n only
    assert lines[0] == tape.MAGIC
    body = [json.loads(line) for line in lines if not line.startswith("#")]
    assert len(body) == len(written.calls)  # one line per call, newlines inside stay escaped
    assert [(c["case"], c["key"]) for c in body] == sorted((c["case"], c["key"]) for c in body)
    assert f"# calls: {len(written.calls)}" in lines
    assert tape.parse(read.text()).text() == text  # written again: the same bytes


def test_the_header_names_the_engine_the_models_and_when(tmp_path):
    text = tape.Cassette(dict(HEADER)).text()
    assert "# engine: rag-spine 0.17.2\n# models: litellm openai/m\n# recorded: 2026-12-05\n" in text


def test_a_file_that_is_not_a_cassette_is_refused_with_its_line(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("hello\n", encoding="utf-8")
    with pytest.raises(tape.CassetteError, match=r"c\.txt:1: not a ragspine-eval cassette"):
        tape.read(path)
    path.write_text(tape.MAGIC + "\n# engine: x\n{\"case\": \n", encoding="utf-8")
    with pytest.raises(tape.CassetteError, match=r"c\.txt:3: not a JSON call line"):
        tape.read(path)
    with pytest.raises(tape.CassetteError, match="no such cassette; record it first"):
        tape.read(tmp_path / "missing.txt")


def call(case, key, text="a"):
    return a_call(case, f"{key}: {text}", text)


def test_a_complete_recording_keeps_exactly_its_calls_and_clears_the_journal(tmp_path):
    path = tmp_path / "c.txt"
    old = tape.Cassette(dict(HEADER))
    old.add(call("c1", "stale"))
    path.write_text(old.text(), encoding="utf-8")
    tape.append_to_journal(path, "run1", call("c1", "k1"))
    tape.append_to_journal(path, "run1", call("c2", "k2"))
    assert tape.merge(path, "run1", {"engine": "e", "models": "m", "recorded": "now"}, True) == 2
    assert {(c, k) for c, k in tape.read(path).calls} == {("c1", call("c1", "k1")["key"]),
                                                          ("c2", call("c2", "k2")["key"])}
    assert not tape.journal_dir(path).exists()


def test_an_interrupted_recording_keeps_the_old_calls_and_what_it_paid_for(tmp_path):
    path = tmp_path / "c.txt"
    old = tape.Cassette(dict(HEADER))
    old.add(call("c1", "k0"))
    path.write_text(old.text(), encoding="utf-8")
    tape.append_to_journal(path, "run1", call("c2", "k2"))
    # a process killed while writing its line: the cut line is never half-read
    with open(next(tape.journal_dir(path).glob("*.jsonl")), "a", encoding="utf-8") as f:
        f.write('{"case": "c3", "key": "k3", "requ')
    tape.merge(path, "run1", {"engine": "e", "models": "m", "recorded": "now"}, False)
    assert set(tape.read(path).calls) == {("c1", call("c1", "k0")["key"]),
                                          ("c2", call("c2", "k2")["key"])}
