"""One opened thing per process and thread, for the workspace engines of the run path
(workspace_retrieval.RetrievalEngine, workspace_answers.AnswersEngine).

`PerProcess(open_one)` opens `open_one()` (a context manager: a retriever or an answerer over a
scratch copy of the workspace) on first use in each process and thread (`get()`), and `close()`
closes those the calling process opened.

Invariants: a forked worker never uses nor closes its parent's handles (what the parent opened
is known by its pid and left alone); the engine that holds one pickles without it (it is made
again, empty, after unpickling).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any


class PerProcess:
    """`open_one()` entered once per process and thread (module docstring)."""

    def __init__(self, open_one: Callable[[], Any]):
        self._open_one = open_one
        self._local = threading.local()
        self._opened: list[tuple[int, Any]] = []  # (pid, opened) of every one opened
        self._lock = threading.Lock()

    def get(self) -> Any:
        local = self._local
        if getattr(local, "pid", None) != os.getpid():  # a forked child: its own, not the parent's
            local.opened = self._open_one().__enter__()
            local.pid = os.getpid()
            with self._lock:
                self._opened.append((local.pid, local.opened))
        return local.opened

    def close(self) -> None:
        """Close what this process opened (never a parent's, after a fork)."""
        pid = os.getpid()
        with self._lock:
            mine = [o for p, o in self._opened if p == pid]
            self._opened = [(p, o) for p, o in self._opened if p != pid]
        for opened in mine:
            opened.close()
        self._local = threading.local()
