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
- every change adds one line to the history file next to the baseline
  (qa_baseline.json -> qa_baseline_history.jsonl): UTC time, mode (the baseline key: a QA mode
  or an extraction document set), action, the commit of the project's checkout, reason, and
  the old and new values. Baseline and history change together or not at all: under the lock
  the baseline is replaced, then the history is rewritten atomically with the new line, and if
  that fails the old baseline bytes are put back;
- a baseline is only ever started in a folder that exists: a mistyped path is an error, never a
  new baseline that passes. A new baseline file is announced as such.

`check_outputs` is the check every command makes before it runs: each file it will write
(report, JUnit, summary, facts) and the baseline can be written, so that a run never ends in
"bad input" after it has written something.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragspine_eval import paths
from ragspine_eval.provenance import display_path, git_state

LOWER_IS_BETTER = ("fabrication_count",)


class BaselineError(ValueError):
    """A baseline file that cannot be trusted, or gate options that contradict each other. The
    message names the file (or the flags) and what to do."""


class OutputError(ValueError):
    """An output file the run could not write; str() is the one line naming it and why."""


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
    status: str  # bootstrap | pass | improved | ratcheted | updated | regression | refused
    exit_code: int
    lines: list[str]
    comparison: BaselineComparison | None = None


# --- comparing ---------------------------------------------------------------------------------


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
        for name, ids in sorted(stored["passed_ids"].items()):
            passing = set(now_passed.get(name, ()))
            for case_id in sorted(ids):
                if (case_id in now_golden and case_id not in passing
                        and then.at(name, case_id, now_golden[case_id]) == PASSED_THEN):
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
    options.check()
    with locked(path):
        new_file = not path.exists()
        baselines = load_baselines(path)
        stored = baselines.get(key)
        if stored is None:
            _write_entry(path, baselines, key, current, "bootstrap", None, options.reason)
            if new_file:
                line = (f"NEW BASELINE FILE {path} (it did not exist): recorded this run as the "
                        f"baseline for {key!r}; if you meant an existing baseline, check the "
                        f"--baseline path")
            else:
                line = f"no baseline for {key!r} in {path}: recorded this run as the baseline"
            return GateResult("bootstrap", 0, [line])
        stored = validate_entry(path, key, stored)
        cmp = compare(current, stored)
        lines = describe(cmp, key, LISTED_PER_KIND)

        if options.update or options.accept_golden_change:
            return _update(path, baselines, key, stored, current, cmp, options, lines)
        if not cmp.passed:
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
        action = ("accept_golden_change" if action == "ratchet"
                  else f"{action}+accept_golden_change")
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
    """Next to the baseline file itself (its target, when `path` is a link), like its lock."""
    path = _resolved(Path(path))
    return path.with_name(f"{path.stem}_history.jsonl")


def lock_path(path: str | Path) -> Path:
    """Next to the baseline file itself: one lock for every link to the same baseline."""
    path = _resolved(Path(path))
    return path.with_name(path.name + ".lock")


