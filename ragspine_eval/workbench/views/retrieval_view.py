"""The case view's retrieval: the ranked passages a case got, the relevant ones marked.

`ranked_html(retrieval)` renders a case record's `retrieval` (retrieval/metrics.py,
`CaseRetrieval.to_dict`) as an HTML fragment for the case view: a line with the rank of the first
relevant passage (or that none was retrieved, or that the engine did not report its passages),
hit@k, the page rank where pages are known and what counts as relevant; then one table row per
kept passage: its rank, whether it is relevant (marked ✔ and in the passing colour), doc,
locator, page or slide, chunk id, the engine's scores and its clipped text; then RAGChecker's
claim split when the report holds it. Every text is escaped; no script.
"""

from __future__ import annotations

import html
from typing import Any

CSS = """
.rse-case-ranked td.rse-rel{color:#1b5e20;font-weight:700}
.rse-case-ranked tr.rse-relevant td{background:#eef8ee}
.rse-case-ranked td{font-size:12.5px}
.rse-case-retrieval-line{margin:4px 0}
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _scores(scores: dict[str, Any] | None) -> str:
    return ", ".join(f"{_e(k)} {v:.4g}" for k, v in (scores or {}).items()) or "—"


def retrieval_line(retrieval: dict[str, Any]) -> str:
    """One sentence: the first relevant passage's rank, hit@k, the page rank, the rules."""
    rules = "; ".join(retrieval.get("rules", ())) or "—"
    if not retrieval.get("observed"):
        return (f"Retrieval not observed: the engine did not report the passages it retrieved "
                f"(never counted as a miss). Relevant: {_e(rules)}.")
    rank = retrieval.get("rank")
    hits = ", ".join(f"hit@{k} {'yes' if v else 'no'}" for k, v in retrieval.get("hit", {}).items())
    where = (f"first relevant passage at rank <b>{_e(rank)}</b> of {_e(retrieval.get('retrieved'))}"
             if rank is not None else
             f"<b>no relevant passage</b> among the {_e(retrieval.get('retrieved'))} retrieved")
    page = (f" · page rank {_e(retrieval['page_rank'])}" if retrieval.get("page_rank") is not None
            else "")
    return f"Retrieval: {where} · {hits}{page} · relevant: {_e(rules)}."


def ranked_html(retrieval: dict[str, Any] | None) -> str:
    """The fragment (see the module docstring); "" for a case without relevance."""
    if not retrieval:
        return ""
    out = [f"<h4>Ranked passages</h4><p class=\"rse-case-retrieval-line\">"
           f"{retrieval_line(retrieval)}</p>"]
    passages = retrieval.get("passages") or []
    if passages:
        rows = []
        for p in passages:
            unit = (f"page {p['page']}" if p.get("page") is not None else
                    f"slide {p['slide']}" if p.get("slide") is not None else "—")
            rel = bool(p.get("relevant"))
            rows.append(
                f'<tr class="{"rse-relevant" if rel else ""}" data-rank="{_e(p.get("rank"))}">'
                f"<td>{_e(p.get('rank'))}</td>"
                f'<td class="{"rse-rel" if rel else ""}">{"✔ relevant" if rel else "—"}</td>'
                f"<td>{_e(p.get('doc'))}</td><td>{_e(p.get('locator'))}</td><td>{unit}</td>"
                f"<td>{_e(p.get('chunk_id') or '—')}</td><td>{_scores(p.get('scores'))}</td>"
                f"<td>{_e(p.get('text'))}</td></tr>")
        out.append('<table class="rse-case-ranked"><tr><th>rank</th><th>relevant</th>'
                   "<th>doc</th><th>locator</th><th>page/slide</th><th>chunk</th>"
                   f"<th>scores</th><th>text (clipped)</th></tr>{''.join(rows)}</table>")
    claims = retrieval.get("claims")
    if claims:
        items = "".join(f"<li>{_e(c['support'])}: {_e(c['claim'])}</li>"
                        for c in claims.get("claims", ()))
        out.append(f"<p>Claims of the narrative answer (RAGChecker's split): "
                   f"{claims['relevant']} supported by a relevant passage, {claims['irrelevant']} "
                   f"by an irrelevant one only, {claims['none']} by none.</p><ul>{items}</ul>")
    return "".join(out)
