"""The retrieval gate, stages in a report, the claim split, and how a baseline gains the gate."""

from __future__ import annotations

import json

from builders import HK_TEXT, narrative_outcome
from conftest import HK_DOC, make_case

from ragspine_eval import ratchet
from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.qa.baseline_entry import entry_for_gate, make_baseline_entry
from ragspine_eval.qa.evaluation import evaluate
from ragspine_eval.qa.report import QAEvalReport
from ragspine_eval.qa.retrieval_gate import gate_name, stored_k

REFS = {HK_DOC: HK_TEXT, "OTHER.pptx": "interest rates rose everywhere"}


def hk_passage(**kw):
    return {"doc": HK_DOC, "locator": f"{HK_DOC}#para1", "chunk_id": "c0",
            "scores": {"bm25": 2.5, "fused": 0.08}, "text": HK_TEXT, **kw}


OTHER = {"doc": "OTHER.pptx", "locator": "OTHER.pptx#para1", "text": "interest rates rose"}


def run(outcomes, cases=None, **kw):
    cases = cases or [make_case(f"nar-{i}", "narrative") for i in range(len(outcomes))]
    return evaluate(cases, outcomes, "agent", reference_texts=REFS, **kw)


def test_a_relevant_passage_in_the_top_k_passes_and_its_rank_is_kept():
    report = run([narrative_outcome(passages=[OTHER, hk_passage()]),
                  narrative_outcome(passages=[OTHER] * 5 + [hk_passage()])])
    gate = report.metrics["retrieval@5"]
    assert (gate.total, gate.passed, gate.passed_ids) == (2, 1, ["nar-0"])
    first, second = (c.retrieval for c in report.cases)
    assert (first["rank"], first["hit"]) == (2, {"1": False, "3": True, "5": True, "10": True})
    assert [p["relevant"] for p in first["passages"]] == [False, True]
    assert first["passages"][1]["scores"] == {"bm25": 2.5, "fused": 0.08}
    assert second["rank"] == 6
    [failure] = gate.failures
    assert failure.stage == "retrieval" and "rank 6, below the top 5" in failure.explanation
    assert report.retrieval["hit"]["5"]["hits"] == 1 and report.retrieval["gate"] == "retrieval@5"


def test_k_is_the_gates_name_and_counts():
    report = run([narrative_outcome(passages=[OTHER] * 5 + [hk_passage()])], retrieval_k=10)
    assert report.metrics[gate_name(10)].passed == 1 and "retrieval@5" not in report.metrics
    assert stored_k({"metrics": {"faithfulness": 1.0, "retrieval@3": 0.5}}) == 3
    assert stored_k(None) == 5


def test_not_observed_is_no_verdict_and_an_engine_error_is_an_error():
    report = run([narrative_outcome(), CaseOutcome(error="boom")])
    gate = report.metrics["retrieval@5"]
    assert gate.total == 0 and [e.id for e in gate.errors] == ["nar-1"]
    assert report.cases[0].retrieval == {"observed": False, "rules": [HK_DOC]}
    assert report.retrieval["not_observed"] == 2 and report.retrieval["measured"] == 0
    # a failing answer whose retrieval nobody saw is not placed at retrieval
    wrong = run([narrative_outcome(answer="nothing", narrative_answer="nothing")])
    assert {r.stage for r in wrong.metrics["answer_accuracy"].failures} == {"unobserved"}


def test_a_numeric_case_needs_no_passage():
    case = make_case("num-1")
    out = CaseOutcome(route="structured", found_value=1.0, found_unit="USD_M", passages=[])
    report = run([out], [case])
    assert report.cases[0].retrieval is None and report.metrics["retrieval@5"].total == 0
    assert {r.stage for r in report.metrics["numeric_accuracy"].failures} == {"answer"}


def test_stages_tell_a_retrieval_miss_from_a_wrong_answer_and_a_wrong_route():
    miss = narrative_outcome(passages=[OTHER], retrieved_context=[OTHER["text"]],
                             answer="interest rates rose", narrative_answer="interest rates rose")
    wrong = narrative_outcome(passages=[hk_passage()], answer="nothing",
                              narrative_answer="nothing")
    routed = CaseOutcome(route="structured", passages=[])
    report = run([miss, wrong, routed])
    stages = {r.id: r.stage for r in report.metrics["answer_accuracy"].failures}
    assert stages == {"nar-0": "retrieval", "nar-1": "answer", "nar-2": "routing"}
    assert report.retrieval["stages"]["answer_accuracy"] == {"routing": 1, "retrieval": 1,
                                                             "answer": 1}
    # the claim split of the miss: its one claim is supported by an irrelevant passage only
    assert report.cases[0].retrieval["claims"]["irrelevant"] == 1
    data = report.to_dict()
    back = QAEvalReport.from_dict(json.loads(json.dumps(data)))
    assert {r.id: r.stage for r in back.metrics["answer_accuracy"].failures} == stages
    assert back.retrieval == data["retrieval"]
    # a passage's text is written once: left out where retrieved_context holds it, read back
    assert "text" not in data["cases"][0]["retrieval"]["passages"][0]
    assert back.cases[0].retrieval == report.cases[0].retrieval
    assert back.cases[0].retrieval["passages"][0]["text"] == OTHER["text"]
    assert back.cases[0].to_dict() == data["cases"][0]


