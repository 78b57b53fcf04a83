"""What notebooks/answers.ipynb shows: an answer run over a workspace, one call each.

`run_answers(answers_what(...))` is the CLI's gated run without recording (gated.run: compared with
each route's stored entry, the report written, the run kept); then `verdict` (the banner: PASS,
FAIL or NO BASELINE per route, the regressions named), `gates` (each route's gates kept apart,
with intervals and the baseline's values), `by` (per language, tag or document), `failures` (the
failing questions with reason and stage, known gaps apart), `explorer` (the heatmap of every
route's gates by language, tag and document, linked to the table of questions: a chart cell
keeps the questions that fail that gate in that bucket, a row opens the case view), `case_view`
(one question: views/answers_case.py, both routes side by side, each claim on its own
document, its value marked in the answer and in the ranked passages, what the number guard
hid). An `AnswersNotebookRun` has the shape the one gate of every notebook reads
(fronts/gate.py's `assert_gate`, the last cell: raises on a regression or an engine error).
The explorer's and the case view's `judge` (a registered faithfulness judge, default the
registry's) judges each claim of every answer against its passages, and an analyst marks its
verdicts right or wrong there and exports them as labels (`labelling`: views/answer_labels.py,
the file `<report>.labels.jsonl` that `judge check` reads); in JupyterLab the same with widgets
that save the file (fronts/answer_labels.py).
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
from ragspine_eval.workbench.views import answers_case, charts, embed, linked
from ragspine_eval.workbench.views.answers_case import mark  # noqa: F401 - the notebook's name
from ragspine_eval.workbench.views.drilldown import STYLE, banner_html
from ragspine_eval.workbench.views.html import Html

LINK = linked.Link({"gate": "gates", "bucket": "buckets"}, lists=("gates", "buckets"),
                   noun="questions", signal=charts.SELECTION)
COLUMNS = [("id", 16), ("class", 8), ("ask", 20), ("narrative", 20), ("buckets", 14),
           ("question", 22)]
GATES = ("claim_content", "claim_citation", "claim_citation_strict", "abstention",
         "question_pass")
@dataclass
class AnswersNotebookRun:
    report: Any  # answers.report.AnswerRunReport
    report_path: Path
    keys: dict[str, str]
    stored: dict[str, dict[str, Any] | None]
    comparisons: dict[str, ratchet.BaselineComparison | None]
    harness: ClassVar[str] = "answers"

    # what the gate reads (fronts/gate.py) besides `keys` and `comparisons`, one per route
    @property
    def engine_errors(self) -> list[str]:
        """Each question the engine failed on, once per route (not once per repeat)."""
        return list(dict.fromkeys(f"{r.id} ({r.route})" for r in self.report.errors))

    @property
    def failures(self) -> dict[str, str]:
        return {}

    @property
    def record_hint(self) -> str:
        return ("ragspine-eval answers --kb WORKSPACE --golden GOLD --update-baseline (and the "
                "same --route, --engine-config, model flags, --baseline and --name as this run)")


def answers_what(kb: str | Path, golden: str | Path, routes: str = "both",
                 engine_config: str | Path | None = None,
                 baseline_path: str | Path | None = None, model: Any = None,
                 allow_gold_errors: bool = False) -> Any:
    """What the notebook's run asks (answers/harness.py `AnswersWhat`): `routes` "both", "ask"
    or "narrative"; `baseline_path` None: the run's own (gated/own_workspace.py); `model`
    (models.ModelRun, `workbench.model_run(...)`; None: the MockProvider) is what the engine
    asks, as `ragspine-eval answers --provider ... --cassette ...` passes it;
    `allow_gold_errors` as `--allow-gold-errors`. Relative paths are the project root's."""
    from ragspine_eval.answers import harness
    from ragspine_eval.engines.engine_config import load_engine_config

    config = load_engine_config(from_root(engine_config) if engine_config else None)
    chosen = {"both": ("ask", "narrative"), "ask": ("ask",), "narrative": ("narrative",)}[routes]
    return harness.AnswersWhat(harness.answers_run(from_root(kb), from_root(golden), chosen,
                                                   config, model),
                               baseline=from_root(baseline_path) if baseline_path else None,
                               allow_gold_errors=allow_gold_errors)


