"""engines/per_process.py: one opened thing per process and thread; a forked child opens its
own and closes only its own, never its parent's."""

from __future__ import annotations

import os
import threading

from ragspine_eval.engines.per_process import PerProcess


class Opened:
    """A thing to open: who opened it, whether it was closed."""

    def __init__(self) -> None:
        self.pid, self.closed = os.getpid(), False

    def __enter__(self) -> Opened:
        return self

    def close(self) -> None:
        self.closed = True


def test_one_per_thread_reused_in_it_and_closed_once():
    made: list[Opened] = []
    each = PerProcess(lambda: made.append(Opened()) or made[-1])
    first = each.get()
    assert each.get() is first
    other: list[Opened] = []
    thread = threading.Thread(target=lambda: other.append(each.get()))
    thread.start()
    thread.join()
    assert other[0] is not first and len(made) == 2
    each.close()
    assert all(o.closed for o in made)
    assert each.get() is not first  # opened again after a close


def test_a_forked_child_opens_its_own_and_never_closes_its_parents():
    each = PerProcess(Opened)
    parent = each.get()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its own, closed by its close; the parent's left open
        mine = each.get()
        each.close()
        ok = mine is not parent and mine.pid == os.getpid() and mine.closed and not parent.closed
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"
    assert not parent.closed and each.get() is parent
