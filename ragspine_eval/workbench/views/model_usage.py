"""The model's tokens, cost and latency: the section the qa and answers notebooks show after
their gates, per LLM stage and by tag, read from a report's provenance.

Where each figure comes from (nothing is recomputed from cases):
- the model's counts: `Provenance.model_used`: `model` in a QA report (every call of every
  repeat; models/usage.py); in an answers report, whose calls depend on the engine's caches
  and so stay out of its deterministic part, what this run's computed answers used, kept
  under `times.latency.model`;
- per stage: calls and tokens from the model's `stages`, else (an older report) from the
  engine's trace under `times.latency.llm`; the milliseconds always from the trace (the first
  repeat's computed cases); the cost from the model's `cost.by_stage`;
- by tag: cases, calls and tokens from `model.by_tag`, the cost from `model.cost.by_tag`, the
  p50 and p95 of the wall time per case from `times.latency.by_tag` (cases that errored left
  out, execution/latency.py);
- the "(request)" pseudo-stage (the request's own token totals) is never a row.

Invariants: a report without a model (the MockProvider without a cassette) gives one sentence,
no empty table; a figure the report does not hold is missing ("–"), never 0; a cost is shown
only from the run's price table, in its currency.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

import pandas as pd

from ragspine_eval.engines.trace import REQUEST
from ragspine_eval.provenance import Provenance, answered_by

NO_MODEL = ("No model in use: the engine ran with its MockProvider and no cassette (or asked no "
            "model), so there are no tokens and no cost. To measure one, set provider and model, "
            "or a cassette, in the parameters cell (the qa notebook: with mode \"agent\").")
STAGE_COLUMNS = ["stage", "calls", "tokens in", "tokens out", "cost", "ms"]
TAG_COLUMNS = ["tag", "value", "cases", "calls", "tokens in", "tokens out", "cost", "p50 ms",
               "p95 ms"]


def _latency(prov: Provenance | None) -> Mapping[str, Any]:
    return ((prov.times.latency or {}) if prov is not None and prov.times is not None else {})


def _cost(prov: Provenance | None) -> Mapping[str, Any]:
    return ((prov.model_used or {}).get("cost") or {}) if prov is not None else {}


def by_stage(prov: Provenance | None) -> pd.DataFrame:
    """One row per LLM stage: calls, tokens in and out, cost (None without a price table or
    for a model it does not list), ms (the engine's trace); then "all stages"."""
    model = (prov.model_used or {}) if prov is not None else {}
    trace = {s: v for s, v in (_latency(prov).get("llm") or {}).items() if s != REQUEST}
    counts = model.get("stages")
    if counts is None:  # no per-stage counts in the model: the trace's
        counts = {s: {k: v.get(k) for k in ("calls", "input_tokens", "output_tokens")}
                  for s, v in trace.items()}
    priced = _cost(prov).get("by_stage") or {}
    rows = [{"stage": stage, "calls": c.get("calls"), "tokens in": c.get("input_tokens"),
             "tokens out": c.get("output_tokens"), "cost": (priced.get(stage) or {}).get("cost"),
             "ms": (trace.get(stage) or {}).get("ms")}
            for stage, c in sorted(counts.items())]
    frame = pd.DataFrame(rows, columns=STAGE_COLUMNS)
    if len(frame) > 1:
        total = {"stage": "all stages", "cost": _cost(prov).get("run")}
        for column in ("calls", "tokens in", "tokens out", "ms"):
            total[column] = None if frame[column].isna().any() else frame[column].sum()
        frame = pd.concat([frame, pd.DataFrame([total], columns=STAGE_COLUMNS)],
                          ignore_index=True)
    for column in ("calls", "tokens in", "tokens out", "ms"):
        frame[column] = frame[column].astype("Int64")
    frame["cost"] = frame["cost"].astype("Float64")
    return frame


def by_tag(prov: Provenance | None) -> pd.DataFrame:
    """One row per tag value: cases, calls, tokens in and out, cost, and the p50 and p95 of
    the wall time per case in ms; every tag value the model's counts or the latency name."""
    model = (prov.model_used or {}) if prov is not None else {}
    counts = model.get("by_tag") or {}
    priced = _cost(prov).get("by_tag") or {}
    latency = _latency(prov).get("by_tag") or {}
    rows = []
    for bucket in sorted(set(counts) | set(latency)):
        tag, _, value = bucket.partition("=")
        c, timed = counts.get(bucket) or {}, latency.get(bucket) or {}
        rows.append({"tag": tag, "value": value,
                     "cases": c.get("cases", timed.get("n")), "calls": c.get("calls"),
                     "tokens in": c.get("input_tokens"), "tokens out": c.get("output_tokens"),
                     "cost": (priced.get(bucket) or {}).get("cost"),
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
    model = (prov.model_used or {}) if prov is not None else {}
    calls = model.get("calls")
    if not isinstance(calls, Mapping):
        return None
    out = (f"{calls.get('calls', 0):,} calls · {calls.get('input_tokens', 0):,} in / "
           f"{calls.get('output_tokens', 0):,} out tokens")
    cost = _cost(prov)
    if not cost:
        return out + " · no cost: give a price table (the prices parameter, or --prices FILE)"
    unit = cost.get("currency", "")
    if cost.get("run") is None:
        return out + f" · no cost: the price table does not list {model.get('model')}"
    return out + f" · cost {cost['run']:.4f} {unit}, billed {cost.get('billed') or 0:.4f} {unit}"


def section(prov: Provenance | None) -> Any:
    """The notebook's section: which model answered, its totals, the per-stage table and the
    by-tag table; one sentence when no model was in use."""
    from ragspine_eval.workbench.views.html import Html
    from ragspine_eval.workbench.views.tables import static

    said = (answered_by(prov.model_used, html=True, cache=prov.cache) if prov is not None
            else None)
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