def run_answers(what: Any, report_path: str | Path | None = None, store: bool = True
                ) -> AnswersNotebookRun:
    """Run and compare (never record) `what` (`answers_what`); the report goes to
    `report_path` (default out/answers_<workspace>.json). Interrupting the kernel mid-run
    writes the report of what ran (interrupted), then lets the KeyboardInterrupt go on."""
    from ragspine_eval import gated
    from ragspine_eval.answers.harness import AnswersHarness

    out = from_root(report_path) if report_path else (
        paths.PROJECT_ROOT / "out" / f"answers_{Path(what.run.kb).resolve().name}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    run = gated.run(AnswersHarness(), what, None, gated.GatedOutputs(report=out),
                    gated.Gate(store=store)).or_interrupt()
    return AnswersNotebookRun(run.report, out, run.keys, run.stored, run.comparisons)


def _regressions(run: AnswersNotebookRun) -> list[str]:
    out = []
    for route, cmp in run.comparisons.items():
        if cmp is None:
            continue
        out += [f"{route} {r['metric']}: {r['baseline']} → {r['current']}"
                for r in cmp.regressions if r.get("current") is not None]
        out += [f"{route} {c['metric']}: {c['id']} passed at baseline time, fails now"
                for c in cmp.case_regressions]
        out += [f"{route}: question {g['id']} {g['change']} since the baseline"
                for g in cmp.golden_changes]
    return out


def verdict(run: AnswersNotebookRun) -> Html:
    """The banner the report opens with."""
    report, prov = run.report, run.report.provenance
    keys = ", ".join(run.keys.values())
    lines = [escape(line) for line in (prov.lines() if prov else [])]
    regressions = _regressions(run)
    if report.errors:
        kind, head = "fail", f"FAIL: {len(report.errors)} engine errors · answers {keys}"
    elif all(c is None for c in run.comparisons.values()):
        kind, head = "none", f"NO BASELINE · answers {keys}"
    elif regressions or not all(c is None or c.passed for c in run.comparisons.values()):
        kind, head = "fail", f"FAIL · answers {keys}"
    else:
        kind, head = "pass", f"PASS · answers {keys}"
    from ragspine_eval.outputs.answers_files import NOT_COMPARED, pass_counts

    head += f" · {pass_counts(report)}"  # the counts beside the verdict: never a bare PASS
    fresh = all(c is None for c in run.comparisons.values())
    items = "".join(f"<li>{escape(r)}</li>" for r in regressions)
    first = next((c for c in run.comparisons.values() if c is not None), None)
    body = ((f'<p class="rse-fresh"><b>{escape(NOT_COMPARED)}</b></p>' if fresh else "")
            + (f"<ul>{items}</ul>" if items else "")
            + _gold_html(report)
            + f'<div style="font-size:12px;color:#555">{"<br>".join(lines)}</div>')
    return Html(banner_html(kind, head, body, first, script=False,
                            provenance=prov))


def _gold_html(report: Any) -> str:
    """The gold's word under the banner: its errors (cases the workspace cannot answer) and
    doubts (claims its text does not bear out), each case named."""
    gold = report.run.gold_check
    if gold is None or not (gold.errors or gold.doubts):
        return ""
    items = [f"<li><b>gold error</b> {escape(line)}</li>" for line in gold.problem_lines()[:10]]
    items += [f"<li>gold doubt {escape(line)}</li>" for line in gold.doubt_lines()[:10]]
    return f'<ul class="rse-gold">{"".join(items)}</ul>'