def test_the_six_gates_verdicts_do_not_depend_on_the_passages():
    with_passages = run([narrative_outcome(passages=[OTHER])])
    without = run([narrative_outcome()])
    for gate in with_passages.metrics:
        if gate.startswith("retrieval@"):
            continue
        assert [(r.id, r.passed) for r in with_passages.metrics[gate].results] == \
            [(r.id, r.passed) for r in without.metrics[gate].results]


class Options:
    def __init__(self, update=False, reason=None):
        self.update, self.reason = update, reason


def test_a_baseline_gains_the_retrieval_gate_only_through_a_reviewed_update(tmp_path):
    report = run([narrative_outcome(passages=[hk_passage()])])
    full = make_baseline_entry(report)
    without = make_baseline_entry(report, retrieval=False)
    assert "retrieval@5" in full["metrics"] and "retrieval@5" in full["passed_ids"]
    assert "retrieval@5" not in without["metrics"] and "retrieval@5" not in without["passed_ids"]
    old = {k: v for k, v in without.items()}
    assert "retrieval@5" not in entry_for_gate(report, old, Options())["metrics"]
    assert "retrieval@5" not in entry_for_gate(report, old, Options(update=True))["metrics"]
    assert "retrieval@5" not in entry_for_gate(report, old, Options(update=True, reason=" "))[
        "metrics"]
    assert "retrieval@5" in entry_for_gate(report, old, Options(update=True, reason="why"))[
        "metrics"]
    assert "retrieval@5" in entry_for_gate(report, None, Options())["metrics"]  # bootstrap
    assert "retrieval@5" in entry_for_gate(report, full, Options())["metrics"]

    # through the ratchet: an update without a reason leaves the stored entry as it was
    path = tmp_path / "baseline.json"
    ratchet.run_gate(path, "agent", without)
    stored = ratchet.load_baselines(path)["agent"]
    gate = ratchet.run_gate(path, "agent", entry_for_gate(report, stored, Options(update=True)),
                            ratchet.GateOptions(update=True))
    assert gate.exit_code == 0
    assert "retrieval@5" not in ratchet.load_baselines(path)["agent"]["metrics"]
    reviewed = ratchet.GateOptions(update=True, reason="retrieval gate recorded")
    gate = ratchet.run_gate(path, "agent", entry_for_gate(report, stored, reviewed), reviewed)
    entry = ratchet.load_baselines(path)["agent"]
    assert gate.status == "updated" and entry["metrics"]["retrieval@5"] == 1.0
    assert {k: v for k, v in entry["metrics"].items() if k != "retrieval@5"} == \
        stored["metrics"]


def test_on_the_committed_golden_set_nar_006_sits_at_retrieval_in_both_modes():
    import pytest

    from builders import real_run

    for mode in ("tool", "agent"):
        cases, outcomes, refs = real_run(mode)
        report = evaluate(cases, outcomes, mode, reference_texts=refs)
        data = report.to_dict()
        with_relevance = [c for c in data["cases"] if c["case_type"] in ("narrative",
                                                                       "composite")]
        assert len(with_relevance) == 17
        assert all("rank" in c["retrieval"] and set(c["retrieval"]["hit"]) == {"1", "3", "5",
                                                                              "10"}
                   for c in with_relevance)
        stages = {(g, r.id): r.stage for g, m in report.gates().items() for r in m.failures}
        nar_006 = {g: s for (g, i), s in stages.items() if i == "nar-006"}
        assert nar_006 == {"citation_validity": "retrieval", "answer_accuracy": "retrieval",
                           "retrieval@5": "retrieval"}, mode
        assert {s for (g, i), s in stages.items() if i == "comp-003"} == {"routing"}
        record = next(c for c in report.cases if c.id == "nar-006")
        assert record.retrieval["rank"] is None
        assert [p["doc"] for p in record.retrieval["passages"]] == ["CN_QBR_2025.pptx"]
        # the rank is the first relevant passage's among every passage the engine returned
        out = outcomes[[c.id for c in cases].index("nar-001")]
        docs = [p["doc"] for p in out.passages]
        hit = next(c for c in report.cases if c.id == "nar-001").retrieval
        assert hit["rank"] == docs.index("HK_QBR_2025Q4.pptx") + 1
        assert report.metrics["retrieval@5"].pass_rate == pytest.approx(15 / 17)
