"""The notebooks' model section: per stage and by tag, from the run's one account of its model
calls (`times.usage`), one sentence (no empty table) when no model was in use; and the
banner's sentence of which model answered."""

from __future__ import annotations

import re
from dataclasses import replace
from html import unescape

import pytest

from ragspine_eval.provenance import InputRef, RunInputs, RunTimes, collect
from ragspine_eval.workbench.views import model_usage
from ragspine_eval.workbench.views.model_usage import answered_by

MODEL = {"provider": "litellm", "model": "openai/loop-1",
         "cassette": {"path": "c", "mode": "replay", "models": "litellm openai/loop-1",
                      "recorded": "2026-12-06T19:00:00+00:00"}}
USAGE = {"repeats": 1,
         "run": {"calls": 5, "input_tokens": 700, "output_tokens": 70, "ms": 42, "cases": 3,
                 "misses": 0, "failed": 0, "cost": 0.00196},
         "stages": {"synthesis": {"calls": 2, "input_tokens": 500, "output_tokens": 50, "ms": 30,
                                  "cost": 0.0014},
                    "tool_round": {"calls": 3, "input_tokens": 200, "output_tokens": 20,
                                   "ms": 12, "cost": 0.00056}},
         "by_tag": {"scope=HK": {"cases": 2, "calls": 4, "input_tokens": 600,
                                 "output_tokens": 60, "ms": 40, "cost": 0.00168},
                    "scope=CN": {"cases": 1, "calls": 1, "input_tokens": 100,
                                 "output_tokens": 10, "ms": 2, "cost": 0.00028}},
         "cost": {"currency": "EUR", "prices": "p.toml", "billed": 0.0},
         "request": {"input_tokens": 700, "output_tokens": 70}}
LATENCY = {"run": {"n": 3, "p50": 0.02, "p95": 0.3, "max": 0.3},
           "by_tag": {"scope=HK": {"n": 2, "p50": 0.02, "p95": 0.3, "max": 0.3},
                      "scope=CN": {"n": 1, "p50": 0.01, "p95": 0.01, "max": 0.01}}}


def provenance(model=MODEL, usage=USAGE, latency=LATENCY):
    prov = collect(RunInputs(harness="qa", mode="agent", golden=InputRef("g", "f"), model=model))
    return replace(prov, times=RunTimes("t", 1.0, latency, usage))


def unpriced(usage=USAGE):
    """The usage of the same calls run without a price table: no cost anywhere."""
    def bare(bucket):
        return {k: v for k, v in bucket.items() if k != "cost"}

    return {**{k: v for k, v in usage.items() if k != "cost"}, "run": bare(usage["run"]),
            "stages": {s: bare(b) for s, b in usage["stages"].items()},
            "by_tag": {t: bare(b) for t, b in usage["by_tag"].items()}}


def test_per_stage_rows_add_up_to_the_run_and_the_request_totals_are_no_row():
    frame = model_usage.by_stage(provenance())
    assert list(frame["stage"]) == ["synthesis", "tool_round", "all stages"]
    rows = frame.set_index("stage")
    assert rows.loc["synthesis", "tokens in"] == 500 and rows.loc["synthesis", "ms"] == 30
    assert rows.loc["tool_round", "cost"] == 0.00056
    total = rows.loc["all stages"]
    assert (total["calls"], total["tokens in"], total["tokens out"], total["ms"]) == (5, 700,
                                                                                     70, 42)
    for column in ("calls", "tokens in", "tokens out", "ms"):
        assert total[column] == rows.drop("all stages")[column].sum()
    assert total["cost"] == USAGE["run"]["cost"]


def test_by_tag_joins_counts_cost_and_latency_per_tag_value():
    rows = model_usage.by_tag(provenance()).set_index("value")
    assert rows.loc["HK", "tag"] == "scope" and rows.loc["HK", "cases"] == 2
    assert rows.loc["HK", "calls"] == 4 and rows.loc["HK", "tokens in"] == 600
    assert rows.loc["HK", "cost"] == 0.00168
    assert (rows.loc["HK", "p50 ms"], rows.loc["HK", "p95 ms"]) == (20.0, 300.0)


def test_without_a_price_table_the_cost_is_missing_never_zero():
    prov = provenance(usage=unpriced())
    assert model_usage.by_stage(prov)["cost"].isna().all()
    assert model_usage.by_tag(prov)["cost"].isna().all()
    assert "no cost: give a price table" in model_usage.totals(prov)


