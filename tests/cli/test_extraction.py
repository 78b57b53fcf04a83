"""`ragspine-eval extraction` and `fixtures`: exit codes, messages, and files left intact.

The end-to-end tests run the real engine over the committed fixtures against a copy of the
committed baseline.
"""

from __future__ import annotations

import json
import shutil

import pytest

from ragspine_eval import paths
from ragspine_eval.cli import main
from ragspine_eval.extraction.fixtures import DOCUMENT_SETS
from ragspine_eval.extraction.records import load_ground_truth
from ragspine_eval.extraction.report import COVERAGE
from ragspine_eval.extraction.run import ExtractionRun
from ragspine_eval.extraction.claims import fingerprint
from ragspine_eval.extraction.scoring import CHANNELS
from ragspine_eval.ratchet import history_path

BASELINE = paths.EXTRACTION_BASELINE


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def baseline(tmp_path):
    path = tmp_path / "extraction_baseline.json"
    shutil.copy(BASELINE, path)
    return path


@pytest.fixture(scope="module")
def engine_facts(tmp_path_factory):
    """The engine's facts for every fixture, saved once through the CLI (--save-facts)."""
    folder = tmp_path_factory.mktemp("facts")
    assert main(["extraction", "--baseline", str(folder / "b.json"),
                 "--save-facts", str(folder / "facts.jsonl")]) == 0
    return (folder / "facts.jsonl").read_text(encoding="utf-8").splitlines()


def write_facts(path, lines: list[str]):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --- the Done-when ------------------------------------------------------------------------------


def test_all_docs_pass_against_the_committed_baseline_with_a_full_report(capsys, tmp_path, baseline):
    report = tmp_path / "out" / "extraction_report.json"
    code, out, _ = run(capsys, "extraction", "--docs", "all", "--report", str(report),
                       "--baseline", str(baseline))
    assert code == 0, out
    assert baseline.read_bytes() == BASELINE.read_bytes()
    assert not history_path(baseline).exists()
    data = json.loads(report.read_text(encoding="utf-8"))
    assert set(data["documents"]) == {"xlsx", "pptx", "pdf"}
    for key, doc in data["documents"].items():
        assert set(doc["channels"]) == set(CHANNELS)
        assert {"ground_truth_cells", "matched", "missing", "unexpected", "rate"} <= set(doc["coverage"])
        assert data["gate"][key]["status"] == "pass"
        assert data["baselines"][key] == json.loads(BASELINE.read_text(encoding="utf-8"))[key]["metrics"]
    again = ExtractionRun.from_dict(data)
    assert again.to_dict() == data
    summary = again.summary_frame()
    assert len(summary) == 3 * (len(CHANNELS) + 1)
    assert "PASS: extraction pdf gate pass" in out


def test_one_changed_value_in_a_facts_file_exits_1_naming_the_locator(capsys, tmp_path, baseline,
                                                                       engine_facts):
    lines = list(engine_facts)
    i = next(n for n, line in enumerate(lines) if '"cell_ref": "B4"' in line and '"Performance"' in line)
    fact = json.loads(lines[i])
    fact["value"] = fact["value"] + 1
    lines[i] = json.dumps(fact, ensure_ascii=False)
    facts = write_facts(tmp_path / "facts.jsonl", lines)
    code, out, _ = run(capsys, "extraction", "--facts", str(facts), "--baseline", str(baseline))
    assert code == 1
    assert "CASE REGRESSION [xlsx] cell_value: Performance!B4 passed in the baseline" in out
    assert "Performance!B4 cell_value: expected 1234567.5, got 1234568.5" in out
    assert "FAIL: extraction xlsx gate regression" in out
    assert "PASS: extraction pptx gate pass" in out
    assert baseline.read_bytes() == BASELINE.read_bytes()


def test_the_engines_own_facts_pass_through_facts(capsys, baseline, tmp_path, engine_facts):
    facts = write_facts(tmp_path / "facts.jsonl", engine_facts)
    code, out, _ = run(capsys, "extraction", "--facts", str(facts), "--baseline", str(baseline))
    assert code == 0, out


