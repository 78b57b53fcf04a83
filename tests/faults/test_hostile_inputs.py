"""Issue 14's reproducers for every reader, run through the command line: each hostile file
exits 2 with one short line naming the file and the reason, and changes nothing on disk."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragspine_eval import paths
from ragspine_eval.cli.app import main
from ragspine_eval.ratchet.baseline_file import history_path

NUM = json.loads(paths.QA_GOLDEN_SET.read_text(encoding="utf-8").splitlines()[0])
BIG_INT = "1" + "0" * 400  # beyond float range: OverflowError where compared with a float
HUGE_INT = "7" * 5000  # beyond Python's 4,300-digit int conversion limit


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str, *needles: str) -> None:
    assert err.startswith("error: ") and err.strip().count("\n") == 0, err[:2000]
    assert len(err) < 1000, err[:300]
    assert "\x1b" not in err and "Traceback" not in err
    for needle in needles:
        assert needle in err, err


def golden_line(**expected_changes: object) -> str:
    line = json.dumps(NUM | {"id": "hostile-1"}, ensure_ascii=False)
    for old, new in expected_changes.items():
        line = line.replace(old, str(new), 1)
    return line


HOSTILE_GOLDEN = {
    "integer beyond float range": (golden_line(**{"1702.0": BIG_INT}), "beyond the range"),
    "integer of 5000 digits": (golden_line(**{"1702.0": HUGE_INT}), "5,000 digits"),
    "1500 nested arrays": (golden_line(**{'"USD_M"': "[" * 1500 + "]" * 1500}), "nested"),
    "lone surrogate": (golden_line(**{'"hostile-1"': '"q\\ud800"'}), "lone surrogate"),
    "control character in an id": (golden_line(**{'"hostile-1"': '"clar-\\u001b[2J"'}),
                                   "control character"),
    "duplicated key": (golden_line()[:-1] + ', "id": "other"}', "'id' appears twice"),
    "half a million characters": (golden_line(**{'"numeric"': '"' + "x" * 500_000 + '"'}),
                               "unknown case_type"),
}


@pytest.fixture
def baseline(tmp_path):
    path = tmp_path / "qa_baseline.json"
    shutil.copy(paths.QA_BASELINE, path)
    return path


def unchanged(baseline: Path, before: bytes) -> None:
    assert baseline.read_bytes() == before and not history_path(baseline).exists()


@pytest.mark.parametrize("kind", sorted(HOSTILE_GOLDEN))
def test_a_hostile_golden_line_exits_2_naming_its_line_and_nothing_changes(capsys, tmp_path,
                                                                          tiny_golden, baseline,
                                                                          kind):
    line, reason = HOSTILE_GOLDEN[kind]
    golden = tmp_path / "g.jsonl"
    golden.write_text(tiny_golden.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")
    before, report = baseline.read_bytes(), tmp_path / "r.json"
    code, out, err = run(capsys, "qa", "--engine", "engine_doubles:right_value", "--golden",
                         str(golden), "--baseline", str(baseline), "--report", str(report),
                         "--update-baseline")
    assert code == 2 and out == ""
    one_line_error(err, f"{golden}:6", reason)
    unchanged(baseline, before)
    assert not report.exists()
    code, out, _ = run(capsys, "golden", str(golden))
    assert code == 2 and f"INVALID {golden}:6" in out and "\x1b" not in out
    assert max(map(len, out.splitlines())) < 1000


def test_a_null_baseline_entry_exits_2_and_never_bootstraps(capsys, tmp_path, tiny_golden):
    baseline = tmp_path / "b.json"
    baseline.write_text('{"tool@engine_doubles:right_value": null}', encoding="utf-8")
    code, _, err = run(capsys, "qa", "--engine", "engine_doubles:right_value", "--golden",
                       str(tiny_golden), "--baseline", str(baseline))
    assert code == 2
    one_line_error(err, str(baseline), "is null")
    unchanged(baseline, b'{"tool@engine_doubles:right_value": null}')


@pytest.mark.parametrize(("text", "reason"), [
    ('{"tool": {"metrics": {}, "n_cases": ' + BIG_INT + "}}", "beyond the range"),
    ('{"tool": {"metrics": {"g": ' + HUGE_INT + "}}}", "5,000 digits"),
    ('{"tool": ' + "[" * 1500 + "]" * 1500 + "}", "nested"),
    ('{"tool": {"metrics": {}, "passed_ids": {"g": ["q\\ud800"]}}}', "lone surrogate"),
    ('{"tool": {"metrics": {}}, "tool": {"metrics": {}}}', "'tool' appears twice"),
])
def test_a_hostile_baseline_exits_2_and_is_left_as_it_is(capsys, tmp_path, tiny_golden, text,
                                                         reason):
    baseline = tmp_path / "b.json"
    baseline.write_text(text, encoding="utf-8")
    code, _, err = run(capsys, "qa", "--engine", "engine_doubles:right_value", "--golden",
                       str(tiny_golden), "--baseline", str(baseline), "--update-baseline")
    assert code == 2
    one_line_error(err, str(baseline), reason)
    unchanged(baseline, text.encode("utf-8"))


FACT = {"sheet": "Performance", "cell_ref": "B4", "value": 1.0}


@pytest.mark.parametrize(("fact_text", "reason"), [
    (json.dumps(FACT).replace("1.0", BIG_INT), "beyond the range"),
    (json.dumps(FACT).replace("1.0", HUGE_INT), "5,000 digits"),
    (json.dumps(FACT).replace("1.0", "[" * 1500 + "]" * 1500), "nested"),
    (json.dumps(FACT).replace("B4", "B4\\ud800"), "lone surrogate"),
    (json.dumps(FACT)[:-1] + ', "sheet": "Other"}', "'sheet' appears twice"),
])
def test_a_hostile_facts_file_exits_2_naming_its_line(capsys, tmp_path, fact_text, reason):
    facts = tmp_path / "f.jsonl"
    facts.write_text(fact_text + "\n", encoding="utf-8")
    code, _, err = run(capsys, "extraction", "--facts", str(facts), "--baseline",
                       str(tmp_path / "b.json"))
    assert code == 2
    one_line_error(err, f"{facts}:1", reason)
    assert not (tmp_path / "b.json").exists()


def test_a_ground_truth_nested_990_deep_exits_2_before_any_report(capsys, tmp_path):
    truth = json.loads((paths.FIXTURES_DIR / "fixtures_ground_truth.json").read_text("utf-8"))
    deep: object = 1
    for _ in range(990):
        deep = {"v": deep}
    truth["description"] = deep
    gt, facts, report = tmp_path / "gt.json", tmp_path / "f.jsonl", tmp_path / "r.json"
    gt.write_text(json.dumps(truth, ensure_ascii=False), encoding="utf-8")
    facts.write_text(json.dumps(FACT) + "\n", encoding="utf-8")
    code, _, err = run(capsys, "extraction", "--facts", str(facts), "--ground-truth", str(gt),
                       "--report", str(report))
    assert code == 2 and not report.exists()
    one_line_error(err, str(gt), "nested")


@pytest.mark.parametrize("flag", ["--golden", "--baseline", "--facts", "--ground-truth"])
def test_an_endless_stream_as_an_input_exits_2_within_its_bound(capsys, tmp_path, tiny_golden,
                                                                monkeypatch, flag):
    for kind in ("GOLDEN", "BASELINE", "FACTS", "GROUND_TRUTH"):
        monkeypatch.setenv(f"RAGSPINE_EVAL_MAX_{kind}_MB", "2")
    if flag in ("--golden", "--baseline"):
        argv = ["qa", "--engine", "engine_doubles:right_value", "--golden", str(tiny_golden),
                "--baseline", str(tmp_path / "b.json"), flag, "/dev/zero"]
    else:
        facts = tmp_path / "f.jsonl"
        facts.write_text(json.dumps(FACT) + "\n", encoding="utf-8")
        argv = ["extraction", "--facts", str(facts), "--baseline", str(tmp_path / "b.json"),
                flag, "/dev/zero"]
    code, _, err = run(capsys, *argv)
    assert code == 2
    one_line_error(err, "/dev/zero")


QA_REPORT_WRONG_SHAPES = {
    "cases a number": {"cases": 5},
    "provenance a string": {"provenance": "x"},
    "a list as an id": {"metrics": {"g": {"passed_ids": [["a"]], "failures": []}}},
    "a dict as a failure id": {"metrics": {"g": {"passed_ids": [], "failures": [{"id": {}}]}}},
    "errors a string": {"errors": "boom"},
}


@pytest.mark.parametrize("kind", sorted(QA_REPORT_WRONG_SHAPES))
def test_diff_of_a_wrongly_shaped_report_exits_2(capsys, tmp_path, kind):
    good = {"mode": "tool", "metrics": {"g": {"passed_ids": ["a"], "failures": []}}}
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(good), encoding="utf-8")
    new.write_text(json.dumps(good | QA_REPORT_WRONG_SHAPES[kind]), encoding="utf-8")
    code, out, err = run(capsys, "diff", str(old), str(new))
    assert code == 2 and out == ""
    one_line_error(err, str(new))


@pytest.mark.parametrize("doc", [
    {"cells": [{"channel": "v", "sheet": ["s"], "cell_ref": "A1", "correct": True}]},
    {"cells": [], "coverage": "all"},
    {"cells": [], "coverage": {"missing": [["A1"]]}, "golden": {"S!A1": "f"}},
    {"cells": [], "golden": ["S!A1"]},
])
def test_diff_of_a_wrongly_shaped_extraction_report_exits_2(capsys, tmp_path, doc):
    good = {"harness": "extraction", "documents": {"xlsx": {"cells": []}}}
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(good), encoding="utf-8")
    new.write_text(json.dumps({"harness": "extraction", "documents": {"xlsx": doc}}), "utf-8")
    code, _, err = run(capsys, "diff", str(old), str(new))
    assert code == 2
    one_line_error(err, str(new))


def test_diff_of_a_report_with_a_lone_surrogate_exits_2(capsys, tmp_path):
    old = tmp_path / "old.json"
    old.write_text('{"mode": "tool", "metrics": {"g": {"passed_ids": ["a\\ud800"], '
                   '"failures": []}}}', encoding="utf-8")
    code, _, err = run(capsys, "diff", str(old), str(old))
    assert code == 2
    one_line_error(err, str(old), "lone surrogate")
