"""Retrieval metrics per case and per run, checked by hand and against ir-measures."""

import math

import pytest

from ragspine_eval.retrieval.metrics import (
    KS,
    CaseRetrieval,
    covering_rank,
    first_rank,
    measure_case,
    ndcg_at,
    precision_at,
    recall_at,
    summarize,
    unit_rank,
)
from ragspine_eval.retrieval.passages import KEEP_PASSAGES, RankedPassage
from ragspine_eval.retrieval.relevance import RelevanceRule


def ranked(*docs, pages=None):
    pages = pages or [None] * len(docs)
    return [RankedPassage(i + 1, d, f"{d}@page={pg}#p" if pg else "#p", pg, text=f"text {d}")
            for i, (d, pg) in enumerate(zip(docs, pages))]


def test_ranks_hits_and_reciprocal_rank_of_one_case():
    case = measure_case([RelevanceRule(doc="A")], ranked("C", "B", "A", "A"))
    assert (case.rank, case.covering_rank, case.retrieved) == (3, 3, 4)
    assert [case.hit(k) for k in KS] == [False, True, True, True]
    assert case.reciprocal_rank == pytest.approx(1 / 3)
    assert case.precision == {1: 0.0, 3: pytest.approx(1 / 3), 5: 0.4, 10: 0.2}
    assert case.recall == {1: 0.0, 3: 1.0, 5: 1.0, 10: 1.0}
    ideal = 1 + 1 / math.log2(3)
    assert case.ndcg == pytest.approx((1 / math.log2(4) + 1 / math.log2(5)) / ideal)
    assert case.relevant == (False, False, True, True)


def test_a_miss_has_no_rank_and_zero_scores():
    case = measure_case([RelevanceRule(doc="REG_WATCH_CN.pptx")], ranked("CN_QBR_2025.pptx"))
    assert case.observed and case.rank is None and case.reciprocal_rank == 0.0
    assert not any(case.hit(k) for k in KS) and case.ndcg == 0.0
    empty = measure_case([RelevanceRule(doc="A")], [])
    assert empty.observed and empty.retrieved == 0 and empty.rank is None


def test_not_observed_is_no_miss():
    case = measure_case([RelevanceRule(doc="A")], None)
    assert not case.observed and case.rank is None
    run = summarize([({"scope": "x"}, case), ({"scope": "x"}, None)])
    assert (run.overall.measured, run.overall.not_observed) == (0, 1)
    assert run.overall.hit_rate(5) == 0.0 and run.overall.hit_interval(5) == (0.0, 1.0)


def test_several_rules_recall_and_covering_rank():
    rules = [RelevanceRule(doc="A"), RelevanceRule(doc="B"), RelevanceRule(doc="Z")]
    case = measure_case(rules, ranked("A", "C", "C", "B"))
    assert (case.rank, case.covering_rank) == (1, None)  # Z is never retrieved
    assert case.recall == {1: pytest.approx(1 / 3), 3: pytest.approx(1 / 3),
                           5: pytest.approx(2 / 3), 10: pytest.approx(2 / 3)}
    assert covering_rank([[False, True], [True, False]]) == 2
    assert recall_at([], 5) == 1.0


def test_page_rank_counts_distinct_pages():
    passages = ranked("A", "A", "B", "A", pages=[1, 1, 2, 3])
    flags = [False, False, False, True]
    assert unit_rank(passages, flags) == 3  # (A,1), (B,2), (A,3)
    assert unit_rank(ranked("A", "B"), [False, True]) is None  # no page known
    rule = RelevanceRule(doc="A", pages=frozenset({3}))
    case = measure_case([rule], passages)
    assert (case.rank, case.page_rank) == (4, 3)


def test_the_case_keeps_the_top_passages_but_ranks_count_all():
    docs = ["X"] * (KEEP_PASSAGES + 3) + ["A"]
    case = measure_case([RelevanceRule(doc="A")], ranked(*docs))
    assert case.rank == KEEP_PASSAGES + 4 and len(case.passages) == KEEP_PASSAGES
    assert not any(case.relevant)


