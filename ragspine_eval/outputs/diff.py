"""Two runs compared case by case: which cases flipped, by how much each rate moved, and whether
the change is more than noise (an exact McNemar test on the paired verdicts).

`diff_reports(old, new)` takes two QA reports (JSON files, their dicts, or `QAEvalReport`s) of
any modes: last month's tool run against today's, or a tool run against an agent run; or two
extraction reports, compared per document set and channel, cell by cell
(extraction_diff.py). The CLI's `ragspine-eval diff` and the qa notebook's tool-vs-agent
section both call it.

Invariants:
- a case is paired when both reports scored it under the gate and its golden fingerprint is the
  same in both; a case whose golden fingerprint changed between the runs is not the same case,
  so it is listed in `changed_cases` and never counted as a flip;
- pass_to_fail + fail_to_pass are exactly the discordant pairs McNemar is computed on;
- `regressed` is True exactly when some case went from pass to fail (the CLI's exit 1); the
  rates and p-values inform and decide nothing.
The core, `diff_verdicts`, reads plain {gate: {case id: passed}} maps, so another harness can
reuse it with its own loader.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ragspine_eval.errors import ReportError
from ragspine_eval.files import reading
from ragspine_eval.files.reading import clip
from ragspine_eval.outputs import escape, extraction_diff
from ragspine_eval.stats import mcnemar_exact

if TYPE_CHECKING:
    from ragspine_eval.qa.report import QAEvalReport

NOISE_LEVEL = 0.05  # only for the marker in the table; nothing is decided on it
# ids listed in a line of the terminal table for cases in one run only or engine errors (every
# flipped id is always listed); beyond, a count
LISTED_IDS = 20

Verdicts = Mapping[str, Mapping[str, bool]]  # gate -> case id -> passed


@dataclass(frozen=True)
class GateDiff:
    """One gate across two runs. Rates are None where a report lacks the gate."""

    gate: str
    old_passed: int
    old_total: int
    new_passed: int
    new_total: int
    old_rate: float | None
    new_rate: float | None
    paired: int
    pass_to_fail: list[str]
    fail_to_pass: list[str]
    p_value: float
    only_old: list[str] = field(default_factory=list)
    only_new: list[str] = field(default_factory=list)

    @property
    def rate_change(self) -> float | None:
        if self.old_rate is None or self.new_rate is None:
            return None
        return self.new_rate - self.old_rate


@dataclass
class ReportDiff:
    old_label: str
    new_label: str
    gates: list[GateDiff]
    changed_cases: list[str] = field(default_factory=list)
    # what else differs between the two runs (mode, engine, golden set, knowledge base)
    notes: list[str] = field(default_factory=list)
    # cases that ended in an engine error in the new run: their flips are no wrong answers
    new_errors: list[str] = field(default_factory=list)
    # gate -> case id -> what the flip was (extraction: expected and got), where known
    details: dict[str, dict[str, str]] = field(default_factory=dict)
    unit: str = "case"  # what an id names: a golden case, or an extraction cell

    @property
    def regressed_cases(self) -> list[str]:
        """Each case that went from pass to fail under at least one gate, once."""
        return sorted({i for g in self.gates for i in g.pass_to_fail})

    @property
    def regressed(self) -> bool:
        """True when any case went from pass to fail under any gate."""
        return any(g.pass_to_fail for g in self.gates)

    def to_dict(self) -> dict[str, Any]:
        return {
            "old": self.old_label,
            "new": self.new_label,
            "regressed": self.regressed,
            "changed_cases": self.changed_cases,
            "regressed_cases": self.regressed_cases,
            "new_errors": self.new_errors,
            "notes": self.notes,
            "gates": [{**asdict(g), "rate_change": g.rate_change} for g in self.gates],
            "details": self.details,
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per gate: counts, rates, change, flips and the McNemar p-value."""
        rows = [{"gate": g.gate, "old_rate": g.old_rate, "new_rate": g.new_rate,
                 "rate_change": g.rate_change, "old_passed": g.old_passed,
                 "old_total": g.old_total, "new_passed": g.new_passed, "new_total": g.new_total,
                 "paired": g.paired, "pass_to_fail": len(g.pass_to_fail),
                 "fail_to_pass": len(g.fail_to_pass), "p_value": g.p_value}
                for g in self.gates]
        return pd.DataFrame(rows, columns=["gate", "old_rate", "new_rate", "rate_change",
                                           "old_passed", "old_total", "new_passed", "new_total",
                                           "paired", "pass_to_fail", "fail_to_pass", "p_value"])

    def flips_frame(self) -> pd.DataFrame:
        """One row per flipped case and gate: gate, id, direction (pass_to_fail | fail_to_pass)."""
        rows = [{"gate": g.gate, "id": i, "direction": direction}
                for g in self.gates
                for direction, ids in (("pass_to_fail", g.pass_to_fail),
                                       ("fail_to_pass", g.fail_to_pass))
                for i in ids]
        return pd.DataFrame(rows, columns=["gate", "id", "direction"])


