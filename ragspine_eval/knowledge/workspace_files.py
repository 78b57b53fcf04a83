"""How a workspace's SQLite files are read and copied without ever changing them.

Invariants (measured, docs/workspace.md "Reading never changes it"):
- `connect(db)` opens a store strictly read-only in every journal mode: `immutable=1` when no
  non-empty `-wal` or `-journal` lies beside it (SQLite then takes no lock and writes no -shm or
  -wal); otherwise a private copy of the file and its journal, since `immutable=1` would ignore
  the transactions still in the WAL (a stale read) and `mode=ro` alone writes the -shm. No
  read waits on a lock (timeout 0), and every SQLite failure, even one whose own message is not
  UTF-8, is a `WorkspaceError` naming the file;
- a TEXT value that is not UTF-8 is read as a `NotUTF8` (U+FFFD for the bad bytes), never a
  crash in the fetch, so the reader can name the row that holds it;
- `private_copy(W, DEST)` copies the regular files of a workspace (symlinks to regular files
  followed; FIFOs, devices, loops and -shm files left out) for the engine to open, since the
  engine's facade writes to the folder it opens; `copy_store` copies one store with its journal.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.files import reading

_JOURNALS = ("-wal", "-journal")  # what holds transactions a reader must see; -shm is an index


class WorkspaceError(RagspineEvalError, ValueError):
    """A workspace that cannot be used; the message names the file and the reason."""


def _journals(db: Path) -> list[Path]:
    """The non-empty rollback journal or WAL beside `db` (transactions a reader must see)."""
    out = []
    for suffix in _JOURNALS:
        try:
            if os.path.getsize(f"{db}{suffix}") > 0:
                out.append(Path(f"{db}{suffix}"))
        except OSError:
            continue
    return out


def _sqlite_error(exc: BaseException) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "SQLite's own error message is not UTF-8 text: the file is corrupt"
    try:
        return reading.clip(str(exc), 200)[1:-1]
    except Exception:  # noqa: BLE001 - an SQLite message that cannot even be shown
        return type(exc).__name__


@contextmanager
def connect(db: Path) -> Iterator[sqlite3.Connection]:
    """`db` strictly read-only (see the module docstring): immutable, or a private copy."""
    scratch = None
    try:
        journals = _journals(db)
        if journals:
            scratch = tempfile.TemporaryDirectory(prefix="ragspine-eval-read-")
            target = Path(scratch.name) / db.name
            shutil.copyfile(db, target)
            for journal in journals:
                suffix = journal.name[len(db.name):]
                shutil.copyfile(journal, Path(scratch.name) / (db.name + suffix))
            uri = target.as_uri()  # our copy: SQLite may roll a hot journal back in it
        else:
            uri = f"{Path(os.path.abspath(db)).as_uri()}?mode=ro&immutable=1"
        # no busy wait: nothing else holds a lock on an immutable file or on our private copy
        con = sqlite3.connect(uri, uri=True, timeout=0)
        con.text_factory = _text
        con.execute("PRAGMA query_only = ON")
    except (sqlite3.Error, OSError, UnicodeDecodeError, ValueError) as exc:
        if scratch is not None:
            scratch.cleanup()
        raise WorkspaceError(f"{db}: cannot open ({_sqlite_error(exc)})") from None
    try:
        with closing(con):
            yield con
    except (sqlite3.Error, UnicodeDecodeError, OverflowError, MemoryError) as exc:
        raise WorkspaceError(f"{db}: not a readable engine store ({_sqlite_error(exc)}); "
                             f"rebuild it with `ragspine-eval kb build`") from None
    finally:
        if scratch is not None:
            scratch.cleanup()


class NotUTF8(str):
    """A TEXT value that is not UTF-8, decoded with U+FFFD; a chunk holding one is refused."""


def _text(data: bytes) -> str:
    """An SQLite TEXT value: strict UTF-8, else a `NotUTF8` (never a crash in the fetch)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return NotUTF8(data.decode("utf-8", "replace"))


def private_copy(folder: str | Path, dest: str | Path) -> Path:
    """A copy of the workspace's regular files in `dest` (see the module docstring)."""
    folder, dest = Path(folder), Path(dest)
    for root, dirs, files in os.walk(folder):  # symlinked folders are listed, never entered
        rel = Path(root).relative_to(folder)
        (dest / rel).mkdir(parents=True, exist_ok=True)
        for name in files:
            source = Path(root) / name
            try:
                regular = stat.S_ISREG(os.stat(source).st_mode)
            except OSError:
                continue  # a dangling link or a loop: nothing to copy
            if regular and not name.endswith("-shm"):
                try:
                    shutil.copyfile(source, dest / rel / name)
                except OSError as exc:
                    raise WorkspaceError(f"{source}: cannot be copied for the engine "
                                         f"({exc.strerror or exc})") from None
    return dest


def copy_store(db: str | Path, dest: str | Path) -> Path:
    """`db` copied to `dest` with its non-empty -wal or -journal (the transactions not yet in
    the file itself), for the engine to open without ever writing beside the original."""
    db, dest = Path(db), Path(dest)
    try:
        shutil.copyfile(db, dest)
        for journal in _journals(db):
            shutil.copyfile(journal, f"{dest}{journal.name[len(db.name):]}")
    except OSError as exc:
        raise WorkspaceError(f"{db}: cannot be copied for the engine ({exc.strerror or exc})"
                             ) from None
    return dest
