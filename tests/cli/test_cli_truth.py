"""`ragspine-eval truth draft|check`, and a draft scored by `extraction --doc` on the real
documents of ../shared/realdocs (skipped where that folder is absent, never copied)."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest

from ragspine_eval.cli import main

REALDOCS = Path(__file__).resolve().parents[3] / "shared" / "realdocs"
DOCUMENTS = sorted(p for p in REALDOCS.glob("*") if p.suffix in (".xlsx", ".pptx", ".pdf"))


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def workbook(tmp_path):
    book = openpyxl.Workbook()
    book.active.title = "balance"
    book.active["B2"] = 1000
    path = tmp_path / "book.xlsx"
    book.save(path)
    return path


def test_draft_writes_a_ground_truth_that_check_accepts(capsys, tmp_path, workbook):
    out = tmp_path / "d.json"
    code, stdout, _ = run(capsys, "truth", "draft", workbook, "--out", out)
    assert code == 0 and "1 cells, all unreviewed" in stdout
    assert json.loads(out.read_text())["cells"][0]["reviewed"] is False
    code, stdout, _ = run(capsys, "truth", "check", out, "--doc", workbook)
    assert code == 0 and stdout.splitlines()[-1] == "OK: 0 error(s), 0 warning(s)"


def test_check_exits_2_on_a_sheet_named_in_another_case_and_names_the_real_one(
        capsys, tmp_path, workbook):
    truth = tmp_path / "gt.json"
    truth.write_text(json.dumps({"cells": [{"sheet": "Balance", "cell_ref": "B2", "value": 1}]}))
    code, stdout, _ = run(capsys, "truth", "check", truth, "--doc", workbook)
    assert code == 2
    assert "error:" in stdout and "'balance'" in stdout


def test_draft_of_a_missing_document_exits_2_and_writes_nothing(capsys, tmp_path):
    out = tmp_path / "d.json"
    code, _, err = run(capsys, "truth", "draft", tmp_path / "nope.xlsx", "--out", out)
    assert code == 2 and "nope.xlsx" in err and not out.exists()


@pytest.mark.skipif(not DOCUMENTS, reason="../shared/realdocs absent")
@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_a_draft_of_each_real_document_scores_without_bad_input_or_a_bug(
        capsys, tmp_path, document):
    draft = tmp_path / "d.json"
    assert run(capsys, "truth", "draft", document, "--out", draft)[0] == 0
    code, stdout, err = run(capsys, "extraction", "--doc", document, "--ground-truth", draft)
    assert code in (0, 1), err
    assert stdout.splitlines()[0].startswith("WARNING: scored against")