def gates(run: AnswersNotebookRun) -> pd.DataFrame:
    """Every route's gates kept apart: value, passed/total, interval, baseline, change."""
    rows = []
    for route in run.report.routes:
        m = run.report.metrics(route)
        base = run.stored.get(route) or {}
        for g in GATES:
            x = m[g]
            rows.append({"route": route, "gate": g, "value": x["pass_rate"],
                         "passed": f"{x['passed']}/{x['total']}",
                         "95% CI": f"[{x['ci_lo']:.2f}, {x['ci_hi']:.2f}]",
                         "baseline": (base.get("metrics") or {}).get(g)})
        rows.append({"route": route, "gate": "fabrication_count",
                     "value": float(m["fabrication_count"]["count"]), "passed": "",
                     "95% CI": "lower is better",
                     "baseline": base.get("fabrication_count")})
    frame = pd.DataFrame(rows)
    frame["change"] = frame["value"] - pd.to_numeric(frame["baseline"], errors="coerce")
    return frame


def by(run: AnswersNotebookRun, what: str) -> pd.DataFrame:
    """Each route's gates per language, tag or document (`what`: language, tag, doc)."""
    rows = []
    for route in run.report.routes:
        for value, m in run.report.breakdowns(route)[f"by_{what}"].items():
            row: dict[str, Any] = {"route": route, what: value,
                                   "questions": m["question_pass"]["total"]}
            row.update({g: m[g]["pass_rate"] if m[g]["total"] else None for g in GATES})
            row["fabrication_count"] = m["fabrication_count"]["count"]
            rows.append(row)
    return pd.DataFrame(rows)


def failures(run: AnswersNotebookRun) -> pd.DataFrame:
    """The failing questions of each route: reason and stage (known gaps and gold errors,
    which every gold error is whatever its verdict, marked apart)."""
    from ragspine_eval.retrieval.stages import STAGE_TEXT

    rows = []
    for route in run.report.routes:
        for r in run.report.results(route):
            if not r.verdict.passed or r.gold_error:
                rows.append({"route": route, "id": r.id, "class": r.case_class,
                             "reason": r.verdict.reason,
                             "stage": STAGE_TEXT.get(r.stage or "", r.stage),
                             "route taken": r.outcome.route_label,
                             "known gap": r.case_class == "known-gap",
                             "gold error": r.gold_error or ""})
    return pd.DataFrame(rows)


def _buckets(result: Any) -> list[str]:
    from ragspine_eval.answers.report import document

    return ([f"language={result.language}", f"tag={result.case_class}"]
            + [f"tag={t}" for t in result.tags] + [f"doc={document(result)}"])


def _rates(run: AnswersNotebookRun) -> pd.DataFrame:
    """Every route's gates per bucket, as charts.pass_rate_heatmap reads them."""
    rows = []
    for route in run.report.routes:
        cmp = run.comparisons.get(route)
        regressed = {(c["metric"], c["id"]) for c in (cmp.case_regressions if cmp else [])}
        for what, groups in run.report.breakdowns(route).items():
            tag = what.removeprefix("by_")
            for value, m in groups.items():
                for g in GATES:
                    x = m[g]
                    if not x["total"]:
                        continue
                    failed = {f["id"] for f in x["failures"]}
                    rows.append({"gate": f"{route} {g}", "tag": tag, "value": value,
                                 "bucket": f"{tag}={value}", "total": x["total"],
                                 "passed": x["passed"], "pass_rate": x["pass_rate"],
                                 "ci_lo": x["ci_lo"], "ci_hi": x["ci_hi"],
                                 "regressed": sum((g, i) in regressed for i in failed),
                                 "baseline_rate": None})
    return pd.DataFrame(rows)


