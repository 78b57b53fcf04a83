"""Issue 14's output reproducers: JUnit always parses, Markdown carries no live HTML, the
terminal no escape sequence; an output never lands on an input; exit 2 after the gate leaves the
baseline as it was; a bug is exit 3."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET

import pytest

from ragspine_eval import paths
from ragspine_eval.cli.app import main
from ragspine_eval.outputs.junit import JUnitCase, junit_xml
from ragspine_eval.outputs.summary_md import GateRow, Summary, summary_markdown
from ragspine_eval.ratchet.baseline_file import history_path

HOSTILE = "clar-\x01\x1b[2J\x0c\ud800\ufffe<img src=x onerror=alert(3)>"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_junit_parses_whatever_the_names_and_answers_hold():
    case = JUnitCase(HOSTILE, HOSTILE, HOSTILE, False, expected=HOSTILE, actual=HOSTILE)
    text = junit_xml([case], HOSTILE, {HOSTILE: HOSTILE})
    root = ET.fromstring(text)
    assert root.find("testsuite/testcase").get("name").startswith("clar-\\x01\\x1b[2J")


def test_markdown_shows_html_from_data_as_text():
    text = summary_markdown(Summary(HOSTILE, "FAIL", [HOSTILE], [GateRow(HOSTILE, 0, 1, "0")],
                                    [HOSTILE], []))
    assert "<img" not in text and "&lt;img src=x onerror=alert(3)>" in text
    assert "\x1b" not in text and "\x01" not in text


def clarification_line(case_id: str) -> str:
    line = next(line for line in paths.QA_GOLDEN_SET.read_text("utf-8").splitlines()
                if '"case_type": "clarification"' in line)
    return json.dumps(json.loads(line) | {"id": case_id}, ensure_ascii=False)


def test_a_run_with_markup_ids_and_escape_sequences_from_the_engine_stays_inert(
        capsys, tmp_path, tiny_golden):
    golden = tmp_path / "g.jsonl"
    golden.write_text(tiny_golden.read_text("utf-8")
                      + clarification_line("clar-<img src=x onerror=alert(3)>") + "\n", "utf-8")
    junit, md, report = tmp_path / "j.xml", tmp_path / "s.md", tmp_path / "r.json"
    code, out, err = run(capsys, "qa", "--engine", "faults.hostile_engines:escape_in_error",
                         "--golden", str(golden), "--baseline", str(tmp_path / "b.json"),
                         "--junit", str(junit), "--summary-md", str(md), "--report", str(report))
    assert code == 1  # an engine error fails the run; it is no crash
    assert "\x1b" not in out + err and "\\x1b[2J" in out
    ET.parse(junit)
    assert "<img" not in md.read_text("utf-8")
    data = json.loads(report.read_text("utf-8"))
    errors = {e["id"]: e["error"] for e in data["errors"]}
    assert set(errors) == {"num-001", "ref-002"} and "lone surrogate" in errors["num-001"]
    assert any("\x1b[31m" in c["answer"] for c in data["cases"])  # kept in the JSON, escaped


@pytest.fixture
def kb(tmp_path):
    folder = tmp_path / "kb"
    shutil.copytree(paths.KB_DIR, folder)
    return folder


@pytest.mark.parametrize("flag", ["--report", "--junit", "--summary-md"])
@pytest.mark.parametrize("target", ["golden", "kb file"])
def test_a_qa_output_on_an_input_exits_2_before_the_run(capsys, tmp_path, tiny_golden, kb,
                                                        flag, target):
    victim = tiny_golden if target == "golden" else kb / "facts.csv"
    before = victim.read_bytes()
    code, _, err = run(capsys, "qa", "--engine", "engine_doubles:right_value", "--golden",
                       str(tiny_golden), "--kb", str(kb), "--baseline", str(tmp_path / "b.json"),
                       flag, str(victim))
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert victim.read_bytes() == before and not (tmp_path / "b.json").exists()


def test_an_extraction_report_on_its_ground_truth_exits_2(capsys, tmp_path):
    gt = tmp_path / "t.json"
    shutil.copy(paths.FIXTURES_DIR / "fixtures_ground_truth.json", gt)
    facts = tmp_path / "f.jsonl"
    facts.write_text('{"sheet": "Performance", "cell_ref": "B4", "value": 1.0}\n', "utf-8")
    before = gt.read_bytes()
    code, _, err = run(capsys, "extraction", "--facts", str(facts), "--ground-truth", str(gt),
                       "--report", str(gt))
    assert code == 2 and "ground truth" in err and gt.read_bytes() == before


@pytest.mark.parametrize("flags", [["--update-baseline", "--reason", "test"], ["--ratchet"]])
def test_an_output_that_fails_after_the_gate_puts_the_baseline_back(capsys, tmp_path,
                                                                    tiny_golden, flags):
    baseline = tmp_path / "b.json"
    assert run(capsys, "qa", "--engine", "engine_doubles:echo", "--golden", str(tiny_golden),
               "--baseline", str(baseline))[0] == 0  # bootstrap a low baseline: the run gains
    before, history = baseline.read_bytes(), history_path(baseline).read_bytes()
    code, _, err = run(capsys, "qa", "--engine", "engine_doubles:right_value", "--golden",
                       str(tiny_golden), "--baseline", str(baseline), "--junit", "/dev/full",
                       *flags)
    assert code == 2 and "cannot write the junit file" in err
    assert baseline.read_bytes() == before and history_path(baseline).read_bytes() == history
    assert not list(tmp_path.glob(".*.tmp")) and not list(tmp_path.glob("*.journal"))


def test_an_exception_inside_a_gate_is_exit_3_never_1(capsys, tmp_path, tiny_golden,
                                                      monkeypatch):
    from ragspine_eval.qa import gates

    def broken(case, outcome):  # noqa: ANN001, ANN202
        raise ZeroDivisionError("injected bug")

    monkeypatch.setattr(gates, "numeric_accuracy", broken)
    code, _, err = run(capsys, "qa", "--engine", "engine_doubles:right_value", "--golden",
                       str(tiny_golden), "--baseline", str(tmp_path / "b.json"))
    assert code == 3
    assert "this is a bug in ragspine-eval" in err and "ZeroDivisionError" in err


def test_diff_prints_escape_sequences_from_report_ids_as_text(capsys, tmp_path):
    esc = "case-\x1b]0;pwned\x07\x1b[2J"
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps({"mode": "tool", "metrics": {"g": {"passed_ids": [esc],
                                                                 "failures": []}}}), "utf-8")
    new.write_text(json.dumps({"mode": "tool", "metrics": {"g": {"passed_ids": [],
                                                                 "failures": [{"id": esc}]}}}),
                   "utf-8")
    code, out, err = run(capsys, "diff", str(old), str(new))
    assert code == 1 and "\x1b" not in out + err and "\x07" not in out
    assert "case-\\x1b]0;pwned\\x07\\x1b[2J" in out


def test_a_bad_input_message_reaches_the_terminal_escaped(capsys, tmp_path):
    report = tmp_path / "r\x1b[2J.json"
    code, _, err = run(capsys, "diff", str(report), str(report))
    assert code == 2 and "\x1b" not in err and "r\\x1b[2J.json" in err
