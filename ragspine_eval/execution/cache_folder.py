"""The outcome cache's folder as the `cache` command shows and empties it: where it is, how many
outcomes it holds, how many bytes (the SQLite file and the kept report texts beside it).

Invariants: reading the figures never creates the folder or the database; `clear` removes the
whole folder, whatever a run left in it, and returns what it held.
"""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ragspine_eval.execution.cache import cache_dir
from ragspine_eval.execution.cache_db import connect


@dataclass(frozen=True)
class CacheStats:
    folder: Path
    entries: int
    bytes: int


def stats(folder: Path | None = None) -> CacheStats:
    folder = folder or cache_dir()
    entries = size = 0
    if folder.is_dir():
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())  # report_texts/
        db = connect(folder)
        if db is not None:
            try:
                entries = db.execute("SELECT COUNT(*) FROM outcomes").fetchone()[0]
            except sqlite3.DatabaseError:
                entries = 0
            finally:
                db.close()
    return CacheStats(folder, entries, size)


def clear(folder: Path | None = None) -> CacheStats:
    """Empty the cache; returns what it held."""
    folder = folder or cache_dir()
    held = stats(folder)
    if folder.is_dir():
        shutil.rmtree(folder)
    return held
