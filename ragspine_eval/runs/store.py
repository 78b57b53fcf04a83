"""The run store: every QA and extraction report kept, compressed, bounded, listed newest first.

Layout: one folder per run under `runs_dir()`, named by the run's id, holding `report.json.gz`
(the JSON report `--report` writes, compact, gzip) and `summary.json` (the one
line `ragspine-eval runs` shows: id, time, commit, key, engine, knowledge base, judge, cases,
verdict, each gate's rate; summary.py's `RunSummary`, its fields read from the report by
`summarize`). Listing reads the small summaries only, never a report.

Invariants:
- a run appears whole or not at all: both files are written into a hidden `.tmp-*` folder,
  fsynced, and the folder is renamed to the id (one rename, atomic on a POSIX file system); a
  run killed mid-write leaves only a hidden folder, which listing ignores and `prune` removes
  once it is an hour old;
- ids are unique across processes: a UTC timestamp to the second (so ids sort by time) and 24
  random bits; a clash is retried with new bits, never overwritten (rename of a folder onto an
  existing non-empty folder fails);
- a corrupt entry (unreadable, truncated, not a summary) is skipped with one warning line on
  stderr (once per process), never a crash;
- retention (`prune`, after every store): the newest `keep_per_key()` runs of each kind and
  key are kept, then the oldest runs go until the store is under `max_bytes()`; the run just
  stored is never removed. Removal renames a run to a hidden `.trash-*` folder first, so two
  processes pruning at once never trip on each other.
gzip (standard library, readable by `zcat` and every language) at level 1: a report is
repetitive JSON, level 1 already shrinks a 10k-case report 13 times (13.5 MiB to 1.0), level 6
17 times for about twice the time (benchmarks/run_store.py). The JSON is compact and encoded by
orjson, in pieces; so a number JSON cannot hold (NaN, Infinity, which `--report` would write as
the non-standard literals) is kept as null.
"""

from __future__ import annotations

import gzip
import json
import os
import secrets
import shutil
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from ragspine_eval import paths
from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.files.atomic import fsync_folder
from ragspine_eval.runs.summary import (  # noqa: F401 - VERDICTS re-exported
    SUMMARY_FORMAT,
    VERDICTS,
    RunSummary,
    summarize,
)

ENV_DIR = "RAGSPINE_EVAL_RUNS_DIR"
ENV_KEEP = "RAGSPINE_EVAL_RUNS_KEEP"
ENV_MAX_MB = "RAGSPINE_EVAL_RUNS_MAX_MB"
DEFAULT_DIR = paths.PROJECT_ROOT / ".runs"
DEFAULT_KEEP = 50  # runs kept per kind and key
DEFAULT_MAX_MB = 1024  # the whole store
REPORT_FILE = "report.json.gz"
SUMMARY_FILE = "summary.json"
GZIP_LEVEL = 1
STALE_SECONDS = 3600  # a hidden .tmp-* folder older than this is a write that died
KINDS = ("qa", "extraction", "retrieval", "answers")


class RunStoreError(RagspineEvalError):
    """The store cannot be used as asked (a bad setting, a bad reference); one line."""


def runs_dir() -> Path:
    """Where runs are kept: $RAGSPINE_EVAL_RUNS_DIR, else `.runs/` under the project (ignored
    by git)."""
    given = os.environ.get(ENV_DIR, "").strip()
    return Path(given).expanduser() if given else DEFAULT_DIR


def keep_per_key() -> int:
    return _positive_env(ENV_KEEP, DEFAULT_KEEP)


def max_bytes() -> int:
    return _positive_env(ENV_MAX_MB, DEFAULT_MAX_MB) * 1024 * 1024


def _positive_env(name: str, default: int) -> int:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise RunStoreError(f"{name}={text!r}: must be a whole number of 1 or more (default "
                            f"{default}); unset it or fix it")
    return value


# --- a summary read back ----------------------------------------------------------------------


