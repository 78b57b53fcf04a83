"""The run store: a run kept whole and compressed, listed newest first, bounded, never broken
by a corrupt entry, a killed write or two processes writing at once."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from builders import sample_report

from ragspine_eval import paths
from ragspine_eval.runs import list_runs, load_report, prune, runs_dir, store_report
from ragspine_eval.runs import store as run_store


@pytest.fixture
def report() -> dict:
    return sample_report().to_dict()


def test_a_stored_run_reads_back_as_the_same_report_and_says_what_it_was(tmp_path, report):
    kept = store_report(report, kind="qa", key="tool", root=tmp_path, verdict="fail")
    assert load_report(kept.id, root=tmp_path) == json.loads(json.dumps(report))
    assert (kept.kind, kept.key, kept.verdict, kept.cases) == ("qa", "tool", "fail", 3)
    assert kept.rates["numeric_accuracy"] == report["metrics"]["numeric_accuracy"]["pass_rate"]
    assert kept.rates["fabrication"] == report["fabrication"]["pass_rate"]
    assert kept.failing["numeric_accuracy"] == ["num-002"]
    assert kept.path == tmp_path / kept.id / "report.json.gz"
    assert [r.id for r in list_runs(root=tmp_path)] == [kept.id]
    assert list_runs(root=tmp_path)[0] == kept  # the summary on disk is the one returned


def test_the_report_is_kept_gzip_compressed_and_smaller_than_its_json(tmp_path, report):
    kept = store_report(report, kind="qa", key="tool", root=tmp_path)
    raw = kept.path.read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    assert len(raw) < len(json.dumps(report, ensure_ascii=False).encode()) / 2
    assert json.loads(gzip.decompress(raw)) == json.loads(json.dumps(report))


def test_runs_are_listed_newest_first_and_filtered_by_kind_and_key(tmp_path, report):
    ids = [store_report(report, kind="qa", key=k, root=tmp_path).id
           for k in ("tool", "agent", "tool")]
    assert [r.id for r in list_runs(root=tmp_path)] == ids[::-1]
    assert [r.id for r in list_runs(key="tool", root=tmp_path)] == [ids[2], ids[0]]
    assert list_runs(kind="extraction", root=tmp_path) == []


def test_the_store_folder_is_the_env_var_else_a_folder_git_ignores(monkeypatch, tmp_path):
    monkeypatch.setenv("RAGSPINE_EVAL_RUNS_DIR", str(tmp_path / "elsewhere"))
    assert runs_dir() == tmp_path / "elsewhere"
    monkeypatch.delenv("RAGSPINE_EVAL_RUNS_DIR")
    assert runs_dir() == paths.PROJECT_ROOT / ".runs"
    ignored = subprocess.run(["git", "check-ignore", "-q", ".runs/x/report.json.gz"],
                             cwd=paths.PROJECT_ROOT, check=False, capture_output=True)
    if ignored.returncode == 128:
        pytest.skip("the project is not a git checkout here")
    assert ignored.returncode == 0, ".runs/ must be in .gitignore"


def test_the_suite_never_points_at_the_projects_store():
    assert runs_dir() != paths.PROJECT_ROOT / ".runs"
    assert not str(runs_dir()).startswith(str(paths.PROJECT_ROOT))


# --- retention ---------------------------------------------------------------------------------


def test_only_the_newest_runs_of_each_key_are_kept(tmp_path, report, monkeypatch):
    monkeypatch.setenv("RAGSPINE_EVAL_RUNS_KEEP", "2")
    tool = [store_report(report, kind="qa", key="tool", root=tmp_path).id for _ in range(4)]
    agent = store_report(report, kind="qa", key="agent", root=tmp_path).id
    assert [r.id for r in list_runs(root=tmp_path)] == [agent, tool[3], tool[2]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([agent, tool[3], tool[2]])


def test_the_oldest_runs_go_past_the_size_cap_but_never_the_one_just_stored(tmp_path, report):
    first = store_report(report, kind="qa", key="tool", root=tmp_path)
    second = store_report(report, kind="qa", key="agent", root=tmp_path)
    assert prune(tmp_path, keep=10, limit=first.size + second.size) == []
    assert prune(tmp_path, keep=10, limit=second.size) == [first.id]
    assert prune(tmp_path, keep=10, limit=1, protect=second.id) == []
    assert [r.id for r in list_runs(root=tmp_path)] == [second.id]


def test_a_bad_retention_setting_is_one_line_naming_it(monkeypatch):
    monkeypatch.setenv("RAGSPINE_EVAL_RUNS_MAX_MB", "lots")
    with pytest.raises(run_store.RunStoreError, match="RAGSPINE_EVAL_RUNS_MAX_MB='lots'"):
        run_store.max_bytes()


# --- damage ------------------------------------------------------------------------------------


def test_corrupt_entries_are_skipped_with_one_warning_line(tmp_path, report, capsys):
    kept = store_report(report, kind="qa", key="tool", root=tmp_path)
    (tmp_path / "20200101-000000-aaaaaa").mkdir()
    (tmp_path / "20200101-000000-aaaaaa" / "summary.json").write_text("{trunc")
    (tmp_path / "20200101-000000-bbbbbb").mkdir()  # no summary at all
    (tmp_path / "stray.txt").write_text("x")
    assert [r.id for r in list_runs(root=tmp_path)] == [kept.id]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "skipped 3 unreadable run(s)" in err, err
    assert len(list_runs(root=tmp_path)) == 1 and capsys.readouterr().err == ""  # named once


def test_a_summary_from_a_later_version_with_more_keys_still_lists(tmp_path, report):
    kept = store_report(report, kind="qa", key="tool", root=tmp_path)
    summary = kept.folder / "summary.json"
    summary.write_text(json.dumps({**json.loads(summary.read_text()), "new_field": 1}))
    assert list_runs(root=tmp_path) == [kept]


def test_an_empty_or_missing_store_lists_nothing_quietly(tmp_path, capsys):
    assert list_runs(root=tmp_path / "never-made") == []
    assert capsys.readouterr().err == ""


def test_a_clashing_id_is_drawn_again_never_overwritten(tmp_path, report, monkeypatch):
    first = store_report(report, kind="qa", key="tool", root=tmp_path)
    draws = iter([first.id, "20991231-235959-012345"])
    monkeypatch.setattr(run_store, "new_id", lambda now=None: next(draws))
    second = store_report(report, kind="qa", key="agent", root=tmp_path)
    assert second.id == "20991231-235959-012345"
    assert {r.id: r.key for r in list_runs(root=tmp_path)} == {first.id: "tool",
                                                               second.id: "agent"}


WRITER = """
import sys, time
from ragspine_eval.runs import store
from pathlib import Path
root, ready = Path(sys.argv[1]), Path(sys.argv[2])
real = store._write_synced
def paused(path, text):
    real(path, text)
    ready.write_text("paused")  # the report and the summary are on disk, not yet renamed
    time.sleep(60)
