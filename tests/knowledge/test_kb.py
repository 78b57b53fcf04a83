"""The default knowledge base: every shared row kept, builds deterministic and idempotent."""

from __future__ import annotations

import csv
import json
import sqlite3

import pytest

from ragspine_eval import paths
from ragspine_eval.knowledge import kb

SHARED = paths.PROJECT_ROOT.parent / "shared" / "eval_kb"
# The shared eval KB as it was handed over, so the "every row kept" check runs on any clone.
SNAPSHOT = paths.PROJECT_ROOT / "tests" / "fixtures" / "shared_eval_kb"


def active_data(built: kb.EvalKB) -> tuple[list, list]:
    with sqlite3.connect(built.fact_db) as con:
        facts = con.execute("SELECT metric_code, entity, channel, period_type, period, value, unit, "
                            "source_doc_id, source_locator FROM fact_metric ORDER BY 1,2,3,4,5").fetchall()
    with sqlite3.connect(built.chunk_db) as con:
        chunks = con.execute("SELECT doc_id, seq, text, source_locator FROM narrative_chunk "
                             "WHERE active = 1 ORDER BY doc_id, seq").fetchall()
    return facts, chunks


def test_every_shared_row_is_kept():
    shared_facts = list(csv.DictReader((SNAPSHOT / "facts.csv").open(encoding="utf-8")))
    assert len(shared_facts) == 22
    ours = {(r.metric, r.entity, r.channel, r.period_type, r.period, r.value, r.unit, r.doc, r.locator)
            for r in kb._EVAL_FACT_ROWS}
    for row in shared_facts:
        assert (row["metric"], row["entity"], row["channel"], row["period_type"], row["period"],
                float(row["value"]), row["unit"], row["doc"], row["locator"]) in ours
    shared_docs = [json.loads(line) for line in (SNAPSHOT / "narratives.jsonl").open(encoding="utf-8")]
    assert len(shared_docs) == 6
    ours_docs = {d.doc_id: d for d in kb._EVAL_NARRATIVE_DOCS}
    for doc in shared_docs:
        assert ours_docs[doc["doc_id"]].text == doc["text"]
        assert ours_docs[doc["doc_id"]].period == doc["period"]


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/eval_kb is not beside this checkout "
                    "(the snapshot in tests/fixtures stands in for it)")
def test_the_snapshot_is_the_shared_kb_byte_for_byte():
    for name in ("facts.csv", "narratives.jsonl"):
        assert (SNAPSHOT / name).read_bytes() == (SHARED / name).read_bytes()


def test_build_puts_every_row_in_the_engine_stores(built_kb):
    facts, chunks = active_data(built_kb)
    assert len(facts) == len(built_kb.facts)
    assert {c[0] for c in chunks} == {d.doc_id for d in built_kb.docs}


def test_second_build_gives_the_same_active_data(tmp_path):
    first = active_data(kb.build_eval_kb(db_dir=tmp_path))
    second = active_data(kb.build_eval_kb(db_dir=tmp_path))
    elsewhere = active_data(kb.build_eval_kb(db_dir=tmp_path / "other"))
    assert first == second == elsewhere


def test_a_bad_fact_row_names_file_and_line(tmp_path):
    (tmp_path / "facts.csv").write_text(
        (paths.KB_DIR / "facts.csv").read_text(encoding="utf-8") +
        "REVENUE,ACME_HK,HK,TOTAL,FY,2023,lots,USD_M,x.pptx,slide=1\n", encoding="utf-8")
    (tmp_path / "narratives.jsonl").write_text(
        (paths.KB_DIR / "narratives.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    n_lines = len((tmp_path / "facts.csv").read_text(encoding="utf-8").splitlines())
    with pytest.raises(kb.KnowledgeBaseError, match=rf"facts.csv:{n_lines}: value 'lots' is not a number"):
        kb.build_eval_kb(tmp_path, tmp_path / "db")
    assert not (tmp_path / "db").exists()


def test_fingerprint_follows_the_bytes(tmp_path):
    for name in ("facts.csv", "narratives.jsonl"):
        (tmp_path / name).write_bytes((paths.KB_DIR / name).read_bytes())
    assert kb.kb_fingerprint(tmp_path) == kb.kb_fingerprint(paths.KB_DIR)
    with (tmp_path / "facts.csv").open("a", encoding="utf-8") as f:
        f.write("ROE,ACME_CN,CN,TOTAL,FY,2025,9.9,PCT,x.pptx,slide=1\n")
    assert kb.kb_fingerprint(tmp_path) != kb.kb_fingerprint(paths.KB_DIR)


def test_each_file_has_its_own_fingerprint_and_only_the_changed_one_moves(tmp_path):
    for name in (kb.FACTS_FILE, kb.NARRATIVES_FILE):
        (tmp_path / name).write_bytes((paths.KB_DIR / name).read_bytes())
    before = kb.kb_file_fingerprints(tmp_path)
    assert before == kb.kb_file_fingerprints(paths.KB_DIR)
    assert set(before) == {"facts.csv", "narratives.jsonl"}
    assert all(len(fp) == 16 and int(fp, 16) >= 0 for fp in before.values())
    facts = tmp_path / kb.FACTS_FILE
    facts.write_text(facts.read_text(encoding="utf-8").replace("4500.0", "4501.0", 1),
                     encoding="utf-8")
    after = kb.kb_file_fingerprints(tmp_path)
    assert after["facts.csv"] != before["facts.csv"]
    assert after["narratives.jsonl"] == before["narratives.jsonl"]
    assert kb.kb_fingerprint(tmp_path) != kb.kb_fingerprint(paths.KB_DIR)


def test_a_build_carries_both_fingerprints(built_kb):
    assert built_kb.fingerprint == kb.kb_fingerprint()
    assert built_kb.files == kb.kb_file_fingerprints()