def test_a_dropped_fact_fails_on_coverage(capsys, baseline, tmp_path, engine_facts):
    lines = [line for line in engine_facts if '"cell_ref": "R4C2"' not in line]
    facts = write_facts(tmp_path / "facts.jsonl", lines)
    code, out, _ = run(capsys, "extraction", "--facts", str(facts), "--baseline", str(baseline),
                       "--docs", "pdf")
    assert code == 1
    assert "CASE REGRESSION [pdf] coverage: page1_table1!R4C2" in out
    assert "missing: page1_table1!R4C2" in out


# --- the committed baseline ----------------------------------------------------------------------


def test_committed_baseline_has_every_set_with_case_ids_and_ground_truth_fingerprints():
    data = json.loads(BASELINE.read_text(encoding="utf-8"))
    assert set(data) == set(DOCUMENT_SETS)
    for key, doc_set in DOCUMENT_SETS.items():
        cells = load_ground_truth(doc_set.ground_truth_path())["cells"]
        entry = data[key]
        assert entry["n_cases"] == len(cells)
        assert entry["golden"] == {f"{c['sheet']}!{c['cell_ref']}": fingerprint(c) for c in cells}
        assert set(entry["passed_ids"]) == {*CHANNELS, COVERAGE}
        assert COVERAGE in entry["metrics"]
    assert set(data["pdf"]["metrics"]) == {"cell_value", COVERAGE}
    history = history_path(BASELINE).read_text(encoding="utf-8").splitlines()
    assert {json.loads(h)["mode"] for h in history} >= set(DOCUMENT_SETS)


def test_a_missing_set_bootstraps_then_passes(capsys, tmp_path):
    baseline = tmp_path / "b.json"
    code, out, _ = run(capsys, "extraction", "--docs", "pdf", "--baseline", str(baseline))
    assert code == 0 and "recorded this run as the baseline" in out
    assert list(json.loads(baseline.read_text(encoding="utf-8"))) == ["pdf"]
    code, out, _ = run(capsys, "extraction", "--docs", "pdf", "--baseline", str(baseline))
    assert code == 0 and "PASS: extraction pdf gate pass" in out


def test_an_improvement_prints_the_command_that_records_it(capsys, tmp_path, baseline):
    data = json.loads(baseline.read_text(encoding="utf-8"))
    data["xlsx"]["metrics"]["cell_value"] = 0.5
    baseline.write_text(json.dumps(data), encoding="utf-8")
    code, out, _ = run(capsys, "extraction", "--docs", "xlsx", "--baseline", str(baseline))
    assert code == 0 and "improved [xlsx] cell_value" in out
    assert "ragspine-eval extraction --docs xlsx --baseline" in out and "--update-baseline" in out


# --- bad input: exit 2, one line, nothing written -----------------------------------------------


def bad_run(capsys, tmp_path, baseline, *argv: str) -> str:
    before = baseline.read_bytes()
    report, saved = tmp_path / "r.json", tmp_path / "saved.jsonl"
    code, out, err = run(capsys, "extraction", "--baseline", str(baseline), "--report", str(report),
                         *argv)
    assert code == 2, out + err
    assert err.startswith("error: ") and err.strip().count("\n") == 0
    assert baseline.read_bytes() == before and not report.exists() and not saved.exists()
    assert not history_path(baseline).exists()
    return err


def test_bad_json_in_a_facts_file_names_the_line(capsys, tmp_path, baseline, engine_facts):
    lines = list(engine_facts)
    lines[4] = lines[4][:-5]
    facts = write_facts(tmp_path / "facts.jsonl", lines)
    err = bad_run(capsys, tmp_path, baseline, "--facts", str(facts))
    assert f"{facts}:5: bad JSON" in err


@pytest.mark.parametrize("missing", ["sheet", "cell_ref"])
def test_a_fact_without_sheet_or_cell_ref_names_the_line(capsys, tmp_path, baseline,
                                                          engine_facts, missing):
    lines = list(engine_facts)
    fact = json.loads(lines[2])
    del fact[missing]
    lines[2] = json.dumps(fact, ensure_ascii=False)
    facts = write_facts(tmp_path / "facts.jsonl", lines)
    err = bad_run(capsys, tmp_path, baseline, "--facts", str(facts))
    assert f"{facts}:3: missing '{missing}'" in err


def test_facts_naming_no_document_need_a_single_set(capsys, tmp_path, baseline):
    facts = write_facts(tmp_path / "facts.jsonl", ['{"sheet": "S", "cell_ref": "A1", "value": 1}'])
    err = bad_run(capsys, tmp_path, baseline, "--facts", str(facts))
    assert f"{facts}:1: the fact names no document" in err and "--docs" in err


