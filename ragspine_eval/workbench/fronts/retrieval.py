"""What notebooks/retrieval.ipynb shows: a retrieval-only run over a workspace, one call each.

`run_retrieval(...)` is the CLI's gated run without recording (gated.run with
retrieval_only/harness.py: compared with the stored entry, the report written, the run kept); then `verdict` (the banner: PASS,
FAIL or NO BASELINE, drift and the configuration's warnings first), `measures` and `by` (the
figures and their baseline, per tag or document), `latency` (p50/p95/max per run and by tag),
`explorer` (the recall heatmap by tag value and document, linked to the table of questions; a
click on a row opens the case view with the ranked passages, the relevant ones marked:
workbench/views/retrieval_view.py's `ranked_html`, the QA case view's own fragment). A `RetrievalNotebookRun` has the shape the one gate of every
notebook reads (fronts/gate.py's `assert_gate`, the last cell: raises on a regression or an
engine error).
Everything is computed here, in Python a test calls without a kernel; the notebook only calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from ragspine_eval import paths, ratchet
from ragspine_eval.paths import from_root
from ragspine_eval.stats import wilson_interval
from ragspine_eval.workbench.views import charts, embed, linked
from ragspine_eval.workbench.views.drilldown import STYLE, banner_html
from ragspine_eval.workbench.views.retrieval_view import CSS, ranked_html
from ragspine_eval.workbench.views.html import Html

LINK = linked.Link({"gate": "gates", "bucket": "buckets"}, lists=("gates", "buckets"),
                   noun="questions", signal=charts.SELECTION)
COLUMNS = [("id", 14), ("basis", 7), ("rank", 6), ("page rank", 7), ("missed", 16),
           ("tags", 14), ("question", 22), ("first relevant", 14)]


@dataclass
class RetrievalNotebookRun:
    report: Any  # retrieval_only.report.RetrievalRunReport
    report_path: Path
    key: str
    stored: dict[str, Any] | None
    comparison: ratchet.BaselineComparison | None
    kept: Any = None
    harness: ClassVar[str] = "retrieval"

    # what the gate reads (fronts/gate.py): one key, no document failures
    @property
    def keys(self) -> dict[str, str]:
        return {"retrieval": self.key}

    @property
    def comparisons(self) -> dict[str, ratchet.BaselineComparison | None]:
        return {"retrieval": self.comparison}

    @property
    def engine_errors(self) -> list[str]:
        return [c.id for c in self.report.errors]

    @property
    def failures(self) -> dict[str, str]:
        return {}

    @property
    def record_hint(self) -> str:
        return ("ragspine-eval retrieval --kb WORKSPACE --golden QUESTIONS --update-baseline "
                "(and the same --top-k, --engine-config, --baseline and --name as this run)")


def run_retrieval(kb: str | Path, golden: str | Path, top_k: int | None = None,
                  engine_config: str | Path | None = None,
                  baseline_path: str | Path | None = None,
                  report_path: str | Path | None = None, store: bool = True
                  ) -> RetrievalNotebookRun:
    """Run and compare (never record); the report goes to `report_path` (default
    out/retrieval_<key>.json); `baseline_path` None: the run's own (gated/own_workspace.py).
    Relative paths are the project root's."""
    from ragspine_eval import gated
    from ragspine_eval.engines.engine_config import load_engine_config
    from ragspine_eval.pipeline.spec import RunWhat
    from ragspine_eval.retrieval_only.harness import RetrievalHarness, RetrievalWhat

    config = load_engine_config(from_root(engine_config) if engine_config else None)
    what = RetrievalWhat(RunWhat(from_root(golden), from_root(kb), "ragspine", None, None, config,
                                 top_k),
                         from_root(baseline_path) if baseline_path else None)
    key = RetrievalHarness().keys(what)["retrieval"]
    out = from_root(report_path) if report_path else (
        paths.PROJECT_ROOT / "out" / f"retrieval_{key.replace('@', '_').replace('+', '_')}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    run = gated.run(RetrievalHarness(), what, None, gated.GatedOutputs(report=out),
                    gated.Gate(store=store)).or_interrupt()
    return RetrievalNotebookRun(run.report, out, run.key, run.stored.get("retrieval"),
                                run.comparison, run.kept)


