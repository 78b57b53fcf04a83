"""A retrieval run over a workspace with a real model (the engine's LiteLLMProvider against a
model on 127.0.0.1): its listwise rerank asks the model; recorded, then replayed with the
server stopped, the same report; a replay told another model than its cassette's header is
exit 2 before anything runs; a cassette whose calls another model made makes each question
that asked an engine error naming the model, never a silent fallback to the fused order."""

from __future__ import annotations

import importlib.util

import json

import pytest
from realdocs_workspace import QUESTIONS, realdocs_workspace  # noqa: F401

from loopback_llm import LoopbackModel
from ragspine_eval.cli.app import main
from ragspine_eval.models import cassette as tape

# found, not imported: importing litellm before the engine sets LITELLM_LOCAL_MODEL_COST_MAP
# makes it fetch its price table from the network
pytestmark = pytest.mark.skipif(importlib.util.find_spec("litellm") is None,
                                reason="the models extra (pip install -e '.[models]')")


def retrieval(work, workspace, url, cassette, mode, model="openai/loopback", name="r"):
    report = work / f"{name}.json"
    questions = QUESTIONS / "questions.jsonl"
    code = main(["retrieval", "--kb", str(workspace), "--golden", str(questions),
                 "--provider", "litellm", "--model", model, "--base-url", url,
                 "--cassette", str(cassette), "--cassette-mode", mode, "--no-store",
                 "--baseline", str(work / "baseline.json"), "--report", str(report)])
    return code, json.loads(report.read_text(encoding="utf-8")) if report.exists() else None


def comparable(report):
    # the outcome cache's share differs by design: a recording reads and keeps no stored
    # outcome, a replay uses the cache (retrieval_only/run.py: the same report outside
    # provenance.times and provenance.cache)
    prov = {k: v for k, v in report["provenance"].items()
            if k not in ("times", "baseline", "git_dirty", "cache")}
    prov["model"] = {k: v for k, v in prov["model"].items() if k not in ("cassette", "paid")}
    return {**report, "provenance": prov}


def test_a_workspace_run_recorded_replays_offline_and_a_miss_is_an_error(
        realdocs_workspace, tmp_path, monkeypatch, capsys):  # noqa: F811
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-retrieval-99")
    workspace = realdocs_workspace.workspace.path
    server = LoopbackModel(seed=5).start()
    url, cassette = server.base_url, tmp_path / "ws.cassette"
    try:
        code, recorded = retrieval(tmp_path, workspace, url, cassette, "record")
    finally:
        server.stop()
    assert code == 0 and server.requests
    stages = {call.get("stage") for call in tape.read(cassette).calls.values()}
    assert "listwise_rerank" in stages
    monkeypatch.delenv("OPENAI_API_KEY")
    code, replayed = retrieval(tmp_path, workspace, url, cassette, "replay", name="p")
    assert code == 0 and comparable(replayed) == comparable(recorded)

    asked = {case for case, _ in tape.read(cassette).calls}
    capsys.readouterr()
    code, other = retrieval(tmp_path, workspace, url, cassette, "replay",
                            model="openai/another", name="o")
    err = capsys.readouterr().err
    assert code == 2 and other is None  # the header says openai/loopback: nothing ran
    assert "--model openai/another contradicts the cassette" in err and "openai/loopback" in err
    # a header that names another model than the one its calls were made with
    text = cassette.read_text(encoding="utf-8")
    cassette.write_text(text.replace("# models: litellm openai/loopback @",
                                     "# models: litellm openai/another @"), encoding="utf-8")
    code, other = retrieval(tmp_path, workspace, url, cassette, "replay",
                            model="openai/another", name="o")
    errors = {c["id"]: c["error"] for c in other["cases"] if c.get("error")}
    assert code == 1 and set(errors) == asked
    assert all("the model: recorded 'openai/loopback', now 'openai/another'" in e
               for e in errors.values())
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert b"sk-planted-retrieval-99" not in path.read_bytes(), path
