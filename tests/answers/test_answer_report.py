"""The answer report over the realdocs workspace and the hand-written gold: the gates kept apart,
known gaps and skips outside every rate, each failing question at its stage, both routes side by
side, and the baseline entry in the ratchet's shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from realdocs_workspace import needs_realdocs, realdocs_workspace  # noqa: F401

from ragspine_eval import ratchet
from ragspine_eval.answers.report import make_answers_entry, report_of
from ragspine_eval.answers.run import run_answer_eval

GOLD = Path(__file__).resolve().parents[1] / "fixtures" / "answers" / "realdocs_answers_v1.json"


@pytest.fixture(scope="module")
def report(realdocs_workspace):
    return report_of(run_answer_eval(realdocs_workspace.workspace.path, GOLD,
                                     allow_gold_errors=True))


@needs_realdocs
def test_each_gate_counts_its_own_units_and_leaves_known_gaps_out(report):
    for route in report.routes:
        results = [r for r in report.results(route) if r.scored]
        m = report.metrics(route)
        claims = [c for r in results for c in r.verdict.claims]
        assert m["claim_content"]["total"] == len(claims)
        assert m["claim_content"]["passed"] == sum(c.content_hit for c in claims)
        assert m["claim_citation"]["passed"] == sum(c.page_hit for c in claims)
        abstain = [r for r in results if r.verdict.kind == "abstain"]
        assert m["abstention"]["total"] == len(abstain)
        assert m["question_pass"]["total"] == len(results)
        ids = set(m["question_pass"]["passed_ids"]) | {f["id"] for f in m["question_pass"]
                                                       ["failures"]}
        assert not any(i.startswith(("gap:", "gap-abstain:", "adversarial", "offline"))
                       for i in ids)
        assert m["fabrication_count"] == {"count": 1, "ids": ["leak:en"]}
        lo, hi = m["question_pass"]["ci_lo"], m["question_pass"]["ci_hi"]
        assert lo < m["question_pass"]["pass_rate"] < hi


@needs_realdocs
def test_each_failing_question_sits_at_its_stage_and_the_routes_show_side_by_side(report):
    stage = {(r.route, r.id): r.stage for r in report.run.results}
    # its text (999.9mm) is on no page of the workspace: the gold is in doubt, not the answer
    assert stage[("ask", "content-miss:en")] == "gold"
    # page 4 of one-page documents: a gold error (never "retrieval"), outside every rate
    assert stage[("ask", "page-miss:en")] == "gold"
    assert stage[("ask", "different-anchors:en")] == "gold"  # its anchor on page 3
    gold_errors = {r.id for r in report.run.results if r.gold_error}
    assert gold_errors == {"page-miss:en", "different-anchors:en", "two-claims:en",
                           "one-of-two:en"}
    assert not any(r.scored for r in report.run.results if r.gold_error)
    assert stage[("ask", "leak:en")] == "refusal_guard"
    assert stage[("ask", "value-hit:en")] is None
    # the ask route sent the Chinese question to the structured channel; pinned to the
    # narrative channel, nothing was retrieved for it
    assert stage[("ask", "quote-hit:zh")] == "routing"
    assert stage[("narrative", "quote-hit:zh")] == "retrieval"
    pair = next(p for p in report.verdict_pairs() if p["id"] == "quote-hit:zh")
    assert pair["ask"]["stage"] == "routing" and pair["narrative"]["stage"] == "retrieval"


@needs_realdocs
def test_the_report_is_json_and_lists_skips_and_known_gaps_apart(report):
    data = json.loads(json.dumps(report.to_dict()))
    assert data["harness"] == "answers"
    assert {s["case_id"] for s in data["skipped"]} == {"adversarial", "offline"}
    assert all(s["reason"] for s in data["skipped"])
    assert {g["case_id"] for g in data["known_gaps"]} == {"gap", "gap-abstain"}
    case = next(c for c in data["cases"] if c["id"] == "value-hit:en" and c["route"] == "ask")
    assert case["cited_pages"] == [1] and case["passages"][0]["rank"] == 1
    assert case["verdict"]["claims"][0]["page_documents"][0] == "agstat.pdf"
    by_lang = data["routes"]["ask"]["by_language"]
    assert set(by_lang) == {"en", "zh"}
    assert "agstat.pdf" in data["routes"]["ask"]["by_doc"]


@needs_realdocs
def test_the_baseline_entry_is_a_ratchet_entry_and_a_lost_claim_is_a_regression(report):
    entry = make_answers_entry(report, "ask")
    assert ratchet.compare(entry, entry).passed
    assert entry["fabrication_count"] == 1
    assert "content-miss:en#1" not in entry["passed_ids"]["claim_content"]
    stored = json.loads(json.dumps(entry))
    stored["passed_ids"]["claim_content"].append("content-miss:en#1")  # passed at baseline time
    cmp = ratchet.compare(entry, stored)
    assert not cmp.passed
    assert {"metric": "claim_content", "id": "content-miss:en#1"} in cmp.case_regressions
    fewer = {**stored, "fabrication_count": 0}
    assert not ratchet.compare(entry, fewer).passed  # a leak more than at baseline time


@needs_realdocs
def test_two_answer_runs_compare_as_qa_runs_and_a_lost_claim_is_a_flip(report, tmp_path):
    from ragspine_eval.workbench.fronts import compare

    before = report.to_dict()
    after = json.loads(json.dumps(before))
    gate = after["metrics"]["narrative claim_citation"]
    gate["passed_ids"].remove("value-hit:en#1")
    gate["failures"].append({"id": "value-hit:en#1", "reason": "page not cited"})
    (tmp_path / "a.json").write_text(json.dumps(before), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps(after), encoding="utf-8")
    pair = compare.load_pair(tmp_path / "a.json", tmp_path / "b.json")
    changes = compare.gate_changes(pair).set_index("gate")
    assert changes.loc["narrative claim_citation", "pass → fail"] == 1
    assert changes.loc["ask claim_citation", "pass → fail"] == 0
    with pytest.raises(AssertionError, match="value-hit:en#1"):
        compare.assert_no_flips(pair, True)


def test_the_committed_gold_keeps_the_fingerprints_its_baseline_recorded():
    """Reading documents and strict keys changed no fingerprint of a gold that names no
    document: `make run`'s gate compares the same cases as before."""
    from ragspine_eval import paths
    from ragspine_eval.answers.report import case_fingerprint
    from ragspine_eval.golden.nl_answers import load_answer_cases

    stored = json.loads(paths.ANSWERS_BASELINE.read_text(encoding="utf-8"))
    recorded = stored["realdocs@answers:ask"]["golden"]
    now = {f"{c.case_id}:{lang}": case_fingerprint(c)
           for c in load_answer_cases(paths.GOLDEN_DIR / "realdocs_answers_gold.json")
           for lang, _ in c.questions}
    assert {i: fp for i, fp in recorded.items() if "#" not in i} == \
        {i: now[i] for i in recorded if "#" not in i}
