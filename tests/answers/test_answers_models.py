"""An answer run over a workspace with a real model (the engine's LiteLLMProvider against a model
on 127.0.0.1), through `ragspine-eval answers --provider ... --cassette ...`: recorded, then
replayed with the server stopped and no key, the same report; a replay told another model than
its cassette's header is exit 2 before anything runs; a cassette whose calls another model made
makes each question that asked the model an engine error naming the model (never the engine's
fallback answer judged as the model's); the model has a baseline entry of its own; no key is
written anywhere."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from realdocs_workspace import needs_realdocs, realdocs_workspace  # noqa: F401

from loopback_llm import LoopbackModel
from ragspine_eval.cli.app import main
from ragspine_eval.models import cassette as tape

GOLD = Path(__file__).resolve().parents[1] / "fixtures" / "answers" / "realdocs_answers_v1.json"

# found, not imported: importing litellm before the engine sets LITELLM_LOCAL_MODEL_COST_MAP
# makes it fetch its price table from the network
pytestmark = pytest.mark.skipif(importlib.util.find_spec("litellm") is None,
                                reason="the models extra (pip install -e '.[models]')")


def answers(work, workspace, url, cassette, mode, model="openai/loopback", name="a"):
    report = work / f"{name}.json"
    code = main(["answers", "--kb", str(workspace), "--golden", str(GOLD), "--route", "narrative",
                 "--provider", "litellm", "--model", model, "--base-url", url,
                 "--cassette", str(cassette), "--cassette-mode", mode, "--no-store",
                 "--allow-gold-errors",  # its pages past these documents' ends: gold errors
                 "--baseline", str(work / "baseline.json"), "--report", str(report)])
    return code, json.loads(report.read_text(encoding="utf-8")) if report.exists() else None


def comparable(report):
    # the outcome cache's share differs by design: a recording reads and keeps no stored
    # outcome, a replay uses the cache (answers/run.py, on the run path)
    prov = {k: v for k, v in report["provenance"].items()
            if k not in ("times", "baseline", "git_dirty", "cache")}
    prov["model"] = {k: v for k, v in prov["model"].items() if k not in ("cassette", "paid")}
    return {**report, "provenance": prov}


def errors_of(report):
    """The report's engine errors by the id their calls are filed under in the cassette."""
    return {f"{e['id']}@{e['route']}": e["error"] for e in report["errors"]}


@needs_realdocs
def test_an_answer_run_recorded_replays_offline_and_another_model_is_an_error(
        realdocs_workspace, tmp_path, monkeypatch, capsys):  # noqa: F811
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-answers-77")
    workspace = realdocs_workspace.workspace.path
    server = LoopbackModel(seed=3).start()
    url, cassette = server.base_url, tmp_path / "answers.cassette"
    try:
        code, recorded = answers(tmp_path, workspace, url, cassette, "record")
    finally:
        server.stop()
    assert code == 0 and server.requests, errors_of(recorded)
    assert recorded["provenance"]["model"]["provider"] == "litellm"
    stored = json.loads((tmp_path / "baseline.json").read_text(encoding="utf-8"))
    # a workspace outside the project: the gold's stem and the workspace's fingerprint
    fp = realdocs_workspace.workspace.fingerprint[:8]
    assert set(stored) == {f"realdocs_answers_v1@{fp}@answers:narrative~litellm:openai/loopback"}
    calls = tape.read(cassette).calls
    assert calls and all(case.endswith("@narrative") for case, _ in calls)
    # what the run's answers used, per stage: the cassette's own account of each call's stage
    # and usage; kept under times (the calls depend on the engine's caches), not in the model,
    # where every harness keeps it (models/usage.py)
    expected: dict[str, list[int]] = {}
    for kept in calls.values():
        usage = kept["response"]["usage"]
        counts = expected.setdefault(kept["stage"], [0, 0, 0])
        counts[0] += 1
        counts[1] += usage["prompt_tokens"]
        counts[2] += usage["completion_tokens"]
    used = recorded["provenance"]["times"]["usage"]
    assert {stage: [v["calls"], v["input_tokens"], v["output_tokens"]]
            for stage, v in used["stages"].items()} == expected
    assert "calls" not in recorded["provenance"]["model"]

    monkeypatch.delenv("OPENAI_API_KEY")
    code, replayed = answers(tmp_path, workspace, url, cassette, "replay", name="p")
    assert code == 0 and comparable(replayed) == comparable(recorded)

    asked = {case for case, _ in calls}
    capsys.readouterr()
    code, other = answers(tmp_path, workspace, url, cassette, "replay",
                          model="openai/another", name="o")
    err = capsys.readouterr().err
    assert code == 2 and other is None  # the header says openai/loopback: nothing ran
    assert "--model openai/another contradicts the cassette" in err and "openai/loopback" in err
    # a header that names another model than the one its calls were made with
    text = cassette.read_text(encoding="utf-8")
    cassette.write_text(text.replace("# models: litellm openai/loopback @",
                                     "# models: litellm openai/another @"), encoding="utf-8")
    code, other = answers(tmp_path, workspace, url, cassette, "replay",
                          model="openai/another", name="o")
    errors = errors_of(other)
    assert code == 1 and set(errors) == asked  # exactly the questions that asked the model
    assert all("the model: recorded 'openai/loopback', now 'openai/another'" in e
               for e in errors.values())
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert b"sk-planted-answers-77" not in path.read_bytes(), path


@needs_realdocs
def test_a_call_budget_stops_an_answer_run_and_the_same_command_resumes_it(
        realdocs_workspace, tmp_path, monkeypatch, capsys):  # noqa: F811
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-answers-77")
    workspace = realdocs_workspace.workspace.path
    server = LoopbackModel(seed=3).start()
    cassette = tmp_path / "budget.cassette"
    argv = ["answers", "--kb", str(workspace), "--golden", str(GOLD), "--route", "narrative",
            "--provider", "litellm", "--model", "openai/loopback", "--base-url",
            server.base_url, "--cassette", str(cassette), "--cassette-mode", "record",
            "--no-store", "--jobs", "1", "--allow-gold-errors",
            "--baseline", str(tmp_path / "baseline.json"),
            "--report", str(tmp_path / "a.json")]
    try:
        code = main([*argv, "--max-calls", "3"])
        first = [json.dumps(r["body"], sort_keys=True) for r in server.requests]
        assert code == 130 and len(first) <= 3
        assert "stopped (the budget of 3 model calls (--max-calls) was spent) after" in \
            capsys.readouterr().err
        assert not (tmp_path / "baseline.json").exists()  # what ran is written, marked stopped
        partial = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
        assert (partial["status"], partial["interrupted"]) == ("stopped", True)
        code = main(argv)
        again = [json.dumps(r["body"], sort_keys=True) for r in server.requests[len(first):]]
    finally:
        server.stop()
    assert code == 0 and json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert again and not set(again) & set(first)  # no recorded request was sent a second time