def _regressions(run: RetrievalNotebookRun) -> list[str]:
    cmp = run.comparison
    if cmp is None:
        return []
    return ([f"{r['metric']}: {r['baseline']:.4f} → {r['current']:.4f}" for r in cmp.regressions
             if r.get("current") is not None] +
            [f"{c['metric']}: {c['id']} was a hit at baseline time, missed now"
             for c in cmp.case_regressions] +
            [f"question {g['id']} {g['change']} since the baseline" for g in cmp.golden_changes])


def verdict(run: RetrievalNotebookRun) -> Html:
    """The banner the report opens with."""
    report, prov = run.report, run.report.provenance
    lines = [escape(line) for line in (prov.lines() if prov else [])]
    warn = "".join(f'<div class="rse-drift">⚠ {escape(w)}</div>' for w in report.warnings)
    if report.errors:
        kind, head = "fail", f"FAIL: {len(report.errors)} engine errors · retrieval {run.key}"
    elif run.comparison is None:
        kind, head = "none", f"NO BASELINE · retrieval {run.key}"
    elif run.comparison.passed:
        kind, head = "pass", f"PASS · retrieval {run.key}"
    else:
        kind, head = "fail", f"FAIL · retrieval {run.key}"
    items = "".join(f"<li>{escape(r)}</li>" for r in _regressions(run))
    body = (warn + (f"<ul>{items}</ul>" if items else "")
            + f'<div style="font-size:12px;color:#555">{"<br>".join(lines)}</div>')
    return Html(banner_html(kind, head, body, run.comparison, script=False,
                            provenance=prov))


def measures(run: RetrievalNotebookRun) -> pd.DataFrame:
    """recall@k, page_recall@k (with intervals), MRR and page MRR, and the baseline's values."""
    metrics = run.report.metrics()
    base = (run.stored or {}).get("metrics") or {}
    rows = []
    for name, m in metrics.items():
        if isinstance(m, dict):
            rows.append({"measure": name, "value": m["pass_rate"], "hits": f"{m['passed']}/"
                         f"{m['total']}", "95% CI": f"[{m['ci_lo']:.2f}, {m['ci_hi']:.2f}]",
                         "baseline": base.get(name)})
        elif name in ("mrr", "page_mrr"):
            rows.append({"measure": name, "value": m, "hits": "", "95% CI": "",
                         "baseline": base.get(name)})
    frame = pd.DataFrame(rows)
    frame["change"] = frame["value"] - pd.to_numeric(frame["baseline"], errors="coerce")
    return frame


def by(run: RetrievalNotebookRun, key: str) -> pd.DataFrame:
    """The measures per value of tag `key` (or per document, key "doc")."""
    rows = []
    for value, m in run.report.by(key).items():
        row: dict[str, Any] = {key: value, "judged": m["n_judged"]}
        for name, v in m.items():
            if isinstance(v, dict):
                row[name] = v["pass_rate"]
        row.update(mrr=m["mrr"], page_mrr=m["page_mrr"])
        rows.append(row)
    return pd.DataFrame(rows)


def latency(run: RetrievalNotebookRun) -> pd.DataFrame:
    """p50, p95 and max of the wall time per question, in ms: the run, then each tag value."""
    prov = run.report.provenance
    lat = (prov.times.latency if prov and prov.times else None) or {}
    rows = [{"cases": "all", **(lat.get("run") or {})}]
    rows += [{"cases": k, **v} for k, v in (lat.get("by_tag") or {}).items()]
    frame = pd.DataFrame(rows)
    for col in ("p50", "p95", "max"):
        if col in frame:
            frame[col] = (pd.to_numeric(frame[col]) * 1000).round(1)
    return frame.rename(columns={"p50": "p50 ms", "p95": "p95 ms", "max": "max ms"})


