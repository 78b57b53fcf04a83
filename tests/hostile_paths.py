"""Paths that are no regular file, for the tests that give one as an input: a folder, a FIFO, a
loop of symbolic links, a link to nowhere, a device, an empty file. `fifo_released(path)` keeps
a test from hanging on a reader that opens a FIFO (and so waits for a writer for ever): after a
few seconds it opens the FIFO's other end and closes it, so such a reader sees an empty file
and the test fails instead of blocking."""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

KINDS = ("folder", "fifo", "loop", "dangling", "device", "empty")


def make(path: Path, kind: str) -> Path:
    """`path` made into `kind` (KINDS): what a reader given it should refuse."""
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "loop":
        other = path.with_name(path.name + ".other")
        path.symlink_to(other)
        other.symlink_to(path)
    elif kind == "dangling":
        path.symlink_to(path.parent / "nowhere" / path.name)
    elif kind == "device":
        path.symlink_to("/dev/null")
    elif kind == "empty":
        path.write_bytes(b"")
    else:
        raise ValueError(kind)
    return path


@contextmanager
def fifo_released(path: Path, after: float = 5.0) -> Iterator[None]:
    """While inside, a FIFO at `path` that a reader opens is given an end of file `after`
    seconds (see the module docstring); nothing happens when no reader opens it."""
    done = threading.Event()

    def release() -> None:
        started = time.monotonic()
        while not done.is_set():
            if time.monotonic() - started >= after:
                try:  # succeeds only while a reader has it open
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
                except OSError as exc:
                    if exc.errno not in (errno.ENXIO, errno.ENOENT):
                        return
            done.wait(0.1)

    thread = threading.Thread(target=release, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(timeout=5)