# --- the core ----------------------------------------------------------------------------------


def diff_verdicts(old: Verdicts, new: Verdicts, *, exclude: frozenset[str] = frozenset()
                  ) -> list[GateDiff]:
    """Per gate (old's order, then gates only new has): flips among cases both runs scored."""
    gates = list(old) + [g for g in new if g not in old]
    out = []
    for gate in gates:
        before, after = old.get(gate, {}), new.get(gate, {})
        paired = sorted((set(before) & set(after)) - exclude)
        p2f = [i for i in paired if before[i] and not after[i]]
        f2p = [i for i in paired if not before[i] and after[i]]
        out.append(GateDiff(
            gate=gate,
            old_passed=sum(before.values()), old_total=len(before),
            new_passed=sum(after.values()), new_total=len(after),
            old_rate=_rate(before) if gate in old else None,
            new_rate=_rate(after) if gate in new else None,
            paired=len(paired),
            pass_to_fail=p2f,
            fail_to_pass=f2p,
            p_value=mcnemar_exact(len(p2f), len(f2p)),
            only_old=sorted(set(before) - set(after)),
            only_new=sorted(set(after) - set(before)),
        ))
    return out


def _rate(verdicts: Mapping[str, bool]) -> float:
    # the report's own convention: a gate no case reaches has pass rate 1.0
    return sum(verdicts.values()) / len(verdicts) if verdicts else 1.0


# --- QA reports --------------------------------------------------------------------------------


def diff_reports(old: QAEvalReport | Mapping[str, Any] | str | Path,
                 new: QAEvalReport | Mapping[str, Any] | str | Path, *, names: tuple = (None, None)) -> ReportDiff:
    """Diff two QA reports (each a JSON path, a report dict, or a `QAEvalReport`), or two
    extraction reports (paths or dicts); `names` label them (default: the path, or the mode)."""
    (old_data, old_name), (new_data, new_name) = _as_dict(old), _as_dict(new)
    old_name, new_name = names[0] or old_name, names[1] or new_name
    kinds = [extraction_diff.is_extraction_report(d) for d in (old_data, new_data)]
    if kinds[0] != kinds[1]:
        which = [f"{n} is {'an extraction' if k else 'a QA'} report"
                 for n, k in ((old_name, kinds[0]), (new_name, kinds[1]))]
        raise ReportError(f"{'; '.join(which)}: diff compares two reports of one harness")
    if kinds[0]:
        return _diff_extraction(old_data, old_name, new_data, new_name)
    old_fp, new_fp = _fingerprints(old_data), _fingerprints(new_data)
    changed = sorted(i for i in set(old_fp) & set(new_fp) if old_fp[i] != new_fp[i])
    gates = diff_verdicts(qa_verdicts(old_data, old_name), qa_verdicts(new_data, new_name),
                          exclude=frozenset(changed))
    errors = sorted({e["id"] for e in new_data.get("errors") or () if isinstance(e, Mapping)
                     and "id" in e})
    return ReportDiff(_label(old_data, old_name), _label(new_data, new_name), gates, changed,
                      _input_notes(old_data, new_data), errors)


def load_report(path: str | Path) -> dict[str, Any]:
    """A report file read strictly and bounded (files.reading), its shape checked, so that a bad
    file fails here with its name (ReportError, exit 2) and never with a traceback."""
    path = Path(path)

    def fail(reason: str) -> ReportError:
        return ReportError(f"{path}: {reason}")

    try:
        raw = reading.read_bytes(path, "report", fail)
    except FileNotFoundError:
        raise ReportError(f"{path}: no such report; write one with `ragspine-eval qa --report "
                          f"{path}`") from None
    try:
        data = reading.parse_json(reading.decode(raw, fail), controls=True)  # answers may hold controls
    except reading.JSONProblem as exc:
        where = f":{exc.line}:{exc.column}" if exc.line is not None else ""
        reason = exc.reason.replace("not valid JSON: ", "", 1)
        raise ReportError(f"{path}{where}: the report is not valid JSON ({reason})") from None
    check_shape(data, str(path))
    return data


def check_shape(data: Any, name: str) -> None:
    """Raise ReportError unless `data` has the shape of a QA or an extraction report in every
    part diff reads (wrong types named with where they are)."""
    if extraction_diff.is_extraction_report(data):
        extraction_diff.check_shape(data, name)
    else:
        qa_verdicts(data, name)
        _check_qa_parts(data, name)