def test_a_case_retrieval_reads_back_from_its_dict():
    case = measure_case([RelevanceRule(doc="A", pages=frozenset({2}))],
                        ranked("A", "A", pages=[1, 2]))
    back = CaseRetrieval.from_dict(case.to_dict())
    assert back.to_dict() == case.to_dict()
    assert case.to_dict()["hit"] == {"1": False, "3": True, "5": True, "10": True}
    assert CaseRetrieval.from_dict({"observed": False, "rules": ["A"]}).observed is False


def test_run_and_tag_figures_with_wilson_intervals():
    rule = [RelevanceRule(doc="A")]
    cases = [({"scope": "HK"}, measure_case(rule, ranked("A"))),
             ({"scope": "HK"}, measure_case(rule, ranked("B", "A"))),
             ({"scope": "CN"}, measure_case(rule, ranked("B")))]
    run = summarize(cases)
    assert run.overall.measured == 3
    assert run.overall.hit_rate(1) == pytest.approx(1 / 3)
    assert run.overall.hit_rate(3) == pytest.approx(2 / 3)
    assert run.overall.mrr == pytest.approx((1 + 0.5 + 0) / 3)
    lo, hi = run.overall.hit_interval(3)
    assert lo < 2 / 3 < hi
    hk = run.by_tag["scope"]["HK"]
    assert (hk.measured, hk.hit_rate(1), hk.mrr) == (2, 0.5, 0.75)
    data = run.to_dict()
    assert data["by_tag"]["scope"]["CN"]["hit"]["5"]["rate"] == 0.0
    assert "page" not in data


def test_small_functions():
    assert first_rank([False, False]) is None and first_rank([False, True]) == 2
    assert precision_at([True], 5) == 0.2  # over k, as trec_eval's P@k
    assert ndcg_at([False, False]) == 0.0 and ndcg_at([True]) == 1.0


def test_ours_agree_with_ir_measures():
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import P, RR, Success, nDCG

    rng = __import__("random").Random(7)
    qrels, run, ours = [], [], {}
    for q in range(200):
        flags = [rng.random() < 0.2 for _ in range(rng.randint(0, 15))]
        qid = f"q{q}"
        for i, flag in enumerate(flags):
            doc = f"{qid}-d{i}"
            run.append(ir_measures.ScoredDoc(qid, doc, float(100 - i)))
            if flag:
                qrels.append(ir_measures.Qrel(qid, doc, 1))
        if any(flags):  # trec_eval leaves out a query without relevant documents
            ours[qid] = flags
    measures = [RR, nDCG @ 10, *(P @ k for k in KS), *(Success @ k for k in KS)]
    theirs = {(str(m.measure), m.query_id): m.value
              for m in ir_measures.iter_calc(measures, qrels, run)}
    for qid, flags in ours.items():
        rank = first_rank(flags)
        assert theirs[("RR", qid)] == pytest.approx(1 / rank if rank else 0.0)
        assert theirs[("nDCG@10", qid)] == pytest.approx(ndcg_at(flags))
        for k in KS:
            assert theirs[(f"P@{k}", qid)] == pytest.approx(precision_at(flags, k))
            assert theirs[(f"Success@{k}", qid)] == float(rank is not None and rank <= k)


def test_a_run_summarized_from_the_reports_dicts_equals_the_one_from_the_cases():
    rules = [RelevanceRule(doc="A", pages=frozenset({2})), RelevanceRule(doc="B")]
    cases = [({"scope": "HK"}, measure_case(rules[:1], ranked("A", "A", pages=[1, 2]))),
             ({"scope": "HK"}, measure_case(rules, ranked("B", "C", "A", pages=[1, 1, 2]))),
             ({"scope": "CN"}, measure_case(rules[1:], ranked("C", "C"))),
             ({"scope": "CN"}, measure_case(rules[1:], None))]
    from_cases = summarize(cases).to_dict()
    from_dicts = summarize((t, c.to_dict()) for t, c in cases).to_dict()

    def ndcg_apart(data):  # a report keeps each case's nDCG to 4 decimals
        found = []
        for d in (data, *(v for vs in data["by_tag"].values() for v in vs.values())):
            found.append(d.pop("ndcg@10"))
        return found

    assert ndcg_apart(from_dicts) == pytest.approx(ndcg_apart(from_cases), abs=1e-4)
    assert from_dicts == from_cases and from_cases["page"]["measured"] == 2
