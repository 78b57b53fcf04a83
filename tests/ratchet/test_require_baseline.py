"""require_baseline: a missing entry fails (exit 1) with the command that records one and writes
nothing; without it a missing entry bootstraps as before."""

from __future__ import annotations

import json

from ragspine_eval.ratchet import GateOptions, run_gate

RECORD = "ragspine-eval qa --mode tool --baseline b.json --update-baseline"


def entry(rate: float = 0.5) -> dict:
    return {"metrics": {"g": rate}, "fabrication_count": 0, "n_cases": 1,
            "passed_ids": {"g": ["a"]}, "golden": {"a": "fa"}}


def test_a_missing_file_fails_naming_the_record_command_and_creates_nothing(tmp_path):
    path = tmp_path / "b.json"
    result = run_gate(path, "tool", entry(),
                      GateOptions(require_baseline=True, record_command=RECORD))
    assert (result.status, result.exit_code) == ("missing", 1)
    assert result.lines[0].startswith(f"MISSING BASELINE: {path} does not exist")
    assert f"Record a baseline with: {RECORD}" in result.lines[0]
    assert list(tmp_path.iterdir()) == []  # no baseline, no history, no lock file


def test_a_missing_entry_in_an_existing_file_fails_and_leaves_it_byte_identical(tmp_path):
    path = tmp_path / "b.json"
    run_gate(path, "agent", entry())
    before = path.read_bytes()
    result = run_gate(path, "tool", entry(), GateOptions(require_baseline=True))
    assert result.exit_code == 1 and f"{path} has no entry 'tool'" in result.lines[0]
    assert path.read_bytes() == before


def test_without_the_flag_a_missing_entry_bootstraps_as_before(tmp_path):
    path = tmp_path / "b.json"
    result = run_gate(path, "tool", entry())
    assert (result.status, result.exit_code) == ("bootstrap", 0)
    assert json.loads(path.read_text(encoding="utf-8"))["tool"] == entry()


def test_the_record_command_records_it_and_then_the_required_baseline_passes(tmp_path):
    path = tmp_path / "b.json"
    recorded = run_gate(path, "tool", entry(), GateOptions(update=True, require_baseline=True))
    assert recorded.exit_code == 0 and "tool" in json.loads(path.read_text(encoding="utf-8"))
    again = run_gate(path, "tool", entry(), GateOptions(require_baseline=True))
    assert (again.status, again.exit_code) == ("pass", 0)
    worse = run_gate(path, "tool", entry(0.25), GateOptions(require_baseline=True))
    assert (worse.status, worse.exit_code) == ("regression", 1)
