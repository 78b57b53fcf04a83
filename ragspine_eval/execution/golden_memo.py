"""The validated golden set, remembered: a golden file read before is not parsed and checked again.

Validating a golden set line by line (golden.py: strict JSON, every field, every contradiction)
is most of what a re-run where nothing changed would spend reading its input: about 40 µs a
case. `load_golden_set_cached(path, folder)` keeps the cases of a file that passed validation in
the outcome cache's SQLite file (table `golden`), under the SHA-256 of the file's bytes and of
the validating code (golden.py and files/reading.py, and this module). The same bytes under the same code give
the same cases, so a hit rebuilds them from the stored fields without checking them again.

Invariants: a file that fails validation is never stored, so it fails the same way every time;
an entry is trusted only when its checksum matches, and any problem with the cache (absent,
unreadable, corrupt) falls back to `golden.load_golden_set`; a file larger than `MEMO_BYTES`
is always read the ordinary way (it would be read whole to be hashed); the table keeps the
`KEEP` most recent sets.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import date
from pathlib import Path
from typing import Any

from ragspine_eval.files.jsontext import compact
from ragspine_eval.golden import cases as golden
from ragspine_eval.golden.cases import GoldenCase, load_golden_set

MEMO_BYTES = 64 * 2**20
KEEP = 8
# the code that validates a set, and this module (which writes and reads the entries)
_VALIDATORS = (Path(golden.__file__), Path(golden.__file__).parents[1] / "files" / "reading.py",
               Path(__file__))


def load_golden_set_cached(path: str | Path, folder: Path | None) -> list[GoldenCase]:
    """`load_golden_set(path)`, from the memo in `folder` when this file was validated before
    (None: no memo, the file is read as always)."""
    key = _key(Path(path)) if folder is not None else None
    if key is None:
        return load_golden_set(path)
    if _LAST and _LAST[0] == (key, str(folder)):  # read in this process already (qa/harness.py
        return list(_LAST[1])  # checks the file before the run reads it): the same cases
    cases = _read(folder, key, path)  # type: ignore[arg-type]
    _LAST[:] = [(key, str(folder)), cases]
    return list(cases)


# the last set read, under its key and folder: a set read twice in one process (checked, then
# run) is read once; cases are frozen, and each caller gets a list of its own
_LAST: list[Any] = []


def _read(folder: Path, key: str, path: str | Path) -> list[GoldenCase]:
    from ragspine_eval.execution.cache_db import connect

    db = connect(folder)
    if db is not None:
        try:
            row = db.execute("SELECT sha256, cases FROM golden WHERE key = ?", (key,)).fetchone()
        except sqlite3.DatabaseError:
            row = None
        finally:
            db.close()
        if row is not None and hashlib.sha256(row[1].encode()).hexdigest() == row[0]:
            cases = _rebuild(row[1])
            if cases is not None:
                return cases
    cases = load_golden_set(path)
    _put(folder, key, cases)
    return cases


def _key(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MEMO_BYTES:
            return None
        digest = hashlib.sha256(path.read_bytes())
        for source in _VALIDATORS:
            digest.update(source.read_bytes())
    except OSError:
        return None  # load_golden_set names the problem
    return digest.hexdigest()


def _rebuild(text: str) -> list[GoldenCase] | None:
    try:
        cases = []
        for c in json.loads(text):
            case = GoldenCase(c["id"], c["question"], c["case_type"], c["expected"], c["tags"],
                              date.fromisoformat(c["reference_date"]))
            case.__dict__["_fingerprint"] = c["fingerprint"]  # as golden.fingerprint keeps it
            cases.append(case)
        return cases
    except (ValueError, TypeError, KeyError):
        return None


def _put(folder: Path, key: str, cases: list[GoldenCase]) -> None:
    from ragspine_eval.execution.cache_db import connect

    text = compact([{**case.to_dict(), "fingerprint": golden.fingerprint(case)}
                     for case in cases])
    db = connect(folder, create=True)
    if db is None:
        return
    try:
        with db:
            db.execute("INSERT OR REPLACE INTO golden VALUES (?, ?, ?)",
                       (key, hashlib.sha256(text.encode()).hexdigest(), text))
            db.execute("DELETE FROM golden WHERE rowid NOT IN "
                       "(SELECT rowid FROM golden ORDER BY rowid DESC LIMIT ?)", (KEEP,))
    except sqlite3.DatabaseError:
        pass  # a cache that cannot keep it costs the next run the validation, nothing else
    finally:
        db.close()
