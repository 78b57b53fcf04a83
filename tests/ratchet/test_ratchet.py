"""The ratchet (baseline.py): comparison semantics, ratchet-only updates, the history, golden
integrity, and files that are never half-written or lost."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from conftest import make_case, right_numeric_outcome
from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval import files, paths
from ragspine_eval import ratchet as bl
from ragspine_eval.files import atomic
from ragspine_eval.qa.baseline_entry import compare_to_baseline, make_baseline_entry
from ragspine_eval.qa.evaluation import evaluate
from ragspine_eval.ratchet import (
    BaselineError,
    GateOptions,
    baseline_file,
    compare,
    gate,
    ratcheted,
    run_gate,
)

rates = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def entry(metrics: dict[str, float] | None = None, fabrication: int = 0, **extra) -> dict:
    """A baseline entry with per-case ids for one gate ("g") and the golden fingerprints."""
    return {"metrics": {"g": 0.5} if metrics is None else metrics,
            "fabrication_count": fabrication, "n_cases": 2,
            "passed_ids": {"g": ["a"]}, "golden": {"a": "fa", "b": "fb"}, **extra}


def history(path: Path) -> list[dict]:
    hist = bl.history_path(path)
    return [json.loads(l) for l in hist.read_text(encoding="utf-8").splitlines()] if hist.exists() else []


# --- comparison semantics (the QA harness issue) -----------------------------------------------


def test_exact_equality_passes():
    assert compare(entry(), entry()).passed


@given(base=rates, drop=st.floats(min_value=1e-9, max_value=1.0))
def test_any_drop_fails(base, drop):
    now = base - drop
    if now < 0:
        return
    cmp = compare(entry({"g": now}), entry({"g": base}))
    assert not cmp.passed
    assert cmp.regressions[0]["metric"] == "g"
    assert cmp.regressions[0]["delta"] < 0


@given(base=rates, now=rates)
def test_the_verdict_is_exactly_no_metric_below_its_baseline(base, now):
    assert compare(entry({"g": now}), entry({"g": base})).passed == (now >= base)


def test_fabrication_rise_fails_and_fall_is_an_improvement():
    worse = compare(entry(fabrication=2), entry(fabrication=1))
    assert not worse.passed and worse.regressions[0]["metric"] == "fabrication_count"
    better = compare(entry(fabrication=0), entry(fabrication=1))
    assert better.passed and better.improvements[0]["metric"] == "fabrication_count"


def test_a_metric_the_baseline_does_not_list_is_ignored():
    stored = entry({"g": 0.5})
    assert compare(entry({"g": 0.5, "unlisted": 0.0}), stored).passed


def test_a_listed_metric_missing_from_the_run_fails():
    cmp = compare(entry({}), entry({"g": 0.5}))
    assert not cmp.passed and cmp.regressions[0]["current"] is None


def test_missing_mode_bootstraps(tmp_path):
    path = tmp_path / "b.json"
    result = run_gate(path, "tool", entry())
    assert (result.status, result.exit_code) == ("bootstrap", 0)
    assert json.loads(path.read_text())["tool"] == entry()
    assert history(path)[0]["action"] == "bootstrap"


def test_compare_to_baseline_on_a_real_report_flags_each_regressed_gate():
    cases = [make_case("num-001"), make_case("num-002")]
    good = evaluate(cases, [right_numeric_outcome(), right_numeric_outcome()], "tool", reference_texts={})
    bad = evaluate(cases, [right_numeric_outcome(), right_numeric_outcome(found_value=1.0)], "tool",
                   reference_texts={})
    stored = make_baseline_entry(good)
    assert compare_to_baseline(good, stored).passed
    cmp = compare_to_baseline(bad, stored)
    assert not cmp.passed
    assert cmp.regressions == [{"metric": "numeric_accuracy", "baseline": 1.0, "current": 0.5, "delta": -0.5}]
    assert {"metric": "numeric_accuracy", "id": "num-002"} in cmp.case_regressions


def test_the_minimal_entry_shape_is_still_read_with_a_note():
    """An entry of just {metrics, fabrication_count, n_cases} (written before per-case ids)."""
    stored = {"metrics": {"g": 0.5}, "fabrication_count": 0, "n_cases": 2}
    cmp = compare(entry({"g": 0.5}), stored)
    assert cmp.passed
    assert any("case-level regression checks skipped" in n for n in cmp.notes)
    assert any("golden integrity check skipped" in n for n in cmp.notes)


# --- case-level regressions ----------------------------------------------------------------------


def test_a_swap_at_an_unchanged_rate_is_a_case_regression():
    stored = entry({"g": 0.5}, passed_ids={"g": ["a"]})
    swapped = entry({"g": 0.5}, passed_ids={"g": ["b"]})
    cmp = compare(swapped, stored)
    assert not cmp.passed
    assert not cmp.regressions
    assert cmp.case_regressions == [{"metric": "g", "id": "a"}]


def test_a_swap_is_caught_end_to_end_in_the_qa_report():
    cases = [make_case("num-001"), make_case("num-002")]
    wrong = right_numeric_outcome(found_value=1.0)
    before = evaluate(cases, [right_numeric_outcome(), wrong], "tool", reference_texts={})
    after = evaluate(cases, [wrong, right_numeric_outcome()], "tool", reference_texts={})
    assert before.metrics["numeric_accuracy"].pass_rate == after.metrics["numeric_accuracy"].pass_rate
    cmp = compare_to_baseline(after, make_baseline_entry(before))
    assert {"metric": "numeric_accuracy", "id": "num-001"} in cmp.case_regressions
    assert not cmp.passed


# --- golden integrity ----------------------------------------------------------------------------


@pytest.mark.parametrize(("golden", "change"), [
    ({"a": "fa"}, {"id": "b", "change": "removed"}),
    ({"a": "fa", "b": "CHANGED"}, {"id": "b", "change": "changed"}),
    ({"a": "fa", "b2": "fb"}, {"id": "b", "change": "removed"}),  # a rename: removal + addition
])
def test_a_removed_changed_or_renamed_case_fails_naming_its_id(golden, change):
    cmp = compare(entry(golden=golden), entry())
    assert not cmp.passed and cmp.golden_changes == [change]
    assert any(change["id"] in line for line in bl.describe(cmp, "tool"))


def test_a_gate_that_regressed_everywhere_prints_a_screenful_not_every_case(tmp_path):
    n = 3 * bl.LISTED_PER_KIND
    ids = [f"c{i}" for i in range(n)]
    stored = {"metrics": {"g": 1.0}, "n_cases": n, "passed_ids": {"g": ids},
              "golden": {i: "f" for i in ids}}
    now = {"metrics": {"g": 0.0}, "n_cases": n, "passed_ids": {"g": []},
           "golden": {i: "f" for i in ids}}
    path = tmp_path / "baseline.json"
    files.write_json_atomic(path, {"tool": stored})
    lines = run_gate(path, "tool", now).lines
    assert sum(line.startswith("CASE REGRESSION") for line in lines) == bl.LISTED_PER_KIND
    assert f"… and {n - bl.LISTED_PER_KIND} more case regressions [tool] (each gate's failures " \
           "in the JSON report list every failing case)" in lines
    assert sum(line.startswith("CASE REGRESSION") for line in
               bl.describe(compare(now, stored), "tool")) == n  # no limit: every one

    edited = {**now, "golden": {i: "edited" for i in ids}}
    lines = bl.describe(compare(edited, stored), "tool", bl.LISTED_PER_KIND)
    assert sum(line.startswith("GOLDEN CHANGE") for line in lines) == bl.LISTED_PER_KIND
    assert f"… and {n - bl.LISTED_PER_KIND} more golden changes [tool]" in lines


def test_adding_cases_is_fine():
    assert compare(entry(golden={"a": "fa", "b": "fb", "c": "fc"}), entry()).passed


def test_accepting_a_golden_change_needs_a_reason_and_is_recorded(tmp_path):
    path = tmp_path / "b.json"
    run_gate(path, "tool", entry())
    edited = entry(golden={"a": "fa", "b": "CHANGED"})
    assert run_gate(path, "tool", edited).exit_code == 1
    with pytest.raises(BaselineError, match="needs --reason"):
        run_gate(path, "tool", edited, GateOptions(accept_golden_change=True))
    result = run_gate(path, "tool", edited, GateOptions(accept_golden_change=True, reason="b restated"))
    assert result.status == "updated"
    last = history(path)[-1]
    assert last["reason"] == "b restated" and last["golden_changes"] == [{"id": "b", "change": "changed"}]
    assert run_gate(path, "tool", edited).exit_code == 0


# --- ratchet-only updates and the history ----------------------------------------------------------


def test_update_raises_metrics_and_lowers_fabrication_only():
    stored = entry({"g": 0.5, "h": 0.9}, fabrication=3)
    observed = entry({"g": 0.75, "h": 0.9}, fabrication=1)
    new = ratcheted(stored, observed)
    assert new["metrics"] == {"g": 0.75, "h": 0.9} and new["fabrication_count"] == 1
    assert ratcheted(new, stored)["metrics"] == {"g": 0.75, "h": 0.9}
    assert ratcheted(new, stored)["fabrication_count"] == 1


@given(stored=st.dictionaries(st.sampled_from("abcd"), rates, min_size=1),
       observed=st.dictionaries(st.sampled_from("abcd"), rates))
def test_a_ratchet_never_lowers_any_metric(stored, observed):
    new = ratcheted({"metrics": stored}, {"metrics": observed})["metrics"]
    assert all(new[k] >= v for k, v in stored.items())


def test_a_worse_run_is_refused_and_leaves_the_file_byte_identical(tmp_path):
    path = tmp_path / "b.json"
    run_gate(path, "tool", entry({"g": 0.5}))
    before, lines_before = path.read_bytes(), len(history(path))
    result = run_gate(path, "tool", entry({"g": 0.25}, passed_ids={"g": []}), GateOptions(update=True))
    assert (result.status, result.exit_code) == ("refused", 1)
    assert any("REGRESSION [tool] g: 0.5000 -> 0.2500" in l for l in result.lines)
    assert path.read_bytes() == before and len(history(path)) == lines_before


def test_a_reviewed_lowering_needs_a_reason_that_the_history_keeps(tmp_path):
    path = tmp_path / "b.json"
    run_gate(path, "tool", entry({"g": 0.5}))
    lower = entry({"g": 0.25}, passed_ids={"g": []})
    with pytest.raises(BaselineError, match="needs --reason"):
        run_gate(path, "tool", lower, GateOptions(update=True, allow_regression=True))
    result = run_gate(path, "tool", lower,
                      GateOptions(update=True, allow_regression=True, reason="engine 0.18 drops HY"))
    assert result.status == "updated"
    assert json.loads(path.read_text())["tool"]["metrics"] == {"g": 0.25}
    last = history(path)[-1]
    assert last["reason"] == "engine 0.18 drops HY" and last["action"] == "allow_regression"
    assert last["old"]["metrics"] == {"g": 0.5} and last["new"]["metrics"] == {"g": 0.25}


def test_history_line_has_time_mode_commit_old_new_and_reason(tmp_path):
    path = tmp_path / "b.json"
    run_gate(path, "agent", entry({"g": 0.5}), GateOptions(reason="first"))
    run_gate(path, "agent", entry({"g": 0.75}, passed_ids={"g": ["a", "b"]}),
             GateOptions(update=True, reason="fixed b"))
    last = history(path)[-1]
    assert set(last) >= {"time", "mode", "commit", "old", "new", "reason", "action"}
    assert last["time"].endswith("+00:00") and last["mode"] == "agent"
    assert (last["old"]["metrics"]["g"], last["new"]["metrics"]["g"]) == (0.5, 0.75)


def test_an_improved_run_prints_the_record_command_and_ratchet_records_it(tmp_path):
    path = tmp_path / "b.json"
    run_gate(path, "tool", entry({"g": 0.5}))
    better = entry({"g": 0.75}, passed_ids={"g": ["a", "b"]})
    options = GateOptions(record_command="ragspine-eval qa --mode tool --update-baseline")
    result = run_gate(path, "tool", better, options)
    assert result.status == "improved" and result.exit_code == 0
    assert "ragspine-eval qa --mode tool --update-baseline" in result.lines[-1]
    assert json.loads(path.read_text())["tool"]["metrics"]["g"] == 0.5
    result = run_gate(path, "tool", better, GateOptions(ratchet=True))
    assert result.status == "ratcheted"
    assert json.loads(path.read_text())["tool"]["metrics"]["g"] == 0.75
    assert history(path)[-1]["action"] == "ratchet"


def test_ratchet_never_records_a_failing_run(tmp_path):
    path = tmp_path / "b.json"
    run_gate(path, "tool", entry({"g": 0.5, "h": 0.5}))
    mixed = entry({"g": 0.75, "h": 0.25})
    before = path.read_bytes()
    assert run_gate(path, "tool", mixed, GateOptions(ratchet=True)).status == "regression"
    assert path.read_bytes() == before


# --- files: corrupt, atomic, locked, unknown keys kept -------------------------------------------


@pytest.mark.parametrize(("content", "message"), [
    ('{"tool": {"metrics": ', "not valid JSON"),
    ("", "not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    ('{"tool": {"metrics": {"g": 1.5}}}', "rate in [0, 1]"),
    ('{"tool": {"metrics": {"g": 0.5}, "passed_ids": {"g": "a"}}}', "passed_ids"),
    ('{"tool": []}', "must be an object"),
])
def test_a_corrupt_or_misshaped_baseline_is_an_error_and_never_overwritten(tmp_path, content, message):
    path = tmp_path / "b.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BaselineError, match=re.escape(message)) as err:
        run_gate(path, "tool", entry(), GateOptions(update=True))
    assert str(path) in str(err.value)
    assert path.read_text(encoding="utf-8") == content
    assert not bl.history_path(path).exists()


def test_unknown_keys_are_kept_on_rewrite(tmp_path):
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"_comment": "keep me", "tool": entry({"g": 0.5}, owner="qa-team")}))
    run_gate(path, "tool", entry({"g": 0.75}, passed_ids={"g": ["a", "b"]}), GateOptions(update=True))
    data = json.loads(path.read_text())
    assert data["_comment"] == "keep me" and data["tool"]["owner"] == "qa-team"
    assert data["tool"]["metrics"]["g"] == 0.75


def test_a_symbolic_link_is_written_through_and_stays_a_link(tmp_path):
    target = tmp_path / "real" / "report.json"
    target.parent.mkdir()
    target.write_text("old", encoding="utf-8")
    link = tmp_path / "report.json"
    link.symlink_to(target)
    files.write_atomic(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.json"]  # no temporary


def test_a_named_pipe_is_written_into_not_replaced_by_a_file(tmp_path):
    """As /dev/null or /dev/stdout would be: renaming over them would leave an ordinary file."""
    import stat
    import threading

    fifo = tmp_path / "summary.md"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    files.write_atomic(fifo, "gate passed\n")
    reader.join(timeout=10)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert received == [b"gate passed\n"]


def test_a_baseline_behind_a_link_keeps_the_link_and_locks_its_target(tmp_path):
    target = tmp_path / "shared" / "qa_baseline.json"
    target.parent.mkdir()
    link = tmp_path / "qa_baseline.json"
    link.symlink_to(target)
    with bl.locked(link):
        files.write_json_atomic(link, {"tool": {"metrics": {"g": 1.0}}})
    assert link.is_symlink() and json.loads(target.read_text())["tool"]["metrics"] == {"g": 1.0}
    assert (target.parent / "qa_baseline.json.lock").exists()
    assert not (tmp_path / "qa_baseline.json.lock").exists()
    assert bl.history_path(link) == target.parent / "qa_baseline_history.jsonl"  # with the lock


def test_a_link_into_a_missing_folder_is_refused_before_the_run_naming_its_target(tmp_path):
    baseline = tmp_path / "qa_baseline.json"
    baseline.symlink_to(tmp_path / "gone" / "qa_baseline.json")
    with pytest.raises(BaselineError, match=r"folder .*gone does not exist \(it links to "):
        bl.check_outputs({}, baseline=baseline)
    report = tmp_path / "report.json"
    report.symlink_to("/proc/no-such-process/report.json")
    with pytest.raises(files.OutputError, match=r"report.json: cannot write the report file \(it "
                                             r"links to /proc/no-such-process/report.json\)"):
        bl.check_outputs({"report": report})


def test_a_loop_of_links_is_refused_before_the_run_not_a_traceback(tmp_path):
    (tmp_path / "a.json").symlink_to("b.json")
    (tmp_path / "b.json").symlink_to("a.json")
    with pytest.raises(files.OutputError, match="a loop of symbolic links"):
        bl.check_outputs({"report": tmp_path / "a.json"})
    with pytest.raises(BaselineError, match="a loop of symbolic links"):
        bl.check_outputs({}, baseline=tmp_path / "a.json")


def test_dev_stdout_and_dev_null_pass_the_output_check():
    bl.check_outputs({"report": Path("/dev/stdout"), "summary": Path("/dev/null")})


def test_a_crash_mid_write_leaves_the_previous_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "b.json"
    files.write_json_atomic(path, {"tool": entry()})
    before = path.read_bytes()

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(atomic.os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        files.write_json_atomic(path, {"tool": entry({"g": 0.9})})
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json"]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=4), inner, max_size=4), max_leaves=30)


@given(_JSON)
def test_a_json_file_holds_exactly_json_dumps_text(tmp_path_factory, data):
    """Reports and baselines are written in pieces (bounded memory), byte for byte as before."""
    path = tmp_path_factory.mktemp("json") / "r.json"
    files.write_json_atomic(path, data)
    assert path.read_text(encoding="utf-8") == json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def test_a_value_json_cannot_write_leaves_the_previous_file(tmp_path):
    path = tmp_path / "r.json"
    files.write_json_atomic(path, {"ok": 1})
    big = {"cases": [{"id": i} for i in range(200_000)] + [{"id": object()}]}  # past a piece
    with pytest.raises(TypeError, match="not JSON serializable"):
        files.write_json_atomic(path, big)
    assert path.read_text(encoding="utf-8") == '{\n  "ok": 1\n}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def _update_many(path: str, key: str, n: int, start, lock: bool = True) -> None:
    """Raise `key` to 1/n, 2/n ... 1, each a locked read-modify-write of the baseline. A sleep after
    every read holds the read-modify-write window open, so that without the lock the two
    processes always interleave and one overwrites the other's update."""
    real_load = gate.load_baselines

    def slow_load(p):  # noqa: ANN001, ANN202
        data = real_load(p)
        time.sleep(0.02)
        return data

    gate.load_baselines = slow_load
    if not lock:
        baseline_file.fcntl.flock = lambda *args: None
    start.wait()
    for i in range(1, n + 1):
        run_gate(path, key, {"metrics": {"g": i / n}, "n_cases": 1},
                 GateOptions(update=True, reason=f"{key} step {i}"))


