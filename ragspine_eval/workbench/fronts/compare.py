"""Two QA runs compared: what notebooks/compare.ipynb shows, as data a test reads without a kernel.

`load_pair(before, after)` reads two QA reports (a path; a run id or short reference once the
run store is there; by default the two newest stored runs of one key) and pairs them with
outputs.diff.diff_reports. The frames (`gate_changes`, `tag_changes`, `flip_table`, `apart`)
and the gate (`assert_no_flips`) are pure functions of that pair; compare_view.py draws them.

Invariants (those of outputs.diff, which this module never second-guesses):
- a flip is a case both runs scored under a gate, with the same golden fingerprint in both,
  whose verdict differs; a golden case edited between the runs, a case in one run only and a
  case with an engine error in the after run are listed by `apart`, never counted as flips;
- `assert_no_flips` raises AssertionError exactly when some case went from pass to fail under
  some gate, naming every such case and gate, or when the after run has engine errors (cases
  with no verdict: `ragspine-eval diff` exits 1 on them too), naming them;
- two retrieval-only reports are paired as QA reports whose gates are recall@k and
  page_recall@k and whose cases are the questions (retrieval_compare.py adds MRR);
- two reports of different modes, engines, knowledge bases or golden sets are compared, with
  each difference stated in `Pair.warnings` (the banner shows them first); a QA report and an
  extraction report are refused (ReportError): their verdicts do not pair.
The changed words of two answers (`word_diff`, `words`) are views/changed_words.py's, still
importable from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ragspine_eval.errors import ReportError
from ragspine_eval.outputs import extraction_diff
from ragspine_eval.outputs.console import short_ids
from ragspine_eval.outputs.diff import ReportDiff, diff_reports, qa_verdicts
from ragspine_eval.outputs.diff import _label as run_label
from ragspine_eval.paths import from_root
from ragspine_eval.qa.report import QAEvalReport
from ragspine_eval.workbench.views.changed_words import (  # noqa: F401 - re-exported
    word_diff,
    words,
)
from ragspine_eval.workbench.views.frames import TAG_KEYS

PASS_TO_FAIL, FAIL_TO_PASS = "pass_to_fail", "fail_to_pass"
ARROWS = {PASS_TO_FAIL: "pass → fail", FAIL_TO_PASS: "fail → pass"}
EDITED = "golden case edited between the runs"
BEFORE_ONLY, AFTER_ONLY = "in the before run only", "in the after run only"
AFTER_ERROR = "engine error in the after run (no verdict)"
BEFORE_ERROR = "engine error in the before run (no verdict)"


@dataclass
class Pair:
    """Two QA runs and their paired diff; `names` say where each came from (path or run id)."""

    before: QAEvalReport
    after: QAEvalReport
    before_name: str
    after_name: str
    diff: ReportDiff
    verdicts: tuple[dict[str, dict[str, bool]], dict[str, dict[str, bool]]]
    warnings: list[str] = field(default_factory=list)

    @property
    def regressed(self) -> list[str]:
        return self.diff.regressed_cases


# --- reading -----------------------------------------------------------------------------------


def read_report(ref: str | Path, root: str | Path | None = None) -> tuple[dict[str, Any], str]:
    """A report dict and its name: `ref` is a report path (relative to the project root, or
    as given), a run id or prefix, or a short reference such as @latest~1 (runs.refs)."""
    from ragspine_eval import runs

    text = str(ref)
    if not text.startswith("@") and from_root(text).is_file():
        return runs.read_report_file(from_root(text)), text
    found = runs.resolve(text, _root(root))
    if isinstance(found, runs.RunSummary):
        return runs.read_report_file(found.path), f"run {found.id}"
    return runs.read_report_file(found), text


def _root(root: str | Path | None) -> Path | None:
    return from_root(root) if root is not None else None


def default_refs(root: str | Path | None = None) -> tuple[str, str]:
    """(before, after) when the notebook is given neither: the two newest stored QA runs of
    the newest run's key. ReportError when the store holds fewer than two of that key."""
    from ragspine_eval import runs

    stored = runs.list_runs(kind="qa", root=_root(root))
    same = [r for r in stored if r.key == stored[0].key] if stored else []
    if len(same) < 2:
        where = _root(root) or runs.runs_dir()
        held = (f"{len(same)} QA run of key {stored[0].key!r}" if stored else "no QA run")
        raise ReportError(f"compare: the run store at {where} holds {held}; compare needs two: "
                          f"run `ragspine-eval qa` again, or pass before= and after= (report "
                          f"paths, run ids or references such as @tool~1)")
    return same[1].id, same[0].id


