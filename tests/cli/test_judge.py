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


def _review_lines(tmp_path: Path, name: str, marks: list[tuple[str, bool, bool]]) -> Path:
    """A labels file as the case view exports it: (claim, judged, marked wrong) each."""
    from ragspine_eval.judges.label_files import labels_text
    from ragspine_eval.judges.labels import review_line

    source = {"judge": {"name": "lexical", "threshold": 0.6, "version": "ragspine-eval 0.1.0"},
              "case_id": "c", "question": "c:en", "route": "ask", "reviewer": "ann"}
    lines = [review_line(claim, ["Hong Kong revenue was 1702 in FY2025"], judged, wrong,
                         reason="checked on the page" if wrong else "", lang="en",
                         source=source) for claim, judged, wrong in marks]
    path = tmp_path / name
    path.write_text(labels_text(lines), encoding="utf-8")
    return path


def test_check_prints_the_accuracy_on_the_teams_disagreements(capsys, tmp_path):
    # the lexical judge passes both claims; the analyst marked the invented figure wrong
    path = _review_lines(tmp_path, "labels.jsonl", [("Hong Kong revenue was 1702", True, False),
                                                   ("Hong Kong revenue was 1802", True, True)])
    code, out, _ = run(capsys, "judge", "check", str(path))
    assert code == 0
    assert "from review: 2 lines, 1 marked wrong, 1 confirmed" in out
    assert "accuracy on the team's disagreements (marked wrong)  0/1 (0.0000)" in out
    code, out, _ = run(capsys, "judge", "check", str(path), "--judge", "numeric")
    assert code == 0 and "accuracy on the team's disagreements (marked wrong)  1/1 (1.0000)" in out


def test_merge_folds_exports_and_a_conflict_exits_2_naming_both_lines(capsys, tmp_path):
    a = _review_lines(tmp_path, "a.jsonl", [("Hong Kong revenue was 1702", True, False)])
    b = _review_lines(tmp_path, "b.jsonl", [("Hong Kong revenue was 1702", True, False),
                                            ("Hong Kong revenue was 1802", True, True)])
    out = tmp_path / "team.jsonl"
    code, printed, _ = run(capsys, "judge", "merge", str(a), str(b), "--out", str(out))
    assert code == 0 and "2 labelled claims from 2 files (1 agreeing repeats dropped)" in printed
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2
    code, _, err = run(capsys, "judge", "merge", str(a), "--out", str(out))
    assert code == 2 and "already exists" in err
    code, _, err = run(capsys, "judge", "merge", str(a), str(out), "--out", str(out), "--force")
    assert code == 2 and "is one of the files merged" in err
    c = _review_lines(tmp_path, "c.jsonl", [("Hong Kong revenue was 1702", True, True)])
    code, _, err = run(capsys, "judge", "merge", str(a), str(c), "--out", str(tmp_path / "x"))
    assert code == 2 and f"{a}:1 and {c}:1: the same claim against the same context" in err
    assert not (tmp_path / "x").exists()


def test_a_malformed_exported_file_exits_2_with_file_and_line(capsys, tmp_path):
    path = _review_lines(tmp_path, "labels.jsonl", [("Hong Kong revenue was 1702", True, True)])
    path.write_text(path.read_text(encoding="utf-8") + '{"claim": "x", "context": [], '
                    '"label": true, "judged": true, "reviewr": "bob"}\n', encoding="utf-8")
    for argv in (["check", str(path)], ["merge", str(path), "--out", str(tmp_path / "o")]):
        code, _, err = run(capsys, "judge", *argv)
        assert code == 2 and f'{path}:2: unknown key "reviewr"' in err