def labelling(run: AnswersNotebookRun, judge: str | None = None) -> Any:
    """The judge whose verdicts the case view offers to label (None: the registry's default),
    the run the labels name, and the exported file's name (`<report>.labels.jsonl`)."""
    from ragspine_eval.answers.faithfulness import run_reference
    from ragspine_eval.judges import registry
    from ragspine_eval.workbench.views.answer_labels import Labelling

    return Labelling(registry.get(judge or registry.DEFAULT_JUDGE),
                     run_reference(run.report, run.report_path),
                     f"{run.report_path.stem}.labels.jsonl")


def case_view(run: AnswersNotebookRun, question_id: str, repeat: int = 0,
              judge: str | None = None) -> Html:
    """One question (`case:lang`): both routes side by side (module docstring)."""
    results = [r for r in run.report.run.results if r.id == question_id and r.repeat == repeat]
    if not results:
        raise KeyError(f"no question {question_id!r} in this run")
    return Html(f'<div class="rse-lab-scope">{_case_html(run, results, labelling(run, judge))}'
                f"</div>")


def _case_html(run: AnswersNotebookRun, results: list[Any], labels: Any = None) -> str:
    case = next(c for c in run.report.run.cases if c.case_id == results[0].case_id)
    return answers_case.case_html(run.report, results, case, labels)


def explorer(run: AnswersNotebookRun, judge: str | None = None) -> Html:
    """The heatmap of every route's gates by bucket, linked to the table of questions; each
    case view offers `judge`'s verdicts to label (module docstring)."""
    report = run.report
    labels = labelling(run, judge)
    heatmap = charts.pass_rate_heatmap(
        _rates(run), "Each route's gates by language, tag and document", select=True,
        compared=any(c is not None for c in run.comparisons.values())).to_dict()
    root = embed.element_id({"answers": list(run.keys.values()),
                             "n": len(report.run.results)}, "rse-explorer")
    by_id: dict[str, list[Any]] = {}
    for r in report.run.results:
        if r.repeat == 0:
            by_id.setdefault(r.id, []).append(r)
    rows, slots = [], []
    regressed = {c["id"].split("#")[0] for cmp in run.comparisons.values() if cmp
                 for c in cmp.case_regressions}
    for qid, results in by_id.items():
        failed = [f"{r.route} {g}" for r in results for g in _failed_gates(r)]
        cells = {r.route: f"{'PASS' if r.verdict.passed else 'FAIL'}: {r.verdict.reason}"
                 + (f" ({r.stage})" if r.stage else "") for r in results}
        buckets = _buckets(results[0])
        rows.append(linked.row_html(qid, {"gates": failed, "buckets": buckets}, [
            f"<b>{escape(qid)}</b>", escape(results[0].case_class),
            escape(cells.get("ask", "—")), escape(cells.get("narrative", "—")),
            escape(", ".join(buckets)),
            f'<div class="rse-clamp">{escape(results[0].question)}</div>'],
            regressed=qid in regressed))
        slots.append(linked.slot_html(qid, _case_html(run, results, labels)))
    return Html(STYLE + linked.explorer_html(
        root, LINK, [embed.chart_html(heatmap, on_view=linked.listen(root))], COLUMNS, rows,
        slots, empty="no question", hint="Click a heatmap cell to keep the questions that fail "
        "that gate in that bucket; double-click or Show all to clear; click a row for its case "
        "view, both routes side by side, where the faithfulness judge's verdicts can be marked "
        "right or wrong and exported as labels."))


def _failed_gates(result: Any) -> list[str]:
    v = result.verdict
    if not result.scored or result.outcome.error:
        return []
    out = [] if v.passed else ["question_pass"]
    if v.kind == "abstain" and not v.refused:
        out.append("abstention")
    if any(not c.content_hit for c in v.claims):
        out.append("claim_content")
    if any(not c.page_hit for c in v.claims):
        out.append("claim_citation")
    if any(not (c.strict and c.strict.cited) for c in v.claims):
        out.append("claim_citation_strict")
    return out