def load_pair(before: str | Path | None = None, after: str | Path | None = None,
              root: str | Path | None = None) -> Pair:
    """Read and pair two QA reports (see the module docstring); `root` is the run store
    (default runs.runs_dir()). ReportError (or runs.RunRefError), naming the file or the
    reference and the reason, when one cannot be read or is not a QA report."""
    if before is None or after is None:
        default_before, default_after = default_refs(root)
        before = default_before if before is None else before
        after = default_after if after is None else after
    (old, old_name), (new, new_name) = read_report(before, root), read_report(after, root)
    for data, name in ((old, old_name), (new, new_name)):
        if extraction_diff.is_extraction_report(data):
            raise ReportError(f"{name}: an extraction report; compare.ipynb compares two QA "
                              f"reports (for extraction runs: ragspine-eval diff OLD NEW)")
    # two retrieval-only runs (two engine configurations, say) compare as QA runs whose gates
    # are recall@k and page_recall@k (retrieval_only.report.as_qa_report)
    from ragspine_eval.retrieval_only.report import as_qa_report, is_retrieval_report

    from ragspine_eval.answers import report as answers_report

    old, new = (as_qa_report(d) if is_retrieval_report(d) else
                answers_report.as_qa_report(d) if answers_report.is_answers_report(d) else d
                for d in (old, new))
    diff = diff_reports(old, new)
    diff.old_label, diff.new_label = run_label(old, old_name), run_label(new, new_name)
    pair = Pair(QAEvalReport.from_dict(old), QAEvalReport.from_dict(new), old_name, new_name,
                diff, (qa_verdicts(old, old_name), qa_verdicts(new, new_name)))
    from ragspine_eval.workbench.fronts.retrieval_compare import config_warning

    pair.warnings = config_warning(old, new) + [
        f"{note}: the runs differ in more than the change under review" for note in diff.notes]
    return pair


# --- frames ------------------------------------------------------------------------------------


def gate_changes(pair: Pair) -> pd.DataFrame:
    """One row per gate: before and after rate, change, both flip counts, McNemar's exact p on
    the paired verdicts (is the change more than noise?); a gate no case reached in either run
    (fabrication of two retrieval runs) is left out."""
    frame = pair.diff.to_frame()
    if {"old_total", "new_total"} <= set(frame.columns):
        frame = frame[(frame["old_total"] > 0) | (frame["new_total"] > 0)].reset_index(drop=True)
    return frame.rename(columns={
        "old_rate": "before", "new_rate": "after", "rate_change": "change",
        "pass_to_fail": "pass → fail", "fail_to_pass": "fail → pass", "p_value": "McNemar p",
        "old_passed": "before passed", "old_total": "before total",
        "new_passed": "after passed", "new_total": "after total"})


def _buckets(report: QAEvalReport) -> dict[str, list[str]]:
    return {c.id: [f"{t}={c.tags[t]}" for t in TAG_KEYS if isinstance(c.tags.get(t), str)]
            for c in report.cases}


def tag_changes(pair: Pair) -> pd.DataFrame:
    """Per gate and tag value, over the paired cases: cases, before and after pass rate, change,
    and the pass → fail and fail → pass counts (the chart's cells)."""
    old, new = pair.verdicts
    buckets = _buckets(pair.after)
    flips = {(g.gate, d): set(ids) for g in pair.diff.gates
             for d, ids in ((PASS_TO_FAIL, g.pass_to_fail), (FAIL_TO_PASS, g.fail_to_pass))}
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for g in pair.diff.gates:
        paired = set(old.get(g.gate, {})) & set(new.get(g.gate, {})) - set(pair.diff.changed_cases)
        for case_id in sorted(paired):
            for bucket in buckets.get(case_id, []):
                row = rows.setdefault((g.gate, bucket), {
                    "gate": g.gate, "bucket": bucket, "cases": 0, "before passed": 0,
                    "after passed": 0, PASS_TO_FAIL: 0, FAIL_TO_PASS: 0})
                row["cases"] += 1
                row["before passed"] += old[g.gate][case_id]
                row["after passed"] += new[g.gate][case_id]
                row[PASS_TO_FAIL] += case_id in flips[(g.gate, PASS_TO_FAIL)]
                row[FAIL_TO_PASS] += case_id in flips[(g.gate, FAIL_TO_PASS)]
    table = pd.DataFrame(list(rows.values()),
                         columns=["gate", "bucket", "cases", "before passed", "after passed",
                                  PASS_TO_FAIL, FAIL_TO_PASS])
    table["before rate"] = table["before passed"] / table["cases"]
    table["after rate"] = table["after passed"] / table["cases"]
    table["change"] = table["after rate"] - table["before rate"]
    return table


