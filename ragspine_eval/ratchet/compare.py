"""Comparing a run's baseline entry with the stored one: the ratchet's rules, no files.

Invariants:
- a regression fails the gate: a metric below its stored value, a count above it, a case that
  passed at baseline time and fails now (even when the rate is unchanged), or a golden case that
  was removed or changed since the baseline (adding cases is fine);
- only metrics the stored entry lists are checked; exact equality passes;
- "improved" holds on the same cases: when the golden set changed, a rate that rose only counts
  as an improvement if more of the cases both runs share (same id, same fingerprint) pass now;
  otherwise a note says the set changed and gives the rate on those shared cases;
- `ratcheted` only raises: each metric to max(stored, observed), a lower-is-better count only
  down; keys of the stored entry this module does not know are kept; the flaky cases a run
  with repeats saw ("repeats", "flaky": {gate: [ids]}) replace the stored ones, and a single
  run (which cannot see flakiness) leaves them as they are. A flaky case counts as passing
  (qa/repeats.py), so it is never a case regression; a case flaky at baseline time that now
  fails in every repeat is one, and says it was flaky;
- a run judged by another faithfulness judge than its entry ("judge", a QA entry's; an entry
  without it was measured with LEGACY_JUDGE) is compared, with a warning among the first notes;
  the gate (gate.py) records it only as a reviewed change;
- drift: a run on another knowledge base ("kb": {"fingerprint", "files": {file: fingerprint}})
  or another engine ("engine": {"name", "version"}) than its entry's is compared as usual, with
  one note per kind as the first notes (naming each file that differs, was added or removed)
  and the same as structured data (`BaselineComparison.drift`), which `describe` prints first,
  above every regression. Drift never fails a gate and never blocks a record by itself. An
  entry without "kb" or "engine" (an old one, the extraction harness's) is compared without
  that check; "model" ({"provider", "model"}, models/) is absent for the engine's MockProvider,
  and "engine_config" ({"fingerprint", "settings"}) for the engine's defaults, so an entry with
  one and a run without it (or the reverse) is a drift too;
- a recorded run (bootstrap, ratchet, update) makes the entry's "kb" and "engine" the run's:
  the baseline names what it was last measured on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

LOWER_IS_BETTER = ("fabrication_count",)
# A QA entry recorded before entries named their judge was measured with this one, the only
# judge there was; an entry without "judge" (extraction's) is compared with no judge check.
LEGACY_JUDGE = {"name": "lexical", "threshold": 0.6}


def judge_change(stored: dict[str, Any], current: dict[str, Any]
                 ) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(stored judge, current judge) when the run was judged otherwise than its baseline."""
    if "judge" not in current:
        return None
    then = stored.get("judge", LEGACY_JUDGE)
    return None if then == current["judge"] else (then, current["judge"])


def judge_text(judge: Any) -> str:
    if not isinstance(judge, dict):  # a hand-edited entry: show what it holds
        return repr(judge)
    return f"{judge.get('name')} (threshold {judge.get('threshold')})"


# The entry's keys that say what a run was measured on (QA entries; extraction's have none)
DRIFT_KEYS = ("kb", "engine", "model")