def load_baselines(path: str | Path) -> dict[str, Any]:
    """The whole baseline file ({} when it does not exist yet)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read the baseline ({exc.strerror or exc}); it was "
                            f"left as it is") from None
    except UnicodeDecodeError as exc:
        raise BaselineError(f"{path}: the baseline is not UTF-8 text ({exc.reason}); it was left "
                            f"as it is: {_restore_hint(path)}") from None
    if not text.strip():
        raise BaselineError(f"{path}: the baseline is not valid JSON: the file is empty; it was "
                            f"left as it is: {_restore_hint(path)}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        # json's own reasons often end in "... at", the position being kept apart; say it whole
        reason = exc.msg[:1].lower() + exc.msg[1:].removesuffix(" at")
        raise BaselineError(
            f"{path}:{exc.lineno}:{exc.colno}: the baseline is not valid JSON: {reason} at line "
            f"{exc.lineno}, column {exc.colno}; it was left as it is: {_restore_hint(path)}"
        ) from None
    if not isinstance(data, dict):
        raise BaselineError(f"{path}: the baseline must be a JSON object keyed by mode or "
                            f"document set, got {type(data).__name__}; it was left as it is")
    return data


def validate_entry(path: Path, key: str, entry: Any) -> dict[str, Any]:
    """Check the shape of one stored entry; raise BaselineError naming what is wrong."""

    def bad(reason: str) -> BaselineError:
        return BaselineError(f"{path}: entry {key!r}: {reason}; the file was left as it is: "
                             f"{_restore_hint(path)}")

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


def _restore_hint(path: Path) -> str:
    """How to get a broken baseline back: git for a file inside the project's checkout."""
    inside = _resolved(Path(path)).is_relative_to(paths.PROJECT_ROOT)
    if inside and git_state()[0] is not None:
        return (f"restore it with `git checkout -- {display_path(path)}` (from the project root) "
                f"or fix it by hand")
    return "restore it from your copy or fix it by hand"


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock for a read-modify-write of `path` (a sidecar .lock file). The folder
    must exist: it is never created, so that a mistyped path cannot start a new baseline."""
    check_baseline_location(path)
    try:
        lock = open(lock_path(path), "a")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise BaselineError(f"{path}: cannot create its lock file ({exc.strerror or exc}); the "
                            f"baseline was left as it is") from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# --- outputs: checked before a run writes anything ----------------------------------------------


def check_baseline_location(path: str | Path) -> None:
    """Raise BaselineError unless `path` can hold a baseline: not a folder, in a folder that
    already exists and where its lock, history and replacement can be written."""
    path = Path(path)
    if path.is_dir():
        raise BaselineError(f"{path}: is a folder; --baseline takes the baseline JSON file, e.g. "
                            f"{path / 'qa_baseline.json'}")
    _check_no_link_loop(path, "--baseline", BaselineError)
    real = _resolved(path)  # a link is written through: its target's folder is the one
    folder = real.parent
    if not folder.is_dir():
        link = f" (it links to {real})" if real != path.absolute() else ""
        raise BaselineError(f"{path}: the baseline's folder {folder} does not exist{link}; check "
                            f"the --baseline path (a new baseline is only started in an existing "
                            f"folder: create it first if that is what you meant)")
    problem = _cannot_write_in(folder, may_create=False)
    if problem:
        raise BaselineError(f"{path}: cannot write the baseline, its lock or its history: "
                            f"{problem}")


def check_outputs(outputs: Mapping[str, str | Path | None],
                  baseline: str | Path | None = None) -> None:
    """Before a run: raise OutputError naming the first output file that could not be written
    (`outputs` maps a label such as "report" to a path; None is an output not asked for), or
    BaselineError for a baseline that could not be (see check_baseline_location).

    An output's folder may be made at write time, so it need not exist yet, but it must be
    possible to make it. Nothing is created here: the check writes at most an anonymous
    temporary file that disappears at once.
    """
    protected: dict[Path, str] = {}
    if baseline is not None:
        check_baseline_location(baseline)
        baseline = Path(baseline)
        for kind, own in (("baseline", baseline), ("baseline's history", history_path(baseline)),
                          ("baseline's lock", lock_path(baseline))):
            protected[_resolved(own)] = f"{kind} {own}"
    seen: dict[Path, str] = {}
    for label, path in outputs.items():
        if path is None:
            continue
        path = Path(path)
        resolved = _resolved(path)
        if resolved in protected:
            raise OutputError(f"{path}: the {label} file would overwrite the "
                              f"{protected[resolved]}; choose another path")
        if resolved in seen:
            raise OutputError(f"{path}: given for both the {seen[resolved]} and the {label} "
                              f"file; each needs a path of its own")
        seen[resolved] = label
        if path.is_dir():
            raise OutputError(f"{path}: the {label} path is a folder; give the path of a file "
                              f"(in that folder, say)")
        _check_no_link_loop(path, f"the {label} path", OutputError)
        if _written_in_place(path):
            continue  # /dev/stdout, /dev/null, a pipe: nothing to create
        problem = _cannot_write_in(resolved.parent, may_create=True)
        if problem:
            link = f" (it links to {resolved})" if resolved != path.absolute() else ""
            raise OutputError(f"{path}: cannot write the {label} file{link}: {problem}; choose "
                              f"a writable path")


def check_output_folder(folder: str | Path, label: str = "output") -> None:
    """Raise OutputError unless files can be written in `folder` (made if it does not exist)."""
    folder = Path(folder)
    problem = _cannot_write_in(folder, may_create=True)
    if problem:
        raise OutputError(f"{folder}: cannot write the {label} files there: {problem}; choose "
                          f"a writable folder")


def _check_no_link_loop(path: Path, what: str, error: type[Exception]) -> None:
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(f"{path}: {what} is a loop of symbolic links; point it at a file") from None


def _resolved(path: Path) -> Path:
    # os.path.realpath, unlike Path.resolve, does not raise on a symbolic link loop; writing
    # there then fails with the reason, as for any path that cannot be written
    return Path(os.path.realpath(path.expanduser()))


def _cannot_write_in(folder: Path, *, may_create: bool) -> str | None:
    """Why files cannot be written in `folder` (None: they can)."""
    existing = folder
    while not existing.exists() and existing.parent != existing:
        if not may_create:
            return f"the folder {folder} does not exist"
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    # permission bits say nothing for root, and /proc or a read-only mount refuse anyway: try
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        made = "" if existing == folder else f" (to make {folder})"
        return f"cannot write in {existing}{made}: {exc.strerror or exc}"
    return None


def write_atomic(path: str | Path, text: str) -> None:
    """Replace `path` with `text` so that readers see the old file or the new, never a part."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: str | Path, data: bytes | Iterable[bytes]) -> None:
    """`write_atomic` for binary files (the generated office-document fixtures); `data` may
    come in pieces, written one after the other.

    A symbolic link is written through: its target is replaced and the link stays. A stream
    (/dev/stdout, /dev/stderr, /dev/fd/N) or a path that is there but is no regular file
    (/dev/null, a named pipe) is written into as it is, since there is no file to replace:
    renaming over it would put an ordinary file in place of the device, or replace the file
    the shell redirected stdout to, output printed so far included.
    """
    given, path = Path(path), _resolved(Path(path))
    if _written_in_place(given):
        fd = _stream_fd(given)
        sys.stdout.flush()  # what was printed before comes first
        sys.stderr.flush()
        # a stream is written through its own descriptor (a dup shares its offset, so the
        # lines printed after it follow it rather than overwrite it)
        with (os.fdopen(os.dup(fd), "wb") if fd is not None else open(given, "wb")) as handle:
            for piece in (data,) if isinstance(data, bytes) else data:
                handle.write(piece)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file 0600; the file keeps its old mode, or gets what open() would give
        os.fchmod(fd, _mode_of(path))
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


