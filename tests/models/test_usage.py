"""A run's calls and tokens per stage and by tag: each call's tokens under its own stage, the
stages adding up to the run, a replay counting what the recording paid for, and the cost of
each stage from the price table; checked against a model server on 127.0.0.1."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopback_llm import LoopbackModel
from ragspine_eval import paths
from ragspine_eval.cli.app import main
from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.models import cassette as tape
from ragspine_eval.models import usage
from ragspine_eval.models.prices import load_prices

PRICES = '''currency = "EUR"
[models."openai/loop-1"]
input = 2.0
output = 8.0
'''


def outcome(*calls, error=None):
    out = CaseOutcome(answer="a", error=error)
    object.__setattr__(out, "llm_calls_seen", list(calls))
    return out


def call(stage, tokens_in, tokens_out):
    return {"stage": stage, "ms": 1, "input_tokens": tokens_in, "output_tokens": tokens_out}


def test_each_calls_tokens_count_under_its_stage_and_the_requests_totals_add_nothing():
    one = outcome(call("tool_round", 100, 10), call("synthesis", 300, 40),
                  {"stage": "(request)", "ms": 0, "input_tokens": 400, "output_tokens": 50})
    two = outcome(call("translation", 20, 20), call("synthesis", 200, 30))
    assert usage.by_stage([one, two]) == {
        "synthesis": {"calls": 2, "input_tokens": 500, "output_tokens": 70},
        "tool_round": {"calls": 1, "input_tokens": 100, "output_tokens": 10},
        "translation": {"calls": 1, "input_tokens": 20, "output_tokens": 20}}
    assert usage.calls_of([one, two]) == {"calls": 4, "input_tokens": 620, "output_tokens": 100,
                                          "misses": 0, "failed": 0}


def test_by_tag_counts_cases_and_calls_and_each_tag_name_adds_up_to_the_run():
    runs = [outcome(call("synthesis", 10, 1)), outcome(call("synthesis", 30, 3),
                                                       call("tool_round", 5, 5)), outcome()]
    tags = [{"scope": "HK", "topic": "FIN"}, {"scope": "CN", "topic": "FIN"}, {"scope": "HK"}]
    got = usage.by_tag(runs, tags)
    assert got["scope=HK"] == {"cases": 2, "calls": 1, "input_tokens": 10, "output_tokens": 1}
    assert got["topic=FIN"] == {"cases": 2, "calls": 3, "input_tokens": 45, "output_tokens": 9}
    total = usage.calls_of(runs)
    for key in ("calls", "input_tokens", "output_tokens"):
        assert got["scope=HK"][key] + got["scope=CN"][key] == total[key]


STAGES = st.sampled_from(["synthesis", "tool_round", "translation", "listwise_rerank"])
CALLS = st.lists(st.builds(call, STAGES, st.integers(0, 10_000), st.integers(0, 10_000)),
                 max_size=6)


@given(st.lists(st.tuples(CALLS, st.sampled_from(["HK", "CN", "GROUP"])), max_size=8))
def test_the_stages_and_the_values_of_one_tag_add_up_to_the_run(cases):
    # each case's trace also holds the request's own totals, which must add nothing
    runs = [outcome(*calls, {"stage": "(request)", "ms": 0, "input_tokens": 7,
                             "output_tokens": 7}) for calls, _ in cases]
    tags = [{"scope": scope} for _, scope in cases]
    total = usage.calls_of(runs)
    every = [c for calls, _ in cases for c in calls]
    assert (total["calls"], total["input_tokens"], total["output_tokens"]) == (
        len(every), sum(c["input_tokens"] for c in every), sum(c["output_tokens"] for c in every))
    for counts in (usage.by_stage(runs), usage.by_tag(runs, tags)):
        for key in ("calls", "input_tokens", "output_tokens"):
            assert sum(c[key] for c in counts.values()) == total[key]
    assert sum(c["cases"] for c in usage.by_tag(runs, tags).values()) == len(cases)


def test_a_stage_costs_its_tokens_at_the_runs_price_and_a_replay_bills_nothing(tmp_path):
    (tmp_path / "p.toml").write_text(PRICES, encoding="utf-8")
    table = load_prices(tmp_path / "p.toml")
    stages = {"synthesis": {"calls": 1, "input_tokens": 1_000_000, "output_tokens": 0},
              "tool_round": {"calls": 2, "input_tokens": 0, "output_tokens": 500_000}}
    calls = {"input_tokens": 1_000_000, "output_tokens": 500_000}
    cost = usage.cost_of(table, "openai/loop-1", True, calls, stages, {})
    # 1M in x 2.0 and 0.5M out x 8.0 per million
    assert cost["by_stage"]["synthesis"]["cost"] == 2.0
    assert cost["by_stage"]["tool_round"]["cost"] == 4.0
    assert cost["run"] == 6.0 and cost["billed"] == 0.0 and cost["currency"] == "EUR"
    assert usage.cost_of(table, "openai/other", False, calls, stages, {})["by_stage"][
        "synthesis"]["cost"] is None  # never a guessed price


# --- against a model on 127.0.0.1 ------------------------------------------------------------

needs_litellm = pytest.mark.skipif(importlib.util.find_spec("litellm") is None,
                                   reason="the models extra (pip install -e '.[models]')")
IDS = ("num-001", "clar-001", "nar-003", "nar-004", "comp-001")


@pytest.fixture
def loopback():
    server = LoopbackModel(seed=3).start()
    yield server
    server.stop()


def run(work: Path, name: str, url: str, mode: str, golden: Path) -> dict:
    report = work / f"{name}.json"
    code = main(["qa", "--mode", "agent", "--provider", "litellm", "--model", "openai/loop-1",
                 "--base-url", url, "--cassette", str(work / "c.cassette"), "--cassette-mode",
                 mode, "--prices", str(work / "p.toml"), "--golden", str(golden), "--jobs", "1",
                 "--report", str(report), "--baseline", str(work / "baseline.json"),
                 "--no-store"])
    assert code == 0
    return json.loads(report.read_text(encoding="utf-8"))["provenance"]


@needs_litellm
def test_recorded_and_replayed_tokens_per_stage_are_the_models_own(tmp_path, loopback,
                                                                   monkeypatch, capsys):
    monkeypatch.setenv("RAGSPINE_EVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (tmp_path / "p.toml").write_text(PRICES, encoding="utf-8")
    lines = paths.QA_GOLDEN_SET.read_text(encoding="utf-8").splitlines()
    golden = tmp_path / "golden.jsonl"
    golden.write_text("\n".join(line for line in lines
                                if json.loads(line)["id"] in IDS) + "\n", encoding="utf-8")

    url = loopback.base_url
    recorded = run(tmp_path, "record", url, "record", golden)
    # what the cassette kept: each call's stage (as the provider saw it) and the usage the
    # server answered with, an account kept apart from the engine's trace
    expected: dict[str, dict[str, int]] = {}
    for kept in tape.read(tmp_path / "c.cassette").calls.values():
        stage = expected.setdefault(kept["stage"], {"calls": 0, "input_tokens": 0,
                                                    "output_tokens": 0})
        stage["calls"] += 1
        stage["input_tokens"] += kept["response"]["usage"]["prompt_tokens"]
        stage["output_tokens"] += kept["response"]["usage"]["completion_tokens"]
    assert {"synthesis", "tool_round"} <= set(expected)
    assert recorded["model"]["stages"] == expected
    # the stages add up to the run, and to the request totals the engine reports itself
    request = recorded["times"]["latency"]["llm"]["(request)"]
    for key in ("input_tokens", "output_tokens"):
        assert sum(s[key] for s in expected.values()) == recorded["model"]["calls"][key] \
            == request[key] > 0

    loopback.stop()
    monkeypatch.delenv("OPENAI_API_KEY")
    replayed = run(tmp_path, "replay", url, "replay", golden)
    assert replayed["model"]["stages"] == expected
    cost = replayed["model"]["cost"]
    assert cost["billed"] == 0.0 and cost["run"] == recorded["model"]["cost"]["run"] > 0
    for stage, counts in expected.items():
        assert cost["by_stage"][stage]["cost"] == round(
            (counts["input_tokens"] * 2.0 + counts["output_tokens"] * 8.0) / 1e6, 6)
    said = capsys.readouterr().out
    assert "(request)" not in said
    assert "synthesis " in said.split("LLM calls per stage (the engine's trace): ")[-1]