def race(path: Path, n: int, lock: bool = True) -> list[int]:
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(2)
    workers = [ctx.Process(target=_update_many, args=(str(path), key, n, start, lock))
               for key in ("tool", "agent")]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
        assert w.exitcode is not None
        assert w.exitcode == 0 or not lock
    return [w.exitcode for w in workers]


def lost_updates(path: Path, n: int) -> list[str]:
    """What the history and the file say was lost: each key must be bootstrapped once, every
    later line must start from the value the previous line of its key recorded, and the file
    must hold the last value of each key."""
    lost, last = [], {}
    lines = history(path)
    if len(lines) != 2 * n:
        lost.append(f"{len(lines)} history lines, expected {2 * n}")
    for line in lines:
        key = line["mode"]
        if line["old"] != last.get(key):
            lost.append(f"{key}: {line['action']} started from {line['old']}, not {last.get(key)}")
        last[key] = line["new"]
    data = json.loads(path.read_text())
    for key in ("tool", "agent"):
        if data.get(key, {}).get("metrics") != {"g": 1.0}:
            lost.append(f"{key}: the file holds {data.get(key)}")
    return lost


def test_two_processes_updating_one_baseline_lose_neither_update(tmp_path):
    path = tmp_path / "b.json"
    race(path, n=8)
    assert lost_updates(path, n=8) == []


