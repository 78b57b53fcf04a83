"""A workspace recognised by its files, read without the engine, fingerprinted so that drift
names the document that changed; the question-file check against it."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from realdocs_workspace import QUESTIONS, realdocs_workspace  # noqa: F401

from ragspine_eval import ratchet
from ragspine_eval.golden.question_files import load_question_file
from ragspine_eval.retrieval.question_check import check_against_workspace
from ragspine_eval.knowledge.workspace import (
    WorkspaceError,
    fingerprints,
    is_workspace,
    read_workspace,
)


def test_only_a_folder_with_the_engines_knowledge_db_is_a_workspace(tmp_path):
    from ragspine_eval import paths

    assert not is_workspace(paths.KB_DIR) and not is_workspace(tmp_path)
    (tmp_path / "knowledge.db").write_bytes(b"not sqlite at all")
    assert not is_workspace(tmp_path)
    with pytest.raises(WorkspaceError, match="no knowledge.db"):
        read_workspace(paths.KB_DIR)
    with pytest.raises(WorkspaceError, match="no such folder"):
        read_workspace(tmp_path / "absent")


def test_the_realdocs_workspace_read_whole(realdocs_workspace):
    ws = read_workspace(realdocs_workspace.workspace.path)
    assert is_workspace(ws.path)
    assert [d.doc_id for d in ws.docs] == ["SOURCES.md",
                                           "aascu.org_workarea_downloadasset.aspx_id=5864.pptx",
                                           "agstat.pdf", "bug62513.pptx",
                                           "rainfall_distribution.pdf"]
    assert ws.n_chunks == 197 and ws.n_facts == 0 and len(ws.review) == 4
    assert ws.doc("AGSTAT").pages == (1,) and ws.doc("bug62513").slides == tuple(range(1, 20))
    assert ws.chunking["locators"]["neither"] == 0


def test_drift_names_the_document_that_changed(realdocs_workspace, tmp_path):
    src = realdocs_workspace.workspace.path
    copy = tmp_path / "W"
    shutil.copytree(src, copy)
    before = fingerprints(copy)
    assert before == fingerprints(src)  # a copy is the same workspace
    with sqlite3.connect(copy / "knowledge.db") as con:
        con.execute("UPDATE narrative_chunk SET text = text || ' edited' WHERE doc_id = "
                    "'agstat.pdf' AND seq = 0")
    after = fingerprints(copy)
    assert after[0] != before[0]
    assert {d for d in after[1] if after[1][d] != before[1][d]} == {"agstat.pdf"}
    drift = ratchet.compare({"kb": {"fingerprint": after[0], "files": after[1]}},
                            {"kb": {"fingerprint": before[0], "files": before[1]}}).drift
    assert drift[0]["files"] == [{"file": "agstat.pdf", "change": "differs"}]


def test_question_check_names_what_the_workspace_cannot_answer(realdocs_workspace, tmp_path):
    ws = read_workspace(realdocs_workspace.workspace.path)
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "ok", "question": "a", "pages": 1, "doc": "agstat"}\n'
                    '{"id": "page", "question": "a", "pages": 7, "doc": "agstat.pdf"}\n'
                    '{"id": "doc", "question": "a", "pages": 1, "doc": "nope"}\n'
                    '{"id": "text", "question": "a", "expected": "zebra 99999"}\n'
                    '{"id": "num", "question": "a", "expected": "777.5", "doc": "rainfall_distribution"}\n',
                    encoding="utf-8")
    problems = check_against_workspace(path, ws, load_question_file(path))
    assert [p.split(" (id ")[1].split(")")[0] for p in problems] == ["'page'", "'doc'", "'text'"]
    assert "page 7 is not a page of agstat.pdf (its pages: 1-1)" in problems[0]
    assert check_against_workspace(QUESTIONS / "nl_gold.json", ws,
                                   load_question_file(QUESTIONS / "nl_gold.json")) == []
