"""A QA report's baseline entry, and a report compared with a stored one (the ratchet's side).

`make_baseline_entry` and `compare_to_baseline` connect a report (report.py) to the ratchet
(ragspine_eval.ratchet). The direction is one way: this module and answered.py know the report,
the report knows neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragspine_eval import ratchet as baseline_mod
from ragspine_eval.qa.retrieval_gate import is_retrieval_gate

if TYPE_CHECKING:
    from ragspine_eval.qa.report import QAEvalReport


def make_baseline_entry(report: QAEvalReport, retrieval: bool = True) -> dict[str, Any]:
    """{"metrics": {name: pass_rate}, "fabrication_count", "n_cases"} plus, for the ratchet,
    the ids that passed each gate and the fingerprint of every golden case; and from the
    report's provenance, when it has one: "judge" ({"name", "threshold"}), "kb" ({"fingerprint",
    "files": {file: fingerprint}}) and "engine" ({"name", "version"}; version None when the
    engine is not an installed package), so that a later run can say what changed under it.

    `retrieval=False` leaves the retrieval gate (`retrieval@k`) out: an entry gains it only
    through a reviewed update (`entry_for_gate`)."""
    gates = {name: m for name, m in report.gates().items()
             if retrieval or not is_retrieval_gate(name)}
    entry = {
        "metrics": {name: m.pass_rate for name, m in report.metrics.items() if name in gates},
        "fabrication_count": report.fabrication_count,
        "n_cases": report.n_cases,
        "passed_ids": {name: m.passed_ids for name, m in gates.items()},
        "golden": {c.id: c.fingerprint for c in report.cases},
    }
    if report.repeats > 1:  # only repeats can see flakiness; a single run leaves it as stored
        entry["repeats"], entry["flaky"] = report.repeats, report.flaky
    prov = report.provenance
    if prov is None:
        return entry
    if prov.judge is not None:
        entry["judge"] = dict(prov.judge)
    if prov.kb is not None:
        entry["kb"] = {"fingerprint": prov.kb.fingerprint,
                       **({"files": dict(prov.kb_files)} if prov.kb_files is not None else {})}
    entry["engine"] = {"name": prov.engine, "version": prov.engine_version}
    if prov.engine_config is not None:  # the configuration the entry was measured under
        entry["engine_config"] = {k: prov.engine_config[k] for k in ("fingerprint", "settings")}
    if prov.model is not None:  # the model that answered (never its URL: a gateway may move)
        entry["model"] = {k: prov.model.get(k) for k in ("provider", "model")}
    return entry


def entry_for_gate(report: QAEvalReport, stored: dict[str, Any] | None, options: Any
                   ) -> dict[str, Any]:
    """The entry a gated run hands the ratchet. The retrieval gate is in it when the stored
    entry already has it, when there is no stored entry (a first baseline records every gate),
    or when the run updates the baseline with a stated reason (`--update-baseline --reason`):
    so an automatic ratchet, or an update without a reason, never adds a gate to a committed
    baseline, and the six gates' entries move exactly as they did before the gate existed."""
    has = stored is not None and any(map(is_retrieval_gate, stored.get("metrics", {})))
    reviewed = bool(getattr(options, "update", False) and (getattr(options, "reason", "") or "")
                    .strip())
    return make_baseline_entry(report, retrieval=stored is None or has or reviewed)


def compare_to_baseline(report: QAEvalReport, baseline: dict[str, Any]
                        ) -> baseline_mod.BaselineComparison:
    """Compare a report with one stored baseline entry (see ratchet.compare for the rules); a
    run with engine errors on the cases it answered (answered.py)."""
    if report.errors:
        from ragspine_eval.qa.answered import compare_answered

        return compare_answered(report, make_baseline_entry(report), baseline)
    return baseline_mod.compare(make_baseline_entry(report), baseline)
