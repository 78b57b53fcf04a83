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


USAGE = {"repeats": 1,
         "run": {"calls": 5, "input_tokens": 130, "output_tokens": 20, "ms": 49, "cases": 2,
                 "misses": 0, "failed": 0, "cost": 0.25},
         "stages": {"synthesis": {"calls": 3, "input_tokens": 100, "output_tokens": 15,
                                  "ms": 40, "cost": 0.25},
                    "tool_round": {"calls": 2, "input_tokens": 30, "output_tokens": 5, "ms": 9,
                                   "cost": None}},
         "by_tag": {}, "cost": {"currency": "EUR", "prices": "p.toml", "billed": 0.25},
         "request": {"input_tokens": 130, "output_tokens": 20}}


def with_times(prov, latency=None, usage=None):
    from ragspine_eval.provenance import RunTimes

    return replace(prov, times=RunTimes("t", 1.0, latency, usage))


def test_the_llm_line_shows_tokens_and_cost_per_stage_and_no_request_pseudo_stage():
    model = {"provider": "litellm", "model": "openai/m"}
    prov = collect(RunInputs(harness="qa", mode="agent", golden=InputRef("g", "f"), model=model))
    lines = with_times(prov, usage=USAGE).lines()
    assert lines[-1] == ("LLM calls per stage (the engine's trace): synthesis 3 (40 ms, 100 in / "
                         "15 out tokens, 0.2500 EUR), tool_round 2 (9 ms, 30 in / 5 out tokens)")
    assert any(line.startswith("model litellm openai/m · 5 calls, 130 in / 20 out tokens; 0 "
                               "misses, 0 failed · cost 0.2500 EUR") for line in lines)
    repeated = with_times(prov, usage={**USAGE, "repeats": 5}).lines()
    assert repeated[-1].startswith("LLM calls per stage (the engine's trace, all 5 repeats): ")
    assert any(" · 5 calls over 5 repeats, 130 in" in line for line in repeated)
    # no model, no call (a tool run): neither line, nor a usage key in the JSON
    bare = with_times(replace(prov, model=None))
    assert not any("LLM calls" in line for line in bare.lines())
    assert "usage" not in bare.to_dict()["times"]


# what reports written before `times.usage` kept, and where (a run store holds them)
OLD_LLM = {"(request)": {"calls": 0, "ms": 0, "input_tokens": 130, "output_tokens": 20},
           "synthesis": {"calls": 3, "ms": 40, "input_tokens": 100, "output_tokens": 15},
           "tool_round": {"calls": 2, "ms": 9, "input_tokens": 30, "output_tokens": 5}}
OLD_COUNTS = {"calls": {"calls": 5, "input_tokens": 130, "output_tokens": 20, "misses": 0,
                        "failed": 0},
              "stages": {"synthesis": {"calls": 3, "input_tokens": 100, "output_tokens": 15},
                         "tool_round": {"calls": 2, "input_tokens": 30, "output_tokens": 5}},
              "by_tag": {"scope=HK": {"cases": 2, "calls": 5, "input_tokens": 130,
                                      "output_tokens": 20}},
              "cost": {"currency": "EUR", "prices": "p.toml", "run": 0.25, "billed": 0.25,
                       "by_stage": {"synthesis": {"cost": 0.25}, "tool_round": {"cost": None}},
                       "by_tag": {"scope=HK": {"cost": 0.25}}}}


@pytest.mark.parametrize("where", ["qa model", "answers latency"])
def test_a_report_written_before_usage_reads_the_same_figures(where):
    spec = {"provider": "litellm", "model": "openai/m"}
    model = {**spec, **OLD_COUNTS} if where == "qa model" else spec
    latency = {"llm": OLD_LLM, **({"model": OLD_COUNTS} if where != "qa model" else {})}
    data = with_times(collect(RunInputs(harness="qa", mode="agent", golden=InputRef("g", "f"),
                                        model=model)), latency).to_dict()
    prov = Provenance.from_dict(json.loads(json.dumps(data)))  # as a run store reads it
    usage = prov.model_usage
    assert usage["run"]["calls"] == 5 and usage["run"]["cost"] == 0.25
    assert usage["stages"]["synthesis"] == {"calls": 3, "input_tokens": 100,
                                            "output_tokens": 15, "ms": 40, "cost": 0.25}
    assert usage["by_tag"]["scope=HK"]["cost"] == 0.25
    new = with_times(collect(RunInputs(harness="qa", mode="agent", golden=InputRef("g", "f"),
                                       model=spec)), usage=USAGE)
    assert prov.lines()[-1] == new.lines()[-1]


def test_an_older_report_with_tokens_only_per_request_says_so():
    old = with_times(collect(RunInputs(harness="qa", mode="agent", golden=InputRef("g", "f"))),
                     {"llm": {"(request)": OLD_LLM["(request)"],
                              "synthesis": {"calls": 3, "ms": 40}}})
    assert old.lines()[-1].endswith("synthesis 3 (40 ms); tokens per request only: 130 in / "
                                    "20 out")
    assert with_times(old, {}).model_usage is None  # nothing recorded: nothing derived