store._write_synced = paused
store.store_report({"mode": "tool", "metrics": {}, "n_cases": 0}, kind="qa", key="tool",
                   root=root)
"""


def test_a_write_killed_midway_leaves_no_entry_and_is_swept_later(tmp_path):
    root, ready = tmp_path / "runs", tmp_path / "ready"
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(root), str(ready)],
                             env={**os.environ, "PYTHONPATH": str(paths.PROJECT_ROOT)})
    try:
        for _ in range(300):
            if ready.exists() or child.poll() is not None:
                break
            time.sleep(0.05)
        assert ready.exists(), "the writer never reached the middle of its write"
        assert list_runs(root=root) == []  # mid-write: nothing visible
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        child.kill()
    assert list_runs(root=root) == []
    leftovers = [p for p in root.iterdir()]
    assert leftovers and all(p.name.startswith(".tmp-") for p in leftovers)
    hour_ago = time.time() - 2 * run_store.STALE_SECONDS
    for p in leftovers:
        os.utime(p, (hour_ago, hour_ago))
    prune(root)
    assert list(root.iterdir()) == []


MANY = """
import sys, time
from ragspine_eval.runs import store_report
from pathlib import Path
root, start = Path(sys.argv[1]), float(sys.argv[2])
time.sleep(max(0.0, start - time.time()))
for i in range(int(sys.argv[3])):
    store_report({"mode": sys.argv[4], "n_cases": i, "metrics": {}}, kind="qa",
                 key=sys.argv[4], root=root)
