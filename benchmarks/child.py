"""One measurement in a fresh process, and the peak memory that process reached.

The parent calls `run("qa:ours", golden=..., mode=...)`; this starts
`python -m benchmarks.child qa:ours '<json kwargs>' <result file>`, which imports
benchmarks.qa, calls `ours(**kwargs)` and writes the dict it returns as JSON. The parent waits
with os.wait4, whose rusage is that one child's (not the running maximum over all children
that RUSAGE_CHILDREN gives), and adds `peak_rss_mib`: the child's peak resident memory,
interpreter and imports included, and `cpu_s`: the CPU time it used (user and system, its
threads included), which other tenants of a shared machine disturb far less than wall time.
Worker processes a child starts itself are not in either.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


class ChildFailed(RuntimeError):
    """A measurement's process exited non-zero; the message holds its last output lines."""


def run(task: str, **kwargs: Any) -> dict[str, Any]:
    """Run `module:function` of this package in a new process; its result plus peak_rss_mib
    and process_s (the child's whole life, interpreter start and imports included)."""
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-") as scratch:
        result_path = Path(scratch) / "result.json"
        log_path = Path(scratch) / "child.log"
        with log_path.open("w") as log:
            started = time.perf_counter()
            proc = subprocess.Popen(
                [sys.executable, "-m", "benchmarks.child", task, json.dumps(kwargs),
                 str(result_path)], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
            _, status, usage = os.wait4(proc.pid, 0)
            process_s = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0 or not result_path.exists():
            tail = log_path.read_text(errors="replace").splitlines()[-15:]
            raise ChildFailed(f"{task} {kwargs} exited {proc.returncode}:\n" + "\n".join(tail))
        result = json.loads(result_path.read_text())
    # Linux reports ru_maxrss in KiB
    return {**result, "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
            "process_s": round(process_s, 3),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 3)}


def main(argv: list[str]) -> int:
    task, kwargs, result_path = argv
    module_name, function_name = task.split(":")
    function = getattr(importlib.import_module(f"benchmarks.{module_name}"), function_name)
    result = function(**json.loads(kwargs))
    Path(result_path).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
