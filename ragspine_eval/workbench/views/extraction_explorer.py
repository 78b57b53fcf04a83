"""The extraction explorer: the verdict first, one banner per document set, then charts that
filter the mismatch table under them, and every wrong cell shown in its document.

`verdicts_html(ex)` is the banners (drilldown.banner_html, the QA report's): PASS, FAIL or NO
BASELINE per document set; under FAIL each regressed channel as baseline → current with a link
that keeps the cells that flipped in the table; the channels not scored and why; a document the
run failed on as an ERROR banner of its own, never a verdict. `explorer_html(ex)` is one block
(workbench.linked): the accuracy bars (document set × channel), the feature heatmap (document
set · feature × channel) and the mismatch bars (document set · sheet × channel), all clickable,
over the mismatch table, regressions first, each row opening its cell's view (cell_view).
`structure_html(run)` is each scored table's structure F1 and the adjacency relations that
differ. Invariants: every text is escaped; the table's columns fit 1,280 px; a document is read
once for all its cells (a large xlsx only around each cell); no kernel is needed to click.
"""

from __future__ import annotations

import hashlib
from html import escape
from pathlib import Path
from typing import Any

from ragspine_eval import ratchet as bl
from ragspine_eval.extraction.report import COVERAGE
from ragspine_eval.extraction.structure import TABLE_STRUCTURE
from ragspine_eval.workbench.views import cell_view, charts, embed, frames, linked
from ragspine_eval.workbench.views.drilldown import _described, banner_html
from ragspine_eval.workbench.views.tables import MAX_EMBEDDED_ROWS

LINK = linked.Link({"doc_set": "doc", "channel": "channel", "where": "places"},
                   lists=("places",), noun="mismatching cells", signal=charts.SELECTION)
COLUMNS = [("document set", 13), ("cell", 12), ("channel", 13), ("at baseline", 11),
           ("feature", 13), ("expected", 19), ("extracted", 19)]
REGRESSION = cell_view.AT_BASELINE[bl.PASSED_THEN]


def row_key(key: str, locator: str) -> str:
    """The table's key of a cell of document set `key` (its rows and its cell view)."""
    return f"{key}:{locator}"


def _rate(value: Any) -> str:
    return "–" if value is None else f"{value:.1%}"


def _where(ex: Any, key: str) -> str:
    report = ex.run.reports[key]
    return (f"<b>{escape(key)}</b> · {escape(str(report.document or key))} · engine "
            f"{escape(ex.run.engine)} · {report.coverage.ground_truth_cells} ground-truth cells "
            f"· baseline key {escape(key)}")


def _not_scored(report: Any) -> str:
    lines = [f"<li>{escape(n)}: {escape(m.not_scored)}</li>"
             for n, m in report.channels.items() if m.not_scored]
    return f"<div>Not scored:</div><ul>{''.join(lines)}</ul>" if lines else ""


def _regressed_items(ex: Any, key: str, cmp: bl.BaselineComparison, root: str) -> list[str]:
    report = ex.run.reports[key]
    current = report.metrics
    stored = (ex.stored.get(key) or {}).get("metrics", {})
    flipped: dict[str, list[str]] = {}
    for c in cmp.case_regressions:
        flipped.setdefault(c["metric"], []).append(c["id"])
    items = []
    for metric in dict.fromkeys([r["metric"] for r in cmp.regressions] + list(flipped)):
        change = f"{_rate(stored.get(metric))} → {_rate(current.get(metric))}"
        ids = flipped.get(metric, [])
        if metric == COVERAGE:
            missing = report.coverage.missing
            what = (f"{len(missing)} ground-truth cell{'s' if len(missing) != 1 else ''} got no "
                    f"fact: {escape(', '.join(missing[:10]))}{' …' if len(missing) > 10 else ''}")
        elif metric == TABLE_STRUCTURE:
            what = "the tables' adjacency relations differ: see Table structure below"
        else:
            wrong = [s.locator for s in report.cells if s.channel == metric and not s.correct]
            shown = ids or wrong
            text = (f"{len(ids)} cell{'s' if len(ids) != 1 else ''} flipped (right at baseline, "
                    f"wrong now)" if ids else f"no cell flipped; {len(wrong)} wrong cell"
                    f"{'s' if len(wrong) != 1 else ''}")
            what = (linked.show_link(text, {"doc": [key], "channel": [metric],
                                            "id": [row_key(key, i) for i in shown]},
                                     f"{key} · {metric}, the cells the banner names", root)
                    if shown else text)
        items.append(f"<li><b>{escape(metric)}</b>: {change} · {what}</li>")
    return items or [f"<li>{escape(line)}</li>" for line in _described(cmp, key)]


