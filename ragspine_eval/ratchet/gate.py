"""The gate: compare a run with its stored entry and, where asked, record it.

Exit codes of a gate: 0 pass, bootstrap or recorded; 1 a regression, a refused update, or a
missing entry under require_baseline (a CI gate that records its own first entry could never
fail; with --update-baseline the entry is recorded as asked). The
baseline ratchets up and never down: an update that would lower anything is refused unless the
caller passes allow_regression with a reason, and then the history keeps that reason. A QA run
judged by another faithfulness judge than its entry is compared with a warning (compare.py) and
recorded only with allow_regression and a reason: the entry then names the new judge. A run
on another knowledge base or engine than its entry (drift, compare.py) is gated as any other:
drift alone never fails it nor blocks a record, and a recorded run makes the entry name them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragspine_eval.ratchet.baseline_file import (
    BaselineError,
    load_baselines,
    locked,
    validate_entry,
    write_entry,
)
from ragspine_eval.ratchet.compare import (
    LISTED_PER_KIND,
    BaselineComparison,
    compare,
    describe,
    judge_change,
    judge_text,
    ratcheted,
)


@dataclass(frozen=True)
class GateOptions:
    update: bool = False
    ratchet: bool = False
    allow_regression: bool = False
    reason: str | None = None
    accept_golden_change: bool = False
    # the command a person runs to record a gain, shown when a run improved
    record_command: str = "--update-baseline"
    # a missing entry fails (exit 1) instead of bootstrapping, unless update records it
    require_baseline: bool = False

    def check(self) -> None:
        """Raise BaselineError for options that would be ignored or that lack their reason;
        callers check before the run, run_gate checks again."""
        if self.allow_regression and not (self.update or self.accept_golden_change):
            raise BaselineError("--allow-regression only applies when the baseline is updated: "
                                "add --update-baseline (with --reason \"...\") to record a "
                                "reviewed lowering; without it the run is only compared")
        if self.allow_regression and not (self.reason or "").strip():
            raise BaselineError("--allow-regression needs --reason \"why this lowering is right\"; "
                                "the history keeps it for review")
        if self.accept_golden_change and not (self.reason or "").strip():
            raise BaselineError("--accept-golden-change needs --reason \"why the golden set "
                                "changed\"")


@dataclass
class GateResult:
    status: str  # bootstrap | pass | improved | ratcheted | updated | regression | refused | missing
    exit_code: int
    lines: list[str]
    comparison: BaselineComparison | None = None


def run_gate(path: str | Path, key: str, current: dict[str, Any],
             options: GateOptions = GateOptions()) -> GateResult:
    """Compare `current` with the entry stored under `key`, and update it where asked.

    Exit codes: 0 pass / bootstrap / recorded; 1 regression or a refused update.
    Raises BaselineError (exit 2 for a CLI) when the stored file cannot be trusted.
    """
    path = Path(path)
    options.check()
    if options.require_baseline and not options.update and key not in load_baselines(path):
        return _missing(path, key, options)  # before the lock: not even the lock file written
    with locked(path):
        new_file = not path.exists()
        baselines = load_baselines(path)
        stored = baselines.get(key)
        if stored is None:
            return _bootstrap(path, baselines, key, current, options, new_file)
        stored = validate_entry(path, key, stored)
        cmp = compare(current, stored)
        lines = describe(cmp, key, LISTED_PER_KIND)
        if options.update or options.accept_golden_change:
            return _update(path, baselines, key, stored, current, cmp, options, lines)
        if not cmp.passed:
            return GateResult("regression", 1, lines + _regression_hints(cmp, stored, current,
                                                                         options), cmp)
        if _gained(cmp, stored, current):
            return _on_gain(path, baselines, key, stored, current, cmp, options, lines)
        if cmp.drift:
            what = " and ".join("knowledge base" if d["kind"] == "kb" else d["kind"]
                                for d in cmp.drift)
            lines.append(f"no regression: drift alone never fails the gate; once reviewed, make "
                         f"the baseline name this run's {what} with: {options.record_command}")
        return GateResult("pass", 0, lines, cmp)


def _missing(path: Path, key: str, options: GateOptions) -> GateResult:
    """--require-baseline and no entry: not gated, a failure, nothing written."""
    where = f"{path} does not exist" if not path.exists() else f"{path} has no entry {key!r}"
    return GateResult("missing", 1, [
        f"MISSING BASELINE: {where} and --require-baseline is set, so this run is not "
        f"gated and fails; nothing was written. Record a baseline with: "
        f"{options.record_command}, review it and commit it"])


def _bootstrap(path: Path, baselines: dict[str, Any], key: str, current: dict[str, Any],
               options: GateOptions, new_file: bool) -> GateResult:
    """No entry under `key` yet: this run is recorded as the baseline, a new file said so."""
    write_entry(path, baselines, key, current, "bootstrap", None, options.reason)
    if new_file:
        line = (f"NEW BASELINE FILE {path} (it did not exist): recorded this run as the "
                f"baseline for {key!r}; if you meant an existing baseline, check the "
                f"--baseline path")
    else:
        line = f"no baseline for {key!r} in {path}: recorded this run as the baseline"
    return GateResult("bootstrap", 0, [line])


def _regression_hints(cmp: BaselineComparison, stored: dict[str, Any], current: dict[str, Any],
                      options: GateOptions) -> list[str]:
    """How to record a failing run once reviewed: a golden change, a golden set that grew."""
    lines = []
    if cmp.golden_changes:
        also = " --allow-regression" if cmp.regressions or cmp.case_regressions else ""
        lines.append(f"if the golden change was reviewed, record it with: "
                     f"{options.record_command} --accept-golden-change{also} "
                     f"--reason \"...\"")
    if current.get("n_cases", 0) > stored.get("n_cases", 0) and cmp.regressions:
        lines.append(f"note: the golden set grew from {stored.get('n_cases')} to "
                     f"{current.get('n_cases')} cases; if the drop comes from the new "
                     f"cases, record it with {options.record_command} --allow-regression "
                     f"--reason \"...\"")
    return lines


def _on_gain(path: Path, baselines: dict[str, Any], key: str, stored: dict[str, Any],
             current: dict[str, Any], cmp: BaselineComparison, options: GateOptions,
             lines: list[str]) -> GateResult:
    """A passing run that gained: ratcheted up where asked (never over a judge change), else
    the command that records the gain or the new cases."""
    if options.ratchet and judge_change(stored, current):
        lines.append("not ratcheted automatically: this run used another judge than the "
                     "baseline; " + _rejudge_hint(current, options))
        return GateResult("improved", 0, lines, cmp)
    if options.ratchet:
        write_entry(path, baselines, key, ratcheted(stored, current), "ratchet", stored,
                    options.reason or "automatic ratchet after a passing run")
        return GateResult("ratcheted", 0, lines + [f"baseline {key!r} raised in {path}"], cmp)
    if cmp.improvements:
        lines.append(f"this run improved on the baseline; record the gain with: "
                     f"{options.record_command}")
    else:
        new_cases = len(set(current.get("golden", {})) - set(stored.get("golden", {})))
        lines.append(f"the golden set grew by {new_cases} case(s) the baseline does not "
                     f"know; record them with: {options.record_command}")
    return GateResult("improved", 0, lines, cmp)


def check_without_recording(path: str | Path, key: str, comparison: BaselineComparison | None,
                            why: str, status: str = "unrecorded") -> GateResult:
    """For a run that must not move a baseline (one with engine errors): the lines of its
    `comparison` with the stored entry (None: there is none), then `why`; writes nothing and
    fails (exit 1) with `status`."""
    if comparison is None:
        nothing = f"no baseline for {key!r} in {path}; nothing was recorded"
        return GateResult(status, 1, [nothing, why])
    return GateResult(status, 1, describe(comparison, key, LISTED_PER_KIND) + [why], comparison)


def _gained(cmp: BaselineComparison, stored: dict[str, Any], current: dict[str, Any]) -> bool:
    return bool(cmp.improvements) or set(current.get("golden", {})) - set(stored.get("golden", {}))


def _rejudge_hint(current: dict[str, Any], options: GateOptions) -> str:
    judge = current["judge"]["name"]
    return (f"record it with: {options.record_command} --allow-regression --reason \"faithfulness "
            f"judged by {judge} from now on\"")


def _update(path: Path, baselines: dict[str, Any], key: str, stored: dict[str, Any],
            current: dict[str, Any], cmp: BaselineComparison, options: GateOptions,
            lines: list[str]) -> GateResult:
    if cmp.golden_changes and not options.accept_golden_change:
        return GateResult("refused", 1, lines + [
            "update refused: golden cases were removed or changed since the baseline; if that "
            "was reviewed, add --accept-golden-change --reason \"...\""], cmp)
    changed = judge_change(stored, current)
    if changed and not options.allow_regression:
        return GateResult("refused", 1, lines + [
            f"update refused: {path} [{key}] was measured with judge {judge_text(changed[0])}; "
            f"moving it to {judge_text(changed[1])} is a reviewed change: "
            + _rejudge_hint(current, options)], cmp)
    dropped = cmp.regressions or cmp.case_regressions
    if dropped and not options.allow_regression:
        return GateResult("refused", 1, lines + [
            f"update refused: the baseline only ratchets up and this run would lower it; "
            f"{path} is unchanged. A reviewed lowering needs --allow-regression --reason \"...\""],
            cmp)
    if options.allow_regression:
        new, action = {**stored, **current}, "allow_regression"
    else:
        new, action = ratcheted(stored, current), "ratchet"
    if cmp.golden_changes:
        action = ("accept_golden_change" if action == "ratchet"
                  else f"{action}+accept_golden_change")
    if new == stored:
        return GateResult("pass", 0, lines + [f"baseline {key!r} already records this run"], cmp)
    write_entry(path, baselines, key, new, action, stored, options.reason, cmp)
    return GateResult("updated", 0, lines + [f"baseline {key!r} updated in {path} ({action})"], cmp)