def drift_of(stored: dict[str, Any], current: dict[str, Any]) -> list[dict[str, Any]]:
    """What the run was measured on that differs from its entry: one dict per kind, {"kind":
    "engine_config", "kb", "engine" or "model", "then", "now", "files": [{"file", "change"}]
    (kb only; [] when either side does not list its files), "text": the note}. A kb or engine
    either side lacks is not checked; an engine configuration or a model one side lacks is the
    engine's defaults, or its MockProvider, there."""
    drift = []
    then, now = stored.get("engine_config"), current.get("engine_config")
    if (then or now) and (then or {}).get("fingerprint") != (now or {}).get("fingerprint"):
        drift.append({"kind": "engine_config", "then": then, "now": now, "files": [], "text": (
            f"engine configuration changed since the baseline was recorded: "
            f"{(then or {}).get('settings') or 'engine defaults'} -> "
            f"{(now or {}).get('settings') or 'engine defaults'}")})
    then, now = stored.get("kb"), current.get("kb")
    if isinstance(then, dict) and isinstance(now, dict) and \
            then.get("fingerprint") != now.get("fingerprint"):
        files = _file_changes(then.get("files"), now.get("files"))
        which = (", ".join(f"{f['file']} {f['change']}" for f in files) if files
                 else "its files differ")
        drift.append({"kind": "kb", "then": then, "now": now, "files": files, "text": (
            f"knowledge base changed since the baseline was recorded: {which} (kb "
            f"{_short(then.get('fingerprint'))} -> {_short(now.get('fingerprint'))}); a "
            f"regression below may come from the data, not the engine")})
    then, now = stored.get("engine"), current.get("engine")
    if isinstance(then, dict) and isinstance(now, dict) and \
            (then.get("name"), then.get("version")) != (now.get("name"), now.get("version")):
        drift.append({"kind": "engine", "then": then, "now": now, "files": [], "text": (
            f"engine changed since the baseline was recorded: {_engine_text(then)} -> "
            f"{_engine_text(now)}")})
    then, now = stored.get("model"), current.get("model")
    if (then or now) and (then or {}) != (now or {}):
        def text(m: Any) -> str:
            return f"{m.get('provider')} {m.get('model')}" if m else "mock (the engine's script)"
        drift.append({"kind": "model", "then": then, "now": now, "files": [], "text": (
            f"model changed since the baseline was recorded: {text(then)} -> {text(now)}; a "
            f"regression below may come from the model, not the engine")})
    return drift


def _file_changes(then: Any, now: Any) -> list[dict[str, str]]:
    if not isinstance(then, dict) or not isinstance(now, dict):
        return []
    return [{"file": name, "change": "differs" if name in then and name in now else
             "added" if name in now else "removed"}
            for name in sorted(set(then) | set(now)) if then.get(name) != now.get(name)]


def _short(fingerprint: Any) -> str:
    return f"{fingerprint[:8]}…" if isinstance(fingerprint, str) else repr(fingerprint)


def _engine_text(engine: dict[str, Any]) -> str:
    version = engine.get("version")
    return f"{engine.get('name')} {version if version is not None else '(version unknown)'}"


@dataclass
class BaselineComparison:
    """How a run compares with its stored entry. `passed` is False on any kind of regression;
    `drift` (another knowledge base or engine, see drift_of) informs and never fails."""

    passed: bool
    regressions: list[dict[str, Any]] = field(default_factory=list)
    case_regressions: list[dict[str, str]] = field(default_factory=list)
    golden_changes: list[dict[str, str]] = field(default_factory=list)
    improvements: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    drift: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


# What a stored entry says of one case on one gate (BaselineVerdicts.at)
PASSED_THEN, FAILED_THEN, NEW_CASE, CHANGED_CASE = "passed", "failed", "new case", "changed"


class BaselineVerdicts:
    """A stored entry's verdict per gate and case, the one reading of it that the gate's case
    check and the notebooks' "at baseline" both use.

    `at(gate, case_id, fingerprint)` is PASSED_THEN or FAILED_THEN; NEW_CASE for a case the
    baseline did not know; CHANGED_CASE when the case's golden fingerprint differs from the
    stored one (not the same case, so never a regression); None when the entry cannot say (it
    predates per-case ids, or never recorded the gate)."""

    def __init__(self, stored: dict[str, Any] | None):
        entry = stored or {}
        self._passed = ({gate: set(ids) for gate, ids in entry["passed_ids"].items()}
                        if "passed_ids" in entry else {})
        self._golden: dict[str, str] | None = entry.get("golden")

    def at(self, gate: str, case_id: str, fingerprint: str | None = None) -> str | None:
        passed = self._passed.get(gate)
        if passed is None:
            return None
        if self._golden is not None:
            if case_id not in self._golden:
                return NEW_CASE
            if fingerprint is not None and self._golden[case_id] != fingerprint:
                return CHANGED_CASE
        return PASSED_THEN if case_id in passed else FAILED_THEN