def test_without_the_lock_the_same_race_loses_updates(tmp_path):
    """The test above can fail: with the lock made a no-op, the forced race loses an update (or
    a writer fails outright, its journal or temporary file taken by the other)."""
    path = tmp_path / "b.json"
    codes = race(path, n=8, lock=False)
    assert codes != [0, 0] or lost_updates(path, n=8) != []


def test_history_appends_whole_lines_only(tmp_path):
    path = tmp_path / "b.json"
    for i in range(3):
        run_gate(path, "tool", {"metrics": {"g": i / 2}}, GateOptions(update=True, reason=str(i)))
    raw = bl.history_path(path).read_text(encoding="utf-8")
    assert raw.endswith("\n") and all(json.loads(l) for l in raw.splitlines())
    assert os.path.getsize(bl.history_path(path)) == len(raw.encode("utf-8"))


def test_an_atomic_write_keeps_the_files_mode_or_gives_the_usual_one(tmp_path):
    fresh = tmp_path / "fresh.json"
    files.write_json_atomic(fresh, {})
    umask = os.umask(0)
    os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask
    kept = tmp_path / "kept.json"
    kept.write_text("{}")
    kept.chmod(0o640)
    files.write_json_atomic(kept, {"a": 1})
    assert kept.stat().st_mode & 0o777 == 0o640


