"""`qa --repeat N` end to end (issue 15, deliverable 7): the in-process engine is deterministic,
so three repeats find no flaky case and give one run's verdicts; a callable that answers one
case wrong every second call is flaky there, passes, is listed apart in every output, and is
recorded as flaky; a case flaky at baseline time that then fails in every repeat regresses."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from ragspine_eval.cli.app import main

FLAKY_ENGINE = "engine_doubles:right_value_one_flaky"


def _verdicts(path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    gates = {**data["metrics"], "fabrication": data["fabrication"]}
    return {name: (g["passed_ids"], sorted(f["id"] for f in g["failures"]), g["flaky"])
            for name, g in gates.items()}


def test_three_repeats_of_the_agent_on_the_committed_set_find_no_flaky_case(tmp_path, capsys):
    once, thrice = tmp_path / "once.json", tmp_path / "thrice.json"
    baseline = tmp_path / "b.json"
    assert main(["qa", "--mode", "agent", "--baseline", str(baseline), "--report", str(once)]) == 0
    capsys.readouterr()
    assert main(["qa", "--mode", "agent", "--repeat", "3", "--baseline", str(baseline),
                 "--report", str(thrice)]) == 0
    out = capsys.readouterr().out
    assert "no flaky case: every verdict was the same in all 3 repeats" in out
    assert "FLAKY" not in out and "REGRESSION" not in out
    assert _verdicts(thrice) == _verdicts(once)
    assert json.loads(thrice.read_text(encoding="utf-8"))["repeats"] == 3


def test_a_flaky_case_passes_is_listed_apart_and_is_recorded(tmp_path, capsys, monkeypatch):
    baseline, junit, summary = tmp_path / "b.json", tmp_path / "j.xml", tmp_path / "s.md"
    monkeypatch.setenv("RSE_FLAKY_COUNTER", str(tmp_path / "calls"))
    assert main(["qa", "--engine", FLAKY_ENGINE, "--baseline", str(baseline)]) == 0
    monkeypatch.setenv("RSE_FLAKY_CASE", "num-003")
    capsys.readouterr()
    code = main(["qa", "--engine", FLAKY_ENGINE, "--baseline", str(baseline), "--repeat", "3",
                 "--junit", str(junit), "--summary-md", str(summary), "--update-baseline"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "FLAKY: 2 verdicts differed between the 3 repeats" in out
    assert "  numeric_accuracy: num-003 (pass, fail, pass)" in out
    assert "REGRESSION" not in out

    flaky = [tc for tc in ET.parse(junit).getroot().iter("testcase")
             if tc.find("flakyFailure") is not None]
    assert {(tc.get("name"), tc.get("classname")) for tc in flaky} == {
        ("num-003", "qa.tool.numeric_accuracy"), ("num-003", "qa.tool.citation_validity")}
    assert all(tc.find("failure") is None for tc in flaky)  # a flaky case passes
    assert "failed in repeat 2 of 3" in flaky[0].find("flakyFailure").get("message")
    md = summary.read_text(encoding="utf-8")
    assert "### Flaky verdicts (2)" in md and "- numeric_accuracy: num-003 (pass, fail, pass)" in md

    [entry] = json.loads(baseline.read_text(encoding="utf-8")).values()
    assert entry["repeats"] == 3
    assert entry["flaky"] == {"numeric_accuracy": ["num-003"], "citation_validity": ["num-003"]}
    assert "num-003" in entry["passed_ids"]["numeric_accuracy"]


def test_a_case_flaky_at_baseline_that_fails_in_every_repeat_regresses_and_says_so(
        tmp_path, capsys, monkeypatch):
    baseline = tmp_path / "b.json"
    monkeypatch.setenv("RSE_FLAKY_COUNTER", str(tmp_path / "calls"))
    monkeypatch.setenv("RSE_FLAKY_CASE", "num-003")
    assert main(["qa", "--engine", FLAKY_ENGINE, "--baseline", str(baseline), "--repeat", "3"]) == 0
    monkeypatch.setenv("RSE_WRONG_VALUE", "num-003")  # now wrong in every repeat
    capsys.readouterr()
    assert main(["qa", "--engine", FLAKY_ENGINE, "--baseline", str(baseline), "--repeat", "2"]) == 1
    out = capsys.readouterr().out
    assert ("numeric_accuracy: num-003 passed in the baseline and fails now (it was flaky at "
            "baseline time") in out


def test_repeat_must_be_one_or_more(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["qa", "--repeat", "0"])
    assert exc.value.code == 2
    assert "--repeat: must be 1 or more, got 0" in capsys.readouterr().err
