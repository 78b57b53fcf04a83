"""Comparing a run that has engine errors with its baseline, on the cases it answered.

A case whose engine call raised, timed out or came back malformed has no verdict (report.py
keeps it in each gate's `errors`). Compared as it stands, such a run would look like a
regression it is not: an errored case missing from the passed ids reads as "passed at baseline,
fails now", and a rate over fewer cases moves for that reason alone. So `compare_answered`
restricts both entries to what both can speak for before the ratchet's `compare`:

- the errored cases leave both sides (their golden fingerprints and passed ids): an engine
  error is never a case regression, a golden change or an improvement;
- each rate, and the fabrication count, is recomputed on each side over the same cases: those
  the gate applies to, answered now, and known unchanged to the baseline (same id, same
  fingerprint). A stored entry without per-case ids (written before them) cannot be restricted:
  its rates are compared with the answered cases' as they are, and a note says so.

The run itself still fails (exit 1, "N engine errors", never recorded: qa/harness.py); this only
keeps the regressions it lists to the ones that are real.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragspine_eval import ratchet
from ragspine_eval.qa.gates import FABRICATION

if TYPE_CHECKING:
    from ragspine_eval.qa.report import QAEvalReport


def compare_answered(report: QAEvalReport, current: dict[str, Any], stored: dict[str, Any]
                     ) -> ratchet.BaselineComparison:
    """`ratchet.compare` of the run's entry with the stored one, on the answered cases."""
    errored = {c.id for c in report.errors}
    views = _answered_views(report, current, stored)
    if views is None:
        cmp = ratchet.compare(current, stored)
        cmp.notes.insert(0, f"{len(errored)} engine errors: the rates of the "
                            f"{len(report.cases) - len(errored)} answered cases are compared "
                            f"with the baseline's over all its cases (the baseline predates "
                            f"per-case ids, so it cannot be restricted to them)")
        return cmp
    now_view, then_view, shared = views
    cmp = ratchet.compare(now_view, then_view)
    cmp.notes.insert(0, f"{len(errored)} engine errors: compared with the baseline on the "
                        f"{shared} cases answered now that the baseline knows unchanged; "
                        f"the errored cases are neither passes nor failures")
    return cmp


def baseline_shown(report: QAEvalReport, stored: dict[str, Any] | None
                   ) -> tuple[dict[str, Any] | None, str | None]:
    """The stored entry as the gate tables show it beside this run, and a footnote: for a run
    with engine errors, the baseline's rates and fabrication count on the cases the comparison
    uses (so the table and the verdict agree); otherwise the entry as stored and no footnote."""
    if stored is None or not report.errors:
        return stored, None
    views = _answered_views(report, None, stored)
    if views is None:
        return stored, None
    return views[1], (f"baseline: its rates on the {views[2]} cases answered now that it knows "
                      f"unchanged (the engine errors left out on both sides, as the gate compares)")


def _answered_views(report: QAEvalReport, current: dict[str, Any] | None,
                    stored: dict[str, Any]) -> tuple[Any, dict[str, Any], int] | None:
    """(the run's entry `current`, the stored entry, how many cases they share), both restricted
    to the cases answered now that the stored entry knows unchanged (the run's None when
    `current` is); None for a stored entry without per-case ids. Reads the run from `report`
    alone, so that this module needs nothing of report.py at run time (no import cycle)."""
    if "passed_ids" not in stored or "golden" not in stored:
        return None
    errored = {c.id for c in report.errors}
    now_golden = {c.id: c.fingerprint for c in report.cases}
    shared = {i for i, fp in stored["golden"].items()
              if i not in errored and now_golden.get(i) == fp}
    then_view = _without(stored, errored)
    now_view = None if current is None else _without(current, errored)
    then_metrics = dict(stored.get("metrics", {}))
    now_metrics = {name: m.pass_rate for name, m in report.metrics.items()}
    gates = report.gates()
    for name, then_passed in stored["passed_ids"].items():
        if name not in gates:
            continue
        cases = shared.intersection(r.id for r in gates[name].results)
        then_n = len(cases.intersection(then_passed))
        now_n = len(cases.intersection(r.id for r in gates[name].results if r.passed))
        if name == FABRICATION:
            if "fabrication_count" in stored:
                then_view["fabrication_count"] = len(cases) - then_n
                if now_view is not None:
                    now_view["fabrication_count"] = len(cases) - now_n
        elif name in then_metrics and name in now_metrics:
            then_metrics[name] = then_n / len(cases) if cases else 1.0
            now_metrics[name] = now_n / len(cases) if cases else 1.0
    then_view["metrics"] = then_metrics
    if now_view is not None:
        now_view["metrics"] = now_metrics
    return now_view, then_view, len(shared)


def _without(entry: dict[str, Any], errored: set[str]) -> dict[str, Any]:
    """The entry with the errored cases left out of its golden fingerprints and passed ids."""
    return {**entry,
            "golden": {i: fp for i, fp in entry["golden"].items() if i not in errored},
            "passed_ids": {gate: [i for i in ids if i not in errored]
                           for gate, ids in entry["passed_ids"].items()}}
