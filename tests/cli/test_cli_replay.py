"""Replay from the cassette alone: a qa run recorded with `--provider litellm --model M --base-url
U --cassette C` against a model on 127.0.0.1, replayed with `--cassette C` and no other model
flag while the server is stopped and every socket refused: the same report, exit 0. A flag
that contradicts the cassette's header is exit 2 naming both values, for every command that
takes the model flags, before anything runs (no report, no run stored, no cache, the cassette
untouched); a header naming several models lists them; a corrupt header names its file and
line."""

from __future__ import annotations

import importlib.util
import json
import socket
from pathlib import Path

import pytest

from loopback_llm import LoopbackModel
from ragspine_eval import paths
from ragspine_eval.cli.app import main
from ragspine_eval.models import cassette as tape

needs_litellm = pytest.mark.skipif(importlib.util.find_spec("litellm") is None,
                                   reason="the models extra (pip install -e '.[models]')")
IDS = ("num-001", "nar-003", "comp-001")
MODEL = "openai/loopback-ci"


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGSPINE_EVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RAGSPINE_EVAL_RUNS_DIR", str(tmp_path / "runs"))
    for name in ("RAGSPINE_LITELLM_MODEL", "RAGSPINE_LITELLM_API_BASE", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    lines = paths.QA_GOLDEN_SET.read_text(encoding="utf-8").splitlines()
    (tmp_path / "golden.jsonl").write_text(
        "\n".join(line for line in lines if json.loads(line)["id"] in IDS) + "\n",
        encoding="utf-8")
    return tmp_path


def qa(work: Path, name: str, *model_flags: str) -> int:
    return main(["qa", "--mode", "agent", "--golden", str(work / "golden.jsonl"), "--jobs", "1",
                 "--report", str(work / f"{name}.json"), "--baseline",
                 str(work / "baseline.json"), *model_flags])


def comparable(report: dict) -> dict:
    """The report less what two runs of the same inputs differ in by design: times, the
    baseline entry, the cache's share, the cassette's mode and what the run paid."""
    prov = {k: v for k, v in report["provenance"].items()
            if k not in ("times", "baseline", "git_dirty", "cache")}
    prov["model"] = {k: v for k, v in prov["model"].items() if k not in ("cassette", "paid")}
    return {**report, "provenance": prov}


class NoNetwork:
    """Every socket connection (and name lookup) refused and kept, so a test can say none was
    tried, even one a library would have caught and worked around."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tried: list[str] = []

        def refuse(where: str):
            def refused(*args, **kwargs):
                self.tried.append(f"{where}{args[1:] if where != 'getaddrinfo' else args}")
                raise OSError("the network is cut in this test")
            return refused

        for name in ("connect", "connect_ex"):
            monkeypatch.setattr(socket.socket, name, refuse(name))
        monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
        monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))


def written(work: Path) -> dict[str, bytes]:
    return {str(p.relative_to(work)): p.read_bytes() for p in work.rglob("*") if p.is_file()}


@needs_litellm
def test_a_recording_replays_from_the_cassette_alone_offline_to_the_same_report(
        work, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-replay-31")
    server = LoopbackModel(seed=5).start()
    cassette = work / "ci.cassette"
    url = server.base_url
    try:
        code = qa(work, "record", "--provider", "litellm", "--model", MODEL, "--base-url", url,
                  "--cassette", str(cassette), "--cassette-mode", "record")
    finally:
        server.stop()
    assert code == 0 and server.requests
    assert tape.header_of(cassette)["models"][1] == f"litellm {MODEL} @ {url}"
    recorded = json.loads((work / "record.json").read_text(encoding="utf-8"))
    assert recorded["provenance"]["times"]["usage"]["run"]["calls"] > 0

    monkeypatch.delenv("OPENAI_API_KEY")  # the CI job has no key either
    guard = NoNetwork(monkeypatch)
    with pytest.raises(OSError), socket.socket() as probe:
        probe.connect(("127.0.0.1", 9))
    assert guard.tried  # the guard sees a connection tried
    guard.tried.clear()
    capsys.readouterr()
    assert qa(work, "replay", "--cassette", str(cassette)) == 0, capsys.readouterr()
    assert guard.tried == []
    replayed = json.loads((work / "replay.json").read_text(encoding="utf-8"))
    assert comparable(replayed) == comparable(recorded)
    model = replayed["provenance"]["model"]
    assert (model["provider"], model["model"], model["base_url"]) == ("litellm", MODEL, url)
    assert model["cassette"]["mode"] == "replay"

    # the header's own values given again agree with it: the same model, so the outcome
    # cache's key is the same and the cases the replay stored are reused
    assert qa(work, "again", "--provider", "litellm", "--model", MODEL, "--base-url", url,
              "--cassette", str(cassette)) == 0
    again = json.loads((work / "again.json").read_text(encoding="utf-8"))
    assert {k: again["provenance"]["model"][k] for k in ("provider", "model", "base_url")} \
        == {"provider": "litellm", "model": MODEL, "base_url": url}
    assert [c["reused"] for c in again["cases"]] == [True] * len(IDS)

    before = written(work)
    capsys.readouterr()
    assert qa(work, "other", "--cassette", str(cassette), "--model", "openai/other") == 2
    err = capsys.readouterr().err
    assert "--model openai/other" in err and MODEL in err and str(cassette) in err
    assert written(work) == before  # nothing written, nothing changed
    assert guard.tried == []


def header_cassette(path: Path, models: str) -> Path:
    calls = tape.Cassette({"engine": "rag-spine 0.0", "models": models, "recorded": "2026-01-01"})
    path.write_text(calls.text(), encoding="utf-8")
    return path


WORKSPACE_ARGS = ["--kb", "no-such-workspace", "--golden", "no-such-gold.json"]
COMMANDS = {
    "qa": ["qa", "--mode", "agent"],
    "answers": ["answers", *WORKSPACE_ARGS],
    "retrieval": ["retrieval", *WORKSPACE_ARGS],
    "gold draft": ["gold", "draft", "--kb", "no-such-workspace", "--questions", "q.txt",
                   "--out", "draft.json"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize(("flag", "value", "recorded"), [
    ("--model", "openai/other", "openai/m"),
    ("--provider", "anthropic", "litellm"),
    ("--base-url", "http://127.0.0.1:9/v1", "http://127.0.0.1:8/v1"),
])
def test_a_flag_that_contradicts_the_header_is_exit_2_naming_both_before_anything_runs(
        work, capsys, monkeypatch, command, flag, value, recorded):
    monkeypatch.chdir(work)
    cassette = header_cassette(work / "c.cassette", "litellm openai/m @ http://127.0.0.1:8/v1")
    before = written(work)
    report = ["--report", "r.json"] if command != "gold draft" else []
    assert main([*COMMANDS[command], *report, "--cassette", str(cassette), flag, value]) == 2
    err = capsys.readouterr().err
    assert f"{flag} {value}" in err and recorded in err and f"{cassette}:3" in err
    assert "Traceback" not in err
    assert written(work) == before


def test_a_header_of_several_models_lists_them_and_model_picks_one(work, capsys):
    cassette = header_cassette(work / "c.cassette",
                               "litellm openai/a @ http://h/v1; litellm openai/b @ http://h/v1")
    assert qa(work, "r", "--cassette", str(cassette)) == 2
    err = capsys.readouterr().err
    assert "several models" in err and "openai/a" in err and "openai/b" in err
    assert "--model" in err and not (work / "r.json").exists()

    from ragspine_eval.models.options import model_run

    picked = model_run(model="openai/b", cassette=cassette)
    assert (picked.spec.provider, picked.spec.model, picked.spec.base_url) == (
        "litellm", "openai/b", "http://h/v1")


@pytest.mark.parametrize(("text", "line", "says"), [
    ("hello\n", 1, "not a ragspine-eval cassette"),
    ("# ragspine-eval cassette 2\n# models: mock (default)\n", 1, "another version"),
    (f"{tape.MAGIC}\n# engine: e\n# modles: litellm openai/m\n", 3, "not a header line"),
    (f"{tape.MAGIC}\n# engine: e\n# models: gpt litellm\n", 3, "'# models:' names"),
    (f"{tape.MAGIC}\n# engine: e\n# recorded: now\n", 4, "names no models"),
    (f"{tape.MAGIC}\n# models: mock (default)\n# models: mock (default)\n", 3, "second"),
])
def test_a_corrupt_missing_or_foreign_header_is_exit_2_with_file_and_line(
        work, capsys, text, line, says):
    cassette = work / "c.cassette"
    cassette.write_text(text, encoding="utf-8")
    assert qa(work, "r", "--cassette", str(cassette)) == 2
    err = capsys.readouterr().err
    assert f"{cassette}:{line}:" in err and says in err, err
    assert "Traceback" not in err and not (work / "r.json").exists()


def test_replay_needs_a_cassette_that_exists(work, capsys):
    assert qa(work, "r", "--cassette", str(work / "none.cassette")) == 2
    err = capsys.readouterr().err
    assert "none.cassette: no such cassette" in err and "--cassette-mode record" in err
    assert not (work / "r.json").exists() and not (work / "none.cassette").exists()
