"""Re-runs that skip known work, and runs spread over a Dask cluster (issue 17).

Each function runs in its own process (benchmarks.child) with an outcome cache of its own in a
scratch folder, and times what a user's command does: `run_qa_eval` plus the JSON report.
- warm: a cold run (empty cache), then the same command again (nothing changed), each a fresh
  process timed whole (start-up and imports count: issue 23);
- one_changed: after a cold run, one golden case edited, run again: how many reached the engine;
- resume: a run interrupted when half its cases are answered (Ctrl-C), then the same command
  again; the figure is (time before the interrupt + the resumed run) / a full cold run;
- dask: `--executor dask` on a 2-worker LocalCluster against `--jobs 1`, cache off in both.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _timed_run(golden: str, mode: str, **options: Any) -> tuple[float, Any]:
    from ragspine_eval.qa.report_file import write_report
    from ragspine_eval.qa.run import run_qa_eval

    with tempfile.TemporaryDirectory(prefix="ragspine-bench-report-") as scratch:
        started = time.perf_counter()
        report = run_qa_eval(golden, mode, **options)
        write_report(Path(scratch) / "report.json", report)  # as the CLI writes it
        return time.perf_counter() - started, report


def _fresh_cache(scratch: str) -> None:
    os.environ["RAGSPINE_EVAL_CACHE_DIR"] = str(Path(scratch) / "cache")


def one_run(golden: str, mode: str, cache_dir: str) -> dict[str, Any]:
    """One command's work in this (fresh) process: run_qa_eval and the JSON report, with the
    outcome cache in cache_dir; says whether the engine, pandas or altair were imported."""
    os.environ["RAGSPINE_EVAL_CACHE_DIR"] = cache_dir
    seconds, report = _timed_run(golden, mode)
    return {"n_cases": report.n_cases, "seconds": round(seconds, 3),
            "reused": report.provenance.cache["reused"],
            "imported": sorted(m for m in ("ragspine", "pandas", "altair") if m in sys.modules)}


def warm(golden: str, mode: str) -> dict[str, Any]:
    """Issue 23: the cold run and the warm one each as a whole process (interpreter start-up
    and imports included, as a user's command has them); the share is warm / cold."""
    from benchmarks import child

    with tempfile.TemporaryDirectory(prefix="ragspine-bench-cache-") as scratch:
        cache = str(Path(scratch) / "cache")
        cold = child.run("reuse:one_run", golden=golden, mode=mode, cache_dir=cache)
        again = child.run("reuse:one_run", golden=golden, mode=mode, cache_dir=cache)
    return {"n_cases": cold["n_cases"], "cold_s": cold["process_s"], "warm_s": again["process_s"],
            "share": round(again["process_s"] / cold["process_s"], 4),
            "reused": again["reused"], "cold_in_process_s": cold["seconds"],
            "warm_in_process_s": again["seconds"], "warm_imported": again["imported"],
            "cold_cpu_s": cold["cpu_s"], "warm_cpu_s": again["cpu_s"],
            "cpu_share": round(again["cpu_s"] / cold["cpu_s"], 4),
            "load_average": [round(x, 2) for x in os.getloadavg()]}


def one_changed(golden: str, mode: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-cache-") as scratch:
        _fresh_cache(scratch)
        edited = Path(scratch) / "golden.jsonl"
        lines = Path(golden).read_text(encoding="utf-8").splitlines()
        _timed_run(golden, mode)
        case = json.loads(lines[len(lines) // 2])
        case["question"] += "？"
        lines[len(lines) // 2] = json.dumps(case, ensure_ascii=False)
        edited.write_text("\n".join(lines) + "\n", encoding="utf-8")
        seconds, report = _timed_run(str(edited), mode)
    return {"n_cases": report.n_cases, "seconds": round(seconds, 3),
            "computed": report.provenance.cache["computed"]}


def resume(golden: str, mode: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-cache-") as scratch:
        _fresh_cache(scratch)
        full_s, full = _timed_run(golden, mode)
        _fresh_cache(scratch + "/second")
        half = full.n_cases // 2

        def interrupt(done: int, total: int, errors: int) -> None:
            if done >= half:
                raise KeyboardInterrupt

        started = time.perf_counter()
        try:
            _timed_run(golden, mode, progress=interrupt)
        except KeyboardInterrupt:
            pass
        before_s = time.perf_counter() - started
        resumed_s, resumed = _timed_run(golden, mode)
    return {"load_average": [round(x, 2) for x in os.getloadavg()],
            "n_cases": full.n_cases, "full_s": round(full_s, 3),
            "before_interrupt_s": round(before_s, 3), "resumed_s": round(resumed_s, 3),
            "reused": resumed.provenance.cache["reused"],
            "after_kill_share": round(resumed_s / full_s, 4),
            "total_share": round((before_s + resumed_s) / full_s, 4)}


def dask(golden: str, mode: str) -> dict[str, Any]:
    serial_s, serial = _timed_run(golden, mode, cache=False)
    dask_s, on_dask = _timed_run(golden, mode, cache=False, executor="dask", jobs=2)
    same = _comparable(serial) == _comparable(on_dask)
    return {"load_average": [round(x, 2) for x in os.getloadavg()],
            "n_cases": serial.n_cases, "jobs_1_s": round(serial_s, 3),
            "dask_2_workers_s": round(dask_s, 3), "speedup": round(serial_s / dask_s, 3),
            "same_report": same}


def _comparable(report: Any) -> dict[str, Any]:
    data = report.to_dict()
    data["provenance"].pop("times", None)
    return data