def test_an_answers_report_written_before_usage_is_read_where_it_kept_its_counts():
    old = {"calls": {"calls": 5, "input_tokens": 700, "output_tokens": 70, "misses": 0,
                     "failed": 0},
           "stages": {s: {k: b[k] for k in ("calls", "input_tokens", "output_tokens")}
                      for s, b in USAGE["stages"].items()},
           "by_tag": {"scope=HK": {"cases": 2, "calls": 4, "input_tokens": 600,
                                   "output_tokens": 60}},
           "cost": {"currency": "EUR", "run": 0.00196, "billed": 0.0,
                    "by_stage": {"tool_round": {"cost": 0.00056}}, "by_tag": {}}}
    trace = {"synthesis": {"calls": 2, "ms": 30}, "tool_round": {"calls": 3, "ms": 12}}
    prov = provenance(usage=None, latency={**LATENCY, "model": old, "llm": trace})
    stages = model_usage.by_stage(prov).set_index("stage")
    assert stages.loc["tool_round", "cost"] == 0.00056 and stages.loc["synthesis", "ms"] == 30
    assert model_usage.by_tag(prov).set_index("value").loc["HK", "calls"] == 4
    assert model_usage.totals(prov).startswith("5 calls · 700 in / 70 out tokens · cost")


def test_the_section_names_the_model_and_shows_both_tables():
    html = model_usage.section(provenance()).html
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())
    assert text.startswith("model litellm openai/loop-1 · 5 calls replayed, recorded 2026-12-06")
    assert "5 calls · 700 in / 70 out tokens · cost 0.0020 EUR, billed 0.0000 EUR" in text
    assert "Per LLM stage" in text and "By tag value" in text and "cost (EUR)" in text
    assert "(request)" not in text
    repeated = model_usage.totals(provenance(usage={**USAGE, "repeats": 5}))
    assert repeated.startswith("5 calls · 700 in / 70 out tokens · over 5 repeats")


def test_without_a_model_the_section_is_one_sentence():
    prov = provenance(model=None, usage=None)
    html = model_usage.section(prov).html
    assert html.count("<p") == 1 and "<table" not in html
    assert "No model in use" in html
    assert "<table" not in model_usage.section(None).html


REPLAYED = {"provider": "litellm", "model": "openai/loop-1", "base_url": "http://h/v1",
            "cassette": {"path": "c.cassette", "mode": "replay", "engine": "rag-spine 0.17.2",
                         "models": "litellm openai/loop-0 @ http://h/v1",
                         "recorded": "2026-12-05T10:00:00+00:00"}}
CALLS = {"repeats": 1, "run": {"calls": 1204, "input_tokens": 9, "output_tokens": 9,
                               "misses": 0, "failed": 0}, "stages": {}, "by_tag": {}}


def test_the_banner_sentence_says_which_model_answered_and_whether_it_was_replayed():
    # the model the cassette was recorded with is the header's, not this run's flag
    assert answered_by(REPLAYED, CALLS) == ("model litellm openai/loop-1 · 1,204 calls replayed, "
                                            "recorded 2026-12-05 with litellm openai/loop-0; 0 "
                                            "misses")
    recording = {**REPLAYED, "cassette": {"path": "c.cassette", "mode": "record"}}
    assert answered_by(recording, CALLS) == ("model litellm openai/loop-1 · 1,204 calls "
                                             "recorded into c.cassette; 0 misses")
    live = {k: v for k, v in REPLAYED.items() if k != "cassette"}
    assert answered_by(live, CALLS) == ("model litellm openai/loop-1 · 1,204 calls live, "
                                        "nothing recorded; 0 misses")
    # the default MockProvider without a cassette: the provenance has no model, nothing said
    assert answered_by(None) is None and answered_by({"provider": "mock", "model": None}) is None


@pytest.mark.parametrize("html", [False, True])
def test_the_banner_sentence_marks_misses_in_red_and_escapes_in_html(html):
    missed = {**CALLS, "run": {**CALLS["run"], "misses": 3, "failed": 1}}
    said = answered_by({**REPLAYED, "model": "<m>"}, missed, html=html)
    if html:
        assert "model litellm &lt;m&gt;" in said
        assert said.endswith('; <b style="color:#b2182b">3 misses</b>, '
                             '<b style="color:#b2182b">1 failed</b>')
        assert "color" not in answered_by(REPLAYED, CALLS, html=True)  # 0 misses: no alarm
    else:
        assert said.endswith("; 3 misses, 1 failed")


def test_the_banner_sentence_says_when_cases_made_no_call_because_the_cache_had_them():
    said = answered_by(REPLAYED, {**CALLS, "run": {**CALLS["run"], "calls": 0}},
                       cache={"reused": 71, "computed": 0})
    assert said == ("model litellm openai/loop-1 · 0 calls replayed, recorded 2026-12-05 with "
                    "litellm openai/loop-0 (71 cases reused from the outcome cache, with no "
                    "call); 0 misses")