def test_a_malformed_ground_truth_is_named(capsys, tmp_path, baseline):
    truth = tmp_path / "gt.json"
    truth.write_text('{"cells": [{"sheet": "S", "value": 1}]}', encoding="utf-8")
    doc = DOCUMENT_SETS["xlsx"].document_path()
    err = bad_run(capsys, tmp_path, baseline, "--doc", str(doc), "--ground-truth", str(truth))
    assert f"{truth}: cells[0]: missing 'cell_ref'" in err


def test_a_ground_truth_with_bad_json_names_line_and_column(capsys, tmp_path, baseline):
    truth = tmp_path / "gt.json"
    truth.write_text('{"cells": [\n  {"sheet": "S", "cell_ref": "A1",}\n]}', encoding="utf-8")
    facts = write_facts(tmp_path / "f.jsonl", ['{"sheet": "S", "cell_ref": "A1"}'])
    err = bad_run(capsys, tmp_path, baseline, "--facts", str(facts), "--ground-truth", str(truth))
    assert f"{truth}:2:35: bad JSON" in err


def test_a_document_that_will_not_open_exits_2(capsys, tmp_path, baseline):
    doc = tmp_path / "quarterly.xlsx"
    doc.write_bytes(b"this is not a workbook")
    truth = tmp_path / "gt.json"
    truth.write_text('{"cells": []}', encoding="utf-8")
    err = bad_run(capsys, tmp_path, baseline, "--doc", str(doc), "--ground-truth", str(truth),
                  "--save-facts", str(tmp_path / "saved.jsonl"))
    assert f"{doc}: the engine could not open this xlsx" in err


def test_a_ground_truth_for_another_document_exits_2_naming_both(capsys, tmp_path, baseline):
    doc, truth = DOCUMENT_SETS["pptx"].document_path(), DOCUMENT_SETS["xlsx"].ground_truth_path()
    err = bad_run(capsys, tmp_path, baseline, "--doc", str(doc), "--ground-truth", str(truth),
                  "--save-facts", str(tmp_path / "saved.jsonl"))
    assert err.startswith(f"error: {truth}: this ground truth is for 'product_lines.xlsx'")
    assert "the document given is 'product_review.pptx'" in err


@pytest.mark.parametrize("docs", [[], ["--docs", "xlsx"]])
def test_an_unknown_set_name_exits_2_naming_the_line_the_names_and_the_known_sets(
        capsys, tmp_path, baseline, engine_facts, docs):
    lines = [line.replace('"doc": "xlsx"', '"doc": "xlxs"') for line in engine_facts]
    facts = write_facts(tmp_path / "facts.jsonl", lines)
    err = bad_run(capsys, tmp_path, baseline, "--facts", str(facts), *docs)
    assert err.startswith(f"error: {facts}:1: \"doc\" names an unknown document set 'xlxs'; "
                          f"the known sets are xlsx, pptx, pdf (in any case)")


def test_set_names_in_another_case_are_accepted(capsys, tmp_path, baseline, engine_facts):
    lines = [line.replace('"doc": "xlsx", "document": "product_lines.xlsx"', '"doc": "XLSX"')
             for line in engine_facts]
    assert sum('"doc": "XLSX"' in line for line in lines) == 120
    facts = write_facts(tmp_path / "facts.jsonl", lines)
    code, out, _ = run(capsys, "extraction", "--facts", str(facts), "--baseline", str(baseline))
    assert code == 0 and "PASS: extraction xlsx gate pass" in out


def test_a_corrupt_baseline_exits_2_and_is_left_as_it_is(capsys, tmp_path, baseline):
    baseline.write_text('{"xlsx": {"metrics": {"cell_value": 2}}}', encoding="utf-8")
    err = bad_run(capsys, tmp_path, baseline, "--update-baseline")
    assert "metric 'cell_value' must be a rate" in err


@pytest.mark.parametrize("argv, message", [
    (["--doc", "x.xlsx"], "needs --ground-truth"),
    (["--ground-truth", "gt.json"], "--ground-truth scores --doc FILE"),
    (["--doc", "x.xlsx", "--facts", "f.jsonl"], "give one of them"),
    (["--facts", "f.jsonl", "--save-facts", "s.jsonl"], "--save-facts writes the engine's facts"),
    (["--docs", "xlsx", "--facts", "f.jsonl", "--ground-truth", "gt.json"], "--docs picks fixture"),
])
def test_contradictory_flags_exit_2(capsys, tmp_path, baseline, argv, message):
    err = bad_run(capsys, tmp_path, baseline, *argv)
    assert message in err


