"""The report's case list as text, kept beside the whole-run entry: a re-run where nothing
changed writes it as it is instead of encoding 10k case records again.

A run answered by (or stored as) a whole-run entry (whole_run.py) has case records that are a
function of that entry, of the run's golden cases and of the code that makes and writes them.
The folder `report_texts` of the cache's folder holds, in one file per `key` (the SHA-256 of
those: the entry's checksum and key, which name every case's id and golden fingerprint, what
the fingerprint leaves out of a case, its tags and its expected's key order, and the writer's
code), the UTF-8 text of the report's `cases` value as the report file holds it
(files/jsontext.value_text), then what the report derives from the records alone (`derived`:
JSON, qa/report_file.py says what), after a first line with their checksum and the text's
length. A file, not a row of the SQLite file: 14 MB into a WAL database is written twice (the
log, then the checkpoint) and cost a cold run 0.09 s; a file renamed into place is whole or
absent as well. qa/report_file.py makes and uses them; this module stores bytes.

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
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ragspine_eval.files.jsontext import compact

KEPT = 4
FOLDER = "report_texts"  # in the cache's folder, beside its SQLite file
SUFFIX = ".json.part"
FORMAT = "case-texts-1"


def key(entry_checksum: str, run_key: str, cases: Iterable[Any], code: Iterable[Path],
        extra: str = "") -> str:
    """The key of a run's case text: the whole-run entry (its checksum, and its key, which
    holds every case's id and golden fingerprint: question, case type, expected and reference
    date), what the fingerprint leaves out of each case (its tags, and the key order of its
    expected, which the record keeps), the bytes of the files in `code`, and `extra` (what
    else the caller's texts depend on). Raises OSError when a code file cannot be read."""
    digest = hashlib.sha256(f"{FORMAT}\0{entry_checksum}\0{run_key}\0{extra}\0".encode())
    digest.update(compact([(c.tags, c.expected) for c in cases]).encode("utf-8"))
    for path in code:
        data = path.read_bytes()
        digest.update(f"\0{path.name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def read(folder: Path, text_key: str) -> tuple[bytes, bytes] | None:
    """The (text, derived) stored under `text_key`, or None (absent, its checksum wrong, no
    cache)."""
    try:
        data = (folder / FOLDER / f"{text_key}{SUFFIX}").read_bytes()
    except OSError:
        return None
    head, _, rest = data.partition(b"\n")
    sha, _, size = head.partition(b" ")
    if not size.isdigit() or int(size) > len(rest):
        return None
    text, derived = rest[:int(size)], rest[int(size):]
    return (text, derived) if _checksum(text, derived) == sha.decode("ascii", "replace") else None


def _checksum(text: bytes, derived: bytes) -> str:
    digest = hashlib.sha256(b"%d\0" % len(text))
    digest.update(text)
    digest.update(derived)
    return digest.hexdigest()


def put(folder: Path, text_key: str, text: bytes, derived: bytes) -> bool:
    """Keep `text` and `derived` under `text_key` (a file renamed into place, so a reader sees
    it whole or not at all) and drop all but the KEPT newest; False when the cache cannot take
    it (which costs the next run the encoding and the derived figures, nothing else)."""
    where = folder / FOLDER
    try:
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=where)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(b"%s %d\n" % (_checksum(text, derived).encode(), len(text)))
                handle.write(text)
                handle.write(derived)
            os.replace(tmp, where / f"{text_key}{SUFFIX}")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        kept = sorted(where.glob(f"*{SUFFIX}"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in kept[KEPT:]:
            old.unlink(missing_ok=True)
    except OSError:
        return False
    return True
