"""The model's tokens, cost and latency: the section the qa and answers notebooks show after
their gates, per LLM stage and by tag, read from a report's provenance; and the banner's
sentence of which model answered (`answered_by`).

Where each figure comes from (nothing is recomputed from cases): the run's one account of its
model calls, `Provenance.model_usage` (models/usage.py's `ModelUsage`, every repeat, under
`provenance.times.usage`; for a report written before it, derived from where that report kept
its counts), the figure the console's model and per-stage lines read too:
- per stage: calls, tokens in and out, cost and the milliseconds of the engine's trace;
- by tag: cases, calls, tokens and cost from the usage's `by_tag`; the p50 and p95 of the wall
  time per case from `times.latency.by_tag` (the first repeat's cases, those that errored left
  out: execution/latency.py);
- the "(request)" pseudo-stage (the request's own token totals) is never a row.

Invariants: a report without a model (the MockProvider without a cassette) gives one sentence,
no empty table; a figure the report does not hold is missing ("–"), never 0; a cost is shown
only from the run's price table, in its currency; the "all stages" row is the usage's run,
which the stages add up to.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

import pandas as pd

from ragspine_eval.provenance import Provenance

NO_MODEL = ("No model in use: the engine ran with its MockProvider and no cassette (or asked no "
            "model), so there are no tokens and no cost. To measure one, set provider and model, "
            "or a cassette, in the parameters cell (the qa notebook: with mode \"agent\").")
STAGE_COLUMNS = ["stage", "calls", "tokens in", "tokens out", "cost", "ms"]
TAG_COLUMNS = ["tag", "value", "cases", "calls", "tokens in", "tokens out", "cost", "p50 ms",
               "p95 ms"]


def _latency(prov: Provenance | None) -> Mapping[str, Any]:
    return ((prov.times.latency or {}) if prov is not None and prov.times is not None else {})


def _usage(prov: Provenance | None) -> Mapping[str, Any]:
    return (prov.model_usage or {}) if prov is not None else {}


def _cost(prov: Provenance | None) -> Mapping[str, Any]:
    return _usage(prov).get("cost") or {}


def by_stage(prov: Provenance | None) -> pd.DataFrame:
    """One row per LLM stage: calls, tokens in and out, cost (None without a price table or
    for a model it does not list), ms (the engine's trace); then "all stages", the run's."""
    usage = _usage(prov)
    rows = [{"stage": stage, "calls": c.get("calls"), "tokens in": c.get("input_tokens"),
             "tokens out": c.get("output_tokens"), "cost": c.get("cost"), "ms": c.get("ms")}
            for stage, c in sorted((usage.get("stages") or {}).items())]
    frame = pd.DataFrame(rows, columns=STAGE_COLUMNS)
    if len(frame) > 1:
        run = usage.get("run") or {}
        total = {"stage": "all stages", "cost": run.get("cost")}
        for column, key in (("calls", "calls"), ("tokens in", "input_tokens"),
                            ("tokens out", "output_tokens"), ("ms", "ms")):
            total[column] = run.get(key, None if frame[column].isna().any()
                                    else frame[column].sum())
        frame = pd.concat([frame, pd.DataFrame([total], columns=STAGE_COLUMNS)],
                          ignore_index=True)
    for column in ("calls", "tokens in", "tokens out", "ms"):
        frame[column] = frame[column].astype("Int64")
    frame["cost"] = frame["cost"].astype("Float64")
    return frame


def by_tag(prov: Provenance | None) -> pd.DataFrame:
    """One row per tag value: cases, calls, tokens in and out, cost, and the p50 and p95 of
    the wall time per case in ms; every tag value the usage or the latency name."""
    counts = _usage(prov).get("by_tag") or {}
    latency = _latency(prov).get("by_tag") or {}
    rows = []
    for bucket in sorted(set(counts) | set(latency)):
        tag, _, value = bucket.partition("=")
        c, timed = counts.get(bucket) or {}, latency.get(bucket) or {}
        rows.append({"tag": tag, "value": value,
                     "cases": c.get("cases", timed.get("n")), "calls": c.get("calls"),
                     "tokens in": c.get("input_tokens"), "tokens out": c.get("output_tokens"),
                     "cost": c.get("cost"),
                     "p50 ms": _ms(timed.get("p50")), "p95 ms": _ms(timed.get("p95"))})
    frame = pd.DataFrame(rows, columns=TAG_COLUMNS)
    for column in ("cases", "calls", "tokens in", "tokens out"):
        frame[column] = frame[column].astype("Int64")
    for column in ("cost", "p50 ms", "p95 ms"):
        frame[column] = frame[column].astype("Float64")
    return frame


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def totals(prov: Provenance | None) -> str | None:
    """"128 calls · 13,163 in / 6,790 out tokens · cost 0.0060 USD, billed 0.0000 USD" (or
    what a missing price table means), None where the report counted no call."""
    run = _usage(prov).get("run")
    if not isinstance(run, Mapping):
        return None
    out = (f"{run.get('calls', 0):,} calls · {run.get('input_tokens', 0):,} in / "
           f"{run.get('output_tokens', 0):,} out tokens")
    repeats = _usage(prov).get("repeats") or 1
    if repeats > 1:
        out += f" · over {repeats} repeats"
    cost = _cost(prov)
    if not cost:
        return out + " · no cost: give a price table (the prices parameter, or --prices FILE)"
    unit = cost.get("currency", "")
    if run.get("cost") is None:
        model = (prov.model or {}) if prov is not None else {}
        return out + f" · no cost: the price table does not list {model.get('model')}"
    return out + f" · cost {run['cost']:.4f} {unit}, billed {cost.get('billed') or 0:.4f} {unit}"


def section(prov: Provenance | None) -> Any:
    """The notebook's section: which model answered, its totals, the per-stage table and the
    by-tag table; one sentence when no model was in use."""
    from ragspine_eval.workbench.views.html import Html
    from ragspine_eval.workbench.views.tables import static

    said = (answered_by(prov.model, prov.model_usage, html=True, cache=prov.cache)
            if prov is not None else None)
    if said is None:
        return Html(f'<p class="ragspine-eval-note">{escape(NO_MODEL)}</p>')
    unit = escape(str(_cost(prov).get("currency", "")))
    parts = [f"<p><b>{said}</b></p>"]
    line = totals(prov)
    if line:
        parts.append(f"<p>{escape(line)}</p>")
    stages, tags = by_stage(prov), by_tag(prov)
    for title, frame, one_decimal in (
            ("Per LLM stage (ms: the engine's trace, summed over calls)", stages, []),
            ("By tag value (p50 and p95: wall time per case)", tags, ["p50 ms", "p95 ms"])):
        if frame.empty:
            continue
        shown = frame.rename(columns={"cost": f"cost ({unit})" if unit else "cost"})
        counts = [c for c in ("cases", "calls", "tokens in", "tokens out", "ms") if c in shown]
        styler = (static(shown).format("{:,}", subset=counts, na_rep="–")
                  .format("{:.1f}", subset=[c for c in one_decimal if c in shown], na_rep="–"))
        parts.append(f"<h4>{escape(title)}</h4>{styler.to_html()}")
    return Html("".join(parts))


def answered_by(model: Mapping[str, Any] | None, usage: Mapping[str, Any] | None = None, *,
                html: bool = False, cache: Mapping[str, Any] | None = None) -> str | None:
    """Which model answered and whether it was replayed, the sentence a banner opens with:
    "model litellm openai/x · 128 calls replayed, recorded 2026-12-06 with litellm openai/x;
    0 misses" (the calls from `usage`, a `ModelUsage` as a dict). None without a model (the
    MockProvider without a cassette: the provenance has no `model`). `html`: escaped, and
    misses or failed calls in red when there are any. `cache` (the provenance's): the cases
    reused from the outcome cache are said, since they made no call."""
    if not model or (model.get("provider") == "mock" and not model.get("cassette")):
        return None

    def text(value: str) -> str:
        return escape(value) if html else value

    def alarm(count: int, noun: str) -> str:
        said = f"{count:,} {noun}"
        return (f'<b style="color:#b2182b">{escape(said)}</b>' if html and count else said)

    tape = model.get("cassette") if isinstance(model.get("cassette"), Mapping) else {}
    mode = str(tape.get("mode") or "live")
    run = (usage or {}).get("run")
    calls = run if isinstance(run, Mapping) else None
    counted = f"{calls.get('calls', 0):,} calls " if calls is not None else ""
    if mode == "replay":
        when = str(tape.get("recorded") or "")[:10] or "(date unknown)"
        recorded_with = "; ".join(entry.split(" @ ")[0] for entry in  # several: `; ` apart
                                  str(tape.get("models") or "(models unknown)").split("; "))
        what = f"{counted}replayed, recorded {when} with {recorded_with}"
    elif mode == "record":
        what = f"{counted}recorded into {tape.get('path')}"
    else:
        what = f"{counted}live, nothing recorded"
    out = text(f"model {model.get('provider')} {model.get('model') or '(its default)'} · "
               f"{what.strip()}")
    reused = int((cache or {}).get("reused") or 0)
    if reused:
        out += text(f" ({reused:,} case{'s' if reused != 1 else ''} reused from the outcome "
                    f"cache, with no call)")
    if calls is not None:
        out += text("; ") + alarm(int(calls.get("misses", 0) or 0), "misses")
        if calls.get("failed"):
            out += text(", ") + alarm(int(calls["failed"]), "failed")
    return out
