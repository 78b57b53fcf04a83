"""The `ragspine-eval qa` and `golden` commands: exit codes, messages, files left intact.

The end-to-end tests run the real engine over the committed golden set in both modes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from ragspine_eval import paths
from ragspine_eval.cli import main

GOLDEN = paths.QA_GOLDEN_SET


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def tiny_golden(tmp_path):
    """The first six cases of the committed set: enough to reach every gate, fast to run."""
    path = tmp_path / "golden.jsonl"
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    picked = [lines[0]] + [l for l in lines if '"narrative"' in l][:1] + \
             [l for l in lines if '"refusal"' in l][:2] + [l for l in lines if '"composite"' in l][:1]
    path.write_text("\n".join(picked) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("mode", ["tool", "agent"])
def test_committed_baseline_passes_in_both_modes(capsys, tmp_path, mode):
    baseline = tmp_path / "qa_baseline.json"
    shutil.copy(paths.QA_BASELINE, baseline)
    report = tmp_path / "report.json"
    code, out, _ = run(capsys, "qa", "--mode", mode, "--baseline", str(baseline), "--report", str(report))
    assert code == 0, out
    data = json.loads(report.read_text(encoding="utf-8"))
    assert set(data["metrics"]) == {"numeric_accuracy", "citation_validity", "refusal_appropriateness",
                                    "clarification_appropriateness", "faithfulness", "answer_accuracy"}
    assert all(m["by_tag"].keys() == {"topic", "scope", "qtype"} for m in data["metrics"].values())
    assert "fabrication" in data and "fabrication_count" in data
    assert baseline.read_bytes() == paths.QA_BASELINE.read_bytes()


def test_one_changed_expected_value_fails_naming_the_case(capsys, tmp_path):
    golden = tmp_path / "golden.jsonl"
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith('{"id": "num-001"')
    lines[0] = lines[0].replace('"value": 1702.0', '"value": 1703.0')
    golden.write_text("\n".join(lines) + "\n", encoding="utf-8")
    baseline = tmp_path / "qa_baseline.json"
    shutil.copy(paths.QA_BASELINE, baseline)
    code, out, _ = run(capsys, "qa", "--mode", "tool", "--golden", str(golden), "--baseline", str(baseline))
    assert code == 1
    assert "num-001" in out
    assert "REGRESSION [tool] numeric_accuracy" in out
    assert baseline.read_bytes() == paths.QA_BASELINE.read_bytes()


def test_missing_mode_bootstraps_then_passes(capsys, tmp_path, tiny_golden):
    baseline = tmp_path / "b.json"
    code, out, _ = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline))
    assert code == 0 and "recorded this run as the baseline" in out
    entry = json.loads(baseline.read_text(encoding="utf-8"))["tool"]
    assert entry["n_cases"] == 5 and set(entry["metrics"]) >= {"numeric_accuracy"}
    code, out, _ = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline))
    assert code == 0 and "PASS" in out


def test_invalid_golden_set_exits_2_with_one_line_and_no_file_touched(capsys, tmp_path, tiny_golden):
    broken = tmp_path / "broken.jsonl"
    lines = tiny_golden.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace('"reference_date": "2026-06-12"', '"reference_date": "2026-06-31"')
    broken.write_text("\n".join(lines) + "\n", encoding="utf-8")
    baseline = tmp_path / "b.json"
    baseline.write_text('{"tool": {"metrics": {"numeric_accuracy": 1.0}}}\n', encoding="utf-8")
    before = baseline.read_bytes()
    report = tmp_path / "r.json"
    code, out, err = run(capsys, "qa", "--golden", str(broken), "--baseline", str(baseline), "--report", str(report))
    assert code == 2
    assert err.strip().count("\n") == 0
    assert f"{broken}:3" in err and "bad ISO date" in err
    assert baseline.read_bytes() == before and not report.exists()


@pytest.mark.parametrize("content", ['{"tool": {"metrics": ', '[1, 2]',
                                     '{"tool": {"metrics": {"numeric_accuracy": 1.5}}}'])
def test_corrupt_baseline_exits_2_and_is_never_overwritten(capsys, tmp_path, tiny_golden, content):
    baseline = tmp_path / "b.json"
    baseline.write_text(content, encoding="utf-8")
    code, _, err = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline),
                       "--update-baseline")
    assert code == 2 and str(baseline) in err
    assert baseline.read_text(encoding="utf-8") == content


def test_golden_command_prints_counts_and_flags_kb_mismatch(capsys, tmp_path, tiny_golden):
    code, out, _ = run(capsys, "golden", str(tiny_golden))
    assert code == 0 and "5 valid cases" in out and "by qtype:" in out
    typo = tmp_path / "typo.jsonl"
    typo.write_text(tiny_golden.read_text(encoding="utf-8").replace("row=2,col=3", "row=9,col=9", 1),
                    encoding="utf-8")
    code, out, _ = run(capsys, "golden", str(typo))
    assert code == 2 and f"{typo}:1" in out and "not a fact" in out


def test_script_wrapper_is_the_cli(tmp_path, tiny_golden):
    proc = subprocess.run([sys.executable, str(paths.PROJECT_ROOT / "scripts" / "run_qa_eval.py"),
                           "--golden", str(tiny_golden), "--baseline", str(tmp_path / "b.json"),
                           "--mode", "agent"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "mode agent" in proc.stdout
