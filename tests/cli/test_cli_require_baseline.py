"""`--require-baseline` on qa and extraction: what CI runs cannot pass by recording its own
first baseline."""

from __future__ import annotations

import json
import shutil

from ragspine_eval import paths
from ragspine_eval.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_qa_with_a_new_baseline_file_exits_1_with_the_command_that_records_one(
        capsys, tmp_path, tiny_golden, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = ["qa", "--engine", "engine_doubles:right_value", "--golden", str(tiny_golden)]
    code, out, _ = run(capsys, *argv, "--require-baseline", "--baseline", "new.json")
    assert code == 1
    command = ("ragspine-eval qa --mode tool --engine engine_doubles:right_value "
               f"--golden {tiny_golden} --baseline new.json --update-baseline")
    assert "MISSING BASELINE: new.json does not exist" in out and command in out
    assert "FAIL: qa tool@engine_doubles:right_value gate missing" in out
    assert not list(tmp_path.glob("new.json*"))  # no baseline, history or lock file
    # the printed command records it; the required baseline then passes
    code, out, _ = run(capsys, *command.split()[1:])
    assert code == 0 and (tmp_path / "new.json").exists()
    code, out, _ = run(capsys, *argv, "--require-baseline", "--baseline", "new.json")
    assert code == 0 and "PASS" in out


def test_qa_without_the_flag_still_bootstraps(capsys, tmp_path, tiny_golden):
    baseline = tmp_path / "b.json"
    code, out, _ = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline))
    assert code == 0 and "recorded this run as the baseline" in out and baseline.exists()


def test_the_committed_qa_baseline_passes_with_the_flag(capsys, tmp_path):
    baseline = tmp_path / "b.json"
    shutil.copy(paths.QA_BASELINE, baseline)
    code, out, _ = run(capsys, "qa", "--mode", "agent", "--require-baseline",
                       "--baseline", str(baseline))
    assert code == 0 and "PASS" in out


def test_extraction_with_a_missing_set_exits_1_and_leaves_the_file(capsys, tmp_path):
    baseline = tmp_path / "b.json"
    stored = json.loads(paths.EXTRACTION_BASELINE.read_text(encoding="utf-8"))
    del stored["pdf"]
    baseline.write_text(json.dumps(stored), encoding="utf-8")
    before = baseline.read_bytes()
    code, out, _ = run(capsys, "extraction", "--docs", "pdf", "--require-baseline",
                       "--baseline", str(baseline))
    assert code == 1
    assert f"MISSING BASELINE: {baseline} has no entry 'pdf'" in out
    assert f"ragspine-eval extraction --docs pdf --baseline {baseline} --update-baseline" in out
    assert baseline.read_bytes() == before


def test_extraction_of_an_own_document_needs_a_baseline_to_require(capsys, tmp_path):
    truth = tmp_path / "t.json"
    truth.write_text('{"cells": []}', encoding="utf-8")
    code, _, err = run(capsys, "extraction", "--facts", str(tmp_path / "f.jsonl"),
                       "--ground-truth", str(truth), "--require-baseline")
    assert code == 2 and "--require-baseline gates on a baseline: give --baseline FILE" in err
