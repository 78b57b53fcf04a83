"""An answer run on the run path (ragspine_eval/pipeline/): the same report with one job, two
worker processes and a Dask cluster; every answer kept in the outcome cache, so a re-run asks
nothing and a run killed half-way resumes to the report of a run never stopped; a question past
its time limit is that question's engine error on its route, its answer never stored."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from realdocs_workspace import needs_realdocs, realdocs_workspace  # noqa: F401

from benchmarks.answers import cycled_gold
from benchmarks.retrieval_run import stored  # answers in the outcome cache so far
from ragspine_eval import paths
from ragspine_eval.answers.report import report_of
from ragspine_eval.answers.run import run_answer_eval

GOLD = paths.PROJECT_ROOT / "data" / "golden" / "realdocs_answers_gold.json"


def comparable(report: dict) -> str:
    """The report's text less what differs between any two runs of the same inputs: the times,
    the commit, the cache's share (what was reused is the point of a resume), the baseline."""
    prov = report.get("provenance") or {}
    for key in ("times", "cache", "git_commit", "git_dirty", "baseline"):
        prov.pop(key, None)
    return json.dumps(report, indent=2, ensure_ascii=False)


@pytest.mark.slow  # 79 s on a loaded 2-core machine: make test-slow, benchmarks.workspace_invariant
@needs_realdocs
def test_one_job_two_worker_processes_and_dask_give_the_same_report(realdocs_workspace):
    ws = realdocs_workspace.workspace.path
    one = report_of(run_answer_eval(ws, GOLD, jobs=1, cache=False))
    two = report_of(run_answer_eval(ws, GOLD, jobs=2, cache=False))
    assert one.errors == [] and len(one.run.results) == 40  # 20 questions x 2 routes
    assert comparable(two.to_dict()) == comparable(one.to_dict())
    pytest.importorskip("dask.distributed")
    on_dask = report_of(run_answer_eval(ws, GOLD, jobs=2, cache=False, executor="dask"))
    assert comparable(on_dask.to_dict()) == comparable(one.to_dict())


@needs_realdocs
def test_a_rerun_asks_nothing_and_an_edited_claim_is_judged_again_from_the_stored_answer(
        realdocs_workspace, tmp_path):
    ws = realdocs_workspace.workspace.path
    first = report_of(run_answer_eval(ws, GOLD))
    again = report_of(run_answer_eval(ws, GOLD, jobs=2))
    assert first.provenance.cache["reused"] == 0
    assert again.provenance.cache["reused"] == len(again.run.results) == 40
    assert comparable(again.to_dict()) == comparable(first.to_dict())
    # a claim's quote edited so that no answer holds it: the answers are reused (the engine is
    # asked the same questions), the verdicts are the new claim's
    data = json.loads(GOLD.read_text(encoding="utf-8"))
    case = next(c for c in data["cases"] if c["case_id"] == "rice-bhadrak-surplus")
    case["expected"]["required_claims"] = [{"kind": "quote", "page_index": 0,
                                            "quote": "no page says this"}]
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    after = report_of(run_answer_eval(ws, edited))
    assert after.provenance.cache["reused"] == 40
    lost = {(r.route, r.language): r.verdict.reason for r in after.run.results
            if r.case_id == "rice-bhadrak-surplus"}
    assert set(lost.values()) == {"claim content missing from answer"}, lost
    assert len(lost) == 4  # en and zh, on both routes