def _check_qa_parts(data: Mapping[str, Any], name: str) -> None:
    cases, errors = data.get("cases", []), data.get("errors") or []
    for where, ok, expected in (
        ("'cases'", isinstance(cases, list) and all(
            isinstance(c, Mapping) and all(isinstance(c.get(k, ""), str)
                                           for k in ("id", "fingerprint")) for c in cases),
         "an array of objects with string 'id' and 'fingerprint'"),
        ("'errors'", isinstance(errors, list) and all(
            isinstance(e, Mapping) and isinstance(e.get("id", ""), str) for e in errors),
         "an array of objects with a string 'id'"),
        ("'mode'", isinstance(data.get("mode", ""), str | None), "a string")):
        if not ok:
            raise ReportError(f"{name}: {where} must be {expected}; pass the file "
                              f"`ragspine-eval qa --report` wrote")
    extraction_diff.check_provenance(data.get("provenance"), name)


def _diff_extraction(old: Mapping[str, Any], old_name: str, new: Mapping[str, Any],
                     new_name: str) -> ReportDiff:
    before = extraction_diff.extraction_verdicts(old, old_name)
    after = extraction_diff.extraction_verdicts(new, new_name)
    changed = extraction_diff.changed_cells(old, new)
    gates = []
    for g in diff_verdicts(before, after):
        key = g.gate.split(" ", 1)[0]
        same = [i for i in g.pass_to_fail + g.fail_to_pass if f"{key} {i}" in changed]
        if same:  # a cell whose ground truth changed is not the same cell
            g = diff_verdicts({g.gate: before.get(g.gate, {})}, {g.gate: after.get(g.gate, {})},
                              exclude=frozenset(same))[0]
        gates.append(g)
    old_cells = extraction_diff.cell_details(old, old_name)
    new_cells = extraction_diff.cell_details(new, new_name)
    details = {g.gate: {i: extraction_diff.flip_text(old_cells.get(g.gate, {}).get(i),
                                                     new_cells.get(g.gate, {}).get(i))
                        for i in g.pass_to_fail}
               for g in gates if g.pass_to_fail}
    notes = [n for n in _input_notes(old, new) if not n.startswith("mode ")]
    return ReportDiff(extraction_diff.label(old, old_name), extraction_diff.label(new, new_name),
                      gates, changed, notes, [], details, unit="cell")


def qa_verdicts(data: Any, name: str) -> dict[str, dict[str, bool]]:
    """{gate: {case id: passed}} of a QA report dict: the six metrics, then fabrication."""
    if not isinstance(data, Mapping) or not isinstance(data.get("metrics"), Mapping) or (
            "fabrication" in data and not isinstance(data["fabrication"], Mapping)):
        raise ReportError(f"{name}: not a ragspine-eval QA report (no 'metrics' object); "
                          f"pass the file `ragspine-eval qa --report` wrote")
    gates = dict(data["metrics"])
    if "fabrication" in data:
        gates["fabrication"] = data["fabrication"]
    out: dict[str, dict[str, bool]] = {}
    for gate, metric in gates.items():
        ids = metric.get("passed_ids") if isinstance(metric, Mapping) else None
        failures = metric.get("failures") if isinstance(metric, Mapping) else None
        if not isinstance(ids, list) or not isinstance(failures, list):
            raise ReportError(f"{name}: gate {clip(gate)} lacks 'passed_ids' or 'failures', so "
                              f"its cases cannot be paired; rerun the report with this version")
        if not all(isinstance(i, str) for i in ids):
            raise ReportError(f"{name}: gate {clip(gate)}: every entry of 'passed_ids' must be "
                              f"a case id (a string); the report is corrupt")
        verdicts = dict.fromkeys(ids, True)
        for f in failures:
            case_id = f.get("id") if isinstance(f, Mapping) else None
            if not isinstance(case_id, str) or case_id in verdicts:
                raise ReportError(f"{name}: gate {clip(gate)}: failure {clip(f)} has no id or "
                                  f"also passed; the report is corrupt")
            verdicts[case_id] = False
        out[gate] = verdicts
    return out


def _as_dict(report: Any) -> tuple[dict[str, Any], str]:
    if isinstance(report, str | Path):
        return load_report(report), str(report)
    if hasattr(report, "to_dict"):
        data = report.to_dict()
        return data, f"report {data.get('mode')}"
    if isinstance(report, Mapping):
        name = f"report {clip(report.get('mode'))}"
        check_shape(report, name)
        return dict(report), name
    raise TypeError(f"cannot diff a {type(report).__name__}; pass a path, a dict or a QAEvalReport")


def _fingerprints(data: Mapping[str, Any]) -> dict[str, str]:
    return {c["id"]: c["fingerprint"] for c in data.get("cases", [])
            if isinstance(c, Mapping) and "id" in c and "fingerprint" in c}