def compare(current: dict[str, Any], stored: dict[str, Any]) -> BaselineComparison:
    """Compare a freshly made entry with a stored one (both in the shape of the module docstring)."""
    regressions, improvements, notes = [], [], []
    observed = current.get("metrics", {})
    for name, base in stored.get("metrics", {}).items():
        now = observed.get(name)
        if now is None:
            regressions.append({"metric": name, "baseline": base, "current": None, "delta": None})
        elif now != base:
            row = {"metric": name, "baseline": base, "current": now, "delta": now - base}
            (regressions if now < base else improvements).append(row)
    for name in LOWER_IS_BETTER:
        if name in stored and name in current and current[name] != stored[name]:
            row = {"metric": name, "baseline": stored[name], "current": current[name],
                   "delta": current[name] - stored[name]}
            (regressions if current[name] > stored[name] else improvements).append(row)

    golden_changes: list[dict[str, str]] = []
    now_golden = current.get("golden", {})
    if "golden" in stored:
        for case_id, fp in sorted(stored["golden"].items()):
            if case_id not in now_golden:
                golden_changes.append({"id": case_id, "change": "removed"})
            elif now_golden[case_id] != fp:
                golden_changes.append({"id": case_id, "change": "changed"})
    else:
        notes.append("baseline has no golden fingerprints: golden integrity check skipped")

    case_regressions: list[dict[str, str]] = []
    if "passed_ids" in stored:
        then = BaselineVerdicts(stored)
        now_passed = current.get("passed_ids", {})
        flaky_then = stored.get("flaky", {})
        for name, ids in sorted(stored["passed_ids"].items()):
            passing = set(now_passed.get(name, ()))
            for case_id in sorted(ids):
                if (case_id in now_golden and case_id not in passing
                        and then.at(name, case_id, now_golden[case_id]) == PASSED_THEN):
                    case_regressions.append({"metric": name, "id": case_id} | (
                        {"flaky_then": True} if case_id in flaky_then.get(name, ()) else {}))
    else:
        notes.append("baseline predates per-case ids: case-level regression checks skipped")
    changed = judge_change(stored, current)
    if changed:
        notes.insert(0, f"warning: the baseline was recorded with judge {judge_text(changed[0])} "
                        f"and this run used {judge_text(changed[1])}: faithfulness is compared "
                        f"across judges and may move for that reason alone")

    drift = drift_of(stored, current)
    notes[:0] = [d["text"] for d in drift]  # first: a reader sees them before any regression

    added = sorted(set(now_golden) - set(stored.get("golden", now_golden)))
    if improvements and (added or golden_changes) and "passed_ids" in stored:
        improvements = _on_shared_cases(improvements, stored, current, added, golden_changes,
                                        notes)
    passed = not (regressions or case_regressions or golden_changes)
    return BaselineComparison(passed, regressions, case_regressions, golden_changes,
                              improvements, notes, drift)


def _on_shared_cases(improvements: list[dict[str, Any]], stored: dict[str, Any],
                     current: dict[str, Any], added: list[str],
                     golden_changes: list[dict[str, str]], notes: list[str]
                     ) -> list[dict[str, Any]]:
    """The improvements that hold on the cases both runs share (same id, same fingerprint);
    a rate that rose only because cases were added or removed becomes a note saying so."""
    now_golden = current.get("golden", {})
    shared = {i for i, fp in stored["golden"].items() if now_golden.get(i) == fp}
    change = ", ".join(part for part in (
        f"{len(added)} added" if added else "",
        f"{len(golden_changes)} removed or changed" if golden_changes else "") if part)
    kept = []
    for row in improvements:
        then_ids, now_ids = stored["passed_ids"].get(row["metric"]), \
            current.get("passed_ids", {}).get(row["metric"])
        if row["metric"] in LOWER_IS_BETTER or then_ids is None or now_ids is None:
            kept.append(row)
            continue
        then_n, now_n = len(shared.intersection(then_ids)), len(shared.intersection(now_ids))
        # the gate's cases among the shared ones: every stored case is shared when cases were
        # only added, and the stored rate is passed / applicable
        total = None if golden_changes else _applicable(row["baseline"], len(then_ids))
        on_shared = (f" it is {then_n / total:.4f} -> {now_n / total:.4f} ({then_n}/{total} "
                     f"passed then, {now_n}/{total} now)" if total else
                     f", {then_n} passed then and {now_n} pass now")
        row = {**row, "shared": {"n_cases": len(shared), "passed_then": then_n,
                                 "passed_now": now_n, "applicable": total}}
        if now_n > then_n:
            kept.append(row)
        else:
            notes.append(f"the golden set changed since the baseline ({change}): "
                         f"{row['metric']} {_num(row['baseline'])} -> {_num(row['current'])} is "
                         f"no improvement: on the {len(shared)} cases both runs share"
                         f"{on_shared}")
    for row in kept:
        if "shared" in row:
            sh = row["shared"]
            total = sh["applicable"]
            row["note"] = (f"the golden set changed ({change}); on the {sh['n_cases']} cases both "
                           f"runs share: " + (
                               f"{sh['passed_then'] / total:.4f} -> {sh['passed_now'] / total:.4f}"
                               if total else f"{sh['passed_then']} -> {sh['passed_now']} passed"))
    return kept


