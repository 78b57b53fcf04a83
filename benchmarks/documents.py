"""Issue 23's hostile documents, timed: each command a user runs on them, in its own process
under a 4 GiB address-space limit, with its wall time and the peak resident memory of the
largest process it ran (the CLI, or the worker that reads the document with the engine).

    python -m benchmarks.documents          # from the project root; prints one row a command

The documents are written by tests/hostile_documents.py (the same ones the fault tests use)
into a temporary folder. Measured, not asserted: the bounds are issue 23's (under 10 s, under
500 MiB, exit 0 or 2 with no traceback); RESULTS.md records a run.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FOUR_GIB = 4 * 1024 ** 3
DOCUMENTS = {"far cell": {"far_cell": True}, "vast merge": {"merge": "A5:XFD1048576"},
             "vast conditional format": {"conditional": "A1:XFD1048576"}}


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (FOUR_GIB, FOUR_GIB))


def measure(argv: list[str], cwd: Path) -> dict[str, Any]:
    """Run `ragspine-eval argv` in a new process capped at 4 GiB: exit code, wall seconds, the
    peak RSS of the largest process of its tree (MiB), and whether a traceback was printed."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "ragspine_eval.cli", *argv], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=_cap)
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    # wait4's ru_maxrss: the largest of the CLI and the descendants it reaped (the worker)
    peak = usage.ru_maxrss / 1024
    return {"exit": status >> 8, "seconds": round(seconds, 2), "peak_rss_mib": round(peak),
            "traceback": "Traceback" in err, "line": err.strip().splitlines()[-1][:120]
            if err.strip() else ""}


def main() -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from hostile_documents import SHEET, hostile_xlsx

    rows = []
    with tempfile.TemporaryDirectory(prefix="ragspine-docs-") as tmp:
        folder = Path(tmp)
        truth = folder / "truth.json"
        truth.write_text(json.dumps({"cells": [{"sheet": SHEET, "cell_ref": "A1",
                                                "value": "name"}]}), encoding="utf-8")
        for kind, shape in DOCUMENTS.items():
            doc = hostile_xlsx(folder / f"{kind.replace(' ', '_')}.xlsx", **shape)
            for command, argv in (
                    ("truth draft", ["truth", "draft", str(doc), "--out", str(folder / "d.json")]),
                    ("truth check", ["truth", "check", str(truth), "--doc", str(doc)]),
                    ("extraction --doc", ["extraction", "--doc", str(doc), "--ground-truth",
                                          str(truth)])):
                rows.append({"document": kind, "bytes": doc.stat().st_size, "command": command,
                             **measure(argv, folder)})
    with open("/proc/loadavg") as load:
        print(f"load average: {load.read().split()[0]}")
    for row in rows:
        print(f"{row['document']:<24} {row['bytes']:>5} B  {row['command']:<17} exit "
              f"{row['exit']}  {row['seconds']:>6.2f} s  {row['peak_rss_mib']:>5} MiB  "
              f"{'TRACEBACK ' if row['traceback'] else ''}{row['line']}")


if __name__ == "__main__":
    main()
