"""Provenance: every field present and right, and stable across two runs of the same inputs."""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
from dataclasses import replace
from importlib import metadata

import pytest

from ragspine_eval import paths
from ragspine_eval.fingerprints import entry_fingerprint, golden_fingerprint
from ragspine_eval.provenance import (
    Clock,
    InputRef,
    Provenance,
    RunInputs,
    collect,
    display_path,
    git_state,
)
from ragspine_eval.golden.cases import fingerprint, load_golden_set
from ragspine_eval.knowledge.kb import kb_fingerprint
from ragspine_eval.qa.report import QAEvalReport
from ragspine_eval.qa.run import run_qa_eval
from ragspine_eval.ratchet import load_baselines


def without_times(report: dict) -> str:
    """The report as the CLI writes it, with the one key allowed to vary removed."""
    data = json.loads(json.dumps(report))
    del data["provenance"]["times"]
    return json.dumps(data, indent=2, ensure_ascii=False)


@pytest.fixture(scope="module")
def two_tool_runs():
    # cache=False: a module fixture runs before the per-test outcome cache is set, and the
    # second run would otherwise reuse the first's answers (provenance "cache" then differs)
    return [run_qa_eval(paths.QA_GOLDEN_SET, "tool", cache=False).to_dict() for _ in range(2)]


def test_two_runs_of_the_same_inputs_differ_only_in_times(two_tool_runs):
    first, second = two_tool_runs
    # the wall time per case (execution/latency.py) varies too, so it sits under times
    assert set(first["provenance"]["times"]) == {"started_at", "duration_s", "latency"}
    latency = first["provenance"]["times"]["latency"]
    assert latency["run"]["n"] == first["n_cases"] == len(latency["cases"])
    assert latency["run"]["p50"] <= latency["run"]["p95"] <= latency["run"]["max"]
    assert without_times(first) == without_times(second)


def test_provenance_names_versions_inputs_and_code(two_tool_runs):
    prov = two_tool_runs[0]["provenance"]
    assert list(two_tool_runs[0])[0] == "provenance"  # the top of the JSON report
    assert prov["harness"] == "qa" and prov["mode"] == "tool"
    assert prov["tool_version"] == metadata.version("ragspine-eval")
    assert (prov["engine"], prov["engine_version"]) == ("rag-spine", metadata.version("rag-spine"))
    cases = load_golden_set(paths.QA_GOLDEN_SET)
    assert prov["golden"] == {"path": "data/golden/qa_golden_set.jsonl",
                              "fingerprint": golden_fingerprint({c.id: fingerprint(c) for c in cases}),
                              "n_cases": len(cases)}
    assert prov["kb"]["path"] == "data/kb" and prov["kb"]["fingerprint"] == kb_fingerprint()
    assert prov["baseline"] is None  # run_qa_eval does not gate; the CLI adds the entry it used
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=paths.PROJECT_ROOT,
                          capture_output=True, text=True).stdout.strip()
    assert prov["git_commit"] == (head or None)
    assert isinstance(prov["git_dirty"], bool) or prov["git_commit"] is None
    assert prov["python"] == platform.python_version()


def test_report_round_trips_with_its_provenance(two_tool_runs):
    again = QAEvalReport.from_dict(two_tool_runs[0]).to_dict()
    assert again["provenance"] == two_tool_runs[0]["provenance"]


def test_a_provenance_from_a_later_version_reads_without_its_new_keys(two_tool_runs):
    data = json.loads(json.dumps(two_tool_runs[0]["provenance"]))
    data["host"] = "ci-7"
    data["golden"]["sha"] = "x"
    assert Provenance.from_dict(data).to_dict() == two_tool_runs[0]["provenance"]


def test_an_older_report_without_provenance_still_reads(two_tool_runs):
    old = {k: v for k, v in two_tool_runs[0].items() if k != "provenance"}
    assert QAEvalReport.from_dict(old).provenance is None


def test_with_baseline_fingerprints_the_stored_entry_it_compares_against(two_tool_runs):
    prov = Provenance.from_dict(two_tool_runs[0]["provenance"])
    stored = load_baselines(paths.QA_BASELINE)["tool"]
    ref = prov.with_baseline(paths.QA_BASELINE, "tool", stored).baseline
    assert (ref.path, ref.key) == ("data/golden/qa_baseline.json", "tool")
    assert ref.fingerprint == entry_fingerprint(stored)
    assert ref.fingerprint != entry_fingerprint({**stored, "fabrication_count": stored["fabrication_count"] + 1})
    assert prov.with_baseline(paths.QA_BASELINE, "tool", None).baseline.fingerprint is None


def test_paths_inside_the_project_are_relative_and_outside_absolute(tmp_path):
    assert display_path(paths.QA_BASELINE) == "data/golden/qa_baseline.json"
    assert display_path(tmp_path / "x.json") == (tmp_path / "x.json").resolve().as_posix()


def git(repo, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args],
                   cwd=repo, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_state_sees_a_dirty_tracked_file_but_not_an_untracked_one(tmp_path):
    assert git_state(tmp_path) == (None, None)  # not a checkout
    git(tmp_path, "init", "-q")
    (tmp_path / "code.py").write_text("x = 1\n")
    git(tmp_path, "add", "code.py")
    git(tmp_path, "commit", "-q", "-m", "one")
    commit, dirty = git_state(tmp_path)
    assert len(commit) == 40 and dirty is False
    (tmp_path / "out.json").write_text("{}")
    assert git_state(tmp_path) == (commit, False)
    (tmp_path / "code.py").write_text("x = 2\n")
    assert git_state(tmp_path) == (commit, True)