def verdicts_html(ex: Any, root: str = "", require_baseline: bool = False) -> str:
    """One banner per document set, in run order, then one per document the run failed on.
    `root`: the element id of the explorer the banners' links filter (explorer_root)."""
    parts = []
    for key in ex.run.reports:
        cmp = ex.comparisons.get(key)
        where = _where(ex, key)
        unscored = _not_scored(ex.run.reports[key])
        if cmp is None:
            needed = (" require_baseline is set, so this fails the run." if require_baseline
                      else "")
            parts.append(banner_html("fail" if require_baseline else "none",
                                     "FAIL: NO BASELINE" if require_baseline else "NO BASELINE",
                                     f"<div>{where}. Nothing to compare with; record a baseline "
                                     f"with the CLI.{needed}</div>{unscored}"))
        elif cmp.passed:
            parts.append(banner_html("pass", "PASS", f"<div>{where}. No channel regressed against "
                                                     f"the baseline.</div>{unscored}", cmp))
        else:
            items = _regressed_items(ex, key, cmp, root)
            parts.append(banner_html("fail", "FAIL", f"<div>{where}. The baseline gate failed:"
                                                     f"</div><ul>{''.join(items)}</ul>{unscored}",
                                     cmp))
    others = "; the other documents were" if ex.run.reports else ""
    for key, why in ex.failures.items():
        parts.append(banner_html("fail", "ERROR: THE RUN FAILED ON THIS DOCUMENT",
                                 f"<div><b>{escape(key)}</b>: {escape(why)}</div><div>No verdict: "
                                 f"nothing of this document was scored (neither pass nor "
                                 f"regression){others}.</div>", script=False))
    return "".join(parts) or banner_html("none", "NOTHING SCORED", "<div>No document set ran."
                                                                   "</div>")


def explorer_root(ex: Any) -> str:
    """The element id of this run's explorer, which the banners' links name: the same for the
    same report, so a banner and its explorer drawn by separate cells agree."""
    digest = hashlib.sha1(f"{ex.report_path}|{'|'.join(ex.run.reports)}".encode()).hexdigest()
    return f"rse-explorer-x{digest[:10]}"


def mismatch_rows(ex: Any) -> list[dict[str, Any]]:
    """Every wrong cell and channel of the run, regressions first, then by set, channel, cell."""
    rows = []
    for key, report in ex.run.reports.items():
        entry = ex.stored.get(key)
        then = bl.BaselineVerdicts(entry)  # read once per set: a row only looks it up
        for s in report.cells:
            if s.correct:
                continue
            at = ("no baseline" if entry is None else cell_view.AT_BASELINE[
                then.at(s.channel, s.locator, report.golden.get(s.locator))])
            rows.append({"key": key, "locator": s.locator, "sheet": s.sheet,
                         "channel": s.channel, "feature": s.feature or "(none)", "at": at,
                         "expected": cell_view.show_value(s.expected),
                         "actual": cell_view.show_value(s.actual)})
    order = {k: i for i, k in enumerate(ex.run.reports)}
    return sorted(rows, key=lambda r: (r["at"] != REGRESSION, order[r["key"]], r["channel"],
                                       r["locator"]))


def _row_html(r: dict[str, Any]) -> str:
    regressed = r["at"] == REGRESSION
    at = '<span class="rse-badge">▼ regression</span>' if regressed else escape(r["at"])
    cells = [escape(r["key"]), f"<b>{escape(r['locator'])}</b>",
             escape(r["channel"]).replace("_", "_<wbr>"), at, escape(r["feature"]),
             f'<div class="rse-clamp">{escape(r["expected"])}</div>',
             f'<div class="rse-clamp">{escape(r["actual"])}</div>']
    places = [f"{r['key']} · {r['sheet']}", f"{r['key']} · {r['feature']}"]
    return linked.row_html(row_key(r["key"], r["locator"]),
                           {"doc": r["key"], "channel": r["channel"], "places": places},
                           cells, regressed)