# --- where a baseline may live, and the outputs of a run -----------------------------------------


def test_a_baseline_in_a_folder_that_does_not_exist_is_refused_and_nothing_is_created(tmp_path):
    path = tmp_path / "typo" / "b.json"
    with pytest.raises(BaselineError, match=re.escape(f"{tmp_path / 'typo'}")) as err:
        run_gate(path, "tool", entry())
    assert "does not exist" in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_a_new_baseline_file_is_announced_and_a_new_key_in_an_old_file_is_not(tmp_path):
    path = tmp_path / "b.json"
    first = run_gate(path, "tool", entry())
    assert first.lines[0].startswith(f"NEW BASELINE FILE {path}")
    assert "check the --baseline path" in first.lines[0]
    second = run_gate(path, "agent", entry())
    assert second.status == "bootstrap"
    assert not any("NEW BASELINE FILE" in line for line in second.lines)


@pytest.mark.parametrize("make, label, reason", [
    (lambda d: d.mkdir() or d, "report", "is a folder"),
    (lambda d: (d.write_text("x"), d / "r.json")[1], "report", "is a file, not a folder"),
    (lambda d: (d.write_text("x"), d / "new" / "r.json")[1], "junit", "is a file, not a folder"),
])
def test_check_outputs_names_an_output_that_cannot_be_written(tmp_path, make, label, reason):
    target = make(tmp_path / "thing")
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(files.OutputError, match=re.escape(reason)) as err:
        bl.check_outputs({"summary": None, label: target})
    assert str(err.value).startswith(f"{target}: ") and label in str(err.value)
    assert sorted(tmp_path.rglob("*")) == before


