"""Safe file writing: every file the project writes is replaced whole or not at all.

Invariants:
- a reader sees the old file or the new one, never a part: the text goes to a temporary file in
  the same folder, is fsynced, then renamed over the target (and the folder is fsynced);
- a failed write leaves no temporary file behind and the target as it was;
- a symbolic link is written through (its target is replaced, the link stays); a stream
  (/dev/stdout, /dev/fd/N) or a path that is no regular file (/dev/null, a FIFO) is written into
  as it is, never replaced by an ordinary file;
- a replaced file keeps its permission bits.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any


def resolved(path: Path) -> Path:
    """The real path behind `path`, links followed."""
    # os.path.realpath, unlike Path.resolve, does not raise on a symbolic link loop; writing
    # there then fails with the reason, as for any path that cannot be written
    return Path(os.path.realpath(path.expanduser()))


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
    given, path = Path(path), resolved(Path(path))
    if written_in_place(given):
        fd = stream_fd(given)
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
    fsync_folder(path.parent)


def fsync_folder(folder: str | Path) -> None:
    """Make a rename or a new entry in `folder` durable (the folder's own fsync)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_STREAMS = {"/dev/stdout": 1, "/dev/stderr": 2}
_FD_FOLDERS = ("/dev/fd/", "/proc/self/fd/")


def written_in_place(path: Path) -> bool:
    """A stream, or a path that is there but is no regular file or folder: written into as it
    is (write_bytes_atomic), never replaced."""
    if stream_fd(path) is not None:
        return True
    real = resolved(path)
    return path.exists() and not real.is_file() and not real.is_dir()


def stream_fd(path: Path) -> int | None:
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


def write_json_atomic(path: str | Path, data: Any,
                      given: Mapping[str, bytes] | None = None) -> None:
    """`json.dumps(data, indent=2, ensure_ascii=False)` and a newline, written atomically in
    pieces: json.dumps would first hold every piece of the text and then the text itself, a
    few hundred megabytes for a 100k-case report. The text is made by files/jsontext.py (the
    same bytes, faster); data it does not take is written by the standard library's encoder,
    as is anything written into a stream (which could not take a second start). `given`: the
    text of some top-level values, already made (jsontext.indented_pieces)."""
    from ragspine_eval.files.jsontext import Unusual, indented_pieces

    if not written_in_place(Path(path)):
        try:
            write_bytes_atomic(path, indented_pieces(data, given))
            return
        except Unusual:
            pass  # nothing was written (write_bytes_atomic leaves no part behind)
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