# --- a document of the user's own ---------------------------------------------------------------


def test_own_document_is_scored_without_a_gate_unless_a_baseline_is_given(capsys, tmp_path):
    doc_set = DOCUMENT_SETS["pptx"]
    truth = json.loads(doc_set.ground_truth_path().read_text(encoding="utf-8"))
    truth["cells"] = truth["cells"][:10]
    gt = tmp_path / "my_truth.json"
    gt.write_text(json.dumps(truth, ensure_ascii=False), encoding="utf-8")
    report = tmp_path / "r.json"
    code, out, _ = run(capsys, "extraction", "--doc", str(doc_set.document_path()),
                       "--ground-truth", str(gt), "--report", str(report))
    assert code == 0 and "no baseline gate for product_review.pptx" in out
    doc = json.loads(report.read_text(encoding="utf-8"))["documents"]["product_review.pptx"]
    assert doc["coverage"]["ground_truth_cells"] == 10 and len(doc["coverage"]["unexpected"]) == 35
    own = tmp_path / "mine.json"
    code, out, _ = run(capsys, "extraction", "--doc", str(doc_set.document_path()),
                       "--ground-truth", str(gt), "--baseline", str(own))
    assert code == 0 and list(json.loads(own.read_text(encoding="utf-8"))) == ["product_review.pptx"]


def test_facts_scored_against_own_ground_truth(capsys, tmp_path):
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps({"document": "q.pdf", "cells": [
        {"sheet": "page1_table1", "cell_ref": "R1C1", "value": "Period"},
        {"sheet": "page1_table1", "cell_ref": "R1C2", "value": "Revenue"}]}), encoding="utf-8")
    facts = write_facts(tmp_path / "facts.jsonl", [
        '{"sheet": "page1_table1", "cell_ref": "R1C1", "value": "Period"}',
        '{"sheet": "page1_table1", "cell_ref": "R1C2", "value": "Revenu"}'])
    code, out, _ = run(capsys, "extraction", "--facts", str(facts), "--ground-truth", str(gt))
    assert code == 0
    assert "cell_value             0.5000       1/2" in out and "page1_table1!R1C2" in out


def test_facts_share_the_baseline_key_of_the_document_their_ground_truth_names(
        capsys, tmp_path, engine_facts):
    xlsx = DOCUMENT_SETS["xlsx"]
    own = tmp_path / "own.json"
    code, _, _ = run(capsys, "extraction", "--doc", str(xlsx.document_path()),
                     "--ground-truth", str(xlsx.ground_truth_path()), "--baseline", str(own))
    assert code == 0 and list(json.loads(own.read_text(encoding="utf-8"))) == ["product_lines.xlsx"]
    facts = write_facts(tmp_path / "facts.jsonl", engine_facts)
    code, out, _ = run(capsys, "extraction", "--facts", str(facts),
                       "--ground-truth", str(xlsx.ground_truth_path()), "--baseline", str(own))
    assert code == 0 and "PASS: extraction product_lines.xlsx gate pass" in out
    assert list(json.loads(own.read_text(encoding="utf-8"))) == ["product_lines.xlsx"]


def test_facts_against_a_ground_truth_naming_no_document_are_keyed_by_its_stem(capsys, tmp_path):
    gt = tmp_path / "q3_truth.json"
    gt.write_text(json.dumps([{"sheet": "S", "cell_ref": "A1", "value": 1}]), encoding="utf-8")
    facts = write_facts(tmp_path / "facts.jsonl", ['{"sheet": "S", "cell_ref": "A1", "value": 1}'])
    own = tmp_path / "own.json"
    code, out, _ = run(capsys, "extraction", "--facts", str(facts), "--ground-truth", str(gt),
                       "--baseline", str(own))
    assert code == 0 and list(json.loads(own.read_text(encoding="utf-8"))) == ["q3_truth"]


# --- fixtures ------------------------------------------------------------------------------------


