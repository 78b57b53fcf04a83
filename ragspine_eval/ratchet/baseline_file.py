"""The baseline file and its history: reading, checking, and recording under a lock.

A baseline file is a JSON object keyed by baseline key (a QA mode such as "tool", an extraction
document set such as "xlsx"). Each entry:

    {"metrics": {name: rate in [0, 1]},      higher is better
     "fabrication_count": int,               optional; lower is better (QA only)
     "n_cases": int,
     "passed_ids": {name: [case ids]},       the cases that passed each gate
     "golden": {case id: fingerprint},       what each golden case asserted at baseline time
     "judge": {"name", "threshold"},         optional (QA): the faithfulness judge
     "kb": {"fingerprint", "files": {file: fingerprint}},   optional (QA): the knowledge base
     "engine": {"name", "version"},          optional (QA): version null when unknown
     "repeats": int, "flaky": {name: [ids]}} optional (QA): a run with --repeat, its flaky cases

Invariants, all enforced here and nowhere else:
- nothing is lost or half-written: files are replaced atomically (files.atomic), read-modify-
  write runs under a file lock, a corrupt or wrongly shaped baseline raises `BaselineError` and
  is never overwritten, and keys we do not know are kept;
- every change adds one line to the history file next to the baseline
  (qa_baseline.json -> qa_baseline_history.jsonl): UTC time, mode (the baseline key: a QA mode
  or an extraction document set), action, the commit of the project's checkout, reason, and
  the old and new values. Baseline and history change together or not at all, under SIGKILL at
  any instruction too: the change is first written whole to a journal beside the baseline (one
  atomic rename: the commit point), then applied to both files; the next writer to take the
  lock finishes a journal a killed writer left and removes its temporary files (`recover`).
  A failure while applying puts the old bytes back (`commit`), and a run whose outputs fail
  after its gate recorded undoes the change (`undo`);
- every file is read strictly and with a bound (files.reading): a null entry, a duplicated key,
  a lone surrogate or a number beyond float range is a BaselineError, never a bootstrap;
- a baseline is only ever started in a folder that exists: a mistyped path is an error, never a
  new baseline that passes. A new baseline file is announced as such.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragspine_eval import paths
from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.files import output_paths
from ragspine_eval.files import reading
from ragspine_eval.files.atomic import fsync_folder, resolved, write_bytes_atomic
from ragspine_eval.files.output_paths import cannot_write_in, check_no_link_loop
from ragspine_eval.provenance import display_path, git_state
from ragspine_eval.ratchet.compare import DRIFT_KEYS, LOWER_IS_BETTER, BaselineComparison


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
    """The whole baseline file ({} when it does not exist yet), read strictly and bounded
    (files.reading). A null entry is an error (it would read as "no entry yet"); the shape of
    the entry a run uses is checked by `validate_entry`; keys we do not know are kept."""
    path = Path(path)

    def bad(reason: str) -> BaselineError:
        return BaselineError(f"{path}: the baseline {reason}; it was left as it is: "
                             f"{_restore_hint(path)}")

    try:
        raw = reading.read_bytes(path, "baseline", lambda reason: bad(f"cannot be used: {reason}"))
    except FileNotFoundError:
        return {}
    text = reading.decode(raw, lambda reason: bad(f"is {reason}"))
    if not text.strip():
        raise bad("is not valid JSON: the file is empty")
    try:
        data = reading.parse_json(text)
    except reading.JSONProblem as exc:
        if exc.line is not None:
            reason = exc.reason.removeprefix("not valid JSON: ")
            reason = reason[:1].lower() + reason[1:]
            raise BaselineError(
                f"{path}:{exc.line}:{exc.column}: the baseline is not valid JSON: {reason} at "
                f"line {exc.line}, column {exc.column}; it was left as it is: "
                f"{_restore_hint(path)}") from None
        raise bad(f"cannot be used: {exc.reason}") from None
    if not isinstance(data, dict):
        raise BaselineError(f"{path}: the baseline must be a JSON object keyed by mode or "
                            f"document set, got {type(data).__name__}; it was left as it is")
    for key, entry in data.items():
        if entry is None:  # never "no entry yet": a run would bootstrap over the file
            raise bad(f"entry {reading.clip(key)} is null, not an object of metrics")
    return data


def validate_entry(path: Path, key: str, entry: Any) -> dict[str, Any]:
    """Check the shape of one stored entry; raise BaselineError naming what is wrong."""

    def bad(reason: str) -> BaselineError:
        return BaselineError(f"{path}: entry {reading.clip(key)}: {reason}; the file was left as it is: "
                             f"{_restore_hint(path)}")

    if not isinstance(entry, dict):
        raise bad(f"must be an object, got {type(entry).__name__}")
    metrics = entry.get("metrics")
    if not isinstance(metrics, dict):
        raise bad("'metrics' must be an object of rates")
    for name, rate in metrics.items():
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 1:
            raise bad(f"metric {reading.clip(name)} must be a rate in [0, 1], got {reading.clip(rate)}")
    for name in (*LOWER_IS_BETTER, "n_cases"):
        value = entry.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise bad(f"{name!r} must be a non-negative integer, got {reading.clip(value)}")
    ids = entry.get("passed_ids", {})
    if not isinstance(ids, dict) or not all(
        isinstance(v, list) and all(isinstance(i, str) for i in v) for v in ids.values()
    ):
        raise bad("'passed_ids' must map each metric to a list of case ids")
    golden = entry.get("golden", {})
    if not isinstance(golden, dict) or not all(isinstance(v, str) for v in golden.values()):
        raise bad("'golden' must map case ids to fingerprints")
    flaky = entry.get("flaky", {})
    if not isinstance(flaky, dict) or not all(
        isinstance(v, list) and all(isinstance(i, str) for i in v) for v in flaky.values()
    ):
        raise bad("'flaky' must map each metric to a list of case ids")
    repeats = entry.get("repeats", 1)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise bad(f"'repeats' must be a positive integer, got {reading.clip(repeats)}")
    # optional: an entry without them (an old one, extraction's) is compared without drift check
    kb, engine = entry.get("kb", {"fingerprint": ""}), entry.get("engine", {"name": ""})
    if not (isinstance(kb, dict) and isinstance(kb.get("fingerprint"), str) and _str_map(
            kb.get("files", {}))):
        raise bad(f"'kb' must be {{\"fingerprint\": \"...\", \"files\": {{file: fingerprint}}}}, "
                  f"got {reading.clip(kb)}")
    if not (isinstance(engine, dict) and isinstance(engine.get("name"), str)
            and isinstance(engine.get("version"), str | None)):
        raise bad(f"'engine' must be {{\"name\": \"...\", \"version\": \"...\" or null}}, got "
                  f"{reading.clip(engine)}")
    return entry


def _str_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


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
            try:
                recover(path)
            except OSError as exc:
                raise BaselineError(f"{path}: cannot finish the baseline change a killed run left "
                                    f"({exc.strerror or exc}); the baseline was left as it is"
                                    ) from None
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
                  baseline: str | Path | None = None,
                  inputs: Mapping[str | Path, str] | None = None) -> None:
    """Before a run: `files.output_paths.check_outputs`, with the baseline, its history and its
    lock protected, as well as each of `inputs` (path -> how to name it: "golden set g.jsonl"; a
    folder protects every file in it), and the baseline's own location checked
    (check_baseline_location): raises OutputError naming the first output that could not be
    written, or BaselineError."""
    protected: dict[Path, str] = {Path(p): what for p, what in (inputs or {}).items()}
    if baseline is not None:
        check_baseline_location(baseline)
        baseline = Path(baseline)
        for kind, own in (("baseline", baseline), ("baseline's history", history_path(baseline)),
                          ("baseline's lock", lock_path(baseline))):
            protected[own] = f"{kind} {own}"
    output_paths.check_outputs(outputs, protected)


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
    line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
    body = json.dumps({**baselines, key: new}, indent=2, ensure_ascii=False) + "\n"
    try:
        history = _read_or_none(history_path(path))
        # a line cut short by an old crash keeps a line of its own
        tail = ("\n" if history and not history.endswith(b"\n") else "") + line
        commit(path, body.encode("utf-8"), tail.encode("utf-8"), _read_or_none(path), history)
    except OSError as exc:
        raise BaselineError(f"{path}: cannot record the baseline ({exc.strerror or exc}); the "
                            f"baseline and its history were left as they were") from None


# --- the journal: the baseline and its history change together ----------------------------------
#
# A change is first written whole to the journal (one atomic rename: the commit point), then
# applied to the baseline and to its history, then the journal is removed. A writer killed
# before the rename changed nothing; one killed after it left a journal that the next writer
# (under the lock, `recover`) applies again: applying is idempotent, since the journal holds the
# new baseline bytes and the history's length before the change plus the line to add.


def journal_path(path: str | Path) -> Path:
    path = resolved(Path(path))
    return path.with_name(path.name + ".journal")


def commit(path: Path, baseline: bytes, history_tail: bytes, old_baseline: bytes | None,
           old_history: bytes | None, history_keep: int | None = None) -> None:
    """Replace the baseline with `baseline` and its history with its first `history_keep` bytes
    (default: all of `old_history`, as read under the lock) and `history_tail`: both or neither, under SIGKILL at any instruction (callers hold the
    lock). A failure while applying (a full disk) puts the old files back."""
    journal = journal_path(path)
    if history_keep is None:
        history_keep = len(old_history or b"")
    header = json.dumps({"history_keep": history_keep,
                         "history_tail": history_tail.decode("utf-8")}).encode("utf-8")
    write_bytes_atomic(journal, [header, b"\n", baseline])
    try:
        _apply(path, history_keep, history_tail, baseline)
    except BaseException:
        try:
            for own, old in ((path, old_baseline), (history_path(path), old_history)):
                if _read_or_none(own) != old:
                    _put_back(own, old)
            journal.unlink(missing_ok=True)
        except OSError as undo:
            raise BaselineError(
                f"{path}: the baseline could not be recorded, and putting the old one back failed "
                f"too ({undo.strerror or undo}); the next recording completes the change from "
                f"{journal}, or {_restore_hint(path)}") from None
        raise
    journal.unlink(missing_ok=True)  # (a writer that does not hold the lock races here)
    fsync_folder(journal.parent)


def _apply(path: Path, history_keep: int, history_tail: bytes, baseline: bytes) -> None:
    hist = history_path(path)
    history = _read_or_none(hist) or b""
    write_bytes_atomic(path, baseline)
    write_bytes_atomic(hist, history[:history_keep] + history_tail)


def recover(path: str | Path) -> None:
    """Finish a change a killed writer committed (its journal) and remove the temporary files a
    killed writer left beside the baseline. Callers hold the lock (`locked` calls this)."""
    path = Path(path)
    journal = journal_path(path)
    data = _read_or_none(journal)
    if data is not None:
        header, _, baseline = data.partition(b"\n")
        try:
            meta = json.loads(header)
            keep, tail = int(meta["history_keep"]), meta["history_tail"].encode("utf-8")
        except (ValueError, KeyError, TypeError, AttributeError):
            raise BaselineError(f"{journal}: an unfinished baseline change that cannot be read; "
                                f"remove it once {path} and its history agree") from None
        _apply(path, keep, tail, baseline)
        journal.unlink()
        fsync_folder(journal.parent)
    real = resolved(path)
    for own in (real, history_path(path), journal):
        for stray in real.parent.glob(f".{_glob_escape(own.name)}.*.tmp"):
            stray.unlink(missing_ok=True)


def _glob_escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)



Snapshot = tuple[bytes | None, bytes | None]  # the baseline's bytes and its history's


def snapshot(path: str | Path) -> Snapshot:
    """The baseline and its history as they are now (None: no such file)."""
    return _read_or_none(resolved(Path(path))), _read_or_none(history_path(path))


def undo(path: str | Path, before: Snapshot, after: Snapshot) -> None:
    """Put back the baseline and history of `before`, when they are still those of `after` (what
    this run recorded): a run whose outputs then failed leaves the baseline as it found it. A
    file changed since by another run is never overwritten: BaselineError says so."""
    path = Path(path)
    if before == after:
        return
    with locked(path):
        if snapshot(path) != after:
            raise BaselineError(f"{path}: this run's baseline change could not be undone: another "
                                f"run recorded since; check the baseline and its history")
        try:
            old_baseline, old_history = before
            if old_baseline is None:  # the run started the baseline: remove what it made
                resolved(path).unlink(missing_ok=True)
                if old_history is None:
                    history_path(path).unlink(missing_ok=True)
                else:
                    write_bytes_atomic(history_path(path), old_history)
                return
            commit(path, old_baseline, b"", after[0], after[1], history_keep=len(old_history or b""))
        except OSError as exc:
            raise BaselineError(f"{path}: this run's baseline change could not be undone "
                                f"({exc.strerror or exc}); {_restore_hint(path)}") from None


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
    return {k: entry[k] for k in ("metrics", *LOWER_IS_BETTER, "n_cases", *DRIFT_KEYS)
            if k in entry}