def flip_table(pair: Pair) -> pd.DataFrame:
    """One row per flipped case and gate, pass → fail first: id, gate, direction, the case's
    tag values ("buckets"), question, both answers, and the rank of the case's first relevant
    passage in each run ("rank before", "rank after": "2", "none", "not observed", "" for a
    case without relevance): whether retrieval changed under the flip."""
    flips = pair.diff.flips_frame()
    before = {c.id: c for c in pair.before.cases}
    after = {c.id: c for c in pair.after.cases}
    buckets = _buckets(pair.after)
    flips["buckets"] = [buckets.get(i, []) for i in flips["id"]]
    flips["question"] = [after[i].question if i in after else "" for i in flips["id"]]
    flips["before answer"] = [before[i].answer if i in before else "" for i in flips["id"]]
    flips["after answer"] = [after[i].answer if i in after else "" for i in flips["id"]]
    flips["rank before"] = [_rank_text(before.get(i)) for i in flips["id"]]
    flips["rank after"] = [_rank_text(after.get(i)) for i in flips["id"]]
    order = (flips["direction"] != PASS_TO_FAIL).astype(int)
    return (flips.assign(_order=order).sort_values(["_order", "gate", "id"], kind="stable",
                                                   ignore_index=True).drop(columns="_order"))


def retrieval_change(pair: Pair) -> pd.DataFrame:
    """hit@k before and after, paired: per k (1, 3, 5, 10), over the cases both runs observed
    with the same golden fingerprint, the cases that hit before and after, the cases that lost
    the hit (hit → miss) and that gained it (miss → hit), and McNemar's exact p on those
    discordant pairs (stats.mcnemar_exact: small p, more than noise); then MRR before and
    after over the same cases. Empty when no case was observed in both runs."""
    from ragspine_eval.retrieval.metrics import KS
    from ragspine_eval.stats import mcnemar_exact

    before = {c.id: c for c in pair.before.cases}
    paired = []
    for case in pair.after.cases:
        old = before.get(case.id)
        if (old is not None and old.fingerprint == case.fingerprint and old.retrieval
                and case.retrieval and old.retrieval.get("observed")
                and case.retrieval.get("observed")):
            paired.append((old.retrieval.get("rank"), case.retrieval.get("rank")))
    columns = ["k", "cases", "hit before", "hit after", "hit → miss", "miss → hit",
               "McNemar p", "MRR before", "MRR after"]
    if not paired:
        return pd.DataFrame(columns=columns)

    def hit(rank: int | None, k: int) -> bool:
        return rank is not None and rank <= k

    def mrr(ranks: list[int | None]) -> float:
        return sum(1 / r for r in ranks if r) / len(ranks)

    mrr_before, mrr_after = mrr([b for b, _ in paired]), mrr([a for _, a in paired])
    rows = []
    for k in KS:
        lost = sum(1 for b, a in paired if hit(b, k) and not hit(a, k))
        gained = sum(1 for b, a in paired if hit(a, k) and not hit(b, k))
        rows.append({"k": k, "cases": len(paired),
                     "hit before": sum(hit(b, k) for b, _ in paired) / len(paired),
                     "hit after": sum(hit(a, k) for _, a in paired) / len(paired),
                     "hit → miss": lost, "miss → hit": gained,
                     "McNemar p": mcnemar_exact(lost, gained),
                     "MRR before": mrr_before, "MRR after": mrr_after})
    return pd.DataFrame(rows, columns=columns)


def _rank_text(case: Any) -> str:
    from ragspine_eval.workbench.views.frames import _rank_text as text

    return text(case)


def apart(pair: Pair) -> pd.DataFrame:
    """The cases kept out of the flips, with why: golden case edited between the runs, in one
    run only, or an engine error in either run; and the gates concerned."""
    errors = set(pair.diff.new_errors)
    before_errors = {c.id for c in pair.before.errors}
    why: dict[tuple[str, str], list[str]] = {}
    for case_id in pair.diff.changed_cases:
        why[(case_id, EDITED)] = [g.gate for g in pair.diff.gates]
    for g in pair.diff.gates:
        for case_id in g.only_old:
            why.setdefault((case_id, AFTER_ERROR if case_id in errors else BEFORE_ONLY),
                           []).append(g.gate)
        for case_id in g.only_new:
            why.setdefault((case_id, BEFORE_ERROR if case_id in before_errors else AFTER_ONLY),
                           []).append(g.gate)
    questions = {c.id: c.question for r in (pair.before, pair.after) for c in r.cases}
    rows = [{"id": i, "why": w, "question": questions.get(i, ""), "gates": ", ".join(gates)}
            for (i, w), gates in sorted(why.items())]
    return pd.DataFrame(rows, columns=["id", "why", "question", "gates"])


