"""`ragspine-eval qa --judge NAME`: the judge runs, is named in the report and the baseline, and
an unknown one stops the run before anything is written."""

from __future__ import annotations

import json
import shutil

from ragspine_eval import paths
from ragspine_eval.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_judge_is_in_the_provenance_and_the_bootstrapped_entry(capsys, tmp_path, tiny_golden):
    baseline, report = tmp_path / "b.json", tmp_path / "r.json"
    code, out, _ = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline),
                       "--report", str(report), "--judge", "numeric", "--judge-threshold", "0.5")
    assert code == 0 and "judge numeric (threshold 0.5)" in out
    judge = {"name": "numeric", "threshold": 0.5}
    assert json.loads(report.read_text(encoding="utf-8"))["provenance"]["judge"] == judge
    assert json.loads(baseline.read_text(encoding="utf-8"))["tool"]["judge"] == judge


def test_the_default_judge_is_lexical_and_the_committed_baseline_is_left_as_it_is(
        capsys, tmp_path):
    baseline, report = tmp_path / "b.json", tmp_path / "r.json"
    shutil.copy(paths.QA_BASELINE, baseline)
    code, out, _ = run(capsys, "qa", "--mode", "tool", "--baseline", str(baseline),
                       "--report", str(report), "--update-baseline")
    assert code == 0 and "warning:" not in out
    assert json.loads(report.read_text(encoding="utf-8"))["provenance"]["judge"] == {
        "name": "lexical", "threshold": 0.6}
    assert baseline.read_bytes() == paths.QA_BASELINE.read_bytes()


def test_another_judge_than_the_baselines_warns_and_names_the_recording_command(capsys, tmp_path):
    baseline = tmp_path / "b.json"
    shutil.copy(paths.QA_BASELINE, baseline)
    code, out, _ = run(capsys, "qa", "--mode", "tool", "--baseline", str(baseline),
                       "--judge", "numeric", "--update-baseline")
    assert "warning: the baseline was recorded with judge lexical (threshold 0.6) and this run " \
           "used numeric (threshold 0.6)" in out
    assert code == 1 and "update refused" in out
    assert f"ragspine-eval qa --mode tool --judge numeric --baseline {baseline}" in out
    assert baseline.read_bytes() == paths.QA_BASELINE.read_bytes()


def test_an_unknown_judge_exits_2_listing_the_judges_and_writes_nothing(capsys, tmp_path,
                                                                       tiny_golden):
    baseline, report = tmp_path / "b.json", tmp_path / "r.json"
    code, out, err = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline),
                         "--report", str(report), "--judge", "nli")
    assert code == 2 and out == ""
    assert "unknown judge 'nli'" in err and "lexical, financial, numeric" in err
    assert not baseline.exists() and not report.exists()