def _from_summary(data: Any, folder: Path) -> RunSummary:
    if not isinstance(data, dict) or data.get("format") != SUMMARY_FORMAT:
        raise ValueError("not a run summary of this version")
    known = {f.name for f in fields(RunSummary)} - {"path"}
    values = {k: v for k, v in data.items() if k in known}  # a later version's keys: left out
    if values.get("id") != folder.name:
        raise ValueError(f"its id {values.get('id')!r} is not its folder's name")
    return RunSummary(**values, path=folder / REPORT_FILE)


# --- writing ----------------------------------------------------------------------------------


def new_id(now: datetime | None = None) -> str:
    """A run id: UTC time to the second, then 6 random hex digits (a clash, one chance in 16
    million for two runs started in the same second, is drawn again: store_report)."""
    now = now or datetime.now(UTC)
    return f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def store_report(report: Mapping[str, Any], *, kind: str, key: str, root: Path | None = None,
                 verdict: str | None = None, prune_after: bool = True) -> RunSummary:
    """Keep `report` (a report dict) in the store, atomically and compressed, then apply the
    retention rule. Returns the stored run's summary."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    root = Path(root) if root is not None else runs_dir()
    root.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC)
    tmp = Path(_mkdtemp(root))
    try:
        report_path = tmp / REPORT_FILE
        with open(report_path, "wb") as raw:
            # mtime=0: the same report gives the same bytes
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=GZIP_LEVEL, mtime=0) as gz:
                for piece in compact_pieces(report):
                    gz.write(piece)
            raw.flush()
            os.fsync(raw.fileno())
        size = report_path.stat().st_size
        for _attempt in range(5):
            run_id = new_id(now)
            values = {"id": run_id, "created": now.isoformat(timespec="microseconds"),
                      **summarize(report, kind=kind, key=key, verdict=verdict), "size": size}
            summary = RunSummary(**values, path=root / run_id / REPORT_FILE)
            _write_synced(tmp / SUMMARY_FILE, json.dumps(summary.to_dict(), ensure_ascii=False))
            fsync_folder(tmp)
            try:
                os.rename(tmp, root / run_id)
            except OSError:  # the id is taken (one chance in 2**24 a second): draw again
                if (root / run_id).exists():
                    continue
                raise
            fsync_folder(root)
            break
        else:
            raise OSError(f"no free run id in {root} after 5 draws")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if prune_after:
        prune(root, protect=summary.id)
    return summary


def compact_pieces(value: Any, batch: int = 2000) -> Iterator[bytes]:
    """Compact UTF-8 JSON of `value` in pieces of at most `batch` list items each, so that a
    100k-case report is never held whole as text. Each piece comes from orjson (6x faster than
    json's C encoder on a report), or from json where orjson refuses a value (a key that is no
    string, an integer past 64 bits)."""
    if isinstance(value, Mapping):
        yield b"{"
        for i, (key, item) in enumerate(value.items()):
            yield (b"," if i else b"") + _dumps(str(key)) + b":"
            yield from compact_pieces(item, batch)
        yield b"}"
    elif isinstance(value, list | tuple) and len(value) > batch:
        yield b"["
        for start in range(0, len(value), batch):
            yield (b"," if start else b"") + _dumps(list(value[start:start + batch]))[1:-1]
        yield b"]"
    else:
        yield _dumps(value)


def _dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _mkdtemp(root: Path) -> str:
    import tempfile

    return tempfile.mkdtemp(prefix=".tmp-", dir=root)


def _write_synced(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())



# --- reading ----------------------------------------------------------------------------------


def list_runs(kind: str | None = None, key: str | None = None,
              root: Path | None = None) -> list[RunSummary]:
    """The stored runs, newest first, of `kind` and `key` where given. A corrupt entry is left
    out with one warning line on stderr (one line for all of them, once per process: `diff`
    resolving two references warns once)."""
    root = Path(root) if root is not None else runs_dir()
    runs, bad = _scan(root)
    bad = [b for b in bad if (str(root), b) not in _WARNED]
    _WARNED.update((str(root), b) for b in bad)
    if bad:
        shown = ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
        print(f"warning: skipped {len(bad)} unreadable run(s) in {root} ({shown}); delete "
              f"{'them' if len(bad) > 1 else 'it'} if the problem stays", file=sys.stderr)
    return [r for r in runs
            if (kind is None or r.kind == kind) and (key is None or r.key == key)]


_WARNED: set[tuple[str, str]] = set()  # damaged entries already named by this process


def _scan(root: Path) -> tuple[list[RunSummary], list[str]]:
    """Every readable run (newest first) and the names of the unreadable ones with why."""
    try:
        entries = sorted((e for e in os.scandir(root) if not e.name.startswith(".")),
                         key=lambda e: e.name)
    except FileNotFoundError:
        return [], []
    except OSError as exc:  # a file, or a folder this user may not read
        raise RunStoreError(f"{root}: the run store cannot be read ({exc.strerror or exc}); "
                            f"point {ENV_DIR} at a folder") from None
    runs, bad = [], []
    for entry in entries:
        folder = Path(entry.path)
        try:
            if not entry.is_dir():
                raise ValueError("not a run folder")
            summary = _from_summary(json.loads((folder / SUMMARY_FILE).read_text("utf-8")),
                                    folder)
            if not summary.path.is_file():
                raise ValueError(f"no {REPORT_FILE}")
        except FileNotFoundError:
            if not folder.exists():  # removed by another process's pruning meanwhile
                continue
            bad.append(f"{entry.name}: no {SUMMARY_FILE}")
            continue
        except json.JSONDecodeError as exc:
            bad.append(f"{entry.name}: {SUMMARY_FILE} is not valid JSON (line {exc.lineno})")
            continue
        except (OSError, ValueError, TypeError) as exc:
            bad.append(f"{entry.name}: {str(exc)[:60]}")
            continue
        runs.append(summary)
    runs.sort(key=lambda r: (r.created, r.id), reverse=True)
    return runs, bad


# --- retention --------------------------------------------------------------------------------


def prune(root: Path | None = None, *, protect: str | None = None,
          keep: int | None = None, limit: int | None = None) -> list[str]:
    """Apply the retention rule (module docstring); returns the ids removed. `protect` (the
    run just stored) is never removed."""
    root = Path(root) if root is not None else runs_dir()
    keep = keep if keep is not None else keep_per_key()
    limit = limit if limit is not None else max_bytes()
    runs, _bad = _scan(root)
    doomed: list[RunSummary] = []
    seen: dict[tuple[str, str], int] = {}
    for run in runs:  # newest first
        n = seen.get((run.kind, run.key), 0)
        seen[(run.kind, run.key)] = n + 1
        if n >= keep and run.id != protect:
            doomed.append(run)
    left = [r for r in runs if r not in doomed]
    total = sum(r.size for r in left)
    for run in reversed(left):  # oldest first
        if total <= limit:
            break
        if run.id != protect:
            doomed.append(run)
            total -= run.size
    removed = [run.id for run in doomed if _remove(run.folder)]
    _sweep_stale(root)
    return removed


def _remove(folder: Path) -> bool:
    trash = folder.with_name(f".trash-{folder.name}-{secrets.token_hex(3)}")
    try:
        os.rename(folder, trash)  # atomic: of two processes pruning, one gets it
    except OSError:
        return False
    shutil.rmtree(trash, ignore_errors=True)
    return True


def _sweep_stale(root: Path) -> None:
    """Hidden folders of writes that died (.tmp-*) an hour ago, and any trash left behind."""
    now = time.time()
    try:
        entries = list(os.scandir(root))
    except FileNotFoundError:
        return
    for entry in entries:
        if entry.name.startswith(".trash-") or (
                entry.name.startswith(".tmp-") and _older(entry, now - STALE_SECONDS)):
            shutil.rmtree(entry.path, ignore_errors=True)


def _older(entry: os.DirEntry, than: float) -> bool:
    try:
        return entry.stat().st_mtime < than
    except OSError:
        return False
