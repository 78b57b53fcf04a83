"""Two retrieval-only runs compared beyond their recall gates: MRR and page MRR side by side
with a paired test, and each question's rank before and after.

`rank_changes(pair)` (a compare.Pair of two retrieval reports) gives one row per mean: before,
after, the change, how many questions' reciprocal rank rose and fell, and the exact two-sided
sign test on those paired changes (stats.mcnemar_exact over the questions that moved: the same
binomial test McNemar's is); `rank_table(pair)` one row per question whose rank or page rank
moved. For a pair of QA reports (no ranks) both are empty frames with the same columns, so the
compare notebook shows them whatever it compares.
Invariants: only questions judged in both runs with the same fingerprint are paired.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ragspine_eval.stats import mcnemar_exact

MEAN_COLUMNS = ["measure", "before", "after", "change", "questions up", "questions down",
                "sign test p"]
RANK_COLUMNS = ["id", "rank before", "rank after", "page rank before", "page rank after"]


def _ranks(report: Any) -> dict[str, tuple[int | None, int | None, str]]:
    """{question id: (rank, page rank, fingerprint)} of the judged questions of a retrieval
    report read as a QA report (its cases' case_type is "retrieval:<basis>")."""
    return {c.id: (c.retrieval.get("rank"), c.retrieval.get("page_rank"), c.fingerprint)
            for c in report.cases
            if c.case_type in ("retrieval:page", "retrieval:content") and c.retrieval
            and c.error is None}


def _paired(pair: Any) -> list[tuple[str, tuple, tuple]]:
    before, after = _ranks(pair.before), _ranks(pair.after)
    return [(i, before[i], after[i]) for i in sorted(before)
            if i in after and before[i][2] == after[i][2]]


def _rr(rank: int | None) -> float:
    return 0.0 if not rank else 1.0 / rank


def rank_changes(pair: Any) -> pd.DataFrame:
    """MRR and page MRR of both runs over the paired questions, and the sign test."""
    paired = _paired(pair)
    if not paired:
        return pd.DataFrame(columns=MEAN_COLUMNS)
    rows = []
    for name, at in (("MRR", 0), ("page MRR", 1)):
        then = [_rr(b[at]) for _, b, _ in paired]
        now = [_rr(a[at]) for _, _, a in paired]
        up = sum(1 for x, y in zip(then, now) if y > x)
        down = sum(1 for x, y in zip(then, now) if y < x)
        before, after = sum(then) / len(then), sum(now) / len(now)
        rows.append({"measure": name, "before": round(before, 4), "after": round(after, 4),
                     "change": round(after - before, 4), "questions up": up,
                     "questions down": down, "sign test p": round(mcnemar_exact(down, up), 4)})
    return pd.DataFrame(rows, columns=MEAN_COLUMNS)


def rank_table(pair: Any) -> pd.DataFrame:
    """The paired questions whose rank or page rank differs between the runs."""
    def shown(rank: int | None) -> str:
        return "none" if rank is None else str(rank)

    rows = [{"id": i, "rank before": shown(b[0]), "rank after": shown(a[0]),
             "page rank before": shown(b[1]), "page rank after": shown(a[1])}
            for i, b, a in _paired(pair) if b[:2] != a[:2]]
    return pd.DataFrame(rows, columns=RANK_COLUMNS)


def config_warning(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """A line when the two runs used different engine configurations (their provenance)."""
    def config(data: dict[str, Any]) -> dict[str, Any]:
        return (data.get("provenance") or {}).get("engine_config") or {}

    then, now = config(old), config(new)
    if then.get("fingerprint") == now.get("fingerprint"):
        return []

    def text(c: dict[str, Any]) -> str:
        settings = ", ".join(f"{k}={v}" for k, v in (c.get("settings") or {}).items())
        return f"{c.get('label') or 'default'} ({settings or 'engine defaults'})"

    return [f"engine configuration: {text(then)} -> {text(now)}: the A/B under review"]
