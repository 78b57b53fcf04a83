"""Engine errors apart from failures, end to end through the CLI (issue 15, deliverable 1): a
callable that answers every case right, then the same callable with every refusal case timing
out. The errors have no verdict: fabrication stays 0, no case regresses, the run fails with
"engine errors" as its reason, JUnit shows <error> elements and the baseline is left alone."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from ragspine_eval import paths
from ragspine_eval.cli.app import main

ENGINE = "engine_doubles:right_value_refusals_time_out"
REFUSALS = sorted(json.loads(line)["id"] for line in
                  paths.QA_GOLDEN_SET.read_text(encoding="utf-8").splitlines()
                  if json.loads(line)["expected"]["refuse"])


def _qa(tmp_path, *extra: str) -> list[str]:
    return ["qa", "--engine", ENGINE, "--baseline", str(tmp_path / "b.json"), *extra]


def test_refusal_cases_that_time_out_are_engine_errors_not_fabrications(
        tmp_path, capsys, monkeypatch):
    baseline = tmp_path / "b.json"
    assert main(_qa(tmp_path)) == 0  # the healthy service records the baseline
    recorded = baseline.read_bytes()
    capsys.readouterr()

    monkeypatch.setenv("RSE_STAGING_DOWN", "1")
    report, junit, summary = tmp_path / "r.json", tmp_path / "j.xml", tmp_path / "s.md"
    code = main(_qa(tmp_path, "--report", str(report), "--junit", str(junit),
                    "--summary-md", str(summary)))
    out = capsys.readouterr().out
    assert code == 1
    assert baseline.read_bytes() == recorded  # never recorded, never lowered

    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["fabrication_count"] == 0 and data["fabrication"]["total"] == 0
    assert sorted(e["id"] for e in data["errors"]) == REFUSALS and len(REFUSALS) == 13
    assert data["metrics"]["refusal_appropriateness"]["failures"] == []
    assert "fabrication: 0 of 0 refusal answers" in out
    assert "ENGINE ERRORS: 13 engine errors: the engine raised" in out
    assert f"error {REFUSALS[0]}: TimeoutError: staging did not answer" in out
    assert "REGRESSION" not in out  # no case passed at baseline and "fails" now
    assert "FAIL because of 13 engine errors" in out
    assert "baseline: its rates on the 58 cases answered now" in out  # table agrees with gate
    assert out.rstrip().splitlines()[-1] == f"FAIL: qa {data['provenance']['baseline']['key']}: " \
                                            f"13 engine errors"

    root = ET.parse(junit).getroot()
    errors = root.findall(".//testcase/error")
    gates = [*data["metrics"].values(), data["fabrication"]]
    assert int(root.get("errors")) == len(errors) == sum(len(g["engine_errors"]) for g in gates)
    assert int(root.get("failures")) == sum(len(g["failures"]) for g in gates)
    assert not {tc.get("name") for tc in root.iter("testcase")
                if tc.find("failure") is not None} & set(REFUSALS)
    assert {e.get("type") for e in errors} == {"EngineError"}
    assert {tc.get("name") for tc in root.iter("testcase") if tc.find("error") is not None} \
        == set(REFUSALS)
    assert "staging did not answer" in errors[0].get("message")

    md = summary.read_text(encoding="utf-8")
    assert "FAIL (engine errors)" in md and "### Engine errors (13)" in md
    assert md.index("### Engine errors") < md.index("### Regressions")


def test_a_healthy_run_has_no_error_element_and_passes(tmp_path, capsys):
    junit = tmp_path / "j.xml"
    assert main(_qa(tmp_path)) == 0
    assert main(_qa(tmp_path, "--junit", str(junit))) == 0
    out = capsys.readouterr().out
    assert "ENGINE ERRORS" not in out and "engine errors" not in out
    root = ET.parse(junit).getroot()
    assert root.get("errors") == "0" and not root.findall(".//error")


def test_engine_errors_do_not_bootstrap_a_missing_baseline(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RSE_STAGING_DOWN", "1")
    assert main(_qa(tmp_path)) == 1
    out = capsys.readouterr().out
    assert not (tmp_path / "b.json").exists()
    assert "nothing was recorded" in out and "13 engine errors" in out


def test_a_real_regression_beside_engine_errors_is_still_named(tmp_path, capsys, monkeypatch):
    """Errors do not hide what the answered cases did: a case that answers wrong now regresses."""
    baseline = tmp_path / "b.json"
    assert main(_qa(tmp_path)) == 0
    entry = json.loads(baseline.read_text(encoding="utf-8"))
    [key] = entry
    numeric = entry[key]["passed_ids"]["numeric_accuracy"]
    monkeypatch.setenv("RSE_STAGING_DOWN", "1")
    monkeypatch.setenv("RSE_WRONG_VALUE", numeric[0])
    capsys.readouterr()
    assert main(_qa(tmp_path)) == 1
    out = capsys.readouterr().out
    assert f"CASE REGRESSION [{key}] numeric_accuracy: {numeric[0]} passed" in out
    assert not any(f"CASE REGRESSION [{key}] refusal_appropriateness" in l for l in out.splitlines())
    assert out.index("CASE REGRESSION") < out.index("FAIL because of 13 engine errors")