def test_the_cli_offers_exactly_the_fixture_sets():
    from ragspine_eval.cli.extraction import FIXTURE_SETS

    assert FIXTURE_SETS == tuple(DOCUMENT_SETS)


def test_fixtures_check_passes_on_the_committed_fixtures(capsys):
    code, out, _ = run(capsys, "fixtures", "--check")
    assert code == 0 and out.count("identical to the generator's output") == 6


def test_fixtures_writes_a_fresh_folder_and_check_catches_an_edit(capsys, tmp_path):
    code, out, _ = run(capsys, "fixtures", "--out", str(tmp_path), "--docs", "pdf")
    assert code == 0 and out.count("written") == 2
    truth = tmp_path / "pdf" / "pdf_ground_truth.json"
    truth.write_text(truth.read_text(encoding="utf-8").replace('"2025Q1"', '"2025Q2"', 1),
                     encoding="utf-8")
    code, out, _ = run(capsys, "fixtures", "--out", str(tmp_path), "--docs", "pdf", "--check")
    assert code == 1 and "pdf_ground_truth.json: DIFFERS" in out


def test_junit_summary_and_provenance_from_the_cli(capsys, tmp_path, baseline):
    import xml.etree.ElementTree as ET

    report, junit, summary = tmp_path / "r.json", tmp_path / "x.xml", tmp_path / "s.md"
    code, out, _ = run(capsys, "extraction", "--baseline", str(baseline), "--report", str(report),
                       "--junit", str(junit), "--summary-md", str(summary))
    assert code == 0
    data = json.loads(report.read_text(encoding="utf-8"))
    prov = data["provenance"]
    assert prov["harness"] == "extraction" and prov["engine_version"]
    assert prov["baseline"]["key"] == "xlsx,pptx,pdf" and prov["baseline"]["fingerprint"]
    assert prov["golden"]["n_cases"] == sum(d["coverage"]["ground_truth_cells"]
                                            for d in data["documents"].values())
    root = ET.parse(junit).getroot()
    scored = sum(c["total"] for d in data["documents"].values() for c in d["channels"].values())
    wrong = sum(len(c["mismatches"]) for d in data["documents"].values()
                for c in d["channels"].values())
    assert int(root.get("tests")) == scored + prov["golden"]["n_cases"]
    assert int(root.get("failures")) == wrong + sum(len(d["coverage"]["missing"])
                                                    for d in data["documents"].values())
    assert summary.read_text(encoding="utf-8").startswith("## ragspine-eval extraction")
    assert "extraction · mode xlsx,pptx,pdf · engine rag-spine" in out


# --- outputs and flags are checked before the run -----------------------------------------------


@pytest.mark.parametrize("flag, target", [
    ("--report", lambda d: d), ("--save-facts", lambda d: d), ("--junit", lambda d: d),
    ("--summary-md", lambda d: d / "file" / "s.md"),
])
def test_an_unwritable_output_exits_2_before_the_run(capsys, tmp_path, baseline, flag, target):
    (tmp_path / "file").write_text("not a folder", encoding="utf-8")
    path = target(tmp_path)
    err = bad_run(capsys, tmp_path, baseline, flag, str(path))
    assert err.startswith(f"error: {path}: ")


def test_a_new_baseline_is_not_started_when_the_report_cannot_be_written(capsys, tmp_path):
    new = tmp_path / "ebl2.json"
    code, out, err = run(capsys, "extraction", "--docs", "pdf", "--baseline", str(new),
                         "--report", str(tmp_path))
    assert code == 2 and out == "" and f"{tmp_path}: the report path is a folder" in err
    assert not new.exists() and not history_path(new).exists()


def test_a_baseline_in_a_folder_that_does_not_exist_exits_2(capsys, tmp_path):
    typo = tmp_path / "typo" / "extraction_baseline.json"
    code, out, err = run(capsys, "extraction", "--docs", "pdf", "--baseline", str(typo))
    assert code == 2 and out == "" and "does not exist" in err
    assert not typo.parent.exists()


@pytest.mark.parametrize("name, content", [("empty.jsonl", ""), ("blank.jsonl", "\n \n"),
                                           ("empty.json", "[]"), ("empty.json", '{"facts": []}')])
def test_a_facts_file_that_holds_no_fact_exits_2(capsys, tmp_path, baseline, name, content):
    facts = tmp_path / name
    facts.write_text(content, encoding="utf-8")
    err = bad_run(capsys, tmp_path, baseline, "--facts", str(facts))
    assert f"{facts}: the facts file holds no fact" in err


