"""A run's calls and tokens per stage and by tag: each call's tokens under its own stage, the
stages adding up to the run, a replay counting what the recording paid for, and the cost of
each stage from the price table; checked against a model server on 127.0.0.1."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopback_llm import LoopbackModel
from ragspine_eval import paths
from ragspine_eval.cli.app import main
from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.models import cassette as tape
from ragspine_eval.models.prices import load_prices
from ragspine_eval.models.usage import ModelUsage

PRICES = '''currency = "EUR"
[models."openai/loop-1"]
input = 2.0
output = 8.0
'''


def outcome(*calls, error=None):
    out = CaseOutcome(answer="a", error=error)
    object.__setattr__(out, "llm_calls_seen", list(calls))
    return out


def call(stage, tokens_in, tokens_out, ms=1):
    return {"stage": stage, "ms": ms, "input_tokens": tokens_in, "output_tokens": tokens_out}


def case(**tags):
    return SimpleNamespace(tags=tags)


def once(outcomes, tags=None, reused=None):
    """ModelUsage of one repeat, no model (the trace's calls alone)."""
    cases = [case(**t) for t in (tags or [{}] * len(outcomes))]
    return ModelUsage.of(cases, [(outcomes, reused or [False] * len(outcomes))])


def counts(bucket):
    return {k: bucket[k] for k in ("calls", "input_tokens", "output_tokens")}


def test_each_calls_tokens_count_under_its_stage_and_the_requests_totals_are_kept_apart():
    one = outcome(call("tool_round", 100, 10), call("synthesis", 300, 40),
                  {"stage": "(request)", "ms": 0, "input_tokens": 400, "output_tokens": 50})
    two = outcome(call("translation", 20, 20), call("synthesis", 200, 30))
    used = once([one, two])
    assert {s: counts(b) for s, b in used.stages.items()} == {
        "synthesis": {"calls": 2, "input_tokens": 500, "output_tokens": 70},
        "tool_round": {"calls": 1, "input_tokens": 100, "output_tokens": 10},
        "translation": {"calls": 1, "input_tokens": 20, "output_tokens": 20}}
    assert used.run == {"calls": 4, "input_tokens": 620, "output_tokens": 100, "ms": 4,
                        "cases": 2, "misses": 0, "failed": 0}
    assert used.request == {"input_tokens": 400, "output_tokens": 50}
    assert "(request)" not in used.stages


def test_by_tag_counts_cases_and_calls_and_each_tag_name_adds_up_to_the_run():
    runs = [outcome(call("synthesis", 10, 1)), outcome(call("synthesis", 30, 3),
                                                       call("tool_round", 5, 5)), outcome()]
    tags = [{"scope": "HK", "topic": "FIN"}, {"scope": "CN", "topic": "FIN"}, {"scope": "HK"}]
    got = once(runs, tags)
    assert got.by_tag["scope=HK"] == {"cases": 2, "calls": 1, "input_tokens": 10,
                                      "output_tokens": 1, "ms": 1}
    assert got.by_tag["topic=FIN"] == {"cases": 2, "calls": 3, "input_tokens": 45,
                                       "output_tokens": 9, "ms": 3}
    for key in ("calls", "input_tokens", "output_tokens", "ms"):
        assert got.by_tag["scope=HK"][key] + got.by_tag["scope=CN"][key] == got.run[key]


def test_no_model_and_no_call_is_nothing_to_say_and_a_reused_case_counts_nothing():
    assert once([outcome(), outcome()]) is None  # a tool run: its report as before
    used = once([outcome(call("synthesis", 9, 9)), outcome(call("synthesis", 5, 5))],
                reused=[True, False])
    assert used.run["calls"] == 1 and used.run["cases"] == 1


def test_tokens_no_call_reported_are_absent_never_zero():
    # the MockProvider's calls carry no usage: the trace says stage and ms only
    used = once([outcome({"stage": "synthesis", "ms": 3}), outcome({"stage": "tool_round",
                                                                    "ms": 1})], [{"t": "x"}] * 2)
    assert used.stages["synthesis"] == {"calls": 1, "ms": 3}
    assert "input_tokens" not in used.run and "input_tokens" not in used.by_tag["t=x"]


STAGES = st.sampled_from(["synthesis", "tool_round", "translation", "listwise_rerank"])
CALLS = st.lists(st.builds(call, STAGES, st.integers(0, 10_000), st.integers(0, 10_000),
                           st.integers(0, 500)), max_size=6)


@given(st.lists(st.lists(st.tuples(CALLS, st.booleans()), min_size=3, max_size=3),
                min_size=1, max_size=4),
       st.lists(st.sampled_from(["HK", "CN", "GROUP"]), min_size=3, max_size=3))
def test_every_repeat_counts_once_and_the_stages_and_tag_values_add_up_to_the_run(repeats, scopes):
    # each case's trace also holds the request's own totals, which no bucket adds
    request = {"stage": "(request)", "ms": 0, "input_tokens": 7, "output_tokens": 7}
    runs = [([outcome(*calls, request) for calls, _ in rep], [was for _, was in rep])
            for rep in repeats]
    cases = [case(scope=s) for s in scopes]
    used = ModelUsage.of(cases, runs, None)
    every = [c for rep in repeats for calls, was in rep if not was for c in calls]
    if not every:
        assert used is None
        return
    assert used.repeats == len(repeats)
    assert used.run["cases"] == sum(not was for rep in repeats for _, was in rep)
    for key in ("input_tokens", "output_tokens", "ms"):
        assert used.run[key] == sum(c[key] for c in every)
    assert used.run["calls"] == len(every)
    for buckets in (used.stages, used.by_tag):
        for key in ("calls", "input_tokens", "output_tokens", "ms"):
            assert sum(b[key] for b in buckets.values()) == used.run[key]
    assert sum(b["cases"] for b in used.by_tag.values()) == used.run["cases"]


def test_a_stage_costs_its_tokens_at_the_runs_price_and_a_replay_bills_nothing(tmp_path):
    (tmp_path / "p.toml").write_text(PRICES, encoding="utf-8")
    table = load_prices(tmp_path / "p.toml")
    used = once([outcome(call("synthesis", 1_000_000, 0), call("tool_round", 0, 250_000)),
                 outcome(call("tool_round", 0, 250_000))])
    used.price(table, "openai/loop-1", replayed=True)
    # 1M in x 2.0 and 0.5M out x 8.0 per million
    assert used.stages["synthesis"]["cost"] == 2.0 and used.stages["tool_round"]["cost"] == 4.0
    assert used.run["cost"] == 6.0 and used.cost["billed"] == 0.0
    assert used.cost["currency"] == "EUR"
    used.price(table, "openai/other", replayed=False)
    assert used.stages["synthesis"]["cost"] is None  # never a guessed price
    assert used.run["cost"] is None and used.cost["billed"] is None


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
    used = recorded["times"]["usage"]
    assert {stage: counts(b) for stage, b in used["stages"].items()} == expected
    # the stages add up to the run, and to the request totals the engine reports itself
    for key in ("input_tokens", "output_tokens"):
        assert sum(s[key] for s in expected.values()) == used["run"][key] \
            == used["request"][key] > 0

    loopback.stop()
    monkeypatch.delenv("OPENAI_API_KEY")
    replayed = run(tmp_path, "replay", url, "replay", golden)["times"]["usage"]
    assert {stage: counts(b) for stage, b in replayed["stages"].items()} == expected
    assert replayed["cost"]["billed"] == 0.0
    assert replayed["run"]["cost"] == used["run"]["cost"] > 0
    for stage, kept in expected.items():
        assert replayed["stages"][stage]["cost"] == pytest.approx(
            (kept["input_tokens"] * 2.0 + kept["output_tokens"] * 8.0) / 1e6)
    said = capsys.readouterr().out
    assert "(request)" not in said
    assert "synthesis " in said.split("LLM calls per stage (the engine's trace): ")[-1]