@needs_realdocs
def test_a_rerun_the_cache_answers_wholly_never_opens_the_engine(realdocs_workspace,
                                                                 monkeypatch):
    """The engine's effective preset is a fact of the outcome cache (not a question of it): the
    re-run reads it there, and every answer, without opening the workspace."""
    from ragspine_eval.engines import workspace_answers, workspace_retriever

    ws = realdocs_workspace.workspace.path
    first = run_answer_eval(ws, GOLD, jobs=1)
    assert first.preset  # the engine's preset, read from the opened workspace

    def opened(*args, **kwargs):
        raise AssertionError("the engine was opened on a re-run the cache answers wholly")

    monkeypatch.setattr(workspace_retriever.WorkspaceRetriever, "__init__", opened)
    monkeypatch.setattr(workspace_answers.WorkspaceAnswerer, "__init__", opened)
    again = run_answer_eval(ws, GOLD, jobs=1)
    assert again.preset == first.preset
    assert again.cache["reused"] == len(again.results) == 40  # the answers only, no preset
    assert comparable(report_of(again).to_dict()) == comparable(report_of(first).to_dict())


@needs_realdocs
def test_a_question_past_its_time_limit_is_its_error_on_its_route_and_neverstored(
        realdocs_workspace):
    ws = realdocs_workspace.workspace.path
    # in worker processes: a question past its limit has its worker killed, so no late answer
    # is stored (a thread cannot be stopped: one job in this process would store it late)
    late = run_answer_eval(ws, GOLD, routes=("narrative",), case_timeout=0.001, jobs=2)
    assert late.results and all(r.outcome.error for r in late.results)
    assert all(r.verdict.reason.startswith("error: ") and r.route == "narrative"
               and r.outcome.route_label == "error" for r in late.results)
    assert late.cache["reused"] == 0
    on_time = run_answer_eval(ws, GOLD, routes=("narrative",))
    assert on_time.cache["reused"] == 0  # nothing of the late run was kept
    assert not any(r.outcome.error for r in on_time.results)


# 330 s on a loaded 2-core machine (a SIGKILL mid-run, then the resume): make test-slow; make
# test keeps tests/faults/test_interrupt_harnesses.py's Ctrl-C and resume of an answer run
@pytest.mark.slow
@needs_realdocs
def test_a_run_killed_half_way_resumes_to_the_report_of_a_run_never_stopped(realdocs_workspace,
                                                                              tmp_path):
    ws = realdocs_workspace.workspace.path
    gold, asked = cycled_gold(100, tmp_path)
    n = 2 * asked  # both routes
    cache = tmp_path / "cache"
    command = [sys.executable, "-m", "ragspine_eval.cli", "answers", "--kb", str(ws),
               "--golden", str(gold), "--no-store", "--jobs", "2"]
    env = {**os.environ, "RAGSPINE_EVAL_RUNS_DIR": str(tmp_path / "runs"),
           "RAGSPINE_EVAL_CACHE_DIR": str(cache)}
    killed = subprocess.Popen([*command, "--report", str(tmp_path / "killed.json"),
                               "--baseline", str(tmp_path / "killed-baseline.json")],
                              cwd=paths.PROJECT_ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    while stored(cache) < n // 2 and killed.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(killed.pid, signal.SIGKILL)  # the whole run, its workers too, mid-write
    killed.wait()
    kept = stored(cache)  # answers only: the engine's preset is a fact of the cache's own
    assert 0 < kept < n, kept  # killed part-way, with answers kept
    assert not (tmp_path / "killed.json").exists()
    resumed = subprocess.run([*command, "--report", str(tmp_path / "resumed.json"),
                              "--baseline", str(tmp_path / "resumed-baseline.json")],
                             cwd=paths.PROJECT_ROOT, env=env, capture_output=True, text=True)
    whole = subprocess.run([*command, "--no-cache", "--report", str(tmp_path / "whole.json"),
                            "--baseline", str(tmp_path / "whole-baseline.json")],
                           cwd=paths.PROJECT_ROOT, env=env, capture_output=True, text=True)
    assert resumed.returncode == whole.returncode == 0, resumed.stderr[-2000:]
    report = json.loads((tmp_path / "resumed.json").read_text(encoding="utf-8"))
    whole_report = json.loads((tmp_path / "whole.json").read_text(encoding="utf-8"))
    assert report["provenance"]["cache"]["reused"] == kept
    assert len(report["cases"]) == n
    assert comparable(report) == comparable(whole_report)
