"""Issue 14's misbehaving callables: wrong types, sys.exit, a KeyboardInterrupt the engine
raises, os._exit, a hang. Each ends as that case's error in a completed run (exit 1, the report
written); none ends the run."""

from __future__ import annotations

import json

import pytest

from ragspine_eval.cli.app import main

MISBEHAVIOURS = {
    "wrong_types_outcome": "OutcomeError",
    "calls_sys_exit": "SystemExit",
    "raises_keyboard_interrupt": "KeyboardInterrupt",
    "calls_os_exit": "died (exit code 3)",
    "hangs": "TimeoutError",
}


@pytest.mark.parametrize("name", sorted(MISBEHAVIOURS))
def test_a_misbehaving_callable_is_that_cases_error_in_a_completed_run(capsys, tmp_path,
                                                                       tiny_golden, name):
    report, baseline = tmp_path / "r.json", tmp_path / "b.json"
    code = main(["qa", "--engine", f"faults.hostile_engines:{name}", "--golden", str(tiny_golden),
                 "--baseline", str(baseline), "--report", str(report), "--case-timeout", "3"])
    out, err = capsys.readouterr()
    assert code == 1, out + err
    data = json.loads(report.read_text(encoding="utf-8"))
    errors = {e["id"]: e["error"] for e in data["errors"]}
    assert list(errors) == ["ref-002"] and MISBEHAVIOURS[name] in errors["ref-002"]
    assert data["n_cases"] == 5
    assert not baseline.exists()  # a run with engine errors never starts a baseline


def test_a_cached_callable_that_calls_os_exit_still_ends_only_its_case(capsys, tmp_path,
                                                                      tiny_golden):
    """With --cache-key the callable runs behind the outcome cache: still in a worker process
    of its own, so os._exit ends one case, not the harness."""
    report = tmp_path / "r.json"
    code = main(["qa", "--engine", "faults.hostile_engines:calls_os_exit", "--cache-key", "b1",
                 "--golden", str(tiny_golden), "--baseline", str(tmp_path / "b.json"),
                 "--report", str(report), "--case-timeout", "3"])
    capsys.readouterr()
    assert code == 1
    errors = {e["id"]: e["error"] for e in json.loads(report.read_text())["errors"]}
    assert list(errors) == ["ref-002"] and "died (exit code 3)" in errors["ref-002"]