def test_collect_keeps_every_varying_value_under_times():
    golden = InputRef("g.jsonl", "abcd", 3)
    a = collect(RunInputs(harness="extraction", mode="xlsx", golden=golden), Clock()).to_dict()
    b = collect(RunInputs(harness="extraction", mode="xlsx", golden=golden), Clock()).to_dict()
    assert a["kb"] is None and a["harness"] == "extraction"
    assert {**a, "times": None} == {**b, "times": None}


def test_lines_show_the_provenance_for_a_person(two_tool_runs):
    prov = Provenance.from_dict(two_tool_runs[0]["provenance"])
    text = "\n".join(prov.with_baseline(paths.QA_BASELINE, "tool", {"metrics": {}}).lines())
    for part in ("mode tool", f"rag-spine {metadata.version('rag-spine')}", prov.golden.fingerprint,
                 prov.kb.fingerprint, "data/golden/qa_baseline.json [tool:", "started "):
        assert part in text


def test_the_llm_line_shows_tokens_and_cost_per_stage_and_no_request_pseudo_stage():
    from ragspine_eval.provenance import InputRef, RunTimes

    llm = {"(request)": {"calls": 0, "ms": 0, "input_tokens": 130, "output_tokens": 20},
           "synthesis": {"calls": 3, "ms": 40, "input_tokens": 100, "output_tokens": 15},
           "tool_round": {"calls": 2, "ms": 9, "input_tokens": 30, "output_tokens": 5}}
    model = {"provider": "litellm", "model": "openai/m",
             "cost": {"currency": "EUR", "by_stage": {"synthesis": {"cost": 0.25},
                                                      "tool_round": {"cost": None}}}}
    prov = collect(RunInputs(harness="qa", mode="agent", golden=InputRef("g", "f"), model=model))
    prov = replace(prov, times=RunTimes("t", 1.0, {"llm": llm}))
    line = prov.lines()[-1]
    assert line == ("LLM calls per stage (the engine's trace): synthesis 3 (40 ms, 100 in / 15 "
                    "out tokens, 0.2500 EUR), tool_round 2 (9 ms, 30 in / 5 out tokens)")
    # an older report: tokens only as the request's totals, said as such
    old = replace(prov, model=None, times=RunTimes("t", 1.0, {"llm": {
        "(request)": llm["(request)"], "synthesis": {"calls": 3, "ms": 40}}}))
    assert old.lines()[-1].endswith("synthesis 3 (40 ms); tokens per request only: 130 in / "
                                    "20 out")


REPLAYED = {"provider": "litellm", "model": "openai/loop-1", "base_url": "http://h/v1",
            "calls": {"calls": 1204, "input_tokens": 9, "output_tokens": 9, "misses": 0,
                      "failed": 0},
            "cassette": {"path": "c.cassette", "mode": "replay", "engine": "rag-spine 0.17.2",
                         "models": "litellm openai/loop-0 @ http://h/v1",
                         "recorded": "2026-12-05T10:00:00+00:00"}}


def test_the_banner_sentence_says_which_model_answered_and_whether_it_was_replayed():
    from ragspine_eval.provenance import answered_by

    # the model the cassette was recorded with is the header's, not this run's flag
    assert answered_by(REPLAYED) == ("model litellm openai/loop-1 · 1,204 calls replayed, "
                                     "recorded 2026-12-05 with litellm openai/loop-0; 0 misses")
    recording = {**REPLAYED, "cassette": {"path": "c.cassette", "mode": "record"}}
    assert answered_by(recording) == ("model litellm openai/loop-1 · 1,204 calls recorded into "
                                      "c.cassette; 0 misses")
    live = {k: v for k, v in REPLAYED.items() if k != "cassette"}
    assert answered_by(live) == "model litellm openai/loop-1 · 1,204 calls live, nothing " \
                                "recorded; 0 misses"
    # the default MockProvider without a cassette: the provenance has no model, nothing said
    assert answered_by(None) is None and answered_by({"provider": "mock", "model": None}) is None


def test_the_banner_sentence_marks_misses_in_red_and_escapes_in_html():
    from ragspine_eval.provenance import answered_by

    missed = {**REPLAYED, "model": "<m>", "calls": {**REPLAYED["calls"], "misses": 3,
                                                   "failed": 1}}
    html = answered_by(missed, html=True)
    assert "model litellm &lt;m&gt;" in html
    assert html.endswith('; <b style="color:#b2182b">3 misses</b>, '
                         '<b style="color:#b2182b">1 failed</b>')
    assert "color" not in answered_by(REPLAYED, html=True)  # 0 misses: not alarming
    assert answered_by(missed).endswith("; 3 misses, 1 failed")


def test_the_banner_sentence_says_when_cases_made_no_call_because_the_cache_had_them():
    from ragspine_eval.provenance import answered_by

    said = answered_by({**REPLAYED, "calls": {**REPLAYED["calls"], "calls": 0}},
                       cache={"reused": 71, "computed": 0})
    assert said == ("model litellm openai/loop-1 · 0 calls replayed, recorded 2026-12-05 with "
                    "litellm openai/loop-0 (71 cases reused from the outcome cache, with no "
                    "call); 0 misses")
