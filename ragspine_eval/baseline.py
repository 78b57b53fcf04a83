"""The ratchet: one baseline mechanism for both harnesses.

A baseline file is a JSON object keyed by baseline key (a QA mode such as "tool", an extraction
document set such as "xlsx"). Each entry:

    {"metrics": {name: rate in [0, 1]},      higher is better
     "fabrication_count": int,               optional; lower is better (QA only)
     "n_cases": int,
     "passed_ids": {name: [case ids]},       the cases that passed each gate
     "golden": {case id: fingerprint}}       what each golden case asserted at baseline time

Invariants, all enforced here and nowhere else:
- the baseline ratchets up and never down: an update raises each metric to max(stored, observed)
  and lowers a lower-is-better count only; a run worse on anything is refused unless the caller
  passes allow_regression with a reason, and then the history keeps that reason;
- a regression fails the gate: a metric below its stored value, a count above it, a case that
  passed at baseline time and fails now (even when the rate is unchanged), or a golden case that
  was removed or changed since the baseline (adding cases is fine);
- only metrics the stored entry lists are checked; exact equality passes;
- nothing is lost or half-written: files are replaced atomically (temporary file in the same
  folder, fsync, rename), read-modify-write runs under a file lock, a corrupt or wrongly shaped
  baseline raises `BaselineError` and is never overwritten, and keys we do not know are kept;
- every change appends one line to the history file next to the baseline
  (qa_baseline.json -> qa_baseline_history.jsonl) before the baseline itself is replaced:
  UTC time, mode (the baseline key: a QA mode or an extraction document set), action, git
  commit, reason, and the old and new values.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

LOWER_IS_BETTER = ("fabrication_count",)


class BaselineError(ValueError):
    """A baseline file that cannot be trusted. The message names the file and what to do."""


@dataclass
class BaselineComparison:
    """How a run compares with its stored entry. `passed` is False on any kind of regression."""

    passed: bool
    regressions: list[dict[str, Any]] = field(default_factory=list)
    case_regressions: list[dict[str, str]] = field(default_factory=list)
    golden_changes: list[dict[str, str]] = field(default_factory=list)
    improvements: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class GateOptions:
    update: bool = False
    ratchet: bool = False
    allow_regression: bool = False
    reason: str | None = None
    accept_golden_change: bool = False
    # the command a person runs to record a gain, shown when a run improved
    record_command: str = "--update-baseline"


@dataclass
class GateResult:
    status: str  # bootstrap | pass | improved | ratcheted | updated | regression | refused
    exit_code: int
    lines: list[str]
    comparison: BaselineComparison | None = None


# --- comparing ---------------------------------------------------------------------------------


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
        touched = {g["id"] for g in golden_changes}
        now_passed = current.get("passed_ids", {})
        for name, ids in sorted(stored["passed_ids"].items()):
            passing = set(now_passed.get(name, ()))
            for case_id in sorted(ids):
                if case_id in now_golden and case_id not in touched and case_id not in passing:
                    case_regressions.append({"metric": name, "id": case_id})
    else:
        notes.append("baseline predates per-case ids: case-level regression checks skipped")

    passed = not (regressions or case_regressions or golden_changes)
    return BaselineComparison(passed, regressions, case_regressions, golden_changes,
                              improvements, notes)


def ratcheted(stored: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
    """The stored entry raised by the current one: metrics only up, counts only down.

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
    for key in ("n_cases", "passed_ids", "golden"):
        if key in current:
            merged[key] = current[key]
    return merged


# --- the gate ---------------------------------------------------------------------------------