def _grids(document: Path | None) -> Any:
    """What cell_detail reads a document's cells from: its grids (read once), None for a large
    xlsx (read around each cell), or why it cannot be read."""
    if document is None:
        return None
    if document.suffix.lower() == ".xlsx" and document.is_file() and \
            document.stat().st_size > cell_view.LARGE_FILE:
        return None
    return cell_view.read_grids(document)


def explorer_html(ex: Any, root: str | None = None, max_rows: int = MAX_EMBEDDED_ROWS) -> str:
    """The clickable charts over the mismatch table and each wrong cell's view."""
    root = root or explorer_root(ex)
    listen = linked.listen(root)
    accuracy = frames.channel_accuracy(ex.run, ex.stored)
    specs = [charts.channel_bars(accuracy, select=True).to_dict()]
    if not ex.run.to_frame().empty:
        specs += [charts.feature_heatmap(frames.feature_accuracy(ex.run), select=True).to_dict(),
                  charts.mismatch_bars(frames.mismatches_by_sheet(ex.run), select=True).to_dict()]
    rows = mismatch_rows(ex)
    shown = rows[:max_rows]
    documents = {t.key: t.document for t in ex.targets}
    grids: dict[str, Any] = {}
    slots = []
    wanted = {(r["key"], r["locator"]) for r in shown}
    scores: dict[tuple[str, str], list] = {}  # every channel of each shown cell, in one pass
    for key, report in ex.run.reports.items():
        for s in report.cells:
            if (key, s.locator) in wanted:
                scores.setdefault((key, s.locator), []).append(s)
    for key, locator in dict.fromkeys((r["key"], r["locator"]) for r in shown):
        if key not in grids:
            grids[key] = _grids(documents.get(key))
        detail = cell_view.cell_detail(ex.run.reports[key], key, locator, grids[key],
                                       document=documents.get(key), stored=ex.stored.get(key),
                                       scores=scores[(key, locator)])
        slots.append(linked.slot_html(row_key(key, locator), cell_view.cell_html(detail)))
    cut = ("" if len(shown) == len(rows) else
           f'<p class="rse-note"><b>Showing the first {max_rows:,} of {len(rows):,} mismatching '
           f"cells; the JSON report holds every one (frames.mismatch_table(ex.run)).</b></p>")
    table = linked.Table(COLUMNS, [_row_html(r) for r in shown], note=cut, empty=(
        "No mismatching cell: every scored cell is right on every channel." if ex.run.reports
        else "Nothing was scored: see the banner."))
    return linked.explorer_block(
        root, LINK, [embed.chart_html(s, on_view=listen) for s in specs], table, slots,
        hint="Click a bar or a heatmap cell to keep its cells; double-click the chart or "
             "“Show all” to clear. Regressions first. Click a row to see the cell in its "
             "document.")


def structure_html(run: Any) -> str:
    """Per scored table: its structure F1 and the adjacency relations that differ."""
    parts = []
    for key, report in run.reports.items():
        for t in (report.structure or {}).get("tables", []):
            listed = cell_view.pairs_html(t)
            parts.append(f"<div><b>{escape(key)} · {escape(t['table'])}</b>: F1 {t['f1']:.1%} "
                         f"({t['matched']} of {t['relations']} ground-truth relations matched, "
                         f"{t['extracted']} extracted)"
                         + (listed or " · no relation differs")
                         + "</div>")
    return "".join(parts) or ('<p class="ragspine-eval-note">No table structure scored: a ground '
                              'truth gets one only when its "scope" names whole tables.</p>')


# --- what the notebook calls ---------------------------------------------------------------------


def extraction_verdict(ex: Any, require_baseline: bool = False) -> Any:
    """The banners the extraction report opens with (one per document set)."""
    from ragspine_eval.workbench.views.html import Html

    return Html(verdicts_html(ex, explorer_root(ex), require_baseline))


def mismatch_explorer(ex: Any) -> Any:
    """The clickable charts over the mismatch table and each wrong cell's view."""
    from ragspine_eval.workbench.views.html import Html

    return Html(explorer_html(ex, explorer_root(ex)))


def table_structure(ex: Any) -> Any:
    """Each scored table's structure F1 and the adjacency relations that differ."""
    from ragspine_eval.workbench.views.html import Html

    return Html(structure_html(ex.run))