_STREAMS = {"/dev/stdout": 1, "/dev/stderr": 2}
_FD_FOLDERS = ("/dev/fd/", "/proc/self/fd/")


def _written_in_place(path: Path) -> bool:
    """A stream, or a path that is there but is no regular file or folder: written into as it
    is (write_bytes_atomic), never replaced."""
    if _stream_fd(path) is not None:
        return True
    real = _resolved(path)
    return path.exists() and not real.is_file() and not real.is_dir()


def _stream_fd(path: Path) -> int | None:
    """The descriptor a name for one of this process's open files stands for, else None."""
    text = str(path)
    if text in _STREAMS:
        return _STREAMS[text]
    for folder in _FD_FOLDERS:
        if text.startswith(folder) and text[len(folder):].isdigit():
            return int(text[len(folder):])
    return None


def _mode_of(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


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


def _write_entry(path: Path, baselines: dict[str, Any], key: str, new: dict[str, Any],
                 action: str, old: dict[str, Any] | None, reason: str | None,
                 cmp: BaselineComparison | None = None) -> None:
    """Replace the baseline and add its history line: both or neither (callers hold the lock)."""
    record: dict[str, Any] = {
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
        "mode": key,
        "action": action,
        "commit": git_state()[0],  # the code's checkout, wherever the baseline lives
        "reason": reason or action,
        "old": _summary(old),
        "new": _summary(new),
    }
    if cmp is not None and (cmp.golden_changes or cmp.regressions or cmp.case_regressions):
        record["golden_changes"] = cmp.golden_changes
        record["regressions"] = cmp.regressions
        record["case_regressions"] = cmp.case_regressions
    hist = history_path(path)
    try:
        old_bytes = _read_or_none(path)
        history = _read_or_none(hist) or b""
        if history and not history.endswith(b"\n"):
            history += b"\n"  # a line cut short by an old crash keeps a line of its own
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        write_json_atomic(path, {**baselines, key: new})
        try:
            write_bytes_atomic(hist, history + line.encode("utf-8"))
        except BaseException:
            try:
                _put_back(path, old_bytes)
            except OSError as undo:
                raise BaselineError(
                    f"{path}: the baseline was replaced but its history line could not be "
                    f"written, and putting the old baseline back failed too "
                    f"({undo.strerror or undo}); {_restore_hint(path)}") from None
            raise
    except OSError as exc:
        raise BaselineError(f"{path}: cannot record the baseline ({exc.strerror or exc}); the "
                            f"baseline and its history were left as they were") from None


def _read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _put_back(path: Path, old_bytes: bytes | None) -> None:
    if old_bytes is None:
        path.unlink(missing_ok=True)
    else:
        write_bytes_atomic(path, old_bytes)


def _summary(entry: dict[str, Any] | None) -> dict[str, Any] | None:
    if entry is None:
        return None
    return {k: entry[k] for k in ("metrics", *LOWER_IS_BETTER, "n_cases") if k in entry}