def test_allow_regression_without_update_baseline_exits_2(capsys, tmp_path, baseline):
    err = bad_run(capsys, tmp_path, baseline, "--allow-regression", "--reason", "pdf tables moved")
    assert "add --update-baseline" in err


# --- your own documents (issue 16) ---------------------------------------------------------------


def test_a_facts_file_for_one_pdf_scores_only_that_document(capsys, tmp_path, baseline,
                                                             engine_facts):
    pdf = [line for line in engine_facts if '"product_tables.pdf"' in line]
    lines = [json.dumps({k: v for k, v in json.loads(line).items() if k != "doc"})
             for line in pdf]  # named by "document" only
    facts = write_facts(tmp_path / "pdf.jsonl", lines)
    code, out, err = run(capsys, "extraction", "--facts", str(facts), "--baseline", str(baseline))
    assert code == 0, out + err
    assert "extraction · pdf · " in out
    assert "· xlsx ·" not in out and "· pptx ·" not in out and "PASS: extraction pdf" in out
    assert baseline.read_bytes() == BASELINE.read_bytes()


def test_own_document_whose_ground_truth_aligns_with_nothing_exits_2_naming_the_sheet(
        capsys, tmp_path):
    doc = DOCUMENT_SETS["xlsx"].document_path()
    truth = tmp_path / "gt.json"
    truth.write_text(json.dumps({"cells": [{"sheet": "performance", "cell_ref": "b4",
                                            "value": 1}]}), encoding="utf-8")
    report = tmp_path / "r.json"
    code, _, err = run(capsys, "extraction", "--doc", str(doc), "--ground-truth", str(truth),
                       "--report", str(report))
    assert code == 2 and "'Performance'" in err and not report.exists()


REALDOCS = paths.PROJECT_ROOT.parent / "shared" / "realdocs"
HAND_TRUTHS = sorted((paths.PROJECT_ROOT / "tests" / "fixtures" / "realdocs_truth").glob("*.json"))


@pytest.mark.skipif(not REALDOCS.is_dir(), reason="../shared/realdocs absent")
def test_one_manifest_gates_the_eight_real_documents_and_a_changed_cell_names_doc_and_locator(
        capsys, tmp_path):
    entries = [{"document": str(REALDOCS / t.stem), "ground_truth": str(t)} for t in HAND_TRUTHS]
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"baseline": "b.json", "documents": entries}), encoding="utf-8")
    report, junit, summary = tmp_path / "r.json", tmp_path / "j.xml", tmp_path / "s.md"
    code, out, err = run(capsys, "extraction", "--manifest", str(manifest), "--report",
                         str(report), "--junit", str(junit), "--summary-md", str(summary))
    assert code == 0, out + err
    stored = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))
    assert sorted(stored) == sorted(t.stem for t in HAND_TRUTHS) and len(stored) == 8
    assert len(json.loads(report.read_text(encoding="utf-8"))["documents"]) == 8
    assert all(f"{t.stem}" in summary.read_text(encoding="utf-8") for t in HAND_TRUTHS)
    assert run(capsys, "extraction", "--manifest", str(manifest))[0] == 0

    changed = json.loads((HAND_TRUTHS[0]).read_text(encoding="utf-8"))
    cell = next(c for c in changed["cells"] if isinstance(c["value"], int | float))
    cell["value"] += 1
    (tmp_path / "changed.json").write_text(json.dumps(changed), encoding="utf-8")
    entries[0]["ground_truth"] = "changed.json"
    manifest.write_text(json.dumps({"baseline": "b.json", "documents": entries}), encoding="utf-8")
    code, out, _ = run(capsys, "extraction", "--manifest", str(manifest))
    assert code == 1
    locator = f"{cell['sheet']}!{cell['cell_ref']}"
    assert f"GOLDEN CHANGE [{HAND_TRUTHS[0].stem}] {locator}" in out
    assert f"FAIL: extraction {HAND_TRUTHS[0].stem} gate" in out


def test_manifest_with_doc_is_refused(capsys, tmp_path):
    code, _, err = run(capsys, "extraction", "--manifest", str(tmp_path / "m.json"), "--docs",
                       "xlsx")
    assert code == 2 and "--manifest" in err and "--docs" in err
