"""The second opinion: the claims on which the financial judge and the gate's judge disagree,
read from a report alone."""

from __future__ import annotations

import json

from builders import HK_TEXT, narrative_outcome
from conftest import HK_DOC, make_case

from ragspine_eval.judges import registry as judges
from ragspine_eval.judges.financial.disagreement import second_opinion
from ragspine_eval.qa.evaluation import evaluate
from ragspine_eval.qa.report import QAEvalReport

INVENTED_CAUSE = "香港收入同比走弱，主要因为利率上升。"
FAITHFUL = "香港 REVENUE 同比走弱，主要原因是 MCV 客群萎缩。"


def _report(judge: str = "lexical") -> QAEvalReport:
    cases = [make_case("nar-1", "narrative"), make_case("nar-2", "narrative"),
             make_case("num-1")]
    outcomes = [narrative_outcome(narrative_answer=f"{FAITHFUL}\n{INVENTED_CAUSE}"),
                narrative_outcome(narrative_answer=FAITHFUL), narrative_outcome()]
    report = evaluate(cases, outcomes, "agent", reference_texts={HK_DOC: HK_TEXT},
                      judge=judges.get(judge))
    return report


def test_the_claims_the_gate_passed_and_the_financial_judge_rejects_are_listed():
    report = _report()
    assert "nar-1" in report.gates()["faithfulness"].passed_ids  # lexical passes the cause
    opinion = second_opinion(report)
    assert [d.case_id for d in opinion.passed_rejected] == ["nar-1"]
    d = opinion.passed_rejected[0]
    assert d.claim == INVENTED_CAUSE
    assert d.gate_entailed and not d.other_entailed
    assert d.rule == "direction flipped" and d.passage == 1 and "上升" in d.detail
    assert opinion.failed_accepted == []
    assert opinion.cases == 2 and opinion.claims == 3
    assert opinion.sentence().startswith("The gate (lexical) passed 1 claim the financial "
                                         "judge rejects")


def test_it_reads_a_report_written_to_json_the_same_way():
    report = _report()
    again = QAEvalReport.from_dict(json.loads(json.dumps(report.to_dict(), ensure_ascii=False)))
    assert second_opinion(again) == second_opinion(report)


def test_a_gate_on_the_financial_judge_has_no_second_opinion_from_itself():
    opinion = second_opinion(_report("financial"), gate_judge={"name": "financial"})
    assert opinion.disagreements == []
    assert "already uses the financial judge" in opinion.sentence()


def test_the_gate_using_the_financial_judge_fails_the_case_and_names_the_rule():
    report = _report("financial")
    failures = {r.id: r for r in report.gates()["faithfulness"].failures}
    assert set(failures) == {"nar-1"}
    claims = failures["nar-1"].evidence["claims"]
    rejected = [c for c in claims if not c["entailed"]]
    assert [c["rule"] for c in rejected] == ["direction flipped"]
    assert rejected[0]["passage"] == 1 and "走弱" in rejected[0]["detail"]
    why = failures["nar-1"].explanation  # the verdict's sentence names the rule and its reason
    assert "(direction flipped: the claim says up (上升) where passage 1 says 走弱)" in why


def test_a_lexical_gate_keeps_its_claim_evidence_as_it_was():
    report = _report()
    for failure in report.gates()["faithfulness"].failures:
        for claim in failure.evidence["claims"]:
            assert set(claim) == {"claim", "entailed", "coverage", "missing"}