def _input_notes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Which inputs of the two runs differ, from their provenance where they carry one."""
    a, b = old.get("provenance") or {}, new.get("provenance") or {}
    pairs = [("mode", old.get("mode"), new.get("mode")),
             ("engine", _engine(a), _engine(b)),
             ("golden set", (a.get("golden") or {}).get("fingerprint"),
              (b.get("golden") or {}).get("fingerprint")),
             ("knowledge base", (a.get("kb") or {}).get("fingerprint"),
              (b.get("kb") or {}).get("fingerprint"))]
    notes = [f"{what} differs: {x} vs {y}" for what, x, y in pairs if x and y and x != y]
    if not (a and b):
        notes.append("a report has no provenance: its inputs cannot be compared")
    return notes


def _engine(prov: Mapping[str, Any]) -> str | None:
    if not prov.get("engine"):
        return None
    return f"{prov['engine']} {prov.get('engine_version') or '(version unknown)'}"


def _label(data: Mapping[str, Any], name: str) -> str:
    prov = data.get("provenance") or {}
    parts = [f"mode {data.get('mode', '?')}"]
    if prov.get("engine"):
        parts.append(f"{prov['engine']} {prov.get('engine_version') or ''}".strip())
    if prov.get("git_commit"):
        parts.append(f"commit {prov['git_commit'][:12]}" + (" dirty" if prov.get("git_dirty") else ""))
    if (prov.get("times") or {}).get("started_at"):
        parts.append(prov["times"]["started_at"])
    return f"{name} ({' · '.join(parts)})"


# --- the terminal table ------------------------------------------------------------------------


def diff_table(diff: ReportDiff) -> list[str]:
    """The table and every flipped id, for a terminal or a CI log."""
    lines = [f"old: {diff.old_label}", f"new: {diff.new_label}",
             f"{'gate':<31} {'old':>7} {'new':>7} {'change':>8} {'pass→fail':>9} "
             f"{'fail→pass':>9} {'McNemar p':>10}"]
    for g in diff.gates:
        change = "-" if g.rate_change is None else f"{g.rate_change:+.4f}"
        marker = " *" if g.p_value < NOISE_LEVEL else ""
        lines.append(f"{g.gate:<31} {_rate_text(g.old_rate):>7} {_rate_text(g.new_rate):>7} "
                     f"{change:>8} {len(g.pass_to_fail):>9} {len(g.fail_to_pass):>9} "
                     f"{g.p_value:>10.4f}{marker}")
    for g in diff.gates:
        if g.pass_to_fail and g.gate in diff.details:
            lines += [f"pass→fail {g.gate}: {i}: {diff.details[g.gate].get(i, '')}"
                      for i in g.pass_to_fail[:LISTED_IDS]]
            if len(g.pass_to_fail) > LISTED_IDS:
                lines.append(f"pass→fail {g.gate}: … and {len(g.pass_to_fail) - LISTED_IDS:,} "
                             f"more (--json lists every one)")
        elif g.pass_to_fail:
            lines.append(f"pass→fail {g.gate}: {', '.join(g.pass_to_fail)}")
    for g in diff.gates:
        if g.fail_to_pass:
            lines.append(f"fail→pass {g.gate}: {', '.join(g.fail_to_pass)}")
    lines += [f"note: {n}" for n in diff.notes]
    if diff.changed_cases:
        lines.append(f"not paired, golden case changed between the runs: "
                     f"{', '.join(diff.changed_cases)}")
    only_old = sorted({i for g in diff.gates for i in g.only_old} - set(diff.new_errors))
    only_new = sorted({i for g in diff.gates for i in g.only_new})
    for which, ids in (("old", only_old), ("new", only_new)):
        if ids:
            lines.append(f"scored in the {which} run only (not paired): {_listed(ids)}")
    if diff.new_errors:
        lines.append(f"engine error in the new run (no verdict): {_listed(diff.new_errors)}")
    if any(g.p_value < NOISE_LEVEL for g in diff.gates):
        lines.append(f"* McNemar p < {NOISE_LEVEL}: this many one-way flips are unlikely to be "
                     f"noise")
    n = sum(len(g.pass_to_fail) for g in diff.gates)
    errors = f"; {len(diff.new_errors)} engine error(s) in the new run" * bool(diff.new_errors)
    lines.append(f"REGRESSED: {n} pass→fail flip(s) in {len(diff.regressed_cases)} {diff.unit}(s)"
                 f"{errors}" if diff.regressed else
                 f"{'FAIL: ' * bool(errors)}no case went from pass to fail{errors}")
    return [escape.terminal(line) for line in lines]  # ids are data: no escape sequence


def _listed(ids: list[str]) -> str:
    shown = ", ".join(ids[:LISTED_IDS])
    return shown if len(ids) <= LISTED_IDS else f"{shown} … and {len(ids) - LISTED_IDS:,} more"


def _rate_text(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.4f}"