# --- the gate ----------------------------------------------------------------------------------


def model_changes(pair: Pair) -> pd.DataFrame:
    """Which model answered each run, replayed or not, with its calls, tokens, cost and latency
    per case (p50, p95), side by side: the cost of a flip next to it. A run of the engine's
    MockProvider says so and has no calls."""
    def column(report: QAEvalReport) -> dict[str, Any]:
        prov = report.provenance
        model = (prov.model if prov is not None else None) or {}
        usage = (prov.model_usage if prov is not None else None) or {}
        calls, unit = usage.get("run") or {}, (usage.get("cost") or {}).get("currency", "")
        tape = model.get("cassette") or {}
        run = ((prov.times.latency or {}).get("run") or {}) if prov and prov.times else {}

        def ms(key: str) -> str:
            return f"{run[key] * 1000:.1f} ms" if run.get(key) is not None else "-"

        return {"model": (f"{model.get('provider')} {model.get('model') or ''}".strip()
                          if model else "mock (the engine's script)"),
                "answers": f"replayed ({tape.get('recorded', '')})".replace(" ()", "")
                           if tape.get("mode") == "replay" else tape.get("mode", "live"),
                "calls": calls.get("calls", 0),
                "prompt tokens": calls.get("input_tokens", 0),
                "completion tokens": calls.get("output_tokens", 0),
                "cost": "-" if calls.get("cost") is None else
                        f"{calls['cost']:.4f} {unit}",
                "latency p50": ms("p50"), "latency p95": ms("p95")}

    before, after = column(pair.before), column(pair.after)
    return pd.DataFrame([(k, str(before[k]), str(after[k])) for k in before],
                        columns=["", "before", "after"])


def gate_lines(pair: Pair) -> list[str]:
    """What the gate says: each pass → fail flip by gate, or that none happened."""
    lines = [f"before: {pair.diff.old_label}", f"after:  {pair.diff.new_label}"]
    lines += [f"warning: {w}" for w in pair.warnings]
    fixed = sorted({i for g in pair.diff.gates for i in g.fail_to_pass})
    if fixed:
        lines.append(f"{len(fixed)} case{'s' * (len(fixed) != 1)} went from fail to pass: "
                     f"{', '.join(fixed)}")
    kept = apart(pair)
    if len(kept):
        named = [f"{i} ({why})" for i, why in zip(kept["id"], kept["why"], strict=True)]
        lines.append(f"kept apart, not flips: {'; '.join(named)}")
    errors = pair.diff.new_errors
    if errors:
        lines.append(f"FAIL: {len(errors)} engine error{'s' * (len(errors) != 1)} in the after "
                     f"run, cases with no verdict (`ragspine-eval diff` fails on them too): "
                     f"{short_ids(errors, 20)}")
    flipped = [g for g in pair.diff.gates if g.pass_to_fail]
    if not flipped:
        return [*lines, f"{'' if errors else 'PASS: '}no case went from pass to fail"]
    n = len(pair.regressed)
    lines.append(f"FAIL: {n} case{'s' * (n != 1)} went from pass to fail: "
                 f"{', '.join(pair.regressed)}")
    lines += [f"  {g.gate}: {', '.join(g.pass_to_fail)}" for g in flipped]
    return lines


def failed(pair: Pair) -> bool:
    """The gate's verdict: some case went from pass to fail, or the after run has engine
    errors (as `ragspine-eval diff` exits 1 on either)."""
    return bool(pair.diff.regressed or pair.diff.new_errors)


def assert_no_flips(pair: Pair, fail_on_flips: bool = True) -> str:
    """The notebook's last cell: AssertionError naming every case that went from pass to fail
    and every engine error of the after run (papermill then exits non-zero: a PR gate); the
    PASS message otherwise. With `fail_on_flips=False` (make run's informative tool-vs-agent
    comparison) it only reports."""
    message = "\n".join(gate_lines(pair))
    if failed(pair) and fail_on_flips:
        raise AssertionError(message)
    return message
