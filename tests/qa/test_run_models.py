"""An agent run with a real model through the engine's own LiteLLM provider, against a model
server on 127.0.0.1 that the test starts: recorded, then replayed with the server stopped and no
key. The replay's report is the recording's byte for byte outside timings; a changed passage or
prompt makes exactly the cases whose requests changed engine errors that say what differs; a
key planted in the environment is in no file the runs wrote."""

from __future__ import annotations

import importlib.util

import json
import shutil
from pathlib import Path

import pytest

from loopback_llm import LoopbackModel
from realdocs_workspace import realdocs_workspace  # noqa: F401 - a fixture
from ragspine_eval import paths
from ragspine_eval.cli.app import main
from ragspine_eval.models import cassette as tape

# found, not imported: importing litellm before the engine sets LITELLM_LOCAL_MODEL_COST_MAP
# makes it fetch its price table from the network
pytestmark = pytest.mark.skipif(importlib.util.find_spec("litellm") is None,
                                reason="the models extra (pip install -e '.[models]')")

KEY = "sk-planted-0123456789-never-write-me"
HK_SENTENCE = "管理层判断香港 REVENUE 短期内仍将承压"


@pytest.fixture
def loopback():
    server = LoopbackModel(seed=7).start()
    yield server
    server.stop()


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGSPINE_EVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RAGSPINE_EVAL_RUNS_DIR", str(tmp_path / "runs"))
    for name in ("RAGSPINE_LITELLM_MODEL", "RAGSPINE_LITELLM_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def agent_run(work: Path, name: str, base_url: str, cassette: Path, mode: str,
              kb: Path = paths.KB_DIR, *extra: str,
              model: tuple[str, str] = ("litellm", "openai/loopback")) -> tuple[int, dict]:
    report = work / f"{name}.json"
    code = main(["qa", "--mode", "agent", "--provider", model[0], "--model", model[1],
                 "--base-url", base_url, "--cassette", str(cassette), "--cassette-mode", mode,
                 "--kb", str(kb), "--jobs", "1", "--report", str(report),
                 "--junit", str(work / f"{name}.xml"), "--summary-md", str(work / f"{name}.md"),
                 "--baseline", str(work / "baseline.json"), *extra])
    return code, json.loads(report.read_text(encoding="utf-8"))


def without_run_details(report: dict) -> dict:
    """The report less what differs between two runs of the same inputs by design: the times,
    the baseline entry it was compared with, the cassette's mode and header, and what the run
    paid for (a replay nothing)."""
    prov = dict(report["provenance"])
    for key in ("times", "baseline", "git_dirty", "cache"):
        prov.pop(key, None)
    prov["model"] = {k: v for k, v in prov["model"].items() if k not in ("cassette", "paid")}
    return {**report, "provenance": prov}


def usage_counts(report: dict) -> dict:
    """Per stage the calls and tokens of every repeat (`times.usage`: no milliseconds)."""
    usage = report["provenance"]["times"]["usage"]
    return {stage: (b["calls"], b["input_tokens"], b["output_tokens"])
            for stage, b in usage["stages"].items()}


