"""The report's case list as text, kept beside the whole-run entry: a re-run where nothing
changed writes it as it is instead of encoding 10k case records again.

A run answered by (or stored as) a whole-run entry (whole_run.py) has case records that are a
function of that entry, of the run's golden cases and of the code that makes and writes them.
The table `report_texts` of the cache's SQLite file holds, under `key` (the SHA-256 of those:
the entry's checksum and key, which name every case's id and golden fingerprint, and what the
fingerprint leaves out of a case, its tags and its expected's key order; the writer's code), the UTF-8 text of the report's `cases` value as the report file
holds it (files/jsontext.value_text), what the report derives from the records that the
records alone decide (`derived`: JSON, qa/report_file.py says what), and their checksum.
qa/report_file.py makes and uses them; this module stores bytes and never reads them.

Invariants:
- a text answers only under the key it was stored with: another entry (an outcome stored again,
  another scoring, engine, KB, mode), a case edited, re-tagged, moved or with its keys in another
  order, or another writer or record code is another key;
- it is trusted only whole: its checksum must match, else it is a miss (the records are encoded
  as before), never a wrong answer; any problem with the cache is a miss too;
- the `KEPT` most recently written texts are kept (each about the size of the report file).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

KEPT = 4
TABLE = ("CREATE TABLE IF NOT EXISTS report_texts (key TEXT PRIMARY KEY, sha256 TEXT NOT NULL, "
         "text BLOB NOT NULL, derived BLOB NOT NULL)")
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
FORMAT = "case-texts-1"


def key(entry_checksum: str, run_key: str, cases: Iterable[Any], code: Iterable[Path],
        extra: str = "") -> str:
    """The key of a run's case text: the whole-run entry (its checksum, and its key, which
    holds every case's id and golden fingerprint: question, case type, expected and reference
    date), what the fingerprint leaves out of each case (its tags, and the key order of its
    expected, which the record keeps), the bytes of the files in `code`, and `extra` (what
    else the caller's texts depend on). Raises OSError when a code file cannot be read."""
    digest = hashlib.sha256(f"{FORMAT}\0{entry_checksum}\0{run_key}\0{extra}\0".encode())
    digest.update(_COMPACT([(c.tags, c.expected) for c in cases]).encode("utf-8"))
    for path in code:
        data = path.read_bytes()
        digest.update(f"\0{path.name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def read(folder: Path, text_key: str) -> tuple[bytes, bytes] | None:
    """The (text, derived) stored under `text_key`, or None (absent, its checksum wrong, no
    cache)."""
    from ragspine_eval.execution.cache import _connect

    db = _connect(folder)
    if db is None:
        return None
    try:
        row = db.execute("SELECT sha256, text, derived FROM report_texts WHERE key = ?",
                         (text_key,)).fetchone()
    except sqlite3.DatabaseError:  # no such table yet, or a broken file
        row = None
    finally:
        db.close()
    if row is None or not isinstance(row[1], bytes) or not isinstance(row[2], bytes):
        return None
    return (row[1], row[2]) if _checksum(row[1], row[2]) == row[0] else None


def _checksum(text: bytes, derived: bytes) -> str:
    return hashlib.sha256(b"%d\0" % len(text) + text + derived).hexdigest()


def store(folder: Path, text_key: str, text: bytes, derived: bytes) -> bool:
    """Keep `text` and `derived` under `text_key` (one transaction) and drop all but the KEPT
    newest; False when the cache cannot take it (which costs the next run the encoding and the
    derived figures, nothing else)."""
    from ragspine_eval.execution.cache import _connect

    db = _connect(folder, create=True)
    if db is None:
        return False
    try:
        with db:
            db.execute(TABLE)
            db.execute("INSERT OR REPLACE INTO report_texts VALUES (?, ?, ?, ?)",
                       (text_key, _checksum(text, derived), text, derived))
            db.execute("DELETE FROM report_texts WHERE rowid NOT IN "
                       "(SELECT rowid FROM report_texts ORDER BY rowid DESC LIMIT ?)", (KEPT,))
    except sqlite3.DatabaseError:
        return False
    finally:
        db.close()
    return True