"""


def test_two_processes_writing_at_once_keep_every_run(tmp_path, capsys):
    root, n = tmp_path / "runs", 15
    start = time.time() + 1.5  # both start writing at the same moment, in the same second
    env = {**os.environ, "PYTHONPATH": str(paths.PROJECT_ROOT)}
    children = [subprocess.Popen([sys.executable, "-c", MANY, str(root), str(start), str(n), k],
                                 env=env) for k in ("tool", "agent")]
    assert [c.wait(60) for c in children] == [0, 0]
    listed = list_runs(root=root)
    assert len(listed) == 2 * n and len({r.id for r in listed}) == 2 * n
    for key in ("tool", "agent"):
        assert sorted(r.cases for r in listed if r.key == key) == list(range(n))
    assert all(load_report(r.id, root=root)["mode"] == r.key for r in listed[:4])
    assert capsys.readouterr().err == ""


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=40)


@given(JSON)
def test_the_compact_pieces_join_into_the_same_json(value):
    assert json.loads(b"".join(run_store.compact_pieces(value, batch=2))) == value


def test_a_number_json_cannot_hold_is_kept_as_null_as_documented():
    assert b"".join(run_store.compact_pieces({"v": [float("inf"), float("nan"), 1.5]})) == \
        b'{"v":[null,null,1.5]}'


def test_values_orjson_refuses_are_encoded_all_the_same():
    value = {"big": 2**70, "keys": {1: "one"}, "cases": [{"n": 2**65}] * 5}
    assert json.loads(b"".join(run_store.compact_pieces(value, batch=2))) == {
        "big": 2**70, "keys": {"1": "one"}, "cases": [{"n": 2**65}] * 5}


def test_a_model_run_stored_before_the_usage_account_shows_its_calls_as_it_did(tmp_path):
    """A QA report of a model run written before `times.usage` (its counts in
    `provenance.model`, its trace per stage under `times.latency.llm`), kept in the store, is
    shown by `runs show` with its model line and per-stage line, the stages adding up."""
    from dataclasses import replace

    from ragspine_eval.provenance import InputRef, RunInputs, RunTimes, collect
    from ragspine_eval.runs.listing import show_lines

    report = sample_report()
    model = {"provider": "litellm", "model": "openai/m", "base_url": None,
             "calls": {"calls": 5, "input_tokens": 130, "output_tokens": 20, "misses": 0,
                       "failed": 0},
             "stages": {"synthesis": {"calls": 3, "input_tokens": 100, "output_tokens": 15},
                        "tool_round": {"calls": 2, "input_tokens": 30, "output_tokens": 5}}}
    llm = {"synthesis": {"calls": 3, "ms": 40}, "tool_round": {"calls": 2, "ms": 9}}
    prov = collect(RunInputs(harness="qa", mode="tool", golden=InputRef("g", "f"), model=model))
    report.provenance = replace(prov, times=RunTimes("t", 1.0, {"llm": llm}))
    data = report.to_dict()
    assert "usage" not in data["provenance"]["times"]  # as such a report was written
    kept = store_report(data, kind="qa", key="tool~litellm:openai/m", root=tmp_path)
    lines = show_lines(kept, load_report(kept.id, root=tmp_path))
    [line] = [x for x in lines if x.startswith("model litellm openai/m")]
    assert " · 5 calls, 130 in / 20 out tokens; 0 misses, 0 failed" in line
    assert ("LLM calls per stage (the engine's trace): synthesis 3 (40 ms, 100 in / 15 out "
            "tokens), tool_round 2 (9 ms, 30 in / 5 out tokens)") in lines
