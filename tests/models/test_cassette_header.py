"""The cassette's header, read strictly, and the model a replay takes from it: `# models:` reads
back as written for any set of models; a recording names every model its calls were made with;
a header line that is not one is refused naming its line; a replay given no provider takes the
header's model, and one told another (by a flag or litellm's environment) is refused before
any case; recording is as it was."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval.models import cassette as tape
from ragspine_eval.models.options import model_run
from ragspine_eval.models.providers import PROVIDERS
from ragspine_eval.models.recorder import ModelRunError
from ragspine_eval.models.request import make_request, request_key

# a model name as providers spell them: printable, no "; " or " @ " (the header's separators)
names = st.text(alphabet=st.characters(categories=("L", "N"), include_characters="/-_.:"),
                min_size=1, max_size=20)
urls = st.one_of(st.none(), st.builds(lambda host, port: f"http://{host}:{port}/v1",
                                      st.sampled_from(["127.0.0.1", "gw.example"]),
                                      st.integers(1, 65535)))
entries = st.tuples(st.sampled_from(PROVIDERS), st.one_of(st.none(), names), urls)


@given(st.lists(entries, min_size=1, max_size=4))
def test_models_read_back_as_written(specs):
    text = tape.models_text(specs)
    assert sorted(tape.parse_models(text, "c:3"), key=str) == sorted(set(specs), key=str)
    path_text = tape.Cassette({"models": text}).text()
    assert tape.parse(path_text).header["models"] == text


def call(case, key, model, url="http://h/v1"):
    """A call line as the recorder writes it (the reader is strict), asking `model` at `url`;
    `key` tells two requests apart."""
    request = make_request({"provider": "litellm", "model": model, "base_url": url},
                           [{"role": "user", "content": key}], None, {"max_tokens": 64}, 0)
    return {"case": case, "key": request_key(request), "request": request,
            "response": {"choices": [{"finish_reason": "stop", "index": 0, "message": {
                "content": "a", "role": "assistant", "tool_calls": None}}],
                "created": 0, "id": "", "model": "", "object": "chat.completion",
                "usage": {"completion_tokens": 3, "prompt_tokens": 9, "total_tokens": 12}},
            "stage": "synthesis", "seconds": 0.5}


def test_a_recording_names_every_model_its_calls_were_made_with(tmp_path):
    path = tmp_path / "c.cassette"
    old = tape.Cassette({"engine": "e", "models": "litellm openai/a @ http://h/v1"})
    old.add(call("c1", "k1", "openai/a"))
    path.write_text(old.text(), encoding="utf-8")
    # an interrupted recording with another model keeps the old calls: both are named
    tape.append_to_journal(path, "run2", call("c2", "k2", "openai/b"))
    tape.merge(path, "run2", {"engine": "e", "models": "litellm openai/b @ http://h/v1"}, False)
    assert tape.header_of(path)["models"][1] == \
        "litellm openai/a @ http://h/v1; litellm openai/b @ http://h/v1"
    with pytest.raises(ModelRunError, match="several models: litellm openai/a @ http://h/v1; "
                                            "litellm openai/b @ http://h/v1.*--model"):
        model_run(cassette=path)
    assert model_run(model="openai/b", cassette=path).spec.model == "openai/b"
    # a complete one keeps only its calls, and names only its model
    tape.append_to_journal(path, "run3", call("c2", "k2", "openai/b"))
    tape.merge(path, "run3", {"engine": "e", "models": "litellm openai/b @ http://h/v1"}, True)
    assert tape.header_of(path)["models"] == (3, "litellm openai/b @ http://h/v1")


@pytest.mark.parametrize(("lines", "line", "says"), [
    (["# engine: e", tape.call_line(call("c", "k", "x")), "# models: mock x"],
     4, "after the calls"),
    (["# engine: e", "#"], 3, "not a header line"),
    (["# engine:"], 2, "not a header line"),
    (["# engine: e", "# calls: many"], 3, "must be a count"),
    (["# engine: rag-spine \x1b[2J0.1"], 2, "not a header line"),
    (["# models: litellm m \u202e@ http://h"], 2, "not a header line"),
    (["# engine: e", "# engine: f"], 3, "second '# engine:'"),
])
def test_a_header_line_that_is_not_one_is_refused_with_its_line(lines, line, says):
    text = "\n".join([tape.MAGIC, *lines]) + "\n"
    with pytest.raises(tape.CassetteError, match=f"^c:{line}: .*{says}") as caught:
        tape.parse(text, "c")
    assert "\x1b" not in str(caught.value) and "\u202e" not in str(caught.value)


def write(path, models):
    path.write_text(tape.Cassette({"engine": "e", "models": models}).text(), encoding="utf-8")
    return path


def test_a_replay_takes_the_headers_model_and_the_environment_may_not_change_it(
        tmp_path, monkeypatch):
    for name in ("RAGSPINE_LITELLM_MODEL", "RAGSPINE_LITELLM_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    path = write(tmp_path / "c.cassette", "litellm openai/m")
    run = model_run(cassette=path)
    assert (run.spec.provider, run.spec.model, run.spec.base_url, run.mode) == (
        "litellm", "openai/m", None, "replay")
    monkeypatch.setenv("RAGSPINE_LITELLM_API_BASE", "http://elsewhere/v1")
    with pytest.raises(ModelRunError, match="RAGSPINE_LITELLM_API_BASE=http://elsewhere/v1 "
                                            "contradicts the cassette .*c.cassette:3"):
        model_run(cassette=path)
    # a header that names the base URL: the variable is not read, so it changes nothing
    path = write(tmp_path / "u.cassette", "litellm openai/m @ http://h/v1")
    assert model_run(cassette=path).spec.base_url == "http://h/v1"
    assert model_run(cassette=write(tmp_path / "m.cassette", "mock (default)")).spec.is_default


def test_recording_and_a_missing_cassette_with_a_provider_are_as_before(tmp_path):
    path = write(tmp_path / "c.cassette", "litellm openai/m @ http://h/v1")
    # recording reads no header: its flags are what it asks (none: the MockProvider)
    assert model_run(cassette=path, cassette_mode="record").spec.is_default
    run = model_run("litellm", "openai/n", "http://g/v1", path, "record")
    assert (run.spec.model, run.spec.base_url) == ("openai/n", "http://g/v1")
    # replay with a provider and no cassette yet: refused when the run checks it, as always
    run = model_run("litellm", "openai/m", None, tmp_path / "none.cassette")
    with pytest.raises(tape.CassetteError, match="no such cassette; record it first"):
        run.check()
