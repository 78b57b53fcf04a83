"""`ragspine-eval judge list` and `judge check`: what they print and their exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragspine_eval.cli import main

WICE = Path("/work/shared/wice/dev.jsonl")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_prints_one_judge_a_line_name_first(capsys):
    code, out, _ = run(capsys, "judge", "list")
    assert code == 0
    assert [line.split("\t")[0] for line in out.splitlines()][:3] == ["lexical", "financial", "numeric"]


def _labelled(tmp_path: Path) -> Path:
    rows = [
        {"claim": "集团 ROE FY2025 为 14.8%。", "context": "集团 ROE FY2025 为 14.8 PCT", "label": True},
        {"claim": "集团 ROE FY2025 为 15.8%。", "context": ["集团 ROE FY2025 为 14.8 PCT"],
         "label": False},
    ]
    path = tmp_path / "claims.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_check_prints_balanced_accuracy_confusion_and_wilson(capsys, tmp_path):
    path = _labelled(tmp_path)
    code, out, _ = run(capsys, "judge", "check", str(path), "--judge", "numeric")
    assert code == 0
    assert "judge numeric (threshold 0.6) on 2 claims" in out
    assert "balanced accuracy 1.0000" in out
    assert "unsupported->yes 0" in out and "Wilson [" in out
    code, out, _ = run(capsys, "judge", "check", str(path))  # lexical by default
    assert code == 0 and "judge lexical" in out and "balanced accuracy 0.5000" in out


def test_an_unknown_judge_exits_2_listing_the_registered_ones(capsys, tmp_path):
    code, _, err = run(capsys, "judge", "check", str(_labelled(tmp_path)), "--judge", "nli")
    assert code == 2
    assert "unknown judge 'nli'" in err and "lexical, financial, numeric" in err


def test_a_bad_line_exits_2_naming_file_and_line(capsys, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"claim": "x", "context": "x", "label": true}\nnot json\n', encoding="utf-8")
    code, _, err = run(capsys, "judge", "check", str(path))
    assert code == 2 and f"{path}:2: not a JSON object" in err


@pytest.mark.skipif(not WICE.exists(), reason="WiCE's dev split is not in /work/shared/wice")
def test_check_on_wice_prints_the_lexical_judges_balanced_accuracy(capsys):
    code, out, _ = run(capsys, "judge", "check", str(WICE), "--judge", "lexical")
    assert code == 0 and "on 349 claims" in out
    assert float(out.split("balanced accuracy ")[1].split()[0]) < 0.69


BY_KIND = Path(__file__).parents[1] / "fixtures" / "judge_claims_by_kind.jsonl"


def test_check_prints_each_kind_and_language_worst_first_under_the_unchanged_summary(capsys):
    # the figures are worked out by hand in tests/qa/test_judges.py
    # (test_check_scores_each_kind_and_language_as_worked_out_by_hand)
    code, out, _ = run(capsys, "judge", "check", str(BY_KIND), "--judge", "lexical")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "judge lexical (threshold 0.6) on 7 claims"
    assert lines[1] == "balanced accuracy 0.7083"
    assert lines[5].startswith("confusion: ") and lines[6] == ""
    kind = lines[7:13]
    assert kind[0] == "balanced accuracy per kind, worst first"
    assert kind[1].split() == ["kind", "n", "supported", "correct", "balanced", "accuracy"]
    rows = kind[2:5]
    assert [row.split() for row in rows] == [
        ["paraphrase", "2", "2", "1/2", "0.6250", "*"],
        ["negation", "3", "0", "2/3", "0.6667", "*"],
        ["approximation", "2", "1", "2/2", "1.0000"],
    ]
    # the figures stand in one column, under the heading's "balanced accuracy"
    assert {row.index(row.split()[4]) for row in rows} == {kind[1].index("balanced")}
    assert kind[5].startswith("  * one label only")
    assert lines[13] == "" and lines[14] == "balanced accuracy per lang, worst first"
    assert [row.split()[0] for row in lines[16:]] == ["en", "zh"]
    assert lines[16].split()[-1] == "0.7500" and lines[17].split()[-1] == "0.8333"


def test_a_kind_that_is_not_a_string_exits_2_naming_file_and_line(capsys, tmp_path):
    path = tmp_path / "bad_kind.jsonl"
    path.write_text('{"claim": "x", "context": "x", "label": true, "kind": "verbatim"}\n'
                    '{"claim": "y", "context": "y", "label": false, "kind": 7}\n', encoding="utf-8")
    code, out, err = run(capsys, "judge", "check", str(path))
    assert code == 2 and out == ""
    assert f"{path}:2: kind must be a non-empty string" in err and "got 7" in err