def run_gate(path: str | Path, key: str, current: dict[str, Any],
             options: GateOptions = GateOptions()) -> GateResult:
    """Compare `current` with the entry stored under `key`, and update it where asked.

    Exit codes: 0 pass / bootstrap / recorded; 1 regression or a refused update.
    Raises BaselineError (exit 2 for a CLI) when the stored file cannot be trusted.
    """
    path = Path(path)
    if options.allow_regression and not (options.reason or "").strip():
        raise BaselineError("--allow-regression needs --reason \"why this lowering is right\"; "
                            "the history keeps it for review")
    if options.accept_golden_change and not (options.reason or "").strip():
        raise BaselineError("--accept-golden-change needs --reason \"why the golden set changed\"")
    with locked(path):
        baselines = load_baselines(path)
        stored = baselines.get(key)
        if stored is None:
            _write_entry(path, baselines, key, current, "bootstrap", None, options.reason)
            return GateResult("bootstrap", 0, [f"no baseline for {key!r} in {path}: recorded this "
                                               f"run as the baseline"])
        stored = validate_entry(path, key, stored)
        cmp = compare(current, stored)
        lines = describe(cmp, key, LISTED_PER_KIND)

        if options.update or options.accept_golden_change:
            return _update(path, baselines, key, stored, current, cmp, options, lines)
        if not cmp.passed:
            if current.get("n_cases", 0) > stored.get("n_cases", 0) and cmp.regressions:
                lines.append(f"note: the golden set grew from {stored.get('n_cases')} to "
                             f"{current.get('n_cases')} cases; if the drop comes from the new "
                             f"cases, record it with {options.record_command} --allow-regression "
                             f"--reason \"...\"")
            return GateResult("regression", 1, lines, cmp)
        if _gained(cmp, stored, current):
            if options.ratchet:
                _write_entry(path, baselines, key, ratcheted(stored, current), "ratchet", stored,
                             options.reason or "automatic ratchet after a passing run")
                return GateResult("ratcheted", 0, lines + [f"baseline {key!r} raised in {path}"], cmp)
            lines.append(f"this run improved on the baseline; record the gain with: "
                         f"{options.record_command}")
            return GateResult("improved", 0, lines, cmp)
        return GateResult("pass", 0, lines, cmp)


def check_without_recording(path: str | Path, key: str, current: dict[str, Any],
                            why: str) -> GateResult:
    """For a run that must not move a baseline (one with engine errors): compare with the stored
    entry when there is one, write nothing, and fail (exit 1) with `why` as the last line."""
    path = Path(path)
    stored = load_baselines(path).get(key)
    if stored is None:
        return GateResult("unrecorded", 1, [f"no baseline for {key!r} in {path}; {why}"])
    cmp = compare(current, validate_entry(path, key, stored))
    return GateResult("regression" if not cmp.passed else "unrecorded", 1,
                      describe(cmp, key, LISTED_PER_KIND) + [why], cmp)


def _gained(cmp: BaselineComparison, stored: dict[str, Any], current: dict[str, Any]) -> bool:
    return bool(cmp.improvements) or set(current.get("golden", {})) - set(stored.get("golden", {}))


def _update(path: Path, baselines: dict[str, Any], key: str, stored: dict[str, Any],
            current: dict[str, Any], cmp: BaselineComparison, options: GateOptions,
            lines: list[str]) -> GateResult:
    if cmp.golden_changes and not options.accept_golden_change:
        return GateResult("refused", 1, lines + [
            "update refused: golden cases were removed or changed since the baseline; if that "
            "was reviewed, add --accept-golden-change --reason \"...\""], cmp)
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
        action = "accept_golden_change" if action == "ratchet" else action
    if new == stored:
        return GateResult("pass", 0, lines + [f"baseline {key!r} already records this run"], cmp)
    _write_entry(path, baselines, key, new, action, stored, options.reason, cmp)
    return GateResult("updated", 0, lines + [f"baseline {key!r} updated in {path} ({action})"], cmp)


# Case regressions and golden changes a gate prints one by one; beyond these, one line counts
# the rest, so a 100k-case run that regressed everywhere still prints a screenful.
LISTED_PER_KIND = 20


def describe(cmp: BaselineComparison, key: str, limit: int | None = None) -> list[str]:
    """Lines for a person: what regressed, what changed in the golden set, what improved.
    With `limit`, at most that many case regressions and golden changes each, then a count."""
    lines = [f"note: {n}" for n in cmp.notes]
    for r in cmp.regressions:
        if r["current"] is None:
            lines.append(f"REGRESSION [{key}] {r['metric']}: in the baseline, missing from this run")
        else:
            lines.append(f"REGRESSION [{key}] {r['metric']}: {_num(r['baseline'])} -> "
                         f"{_num(r['current'])} ({r['delta']:+.4g})")
    for c in cmp.case_regressions[:limit]:
        lines.append(f"CASE REGRESSION [{key}] {c['metric']}: {c['id']} passed in the baseline "
                     f"and fails now")
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
                     f"{_num(r['current'])} ({r['delta']:+.4g})")
    return lines


def _num(x: float) -> str:
    return f"{x:.4f}" if isinstance(x, float) else str(x)


# --- files -------------------------------------------------------------------------------------


