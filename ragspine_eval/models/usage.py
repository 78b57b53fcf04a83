"""What a run's model calls used: calls, tokens, milliseconds and cost per run, per stage and
by tag, counted once over every repeat: `ModelUsage`, the one account every output reads.

Each outcome carries the LLM calls the engine's trace reported while it answered
(execution.latency.timed sets them as the attribute `llm_calls_seen`, a floor above: read here
by name). The trace writes one entry per call, with its stage (synthesis, tool_round,
translation, listwise_rerank, ...), its milliseconds and the prompt and completion tokens the
engine read from the response's usage; a replayed response carries its recorded usage, so a
replay counts the tokens the recording paid for. The trace also keeps the request's own totals
as a pseudo-stage `REQUEST`: it counts only the agent loop's calls, so no bucket adds it (it is
kept apart, `request`, as the engine's own figure to check against).

`ModelUsage.of(cases, runs, model)` counts the outcomes of every repeat (`runs`: per repeat the
outcomes in case order and whether each was reused) and is stored once, under
`provenance.times.usage` (pipeline/report.py `with_usage`), for every harness that asks an
engine: the console's model line and per-stage line, the Markdown summary, the JSON and the
notebooks' model section all read that figure (provenance.py `Provenance.model_usage`). It sits
under `times` because part of it varies between two runs of the same inputs by nature (the
milliseconds; an answer run's calls, which depend on what the engine's caches hold).

Invariants:
- the calls, tokens and milliseconds of the run, of a stage and of a tag are sums of the same
  per-call figures, so the stages add up to the run, and so do the values of one tag name;
- a case reused from the outcome cache made no call and counts none (no call, no case);
  `cases` counts the answers the engine computed, each repeat's again;
- tokens no call reported (the MockProvider reports none) are absent, never counted as 0;
- a stage's or a tag's cost is its tokens priced like the run's (the run's model); a model the
  table does not list has no cost (None); without a price table there is no `cost` at all; a
  replay bills nothing (`billed` 0), whatever it cost when it was recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragspine_eval.models.prices import PriceTable

LLM_ATTR = "llm_calls_seen"  # execution.latency.LLM_ATTR
REQUEST = "(request)"  # engines.trace.REQUEST
TOKENS = ("input_tokens", "output_tokens")
COUNTS = ("calls", *TOKENS, "ms")


def _empty() -> dict[str, int]:
    return {key: 0 for key in COUNTS}


def _add(bucket: dict[str, int], call: Mapping[str, Any]) -> None:
    bucket["calls"] += 1
    for key in (*TOKENS, "ms"):
        bucket[key] += int(call.get(key) or 0)


@dataclass
class ModelUsage:
    """A run's model calls over every repeat (module docstring). Each bucket holds calls,
    input_tokens, output_tokens and ms, and with a price table its `cost`; `run` also the
    computed `cases`, the `misses` (a replay's) and `failed` calls that made cases engine
    errors; a `by_tag` bucket its `cases`."""

    repeats: int
    run: dict[str, Any]
    stages: dict[str, dict[str, Any]]
    by_tag: dict[str, dict[str, Any]]
    cost: dict[str, Any] | None = None  # {"currency", "prices", "billed"}: with a price table
    paid: dict[str, int] | None = None  # what this run paid for (a cassette's answers: free)
    request: dict[str, int] | None = None  # the engine's own per-request token totals

    @classmethod
    def of(cls, cases: Sequence[Any], runs: Sequence[tuple[Sequence[Any], Sequence[bool]]],
           model: Any = None) -> ModelUsage | None:
        """The usage of every repeat of `runs` over `cases` (each with its `tags`); `model`
        (models.ModelRun, None: the MockProvider) names the failures, the paid calls and the
        price table. None when no model is in use and the trace saw no call (nothing to say,
        so a run without a model writes what it wrote before)."""
        computed = [(dict(case.tags), out) for outcomes, reused in runs
                    for case, out, was in zip(cases, outcomes, reused)
                    if not was and out is not None]
        usage = counted(computed, _failures(model), len(runs))
        if model is None and not usage.run["calls"]:
            return None
        if model is not None:
            usage.paid = _paid(model)
            if model.prices:
                from ragspine_eval.models.prices import load_prices

                table = load_prices(model.prices)
                assert table is not None  # checked before the run (ModelRun.check_prices)
                usage.price(table, model.spec.model, model.mode == "replay")
        return usage

    def price(self, table: PriceTable, model: str | None, replayed: bool) -> None:
        """Each bucket's cost from `table` (None for a model it does not list), and what the
        run billed: nothing for a replay, else its paid calls' tokens (all of them when what
        it paid is not known)."""
        def cost(counts: Mapping[str, Any]) -> float | None:
            return table.cost(model, *(int(counts.get(key) or 0) for key in TOKENS))

        for bucket in (self.run, *self.stages.values(), *self.by_tag.values()):
            bucket["cost"] = cost(bucket)
        billed = 0.0 if replayed else cost(self.paid if self.paid is not None else self.run)
        self.cost = {"currency": table.currency, "prices": str(table.path), "billed": billed}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"repeats": self.repeats, "run": self.run, "stages": self.stages,
                               "by_tag": self.by_tag}
        for key in ("cost", "paid", "request"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


def counted(computed: Iterable[tuple[Mapping[str, str], Any]],
            failures: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()), repeats: int = 1
            ) -> ModelUsage:
    """The calls of (case tags, outcome) pairs, one per computed answer: per run, per stage
    (sorted by name) and per tag value (`failures`: the error names that count as a replay's
    miss, and those that count as a failed call)."""
    miss, failed = failures
    run = {**_empty(), "cases": 0, "misses": 0, "failed": 0}
    stages: dict[str, dict[str, int]] = {}
    tags: dict[str, dict[str, int]] = {}
    request: dict[str, int] | None = None
    reported = False
    for case_tags, outcome in computed:
        one = _empty()
        for call in getattr(outcome, LLM_ATTR, None) or ():
            if call.get("stage") == REQUEST:
                request = request or dict.fromkeys(TOKENS, 0)
                for key in TOKENS:
                    request[key] += int(call.get(key) or 0)
                continue
            reported = reported or any(key in call for key in TOKENS)
            _add(one, call)
            _add(stages.setdefault(str(call.get("stage")), _empty()), call)
        run["cases"] += 1
        for key in COUNTS:
            run[key] += one[key]
        error = str(getattr(outcome, "error", "") or "")
        run["misses"] += bool(miss) and error.startswith(miss)
        run["failed"] += bool(failed) and error.startswith(failed)
        for name, value in sorted(case_tags.items()):
            bucket = tags.setdefault(f"{name}={value}", {"cases": 0, **_empty()})
            bucket["cases"] += 1
            for key in COUNTS:
                bucket[key] += one[key]
    if not reported:  # no call said its tokens (the MockProvider): none, never a count of 0
        for bucket in (run, *stages.values(), *tags.values()):
            for key in TOKENS:
                del bucket[key]
    return ModelUsage(repeats, run, dict(sorted(stages.items())), dict(sorted(tags.items())),
                      request=request)


def _failures(model: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The error names of a replay miss and of a failed call (models/recorder.py)."""
    if model is None:
        return (), ()
    from ragspine_eval.models.recorder import CassetteMiss, ModelCallFailed

    return (CassetteMiss.__name__,), (ModelCallFailed.__name__,)


def _paid(model: Any) -> dict[str, int] | None:
    paid = model.paid()
    return None if paid is None else {k: int(paid[k]) for k in ("calls", *TOKENS)}