def _rates(run: RetrievalNotebookRun) -> pd.DataFrame:
    """The recall gates' rates per tag value and document, as charts.pass_rate_heatmap reads."""
    regressed = {(c["metric"], c["id"]) for c in
                 (run.comparison.case_regressions if run.comparison else [])}
    report, rows = run.report, []
    keys = [*report.tag_keys(), "doc"]
    for key in keys:
        groups: dict[str, list[Any]] = {}
        for case in report.cases:
            value = case.document if key == "doc" else case.tags.get(key)
            if case.judged and value is not None:
                groups.setdefault(value, []).append(case)
        for value, cases in sorted(groups.items()):
            for k in report.ks:
                for page in (False, True):
                    gate = f"{'page_' if page else ''}recall@{k}"
                    passed = sum(c.hit(k, page=page) for c in cases)
                    lo, hi = wilson_interval(passed, len(cases))
                    rows.append({"gate": gate, "tag": key, "value": value,
                                 "bucket": f"{key}={value}", "total": len(cases),
                                 "passed": passed, "pass_rate": passed / len(cases),
                                 "ci_lo": lo, "ci_hi": hi,
                                 "regressed": sum((gate, c.id) in regressed for c in cases),
                                 "baseline_rate": _baseline_rate(run.stored, gate, cases)})
    return pd.DataFrame(rows)


def _baseline_rate(stored: dict[str, Any] | None, gate: str, cases: list[Any]) -> float | None:
    """A bucket's rate at baseline time over its questions the baseline knew unchanged."""
    if not stored or gate not in (stored.get("passed_ids") or {}):
        return None
    golden, passed = stored.get("golden") or {}, set(stored["passed_ids"][gate])
    known = [c for c in cases if golden.get(c.id) == c.fingerprint]
    return sum(c.id in passed for c in known) / len(known) if known else None


CASE_CSS = """.rse-case-ranked{width:100%;border-collapse:collapse;table-layout:fixed}
.rse-case-ranked th,.rse-case-ranked td{text-align:left !important;vertical-align:top;
 overflow-wrap:anywhere;padding:3px 5px;border-bottom:1px solid #eee}"""


def _case_html(run: RetrievalNotebookRun, case: Any) -> str:
    tags = ", ".join(f"{k}={v}" for k, v in case.tags.items()) or "—"
    head = (f"<h3>{escape(case.id)}</h3><p><b>{escape(case.question)}</b></p>"
            f"<p>basis {escape(case.basis)} · documents {escape(', '.join(case.docs) or 'any')}"
            f" · tags {escape(tags)}" + (f" · line {case.line}" if case.line else "") + "</p>")
    error = f"<p><b>engine error:</b> {escape(case.error)}</p>" if case.error else ""
    return (f"<style>{CSS}{CASE_CSS}</style>" + head + error
            + ranked_html(case.retrieval(run.report.ks)))


def explorer(run: RetrievalNotebookRun) -> Html:
    """The heatmap of recall by tag value and document, linked to the questions' table."""
    report = run.report
    rates = _rates(run)
    heatmap = charts.pass_rate_heatmap(rates, "Recall per gate by tag value and document",
                                       select=True).to_dict()
    root = embed.element_id({"retrieval": run.key, "n": len(report.cases)}, "rse-explorer")
    rows, slots = [], []
    for case in report.cases:
        missed = [f"{'page_' if p else ''}recall@{k}" for k in report.ks for p in (False, True)
                  if case.judged and not case.hit(k, page=p)]
        buckets = [f"{k}={v}" for k, v in case.tags.items()] + [f"doc={case.document}"]
        first = next((p for p in case.passages if p.get("relevant")), None)
        rows.append(linked.row_html(case.id, {"gates": missed, "buckets": buckets}, [
            f"<b>{escape(case.id)}</b>", escape(case.basis), escape(str(case.rank or "–")),
            escape(str(case.page_rank or "–")), escape(", ".join(missed) or "—"),
            escape(", ".join(buckets)), f'<div class="rse-clamp">{escape(case.question)}</div>',
            escape(first["locator"] if first else "none retrieved")],
            regressed=bool(run.comparison and any(
                c["id"] == case.id for c in run.comparison.case_regressions))))
        slots.append(linked.slot_html(case.id, _case_html(run, case)))
    return Html(STYLE + linked.explorer_html(
        root, LINK, [embed.chart_html(heatmap, on_view=linked.listen(root))], COLUMNS, rows,
        slots, empty="no question", hint="Click a heatmap cell to keep the questions that miss "
        "that gate in that bucket; double-click or Show all to clear; click a row for its "
        "ranked passages."))
