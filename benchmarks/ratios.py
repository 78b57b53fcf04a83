"""Ratios measured, not single runs (issue 33): configurations interleaved, repeated, paired.

On a shared machine one run of a configuration varies by 10% or more with what else runs, so a
ratio of two single runs, one after the other, says little. `interleaved` runs every
configuration once per round, `repeats` rounds, rotating the order each round so that none is
always first (or always last, after the others warmed the page cache); `paired` divides the
runs of one configuration by another's run of the same round, and reports the median of those
per-round ratios and their spread (min and max). Both runs of a pair met about the same load,
which is what makes the ratio meaningful under load: the spread says how far it can be trusted.

Invariants: every run is kept (`runs`); a ratio is never computed from runs of different rounds.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def interleaved(configs: Mapping[str, Callable[[], dict[str, Any]]], repeats: int,
                say: Callable[[str], None] | None = None, label: str = ""
                ) -> dict[str, list[dict[str, Any]]]:
    """{name: [its run of round 0, round 1, ...]}: each round runs every configuration once,
    in an order rotated by one each round."""
    names = list(configs)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for round_ in range(repeats):
        shift = round_ % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            if say:
                say(f"{label}{name} (round {round_ + 1} of {repeats})")
            runs[name].append(configs[name]())
    return runs


def paired(numerators: Sequence[Mapping[str, Any]], denominators: Sequence[Mapping[str, Any]],
           key: str = "total_s", denominator_key: str | None = None) -> dict[str, Any]:
    """The per-round ratios numerators[i][key] / denominators[i][denominator_key or key]:
    their median, min and max, and each pair's figures."""
    if len(numerators) != len(denominators) or not numerators:
        raise ValueError(f"paired needs the same number of runs on both sides, got "
                         f"{len(numerators)} and {len(denominators)}")
    other = denominator_key or key
    ratios = [a[key] / b[other] for a, b in zip(numerators, denominators, strict=True)]
    return {"median": round(statistics.median(ratios), 4), "min": round(min(ratios), 4),
            "max": round(max(ratios), 4), "ratios": [round(r, 4) for r in ratios],
            "pairs": [[a[key], b[other]] for a, b in zip(numerators, denominators, strict=True)],
            "key": key if other == key else f"{key} / {other}"}


def median_of(runs: Sequence[Mapping[str, Any]], key: str) -> float:
    return round(statistics.median(r[key] for r in runs), 4)


def spread_text(ratio: Mapping[str, Any]) -> str:
    """'1.032x (0.981-1.077x, 3 pairs)'."""
    return (f"{ratio['median']:.3f}x ({ratio['min']:.3f}-{ratio['max']:.3f}x, "
            f"{len(ratio['ratios'])} pairs)")
