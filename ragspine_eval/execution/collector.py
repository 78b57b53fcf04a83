"""Python's cyclic garbage collector while a run holds tens of thousands of objects.

A run keeps every outcome, the golden set and the KB's texts alive; with the collector's
default thresholds every 700 new containers start a collection that walks the young objects,
and every few of those walk the older generations too, so the run's own data is scanned again
and again while the engine answers (about a tenth of a cold 10,000-case tool run, measured in
benchmarks/RESULTS.md). Three settings here, none of which changes what any code computes:

- `gc_paused()`: no collection at all, while trees of plain dicts and lists (no cycle) are
  read back or built: the golden memo, stored entries, records, the report (qa/run.py pauses it
  for the whole run);
- `gc_running()`: the collector on again inside a pause, for the engine's part of the run;
- `gc_relaxed()`: while cases run, every object alive at the start is frozen (moved to the
  permanent generation, never scanned) and the youngest generation's threshold raised, so the
  engine's own garbage, cycles included, is still collected, in fewer and cheaper passes.

Invariants: both restore the collector's switch and thresholds as they found them, and nothing
stays frozen after the outermost gc_relaxed (CPython has one permanent generation, so what was
frozen before it, such as the objects CPython 3.12 freezes at start, is unfrozen too: they are
then scanned like any old object, which costs a little and changes nothing); nested uses are
harmless; a collector already off is left off.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# New containers between two young collections while cases run (CPython's default: 700).
# The engine's garbage a 10,000-case run makes is collected all the same, 30 times fewer.
RUN_THRESHOLD = 20_000


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic collector paused (see the module docstring)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    _PAUSED.append(True)
    try:
        yield
    finally:
        _PAUSED.pop()
        gc.enable()


_PAUSED: list[bool] = []  # a gc_paused block turned the collector off (gc_running may resume)


@contextmanager
def gc_running() -> Iterator[None]:
    """The collector on again inside a gc_paused block, while work that may leave cycles runs
    (an engine answering cases), and paused again after; a collector that was off before the
    pause stays off."""
    if not _PAUSED or gc.isenabled():
        yield
        return
    gc.enable()
    try:
        yield
    finally:
        gc.disable()


_relaxed_depth = 0  # gc_relaxed blocks open: only the outermost freezes and unfreezes


@contextmanager
def gc_relaxed() -> Iterator[None]:
    """What is alive now frozen and the young threshold raised (see the module docstring)."""
    global _relaxed_depth
    if not gc.isenabled():
        yield
        return
    thresholds = gc.get_threshold()
    outermost = _relaxed_depth == 0
    if outermost:
        gc.freeze()
    _relaxed_depth += 1
    gc.set_threshold(max(thresholds[0], RUN_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        _relaxed_depth -= 1
        if outermost:
            gc.unfreeze()
