"""What a run's model calls used: calls and tokens per run, per stage and per tag, and their
cost from the user's price table (prices.py).

Each outcome carries the LLM calls the engine's trace reported while it answered
(execution.latency.timed sets them as the attribute `llm_calls_seen`, a floor above: read here
by name). The trace writes one entry per call, with its stage (synthesis, tool_round,
translation, listwise_rerank, ...) and the prompt and completion tokens the engine read from
the response's usage; a replayed response carries its recorded usage, so a replay counts the
tokens the recording paid for. The trace also keeps the request's own totals as a pseudo-stage
`REQUEST`: it counts only the agent loop's calls, so nothing here adds it.

Invariants:
- the tokens of a run, of a stage and of a tag are sums of the same per-call figures, so the
  stages add up to the run, and so do the values of one tag name;
- a case reused from the outcome cache made no call and counts none (it has no trace);
- a stage's or a tag's cost is its tokens priced like the run's (the run's model); a model the
  table does not list has no cost (None); a replay bills nothing (`billed` 0), whatever it cost
  when it was recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ragspine_eval.models.prices import PriceTable

LLM_ATTR = "llm_calls_seen"  # execution.latency.LLM_ATTR
REQUEST = "(request)"  # execution.latency.REQUEST
TOKENS = ("input_tokens", "output_tokens")


def _calls(outcome: Any) -> list[Mapping[str, Any]]:
    return [call for call in getattr(outcome, LLM_ATTR, None) or ()
            if call.get("stage") != REQUEST]


def _add(bucket: dict[str, int], call: Mapping[str, Any]) -> None:
    bucket["calls"] += 1
    for key in TOKENS:
        bucket[key] += int(call.get(key) or 0)


def _empty() -> dict[str, int]:
    return {"calls": 0, "input_tokens": 0, "output_tokens": 0}


def calls_of(outcomes: Iterable[Any], failures: Any = None) -> dict[str, int]:
    """The model calls of a run: calls, prompt and completion tokens, and the cases a replay
    miss or a failed call made an engine error (`failures`: the error names that count as a
    miss, and those that count as failed)."""
    miss, failed = failures or ((), ())
    out = {**_empty(), "misses": 0, "failed": 0}
    for outcome in outcomes:
        for call in _calls(outcome):
            _add(out, call)
        error = str(getattr(outcome, "error", "") or "")
        out["misses"] += bool(miss) and error.startswith(tuple(miss))
        out["failed"] += bool(failed) and error.startswith(tuple(failed))
    return out


def by_stage(outcomes: Iterable[Any]) -> dict[str, dict[str, int]]:
    """{stage: {calls, input_tokens, output_tokens}}, stages sorted by name."""
    out: dict[str, dict[str, int]] = {}
    for outcome in outcomes:
        for call in _calls(outcome):
            _add(out.setdefault(str(call.get("stage")), _empty()), call)
    return dict(sorted(out.items()))


def by_tag(outcomes: Iterable[Any], tags: Iterable[Mapping[str, str]]
           ) -> dict[str, dict[str, int]]:
    """{"name=value": {cases, calls, input_tokens, output_tokens}} over each outcome's case
    tags (`tags`, in the order of `outcomes`; a repeat of a case counts as a case again)."""
    out: dict[str, dict[str, int]] = {}
    for outcome, case_tags in zip(outcomes, tags):
        one = calls_of([outcome])
        for name, value in sorted(case_tags.items()):
            bucket = out.setdefault(f"{name}={value}", {"cases": 0, **_empty()})
            bucket["cases"] += 1
            for key in ("calls", *TOKENS):
                bucket[key] += one[key]
    return dict(sorted(out.items()))


def cost_of(table: PriceTable, model: str | None, replayed: bool, calls: Mapping[str, Any],
            stages: Mapping[str, Mapping[str, Any]], tags: Mapping[str, Mapping[str, Any]]
            ) -> dict[str, Any]:
    """The cost of a run (`calls` its totals), of each stage and of each tag, from `table`:
    {"currency", "prices", "run", "billed", "by_tag": {tag: {tokens, cost}}, "by_stage":
    {stage: {tokens, cost}}}."""
    def priced(counts: Mapping[str, Any]) -> dict[str, Any]:
        tokens = {key: int(counts.get(key) or 0) for key in TOKENS}
        return {**tokens, "cost": table.cost(model, **tokens)}

    total = priced(calls)["cost"]
    return {"currency": table.currency, "prices": str(table.path), "run": total,
            "billed": 0.0 if replayed else total,
            "by_tag": {tag: priced(counts) for tag, counts in tags.items()},
            "by_stage": {stage: priced(counts) for stage, counts in stages.items()}}