def test_check_outputs_accepts_a_report_in_a_folder_still_to_be_made_and_makes_nothing(tmp_path):
    bl.check_outputs({"report": tmp_path / "out" / "deep" / "r.json"}, baseline=tmp_path / "b.json")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_check_outputs_finds_a_folder_that_cannot_be_created_even_as_root():
    with pytest.raises(files.OutputError, match="/proc/nope/r.json: cannot write the report"):
        bl.check_outputs({"report": Path("/proc/nope/r.json")})


def test_check_outputs_refuses_one_path_for_two_outputs_or_an_output_over_the_baseline(tmp_path):
    same = tmp_path / "r.json"
    with pytest.raises(files.OutputError, match="both the report and the junit file"):
        bl.check_outputs({"report": same, "junit": same})
    baseline = tmp_path / "b.json"
    for target in (baseline, bl.history_path(baseline)):
        with pytest.raises(files.OutputError, match="would overwrite the baseline"):
            bl.check_outputs({"report": target}, baseline=baseline)


@pytest.mark.parametrize("where, message", [
    (lambda d: d / "nope" / "b.json", "does not exist"),
    (lambda d: d, "is a folder"),
])
def test_check_outputs_wants_the_baseline_folder_to_exist_already(tmp_path, where, message):
    with pytest.raises(BaselineError, match=message):
        bl.check_outputs({}, baseline=where(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_allow_regression_without_an_update_is_refused_as_an_option():
    with pytest.raises(BaselineError, match="add --update-baseline"):
        GateOptions(allow_regression=True, reason="r").check()
    GateOptions(update=True, allow_regression=True, reason="r").check()
    GateOptions(accept_golden_change=True, allow_regression=True, reason="r").check()


# --- messages that say what to do ----------------------------------------------------------------


def test_a_broken_baseline_outside_the_project_is_not_sent_to_git(tmp_path):
    path = tmp_path / "b.json"
    path.write_text('{"tool": {"metrics": {"g": "abc', encoding="utf-8")
    with pytest.raises(BaselineError) as err:
        run_gate(path, "tool", entry())
    message = str(err.value)
    assert "git checkout" not in message and "restore it from your copy" in message
    assert f"{path}:1:28: the baseline is not valid JSON: unterminated string starting at " \
           f"line 1, column 28" in message


def test_an_empty_baseline_file_says_it_is_empty(tmp_path):
    path = tmp_path / "b.json"
    path.write_text("", encoding="utf-8")
    with pytest.raises(BaselineError, match="not valid JSON: the file is empty"):
        bl.load_baselines(path)


def project_head() -> str | None:
    """The commit of the project's checkout (None when the project is not a git checkout)."""
    proc = subprocess.run(["git", "rev-parse", "HEAD"], cwd=paths.PROJECT_ROOT,
                          capture_output=True, text=True, check=False)
    return (proc.stdout.strip() or None) if proc.returncode == 0 else None


def test_a_broken_entry_of_the_committed_baseline_points_to_git_checkout():
    committed = project_head()
    with pytest.raises(BaselineError) as err:
        bl.validate_entry(paths.QA_BASELINE, "tool", {"metrics": {"g": 2}})
    if committed:
        assert "`git checkout -- data/golden/qa_baseline.json`" in str(err.value)
    else:  # a copy of the project that is not a git checkout
        assert "restore it from your copy" in str(err.value)


def test_the_history_records_the_commit_of_the_code_wherever_the_baseline_lives(tmp_path):
    path = tmp_path / "b.json"  # outside the project's checkout
    run_gate(path, "tool", entry())
    assert history(path)[-1]["commit"] == project_head()


# --- baseline and history: both or neither -------------------------------------------------------


def fail_replace_of(monkeypatch, victim: Path) -> None:
    real = atomic.os.replace

    def replace(src, dst):  # noqa: ANN001, ANN202
        if Path(dst) == victim:
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", replace)


def test_a_baseline_that_could_not_be_replaced_leaves_no_history_line(tmp_path, monkeypatch):
    path = tmp_path / "b.json"
    run_gate(path, "tool", entry({"g": 0.5}))
    before, history_before = path.read_bytes(), bl.history_path(path).read_bytes()
    fail_replace_of(monkeypatch, path)
    with pytest.raises(BaselineError, match="No space left on device"):
        run_gate(path, "tool", entry({"g": 0.75}), GateOptions(update=True))
    assert path.read_bytes() == before
    assert bl.history_path(path).read_bytes() == history_before


@pytest.mark.parametrize("existing", [True, False])
def test_a_history_that_could_not_be_written_puts_the_baseline_back(tmp_path, monkeypatch, existing):
    path = tmp_path / "b.json"
    if existing:
        run_gate(path, "tool", entry({"g": 0.5}))
    before = path.read_bytes() if existing else None
    history_before = bl.history_path(path).read_bytes() if existing else None
    fail_replace_of(monkeypatch, bl.history_path(path))
    with pytest.raises(BaselineError, match="left as they were"):
        run_gate(path, "tool", entry({"g": 0.75}), GateOptions(update=True))
    assert (path.read_bytes() if path.exists() else None) == before
    hist = bl.history_path(path)
    assert (hist.read_bytes() if hist.exists() else None) == history_before


def test_a_history_line_cut_short_by_a_crash_does_not_swallow_the_next(tmp_path):
    path = tmp_path / "b.json"
    run_gate(path, "tool", entry({"g": 0.5}))
    hist = bl.history_path(path)
    hist.write_text(hist.read_text(encoding="utf-8") + '{"time": "2026-', encoding="utf-8")
    run_gate(path, "tool", entry({"g": 0.75}), GateOptions(update=True, reason="after the crash"))
    lines = hist.read_text(encoding="utf-8").splitlines()
    assert lines[-2] == '{"time": "2026-'
    assert json.loads(lines[-1])["reason"] == "after the crash"


def test_a_lowering_that_also_accepts_a_golden_change_records_both(tmp_path):
    path = tmp_path / "b.json"
    run_gate(path, "tool", entry({"g": 0.5}))
    lower_and_edited = entry({"g": 0.25}, passed_ids={"g": []}, golden={"a": "fa", "b": "NEW"})
    result = run_gate(path, "tool", lower_and_edited,
                      GateOptions(update=True, allow_regression=True, accept_golden_change=True,
                                  reason="b restated, and the engine misses it"))
    assert result.status == "updated"
    assert history(path)[-1]["action"] == "allow_regression+accept_golden_change"
