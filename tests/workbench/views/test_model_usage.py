"""The notebooks' model section: per stage and by tag, from what the report holds, and one
sentence (no empty table) when no model was in use."""

from __future__ import annotations

import re
from dataclasses import replace
from html import unescape

import pandas as pd

from ragspine_eval.provenance import InputRef, RunInputs, RunTimes, collect
from ragspine_eval.workbench.views import model_usage

MODEL = {"provider": "litellm", "model": "openai/loop-1",
         "calls": {"calls": 5, "input_tokens": 700, "output_tokens": 70, "misses": 0,
                   "failed": 0},
         "stages": {"synthesis": {"calls": 2, "input_tokens": 500, "output_tokens": 50},
                    "tool_round": {"calls": 3, "input_tokens": 200, "output_tokens": 20}},
         "by_tag": {"scope=HK": {"cases": 2, "calls": 4, "input_tokens": 600,
                                 "output_tokens": 60},
                    "scope=CN": {"cases": 1, "calls": 1, "input_tokens": 100,
                                 "output_tokens": 10}},
         "cost": {"currency": "EUR", "run": 0.00196, "billed": 0.0,
                  "by_stage": {"synthesis": {"cost": 0.0014}, "tool_round": {"cost": 0.00056}},
                  "by_tag": {"scope=HK": {"cost": 0.00168}, "scope=CN": {"cost": 0.00028}}},
         "cassette": {"path": "c", "mode": "replay", "models": "litellm openai/loop-1",
                      "recorded": "2026-12-06T19:00:00+00:00"}}
LATENCY = {"run": {"n": 3, "p50": 0.02, "p95": 0.3, "max": 0.3},
           "by_tag": {"scope=HK": {"n": 2, "p50": 0.02, "p95": 0.3, "max": 0.3},
                      "scope=CN": {"n": 1, "p50": 0.01, "p95": 0.01, "max": 0.01}},
           "llm": {"(request)": {"calls": 0, "ms": 0, "input_tokens": 700, "output_tokens": 70},
                   "synthesis": {"calls": 2, "ms": 30, "input_tokens": 500, "output_tokens": 50},
                   "tool_round": {"calls": 3, "ms": 12, "input_tokens": 200,
                                  "output_tokens": 20}}}


def provenance(model=MODEL, latency=LATENCY):
    prov = collect(RunInputs(harness="qa", mode="agent", golden=InputRef("g", "f"), model=model))
    return replace(prov, times=RunTimes("t", 1.0, latency))


def test_per_stage_rows_add_up_to_the_run_and_the_request_totals_are_no_row():
    frame = model_usage.by_stage(provenance())
    assert list(frame["stage"]) == ["synthesis", "tool_round", "all stages"]
    rows = frame.set_index("stage")
    assert rows.loc["synthesis", "tokens in"] == 500 and rows.loc["synthesis", "ms"] == 30
    assert rows.loc["tool_round", "cost"] == 0.00056
    total = rows.loc["all stages"]
    assert (total["calls"], total["tokens in"], total["tokens out"], total["ms"]) == (5, 700,
                                                                                     70, 42)
    assert total["cost"] == MODEL["cost"]["run"]


def test_by_tag_joins_counts_cost_and_latency_per_tag_value():
    rows = model_usage.by_tag(provenance()).set_index("value")
    assert rows.loc["HK", "tag"] == "scope" and rows.loc["HK", "cases"] == 2
    assert rows.loc["HK", "calls"] == 4 and rows.loc["HK", "tokens in"] == 600
    assert rows.loc["HK", "cost"] == 0.00168
    assert (rows.loc["HK", "p50 ms"], rows.loc["HK", "p95 ms"]) == (20.0, 300.0)


def test_without_a_price_table_the_cost_is_missing_never_zero():
    model = {k: v for k, v in MODEL.items() if k != "cost"}
    prov = provenance(model)
    assert model_usage.by_stage(prov)["cost"].isna().all()
    assert model_usage.by_tag(prov)["cost"].isna().all()
    assert "no cost: give a price table" in model_usage.totals(prov)


def test_a_report_without_counts_in_its_model_reads_the_trace():
    # the answers harness keeps its calls under times only (they depend on the engine's caches)
    model = {k: MODEL[k] for k in ("provider", "model", "cassette")}
    prov = provenance(model)
    stages = model_usage.by_stage(prov).set_index("stage")
    assert stages.loc["tool_round", "calls"] == 3 and stages.loc["all stages", "tokens in"] == 700
    tags = model_usage.by_tag(prov).set_index("value")
    assert tags.loc["CN", "cases"] == 1 and pd.isna(tags.loc["CN", "calls"])
    assert model_usage.totals(prov) is None


def test_an_answers_report_keeps_what_its_answers_used_under_times_and_is_read_there():
    used = {k: MODEL[k] for k in ("calls", "stages", "by_tag", "cost")}
    prov = provenance({k: MODEL[k] for k in ("provider", "model", "cassette")},
                      {**LATENCY, "model": used})
    assert prov.model_used["calls"]["calls"] == 5
    assert model_usage.by_stage(prov).set_index("stage").loc["tool_round", "cost"] == 0.00056
    assert model_usage.by_tag(prov).set_index("value").loc["HK", "calls"] == 4
    assert model_usage.totals(prov).startswith("5 calls · 700 in / 70 out tokens · cost")


def test_the_section_names_the_model_and_shows_both_tables():
    html = model_usage.section(provenance()).html
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())
    assert text.startswith("model litellm openai/loop-1 · 5 calls replayed, recorded 2026-12-06")
    assert "5 calls · 700 in / 70 out tokens · cost 0.0020 EUR, billed 0.0000 EUR" in text
    assert "Per LLM stage" in text and "By tag value" in text and "cost (EUR)" in text
    assert "(request)" not in text


def test_without_a_model_the_section_is_one_sentence():
    prov = provenance(model=None)
    html = model_usage.section(prov).html
    assert html.count("<p") == 1 and "<table" not in html
    assert "No model in use" in html
    assert "<table" not in model_usage.section(None).html
