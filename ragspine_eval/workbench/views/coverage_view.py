"""What a gold file covers, as a table and an Altair chart: every page of every document, reached
by some case or not (drafting/coverage.py computes it; this draws it).

`coverage_frame(coverage)` is one row per page (document, page, reached: "reached" or "no case");
`coverage_chart(coverage)` a strip per document, a square per page coloured by whether a case
reaches it, so the pages no case reaches show at a glance; `coverage_tables(coverage)` the
documents (pages, reached, the pages not reached) and the counts by claim kind, language, stage
and class as DataFrames. Pure functions of a `GoldCoverage`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ragspine_eval.drafting.coverage import GoldCoverage

COLOURS = {"reached": "#1a9850", "no case": "#d73027"}


def coverage_frame(coverage: GoldCoverage) -> pd.DataFrame:
    rows = [{"document": r["document"], "page": r["page"],
             "reached": "reached" if r["reached"] else "no case"} for r in coverage.pages]
    return pd.DataFrame(rows, columns=["document", "page", "reached"])


def coverage_chart(coverage: GoldCoverage) -> Any:
    import altair as alt

    frame = coverage_frame(coverage)
    return alt.Chart(frame, title="Pages a case reaches, per document").mark_rect(
        stroke="white", strokeWidth=1).encode(
        x=alt.X("page:O", title="page"), y=alt.Y("document:N", title=None),
        color=alt.Color("reached:N", scale=alt.Scale(domain=list(COLOURS),
                                                     range=list(COLOURS.values())),
                        legend=alt.Legend(title=None, orient="top")),
        tooltip=["document", "page", "reached"]).properties(
        width=alt.Step(18), height=alt.Step(22))


def coverage_tables(coverage: GoldCoverage) -> dict[str, pd.DataFrame]:
    documents = pd.DataFrame([{"document": d["document"], "pages": d["pages"],
                               "reached": d["reached"],
                               "not reached": ", ".join(map(str, d["not_reached"])) or "-"}
                              for d in coverage.documents],
                             columns=["document", "pages", "reached", "not reached"])
    out = {"documents": documents}
    for name, counts in (("claim kinds", coverage.kinds), ("languages", coverage.languages),
                         ("stages", coverage.stages), ("classes", coverage.classes)):
        out[name] = pd.DataFrame(sorted(counts.items()), columns=[name, "count"])
    return out