def _applicable(rate: float, n_passed: int) -> int | None:
    """How many cases a gate applied to, from its rate and its passed cases (None: unknowable,
    as at a rate of 0 or where the rate is not passed / applicable)."""
    if not rate or not n_passed:
        return None
    total = n_passed / rate
    return round(total) if abs(total - round(total)) < 1e-6 else None


def ratcheted(stored: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
    """The stored entry raised by the current one: metrics only up, counts only down; the
    cases, the knowledge base and the engine become the current run's.

    Keys of the stored entry that this module does not know are kept as they are.
    """
    merged = dict(stored)
    metrics = dict(stored.get("metrics", {}))
    for name, now in current.get("metrics", {}).items():
        metrics[name] = max(now, metrics[name]) if name in metrics else now
    merged["metrics"] = metrics
    for name in LOWER_IS_BETTER:
        if name in current:
            merged[name] = min(current[name], stored.get(name, current[name]))
    for key in ("n_cases", "passed_ids", "golden", "repeats", "flaky", *DRIFT_KEYS):
        if key in current:
            merged[key] = current[key]
    if "judge" in current and ("judge" in stored or judge_change(stored, current)):
        merged["judge"] = current["judge"]  # a legacy entry judged as before stays as it was
    return merged


# Case regressions and golden changes a gate prints one by one; beyond these, one line counts
# the rest, so a 100k-case run that regressed everywhere still prints a screenful.
LISTED_PER_KIND = 20


def describe(cmp: BaselineComparison, key: str, limit: int | None = None) -> list[str]:
    """Lines for a person: what the run was measured on that changed (drift, first), what
    regressed, what changed in the golden set, what improved. With `limit`, at most that many
    case regressions and golden changes each, then a count."""
    drifted = [d["text"] for d in cmp.drift]
    lines = drift_lines(cmp, key)
    lines += [n if n.startswith("warning: ") else f"note: {n}" for n in cmp.notes
              if n not in drifted]
    for r in cmp.regressions:
        if r["current"] is None:
            lines.append(f"REGRESSION [{key}] {r['metric']}: in the baseline, missing from this run")
        else:
            lines.append(f"REGRESSION [{key}] {r['metric']}: {_num(r['baseline'])} -> "
                         f"{_num(r['current'])} ({r['delta']:+.4g})")
    for c in cmp.case_regressions[:limit]:
        lines.append(f"CASE REGRESSION [{key}] {c['metric']}: {c['id']} passed in the baseline "
                     f"and fails now" + (" (it was flaky at baseline time: it passed in some "
                                         "repeats and failed in others)" if c.get("flaky_then")
                                         else ""))
    if limit is not None and len(cmp.case_regressions) > limit:
        lines.append(f"… and {len(cmp.case_regressions) - limit:,} more case regressions [{key}] "
                     f"(each gate's failures in the JSON report list every failing case)")
    for g in cmp.golden_changes[:limit]:
        lines.append(f"GOLDEN CHANGE [{key}] {g['id']} was {g['change']} since the baseline; "
                     f"golden cases are never weakened to pass")
    if limit is not None and len(cmp.golden_changes) > limit:
        lines.append(f"… and {len(cmp.golden_changes) - limit:,} more golden changes [{key}]")
    for r in cmp.improvements:
        lines.append(f"improved [{key}] {r['metric']}: {_num(r['baseline'])} -> "
                     f"{_num(r['current'])} ({r['delta']:+.4g})"
                     + (f"; {r['note']}" if r.get("note") else ""))
    return lines


def drift_lines(cmp: BaselineComparison | None, key: str) -> list[str]:
    """One line per kind of drift, marked so that it stands out in a log: "DRIFT [tool] …"."""
    return [f"DRIFT [{key}] {d['text']}" for d in (cmp.drift if cmp is not None else ())]


def _num(x: float) -> str:
    return f"{x:.4f}" if isinstance(x, float) else str(x)
