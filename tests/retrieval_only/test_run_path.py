"""A retrieval run on the run path (ragspine_eval/pipeline/): the same report with one job, two
worker processes and a Dask cluster; every answer kept in the outcome cache, so a run killed
half-way resumes and ends with the report of a run never stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from realdocs_workspace import QUESTIONS, needs_realdocs, realdocs_workspace  # noqa: F401

from benchmarks.retrieval_run import stored  # answers in the outcome cache so far
from ragspine_eval import paths
from ragspine_eval.retrieval_only.run import run_retrieval_eval


def comparable(report: dict) -> str:
    """The report's text less what differs between any two runs of the same inputs: the times,
    the commit, and the cache's share (what was reused is the point of a resume)."""
    prov = report.get("provenance") or {}
    for key in ("times", "cache", "git_commit", "git_dirty"):
        prov.pop(key, None)
    return json.dumps(report, indent=2, ensure_ascii=False)


def cycled(n: int, folder: Path) -> Path:
    """A question file of n questions, the fixture's questions over and over, ids made unique."""
    lines = (QUESTIONS / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    out = folder / f"questions_{n}.jsonl"
    with out.open("w", encoding="utf-8") as handle:
        for i in range(n):
            row = json.loads(lines[i % len(lines)])
            handle.write(json.dumps({**row, "id": f"{row['id']}-{i}"}) + "\n")
    return out


@needs_realdocs
def test_one_job_two_worker_processes_and_dask_give_the_same_report(realdocs_workspace):
    ws = realdocs_workspace.workspace.path
    questions = QUESTIONS / "questions.jsonl"
    one = run_retrieval_eval(ws, questions, top_k=5, jobs=1, cache=False)
    two = run_retrieval_eval(ws, questions, top_k=5, jobs=2, cache=False)
    assert one.errors == [] and len(one.cases) > 10
    assert comparable(two.to_dict()) == comparable(one.to_dict())
    pytest.importorskip("dask.distributed")
    on_dask = run_retrieval_eval(ws, questions, top_k=5, jobs=2, cache=False, executor="dask")
    assert comparable(on_dask.to_dict()) == comparable(one.to_dict())


@needs_realdocs
def test_a_rerun_is_answered_by_the_cache_with_the_same_report(realdocs_workspace):
    ws = realdocs_workspace.workspace.path
    questions = QUESTIONS / "nl_gold.json"
    first = run_retrieval_eval(ws, questions, top_k=10)
    again = run_retrieval_eval(ws, questions, top_k=10, jobs=2)
    assert first.provenance.cache["reused"] == 0
    assert again.provenance.cache["reused"] == len(again.cases)
    assert comparable(again.to_dict()) == comparable(first.to_dict())
    other_k = run_retrieval_eval(ws, questions, top_k=3)  # another top_k: asked again
    assert other_k.provenance.cache["reused"] == 0


@needs_realdocs
def test_a_run_killed_half_way_resumes_to_the_report_of_a_run_never_stopped(realdocs_workspace,
                                                                              tmp_path):
    ws = realdocs_workspace.workspace.path
    n = 600
    questions = cycled(n, tmp_path)
    cache = Path(os.environ["RAGSPINE_EVAL_CACHE_DIR"])
    command = [sys.executable, "-m", "ragspine_eval.cli", "retrieval", "--kb", str(ws),
               "--golden", str(questions), "--top-k", "5", "--no-store", "--jobs", "2"]
    env = {**os.environ, "RAGSPINE_EVAL_RUNS_DIR": str(tmp_path / "runs")}
    killed = subprocess.Popen([*command, "--report", str(tmp_path / "killed.json"),
                               "--baseline", str(tmp_path / "killed-baseline.json")],
                              cwd=paths.PROJECT_ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    while stored(cache) < n // 2 and killed.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(killed.pid, signal.SIGKILL)  # the whole run, its workers too, mid-write
    killed.wait()
    kept = stored(cache)
    assert 0 < kept < n, kept  # killed part-way, with answers kept
    assert not (tmp_path / "killed.json").exists()
    resumed = subprocess.run([*command, "--report", str(tmp_path / "resumed.json"),
                              "--baseline", str(tmp_path / "resumed-baseline.json")],
                             cwd=paths.PROJECT_ROOT, env=env, capture_output=True, text=True)
    whole = subprocess.run([*command, "--no-cache", "--report", str(tmp_path / "whole.json"),
                            "--baseline", str(tmp_path / "whole-baseline.json")],
                           cwd=paths.PROJECT_ROOT, env=env, capture_output=True, text=True)
    assert resumed.returncode == whole.returncode, resumed.stderr
    report = json.loads((tmp_path / "resumed.json").read_text(encoding="utf-8"))
    whole_report = json.loads((tmp_path / "whole.json").read_text(encoding="utf-8"))
    for each in (report, whole_report):  # each run's own (empty) baseline file
        each["provenance"].pop("baseline", None)
    assert report["provenance"]["cache"]["reused"] == kept
    assert comparable(report) == comparable(whole_report)