def history_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(f"{path.stem}_history.jsonl")


def load_baselines(path: str | Path) -> dict[str, Any]:
    """The whole baseline file ({} when it does not exist yet)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{path}: cannot read the baseline ({exc}); it was left as it is") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(
            f"{path}:{exc.lineno}:{exc.colno}: the baseline is not valid JSON ({exc.msg}); it was "
            f"left as it is. Restore it with `git checkout -- {path}` or fix that line."
        ) from None
    if not isinstance(data, dict):
        raise BaselineError(f"{path}: the baseline must be a JSON object keyed by mode or "
                            f"document set, got {type(data).__name__}; it was left as it is")
    return data


def validate_entry(path: Path, key: str, entry: Any) -> dict[str, Any]:
    """Check the shape of one stored entry; raise BaselineError naming what is wrong."""

    def bad(reason: str) -> BaselineError:
        return BaselineError(f"{path}: entry {key!r}: {reason}; the file was left as it is. "
                             f"Restore it with `git checkout -- {path}`.")

    if not isinstance(entry, dict):
        raise bad(f"must be an object, got {type(entry).__name__}")
    metrics = entry.get("metrics")
    if not isinstance(metrics, dict):
        raise bad("'metrics' must be an object of rates")
    for name, rate in metrics.items():
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 1:
            raise bad(f"metric {name!r} must be a rate in [0, 1], got {rate!r}")
    for name in (*LOWER_IS_BETTER, "n_cases"):
        value = entry.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise bad(f"{name!r} must be a non-negative integer, got {value!r}")
    ids = entry.get("passed_ids", {})
    if not isinstance(ids, dict) or not all(
        isinstance(v, list) and all(isinstance(i, str) for i in v) for v in ids.values()
    ):
        raise bad("'passed_ids' must map each metric to a list of case ids")
    golden = entry.get("golden", {})
    if not isinstance(golden, dict) or not all(isinstance(v, str) for v in golden.values()):
        raise bad("'golden' must map case ids to fingerprints")
    return entry


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock for a read-modify-write of `path` (a sidecar .lock file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def write_atomic(path: str | Path, text: str) -> None:
    """Replace `path` with `text` so that readers see the old file or the new, never a part."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: str | Path, data: bytes | Iterable[bytes]) -> None:
    """`write_atomic` for binary files (the generated office-document fixtures); `data` may
    come in pieces, written one after the other."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            for piece in (data,) if isinstance(data, bytes) else data:
                handle.write(piece)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def write_json_atomic(path: str | Path, data: Any) -> None:
    """`json.dumps(data, indent=2, ensure_ascii=False)` and a newline, written atomically in
    pieces: json.dumps would first hold every piece of the text and then the text itself, a
    few hundred megabytes for a 100k-case report."""
    write_bytes_atomic(path, _json_pieces(data))


def _json_pieces(data: Any, batch: int = 50_000) -> Iterator[bytes]:
    chunks: list[str] = []
    for chunk in json.JSONEncoder(indent=2, ensure_ascii=False).iterencode(data):
        chunks.append(chunk)
        if len(chunks) >= batch:
            yield "".join(chunks).encode("utf-8")
            chunks.clear()
    chunks.append("\n")
    yield "".join(chunks).encode("utf-8")


def append_history(path: str | Path, record: dict[str, Any]) -> None:
    hist = history_path(path)
    with open(hist, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _write_entry(path: Path, baselines: dict[str, Any], key: str, new: dict[str, Any],
                 action: str, old: dict[str, Any] | None, reason: str | None,
                 cmp: BaselineComparison | None = None) -> None:
    record: dict[str, Any] = {
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
        "mode": key,
        "action": action,
        "commit": git_commit(path.parent),
        "reason": reason or action,
        "old": _summary(old),
        "new": _summary(new),
    }
    if cmp is not None and (cmp.golden_changes or cmp.regressions or cmp.case_regressions):
        record["golden_changes"] = cmp.golden_changes
        record["regressions"] = cmp.regressions
        record["case_regressions"] = cmp.case_regressions
    append_history(path, record)
    write_json_atomic(path, {**baselines, key: new})


def _summary(entry: dict[str, Any] | None) -> dict[str, Any] | None:
    if entry is None:
        return None
    return {k: entry[k] for k in ("metrics", *LOWER_IS_BETTER, "n_cases") if k in entry}


def git_commit(where: Path) -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True,
                             text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None
