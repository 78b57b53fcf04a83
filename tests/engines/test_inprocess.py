"""The in-process engine in both modes, against the real RAGSpine engine and the default KB."""

from __future__ import annotations

from datetime import date

import pytest
from conftest import HK_DOC, HK_SOURCE
from ragspine.agent.agent import answer_question
from ragspine.agent.llm_provider import MockProvider
from ragspine.retrieval.link.narrative_link import build_narrative_retriever
from ragspine.storage.fact_store import SqliteFactStore

from ragspine_eval.engines import EVAL_MODES, RagspineEngine
from ragspine_eval.golden.cases import GoldenCase


def ask(question: str, ref: date = date(2026, 6, 12)) -> GoldenCase:
    return GoldenCase("q", question, "numeric", {}, {}, ref)


@pytest.fixture(params=EVAL_MODES)
def engine(request, built_kb):
    eng = RagspineEngine(built_kb, request.param)
    yield eng
    eng.close()


def test_complete_numeric_question_finds_value_and_source(engine):
    out = engine.run_case(ask("香港FY2025的REVENUE是多少"))
    assert (out.found_value, out.found_unit, out.found_source) == (1702.0, "USD_M", HK_SOURCE)
    assert out.clarification_mode == "none" and not out.refused and out.error is None
    assert HK_SOURCE["doc"] in out.answer


def test_relative_period_resolves_against_reference_date(engine):
    out = engine.run_case(ask("香港去年的REVENUE是多少", ref=date(2025, 3, 1)))
    assert out.found_value == 1538.0  # 去年 of 2025-03-01 is FY2024


def test_competitor_is_a_refusal_not_a_clarification(engine):
    out = engine.run_case(ask("竞安去年营收多少"))
    assert out.refused and out.clarification_mode == "none" and out.found_value is None


def test_missing_data_is_refused(engine):
    out = engine.run_case(ask("香港2023年REVENUE多少"))
    assert out.refused and out.found_value is None and "not_found" in out.tool_statuses


def test_missing_metric_asks_first(engine):
    out = engine.run_case(ask("香港去年的数字是多少"))
    assert out.clarification_mode == "ask_first" and not out.refused


def test_narrative_question_observes_retrieved_context(engine):
    out = engine.run_case(ask("香港REVENUE下降的原因是什么"))
    assert HK_DOC in {s["doc"] for s in out.sources}
    assert out.retrieved_context and out.narrative_answer
    assert any("MCV" in passage for passage in out.retrieved_context)


def test_agent_mode_leaves_the_engine_answer_untouched(built_kb):
    question, ref = "香港FY2025 REVENUE是多少，为什么下降？", date(2026, 6, 12)
    facts = SqliteFactStore(built_kb.fact_db)
    retriever, chunks = build_narrative_retriever(built_kb.chunk_db)
    try:
        direct = answer_question(question, facts, MockProvider(reference_date=ref),
                                 reference_date=ref, narrative_retriever=retriever)
    finally:
        facts.close()
        chunks.close()
    engine = RagspineEngine(built_kb, "agent")
    assert engine.run_case(GoldenCase("q", question, "composite", {}, {}, ref)).answer == direct.answer


def test_an_engine_exception_becomes_the_case_error(built_kb, monkeypatch):
    engine = RagspineEngine(built_kb, "tool")

    def boom(*args, **kwargs):
        raise RuntimeError("fact store unavailable")

    monkeypatch.setattr("ragspine_eval.engines.inprocess.execute_query_metric", boom)
    out = engine.run_case(ask("香港FY2025的REVENUE是多少"))
    assert out.error and "RuntimeError: fact store unavailable" in out.error


def test_unknown_mode_is_rejected(built_kb):
    with pytest.raises(ValueError, match="unknown mode"):
        RagspineEngine(built_kb, "oracle")
