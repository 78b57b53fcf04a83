"""The held-out workspace of the drafting and `gold` tests: the two public PDFs of
../shared/realdocs (no drafting code was written from them) built once per session, and the
hand-written questions over them (drafting/fixtures/held_out_questions.jsonl: each positive
question's `expected` figure read by hand off the PDF, its `doc` and `pages`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from realdocs_workspace import REALDOCS

HELD_OUT = Path(__file__).resolve().parent / "drafting" / "fixtures" / "held_out_questions.jsonl"
PDFS = ("agstat.pdf", "rainfall_distribution.pdf")


def hand_written() -> list[dict]:
    return [json.loads(line) for line in HELD_OUT.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="session")
def held_out_ws(tmp_path_factory):
    """The workspace of the two PDFs (skipped where ../shared/realdocs is absent)."""
    if not all((REALDOCS / name).is_file() for name in PDFS):
        pytest.skip("../shared/realdocs (its two PDFs) absent")
    from ragspine_eval.knowledge.workspace_build import build_workspace

    folder = tmp_path_factory.mktemp("held-out-docs")
    for name in PDFS:
        shutil.copy(REALDOCS / name, folder / name)
    return build_workspace(folder, tmp_path_factory.mktemp("held-out-ws") / "ws").workspace.path


@pytest.fixture(scope="session")
def pdf_text():
    """Each PDF's page texts by its file's sha256, as pdfplumber reads them: the independent
    reading the drafted claims are checked against (no code of drafting/ is used)."""
    import hashlib

    import pdfplumber

    out = {}
    for name in PDFS:
        data = (REALDOCS / name).read_bytes()
        with pdfplumber.open(REALDOCS / name) as pdf:
            out[hashlib.sha256(data).hexdigest()] = (name, [p.extract_text() or ""
                                                            for p in pdf.pages])
    return out
