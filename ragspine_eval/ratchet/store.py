"""The baseline file and its history: reading, checking, and recording under a lock.

A baseline file is a JSON object keyed by baseline key (a QA mode such as "tool", an extraction
document set such as "xlsx"). Each entry:

    {"metrics": {name: rate in [0, 1]},      higher is better
     "fabrication_count": int,               optional; lower is better (QA only)
     "n_cases": int,
     "passed_ids": {name: [case ids]},       the cases that passed each gate
     "golden": {case id: fingerprint}}       what each golden case asserted at baseline time

Invariants, all enforced here and nowhere else:
- nothing is lost or half-written: files are replaced atomically (files.atomic), read-modify-
  write runs under a file lock, a corrupt or wrongly shaped baseline raises `BaselineError` and
  is never overwritten, and keys we do not know are kept;
- every change adds one line to the history file next to the baseline
  (qa_baseline.json -> qa_baseline_history.jsonl): UTC time, mode (the baseline key: a QA mode
  or an extraction document set), action, the commit of the project's checkout, reason, and
  the old and new values. Baseline and history change together or not at all: under the lock
  the baseline is replaced, then the history is rewritten atomically with the new line, and if
  that fails the old baseline bytes are put back;
- a baseline is only ever started in a folder that exists: a mistyped path is an error, never a
  new baseline that passes. A new baseline file is announced as such.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragspine_eval import paths
from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.files import outputs as output_checks
from ragspine_eval.files.atomic import resolved, write_bytes_atomic, write_json_atomic
from ragspine_eval.files.outputs import cannot_write_in, check_no_link_loop
from ragspine_eval.outputs.provenance import display_path, git_state
from ragspine_eval.ratchet.compare import LOWER_IS_BETTER, BaselineComparison


class BaselineError(RagspineEvalError, ValueError):
    """A baseline file that cannot be trusted, or gate options that contradict each other. The
    message names the file (or the flags) and what to do."""


def history_path(path: str | Path) -> Path:
    """Next to the baseline file itself (its target, when `path` is a link), like its lock."""
    path = resolved(Path(path))
    return path.with_name(f"{path.stem}_history.jsonl")


def lock_path(path: str | Path) -> Path:
    """Next to the baseline file itself: one lock for every link to the same baseline."""
    path = resolved(Path(path))
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
    inside = resolved(Path(path)).is_relative_to(paths.PROJECT_ROOT)
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


def check_baseline_location(path: str | Path) -> None:
    """Raise BaselineError unless `path` can hold a baseline: not a folder, in a folder that
    already exists and where its lock, history and replacement can be written."""
    path = Path(path)
    if path.is_dir():
        raise BaselineError(f"{path}: is a folder; --baseline takes the baseline JSON file, e.g. "
                            f"{path / 'qa_baseline.json'}")
    check_no_link_loop(path, "--baseline", BaselineError)
    real = resolved(path)  # a link is written through: its target's folder is the one
    folder = real.parent
    if not folder.is_dir():
        link = f" (it links to {real})" if real != path.absolute() else ""
        raise BaselineError(f"{path}: the baseline's folder {folder} does not exist{link}; check "
                            f"the --baseline path (a new baseline is only started in an existing "
                            f"folder: create it first if that is what you meant)")
    problem = cannot_write_in(folder, may_create=False)
    if problem:
        raise BaselineError(f"{path}: cannot write the baseline, its lock or its history: "
                            f"{problem}")


def check_outputs(outputs: Mapping[str, str | Path | None],
                  baseline: str | Path | None = None) -> None:
    """Before a run: `files.outputs.check_outputs`, with the baseline, its history and its lock
    protected, and the baseline's own location checked (check_baseline_location): raises
    OutputError naming the first output that could not be written, or BaselineError."""
    protected: dict[Path, str] = {}
    if baseline is not None:
        check_baseline_location(baseline)
        baseline = Path(baseline)
        for kind, own in (("baseline", baseline), ("baseline's history", history_path(baseline)),
                          ("baseline's lock", lock_path(baseline))):
            protected[own] = f"{kind} {own}"
    output_checks.check_outputs(outputs, protected)


def write_entry(path: Path, baselines: dict[str, Any], key: str, new: dict[str, Any],
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
