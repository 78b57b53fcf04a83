"""A run's cost from a price table the user supplies: read strictly, per run and by tag, and a
replay bills nothing."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.models.prices import PriceTableError, load_prices
from ragspine_eval.models.providers import ProviderSpec
from ragspine_eval.models.recorder import ModelRun
from ragspine_eval.models.usage import ModelUsage

TABLE = '''currency = "EUR"
[models."openai/m"]
input = 2.0
output = 8.0
'''


def table(tmp_path, text=TABLE):
    path = tmp_path / "prices.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_cost_is_tokens_times_the_price_per_million(tmp_path):
    prices = load_prices(table(tmp_path))
    assert prices.currency == "EUR"
    assert prices.cost("openai/m", 1_000_000, 500_000) == 6.0
    assert prices.cost("openai/other", 10, 10) is None  # never a guessed price


@pytest.mark.parametrize(("text", "said"), [
    ("[models.\"m\"]\ninput = 1\n", "needs exactly input and output"),
    ("[models.\"m\"]\ninput = -1\noutput = 1\n", "input must be a number >= 0"),
    ("rate = 1\n", "unknown key 'rate'"),
    ("[models\n", "not a TOML price table"),
])
def test_a_bad_table_is_exit_2_naming_the_key(tmp_path, text, said):
    with pytest.raises(PriceTableError, match=said):
        load_prices(table(tmp_path, text))


def outcome(tokens_in, tokens_out, calls=1):
    """An outcome whose trace saw `calls` calls sharing these tokens (the first takes the
    remainder), and the request's own totals, which count nothing more."""
    out = CaseOutcome(answer="a")
    seen = [{"stage": "synthesis", "ms": 1, "input_tokens": tokens_in // calls
             + (tokens_in % calls if k == 0 else 0), "output_tokens": tokens_out // calls
             + (tokens_out % calls if k == 0 else 0)} for k in range(calls)]
    seen.append({"stage": "(request)", "input_tokens": tokens_in, "output_tokens": tokens_out})
    object.__setattr__(out, "llm_calls_seen", seen)
    return out


def usage_of(run, outcomes, tags):
    """The ModelUsage of one repeat of cases tagged `tags`, none reused."""
    cases = [SimpleNamespace(tags=t) for t in tags]
    return ModelUsage.of(cases, [(outcomes, [False] * len(outcomes))], run)


@pytest.mark.parametrize(("mode", "billed"), [("live", 0.012), ("replay", 0.0)])
def test_cost_per_run_and_by_tag_and_a_replay_bills_nothing(tmp_path, mode, billed):
    cassette = tmp_path / "c.cassette"
    cassette.write_text("# ragspine-eval cassette 1\n", encoding="utf-8")
    run = ModelRun(ProviderSpec("litellm", "openai/m", "http://127.0.0.1:1/v1"),
                   str(cassette) if mode == "replay" else None, mode, str(table(tmp_path)))
    used = usage_of(run, [outcome(3000, 500), outcome(1000, 0, calls=2)],
                    [{"topic": "FIN"}, {"topic": "OPS"}])
    assert {k: used.run[k] for k in ("calls", "input_tokens", "output_tokens", "misses",
                                     "failed", "cases")} == {
        "calls": 3, "input_tokens": 4000, "output_tokens": 500, "misses": 0, "failed": 0,
        "cases": 2}
    # (3000 + 1000) x 2.0 + 500 x 8.0 per million
    assert used.run["cost"] == 0.012 and used.cost["billed"] == billed
    assert used.cost["currency"] == "EUR"
    assert used.by_tag["topic=FIN"]["cost"] == 0.01 and used.by_tag["topic=OPS"]["cost"] == 0.002
    assert used.stages["synthesis"]["cost"] == 0.012  # one stage: the run's


def test_the_run_lines_say_the_cost_per_run_and_by_tag(tmp_path):
    from ragspine_eval.provenance import InputRef, RunInputs, RunTimes, collect

    run = ModelRun(ProviderSpec("litellm", "openai/m", "http://127.0.0.1:1/v1"), None, "live",
                   str(table(tmp_path)))
    used = usage_of(run, [outcome(3000, 500), outcome(1000, 0)], [{"topic": "FIN"},
                                                                  {"topic": "OPS"}])
    prov = collect(RunInputs(harness="qa", mode="agent", golden=InputRef("g", "f"),
                             model=run.to_dict()))
    prov = replace(prov, times=RunTimes("t", 1.0, usage=used.to_dict()))
    lines = prov.lines()
    assert any("cost 0.0120 EUR, billed 0.0120 EUR" in line for line in lines)
    assert "cost by tag: topic=FIN 0.0100 EUR · topic=OPS 0.0020 EUR" in lines


def test_a_model_the_table_does_not_price_has_no_cost_and_no_billed_zero(tmp_path):
    from ragspine_eval.provenance import model_line

    run = ModelRun(ProviderSpec("litellm", "openai/unpriced", "http://127.0.0.1:1/v1"), None,
                   "live", str(table(tmp_path)))
    used = usage_of(run, [outcome(3000, 500)], [{"topic": "FIN"}])
    line = model_line(run.to_dict(), used.to_dict())
    assert "no cost: openai/unpriced is not in the price table" in line
    assert "billed" not in line  # a billed 0 would read as free
