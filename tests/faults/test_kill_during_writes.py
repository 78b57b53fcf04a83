"""Issue 14's SIGKILL during `--update-baseline`: killed at 50 random moments (a fixed seed), the
baseline and its history never disagree once the next run has started, and no temporary file is
left behind it."""

from __future__ import annotations

import json
import os
import random
import signal
import time
from pathlib import Path

from ragspine_eval.ratchet import GateOptions, run_gate
from ragspine_eval.ratchet.baseline_file import history_path, journal_path, locked

KILLS = 50
IDS = [f"case-{i:05d}" for i in range(1000)]  # a baseline large enough that a write takes time


def entry(n: int) -> dict:
    return {"metrics": {"g": 0.5}, "n_cases": n, "passed_ids": {"g": IDS},
            "golden": dict.fromkeys(IDS, "0123456789abcdef")}


def _writer(path: Path, start: int) -> None:
    """The child: record ever larger n_cases until killed."""
    n = start
    while True:
        n += 1
        run_gate(path, "tool", entry(n), GateOptions(update=True, allow_regression=True,
                                                     reason=f"n={n}"))


def agree(path: Path) -> tuple[int, int]:
    """The baseline's n_cases and the n_cases the history's last whole line recorded."""
    stored = json.loads(path.read_text(encoding="utf-8"))["tool"]["n_cases"]
    lines = history_path(path).read_text(encoding="utf-8").splitlines()
    return stored, json.loads(lines[-1])["new"]["n_cases"]


def test_a_writer_killed_at_any_moment_never_splits_the_baseline_from_its_history(tmp_path):
    path = tmp_path / "qa_baseline.json"
    run_gate(path, "tool", entry(1))
    rng = random.Random(14)
    moments, written = [], []
    for _ in range(KILLS):
        start = agree(path)[0]
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns
            try:
                _writer(path, start)
            finally:
                os._exit(1)
        moment = rng.uniform(0.0, 0.5)
        time.sleep(moment)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        moments.append(moment)
        with locked(path):  # what the next run does first
            pass
        stored, last = agree(path)
        assert stored == last, f"killed after {moment:.3f} s: baseline {stored}, history {last}"
        assert not journal_path(path).exists()
        assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        written.append(stored - start)
    # the kills landed while writing, not only before the first write or between writes
    assert sum(1 for w in written if w > 0) >= KILLS // 2, written
