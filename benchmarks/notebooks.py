"""qa.ipynb (agent mode) run end to end with papermill and rendered to HTML, against the bare
CLI doing the same work (`ragspine-eval qa --mode agent --report ...`).

Both are timed as whole processes (interpreter start and imports included): `notebook` is run
by child.run, whose process_s is the figure; `cli` times the CLI's own process. Their difference
is what the notebook adds: the kernel's start, the frames, charts and tables, and rendering.
Both write their report into a scratch folder and read a scratch copy of the committed
baseline, so nothing under data/ or out/ is touched.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ragspine_eval.paths import QA_BASELINE


def notebook(mode: str = "agent") -> dict[str, Any]:
    """Execute qa.ipynb with papermill on the project's kernel, then render its HTML report."""
    from ragspine_eval.workbench.rendering.kernel import ensure_kernel
    from ragspine_eval.workbench.rendering.notebooks import (
        NOTEBOOKS_DIR,
        NotebookRun,
        execute,
        render_html,
    )

    ensure_kernel()
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-nb-") as scratch:
        out = Path(scratch)
        baseline = shutil.copy(QA_BASELINE, out / "baseline.json")
        run = NotebookRun(f"qa_{mode}", NOTEBOOKS_DIR / "qa.ipynb",
                          {"mode": mode, "report_path": str(out / f"qa_{mode}.json"),
                           "baseline_path": str(baseline)}, out)
        execute(run)
        started = time.perf_counter()
        render_html(run)
        render_s = time.perf_counter() - started
        html_kib = run.html.stat().st_size / 1024
    if run.error:
        raise RuntimeError(f"qa.ipynb failed: {run.error}")
    return {"execute_s": round(run.seconds, 3), "render_s": round(render_s, 3),
            "html_kib": round(html_kib, 1)}


def cli(mode: str = "agent") -> dict[str, Any]:
    """The CLI's whole process: score the mode, print the gate table, write the report."""
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-cli-") as scratch:
        baseline = shutil.copy(QA_BASELINE, Path(scratch) / "baseline.json")
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "ragspine_eval.cli", "qa", "--mode", mode,
                               "--report", str(Path(scratch) / "report.json"),
                               "--baseline", str(baseline)], capture_output=True, text=True)
        seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"ragspine-eval qa --mode {mode} exited {done.returncode}:\n"
                           f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return {"seconds": round(seconds, 3)}