def keys_by_case(path: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for case, key in tape.read(path).calls:
        out.setdefault(case, set()).add(key)
    return out


def errors(report: dict) -> dict[str, str]:
    return {c["id"]: c["error"] for c in report["cases"] if c.get("error")}


def test_recorded_then_replayed_offline_the_same_report_and_misses_named(
        workdir, loopback, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    url, cassette = loopback.base_url, workdir / "agent.cassette"
    code, recorded = agent_run(workdir, "record", url, cassette, "record")
    assert code == 0 and not errors(recorded)
    assert loopback.requests, "the model was asked"
    assert any(KEY in str(r["headers"]) for r in loopback.requests)  # the key did reach it

    # the same run over a knowledge base with one passage changed, recorded apart: which
    # cases' requests change is what the replay must name, no more, no fewer
    kb = workdir / "kb"
    shutil.copytree(paths.KB_DIR, kb)
    text = (kb / "narratives.jsonl").read_text(encoding="utf-8")
    assert HK_SENTENCE in text
    (kb / "narratives.jsonl").write_text(text.replace(HK_SENTENCE, "管理层判断香港 REVENUE 短期内或将企稳"),
                                         encoding="utf-8")
    agent_run(workdir, "record-changed", url, workdir / "changed.cassette", "record", kb)
    before, after = keys_by_case(cassette), keys_by_case(workdir / "changed.cassette")
    affected = {case for case in before.keys() | after.keys()
                if before.get(case) != after.get(case)}
    assert 0 < len(affected) < len(recorded["cases"])

    loopback.stop()  # from here on nothing answers on the network, and there is no key
    monkeypatch.delenv("OPENAI_API_KEY")
    code, replayed = agent_run(workdir, "replay", url, cassette, "replay")
    assert code == 0 and not errors(replayed)
    assert without_run_details(replayed) == without_run_details(recorded)
    cassette_info = replayed["provenance"]["model"]["cassette"]
    assert cassette_info["mode"] == "replay" and cassette_info["engine"].startswith("rag-spine")

    # the compare notebook's models table: the same model, the after run replayed, the same calls
    from ragspine_eval.workbench.fronts import compare

    table = compare.model_changes(compare.load_pair(workdir / "record.json",
                                                    workdir / "replay.json")).set_index("")
    assert table.loc["model", "before"] == table.loc["model", "after"] == "litellm openai/loopback"
    assert table.loc["answers", "before"] == "record"
    assert table.loc["answers", "after"].startswith("replayed (")
    assert table.loc["calls", "before"] == table.loc["calls", "after"] != "0"

    code, missed = agent_run(workdir, "replay-changed", url, cassette, "replay", kb)
    assert code == 1 and set(errors(missed)) == affected
    for case, error in errors(missed).items():
        assert error.startswith(f"CassetteMiss: case {case}: cassette") and "differs in:" in error
    assert any("retrieved passage" in e and "仍将承压" in e and "或将企稳" in e
               for e in errors(missed).values())

    # a changed synthesis prompt: exactly the cases that asked for a synthesis miss
    import ragspine.agent.agent as engine_agent

    monkeypatch.setattr(engine_agent, "_NARRATIVE_SYSTEM_PROMPT_TEMPLATE",
                        engine_agent._NARRATIVE_SYSTEM_PROMPT_TEMPLATE + " Be brief.")
    synthesis_cases = {case for (case, _), call in tape.read(cassette).calls.items()
                       if call.get("stage") == "synthesis"}
    # (--no-cache: the outcome cache keys the installed engine, which a monkeypatch leaves as is)
    code, prompt_changed = agent_run(workdir, "replay-prompt", url, cassette, "replay",
                                     paths.KB_DIR, "--no-cache")
    assert code == 1 and set(errors(prompt_changed)) == synthesis_cases
    assert all("the system prompt: recorded" in e for e in errors(prompt_changed).values())

    written = [p for p in workdir.rglob("*") if p.is_file()]
    assert any(p.name == "agent.cassette" for p in written) and len(written) > 10
    for path in written:
        data = path.read_bytes()
        assert KEY.encode() not in data, path
        assert b"Bearer" not in data and b"Authorization" not in data.replace(b"authorization", b""), path


def test_every_repeat_is_recorded_and_replayed(workdir, monkeypatch):
    """--repeat 3 against a model that varies its answers between identical requests: the
    cassette keeps each repeat's answer (the repeat index is in the key), and the replay with
    the server stopped reproduces every repeat, flaky cases included."""
    server = LoopbackModel(seed=11, vary=True).start()
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    cassette, url = workdir / "repeats.cassette", server.base_url
    try:
        code, recorded = agent_run(workdir, "rec3", url, cassette, "record",
                                   paths.KB_DIR, "--repeat", "3")
    finally:
        server.stop()
    assert code == 0 and recorded["repeats"] == 3 and not errors(recorded)
    flaky = {f["id"] for m in recorded["metrics"].values() for f in m["flaky"]}
    assert flaky, "the varying model made some verdicts differ between repeats"
    repeats = {call["request"]["repeat"] for call in tape.read(cassette).calls.values()}
    assert repeats == {0, 1, 2}
    monkeypatch.delenv("OPENAI_API_KEY")
    code, replayed = agent_run(workdir, "rep3", url, cassette, "replay",
                               paths.KB_DIR, "--repeat", "3")
    assert code == 0
    assert without_run_details(replayed) == without_run_details(recorded)
    # what every repeat's calls used (kept under times, with the milliseconds): the same
    assert usage_counts(replayed) == usage_counts(recorded) and usage_counts(recorded)
    # every case keeps its three repeats, the replay's the recording's
    assert all(len(c["repeats"]) == 3 for c in recorded["cases"])


def test_a_call_budget_stops_the_run_as_interrupted_and_a_resume_pays_for_nothing_twice(
        workdir, loopback, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    url, cassette = loopback.base_url, workdir / "budget.cassette"
    code, first = agent_run(workdir, "budget", url, cassette, "record", paths.KB_DIR,
                            "--max-calls", "20")
    spent = [json.dumps(r["body"], sort_keys=True) for r in loopback.requests]
    assert code == 130 and first["interrupted"]  # an interrupted run: no verdict, no baseline
    assert "stopped (the budget of 20 model calls (--max-calls) was spent)" in \
        capsys.readouterr().err
    not_run = errors(first)
    assert not_run and len(not_run) < first["n_cases"]  # it stopped, it did not fail every case
    assert set(not_run.values()) == {"not run: the run stopped before this case finished: the "
                                     "budget of 20 model calls (--max-calls) was spent"}
    assert len(spent) <= 20 + 2  # 20 calls (an SDK retry of one of them aside)
    assert len(tape.read(cassette).calls) >= 20  # each paid call kept (a case may reuse one)
    assert not (workdir / "baseline.json").exists()
    assert "STOPPED" in (workdir / "budget.md").read_text(encoding="utf-8")

    code, resumed = agent_run(workdir, "resumed", url, cassette, "record", paths.KB_DIR)
    assert code == 0 and not errors(resumed) and not resumed.get("interrupted")
    again = [json.dumps(r["body"], sort_keys=True) for r in loopback.requests[len(spent):]]
    assert again and not set(again) & set(spent)  # no recorded request was sent a second time


def test_a_cost_budget_stops_the_run_before_it_passes_the_budget(workdir, loopback,
                                                                   monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    prices = workdir / "prices.toml"
    prices.write_text('currency = "EUR"\n[models."openai/loopback"]\ninput = 100.0\n'
                      'output = 400.0\n', encoding="utf-8")
    code, first = agent_run(workdir, "cost", loopback.base_url, workdir / "cost.cassette",
                            "record", paths.KB_DIR, "--prices", str(prices), "--max-cost", "0.5")
    assert code == 130 and first["interrupted"]
    assert "(--max-cost) would be passed" in capsys.readouterr().err
    costs = [(c["response"]["usage"]["prompt_tokens"] * 100.0
              + c["response"]["usage"]["completion_tokens"] * 400.0) / 1e6
             for c in tape.read(workdir / "cost.cassette").calls.values()]  # every paid call
    dearest = max(costs)
    # checked before each call against the spent cost plus the dearest call so far, the run
    # spends at most one call's difference past the budget, and stops near it, not early
    assert 0.5 - 2 * dearest <= sum(costs) <= 0.5 + dearest


def test_a_cost_budget_without_a_price_for_the_model_is_refused_before_any_call(
        workdir, loopback, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    prices = workdir / "prices.toml"
    prices.write_text('[models."another/model"]\ninput = 1\noutput = 1\n', encoding="utf-8")
    code = main(["qa", "--mode", "agent", "--provider", "litellm", "--model", "openai/loopback",
                 "--base-url", loopback.base_url, "--prices", str(prices), "--max-cost", "1",
                 "--report", str(workdir / "r.json"), "--baseline", str(workdir / "b.json")])
    assert code == 2 and not loopback.requests and not (workdir / "r.json").exists()
    assert "has no price for model openai/loopback" in capsys.readouterr().err


def test_the_anthropic_provider_with_a_gateway_url_is_recorded_and_replayed(
        workdir, loopback, monkeypatch):
    """The engine's AnthropicProvider against the Messages API of the loopback model (its base
    URL as a gateway's): the same record, replay offline, no key written."""
    pytest.importorskip("anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    url, cassette = loopback.root_url, workdir / "anthropic.cassette"
    claude = ("anthropic", "claude-loopback")
    code, recorded = agent_run(workdir, "arec", url, cassette, "record", paths.KB_DIR,
                               model=claude)
    assert code == 0 and not errors(recorded)
    assert {r["path"] for r in loopback.requests} == {"/v1/messages"}
    loopback.stop()
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    code, replayed = agent_run(workdir, "arep", url, cassette, "replay", paths.KB_DIR,
                               model=claude)
    assert code == 0 and without_run_details(replayed) == without_run_details(recorded)
    for path in workdir.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_recording_again_keeps_every_call_even_where_outcomes_are_cached(
        workdir, loopback, monkeypatch):
    """The outcome cache would answer every case of a second identical run without the model;
    a recording does not read it, so recording again leaves the cassette whole."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    url, cassette = loopback.base_url, workdir / "twice.cassette"
    agent_run(workdir, "once", url, cassette, "record")
    first = tape.read(cassette).calls
    agent_run(workdir, "twice", url, cassette, "record")
    assert tape.read(cassette).calls.keys() == first.keys()


def test_the_qa_notebook_replays_a_cassette_and_names_the_model(workdir, loopback, monkeypatch):
    """The qa notebook with provider, model and cassette parameters: the run replayed (the
    server stopped, no key) and its facts name the model and say it was replayed."""
    import nbformat
    import papermill as pm

    from ragspine_eval.workbench.rendering.kernel import KERNEL_NAME

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    url, cassette = loopback.base_url, workdir / "nb.cassette"
    assert agent_run(workdir, "nbrec", url, cassette, "record")[0] == 0
    loopback.stop()
    monkeypatch.delenv("OPENAI_API_KEY")
    out = workdir / "qa.ipynb"
    pm.execute_notebook(str(paths.PROJECT_ROOT / "notebooks" / "qa.ipynb"), str(out), parameters={
        "mode": "agent", "provider": "litellm", "model": "openai/loopback", "base_url": url,
        "cassette": str(cassette), "baseline_path": str(workdir / "baseline.json"),
        "report_path": str(workdir / "nb.json"), "store": False},
        kernel_name=KERNEL_NAME, cwd=str(paths.PROJECT_ROOT), progress_bar=False)
    text = "".join(str(o) for c in nbformat.read(out, as_version=4).cells
                   for o in c.get("outputs", []))
    assert "litellm openai/loopback" in text and "replayed from cassette" in text
    assert KEY not in out.read_text(encoding="utf-8")


WORKSPACE_CASES = [
    {"id": "ws-rain", "question": "What does the report say about rainfall in Kerala compared "
     "with normal?", "narrative_doc": "rainfall_distribution.pdf", "topic": "weather"},
    {"id": "ws-rice", "question": "Why is there a rice deficit in some districts?",
     "narrative_doc": "agstat.pdf", "topic": "agriculture"},
]


def test_an_answer_run_over_a_workspace_is_recorded_and_replayed_offline(
        workdir, loopback, monkeypatch, realdocs_workspace):  # noqa: F811
    """qa --kb W (an engine workspace of ../shared/realdocs) with a real model: the synthesis
    over the workspace's passages recorded, then replayed with the server stopped."""
    golden = workdir / "ws_golden.jsonl"
    golden.write_text("".join(json.dumps({
        "id": c["id"], "question": c["question"], "case_type": "narrative",
        "expected": {"clarification": "none", "refuse": False, "narrative_doc": c["narrative_doc"]},
        "tags": {"topic": c["topic"], "scope": "realdocs", "qtype": "attribution"},
        "reference_date": "2026-06-12"}) + "\n" for c in WORKSPACE_CASES), encoding="utf-8")
    workspace = realdocs_workspace.workspace.path
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    url, cassette = loopback.base_url, workdir / "ws.cassette"
    code, recorded = agent_run(workdir, "wsrec", url, cassette, "record", workspace,
                               "--golden", str(golden))
    assert code == 0 and not errors(recorded)
    stages = {call.get("stage") for call in tape.read(cassette).calls.values()}
    assert "synthesis" in stages
    loopback.stop()
    monkeypatch.delenv("OPENAI_API_KEY")
    code, replayed = agent_run(workdir, "wsrep", url, cassette, "replay", workspace,
                               "--golden", str(golden))
    assert code == 0 and without_run_details(replayed) == without_run_details(recorded)
