"""The generator's diagnostics without a model, on a worked example computed by hand with
RAGChecker's formulas (Ru et al. 2024, section 3: claim recall, context utilization, noise
sensitivity in relevant and irrelevant chunks, hallucination, self-knowledge, faithfulness), and
the invariants those formulas give on any answer."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ragspine_eval.answers.gold_check import AnchorPlace
from ragspine_eval.answers.generator import diagnose, figures, summarize
from ragspine_eval.answers.verdicts import judge
from ragspine_eval.golden.nl_answers import Anchor, AnswerCase

A = Anchor("number", 0, value="10.5")  # on page 1 of doc.pdf
B = Anchor("number", 0, value="20", unit="%")
C = Anchor("number", 1, value="8.8")  # on page 2, never retrieved
CASE = AnswerCase("w", "positive", (("en", "What was the revenue?"),), claims=((A,), (B,), (C,)))
PLACES = [[AnchorPlace("doc.pdf", "sha256")]] * 3
PASSAGES = [
    {"rank": 1, "locator": "doc.pdf@page=1#p1", "text": "Revenue 10.5 million; margin 20%; other 7.7"},
    {"rank": 2, "locator": "doc.pdf@page=2#p1", "text": "unrelated 3.3"},
    {"rank": 3, "locator": "other.pdf@page=1#p1", "text": "headcount 99"},
]
ANSWER = "Revenue was 10.5 [1]; other 7.7; headcount 99; growth 42%; cost 8.8."


def diagnosis(answer=ANSWER, passages=PASSAGES):
    verdict = judge(CASE, answer, [p["locator"] for p in passages], passages=passages,
                    places=PLACES)
    return diagnose(CASE, verdict, answer, CASE.questions[0][1], passages, PLACES)


def test_the_worked_example_gives_ragcheckers_figures():
    """By hand: gt = {A, B, C}; passage 1 holds A and B (relevant), 2 and 3 hold none; the
    answer states A and C, not B. Its figures m = {10.5 (correct, passage 1), 7.7 (wrong,
    relevant passage 1), 99 (wrong, irrelevant passage 3), 42% (wrong, no passage), 8.8
    (correct, no passage)}; the marker [1] is no figure."""
    d = diagnosis()
    assert [f.text for f in d.figures] == ["10.5", "7.7", "99", "42%", "8.8"]
    assert d.rate("claim_recall") == round(2 / 3, 4)  # A, B in a chunk, of 3
    assert d.rate("context_utilization") == 0.5  # of A, B retrieved, A stated
    assert d.rate("noise_relevant") == 0.2  # 7.7 of 5
    assert d.rate("noise_irrelevant") == 0.2  # 99
    assert d.rate("hallucination") == 0.2  # 42%
    assert d.rate("self_knowledge") == 0.2  # 8.8
    assert d.rate("faithfulness") == 0.6  # 10.5, 7.7, 99
    assert d.unsupported == ["42%", "8.8"]
    assert d.to_dict()["noise"] == [
        {"figure": "7.7", "passage_rank": 1, "relevant_passage": True},
        {"figure": "99", "passage_rank": 3, "relevant_passage": False}]


def test_a_claim_on_another_document_is_not_retrieved_and_the_run_averages_per_question():
    moved = [dict(p, locator=p["locator"].replace("doc.pdf", "else.pdf")) for p in PASSAGES]
    d = diagnosis(passages=moved)  # the same text, on page 1 of another document
    assert d.rate("claim_recall") == 0.0 and d.rate("context_utilization") is None
    run = summarize([diagnosis(), d])
    assert run["claim_recall"] == round((2 / 3 + 0) / 2, 4)
    assert run["context_utilization"] == 0.5  # only the question where a claim was retrieved
    assert run["unsupported_numbers"] == 4 and run["questions"] == 2


def test_figures_leave_out_markers_locators_and_the_questions_own_numbers():
    passages = [{"locator": "agstat.pdf@page=1#para25-35", "doc": "agstat.pdf", "text": ""}]
    said = "In 2012-13 it was 1.30 [1]（来源：agstat.pdf agstat.pdf@page=1#para25-35）, 28 %."
    assert figures(said, "What was it in 2012-13?", passages) == ["1.30", "28%"]


_WORDS = st.sampled_from(["10.5", "7.7", "99", "42%", "8.8", "20%", "3.3", "[1]", "[2]",
                          "revenue", "and", "; ", " ", "x"])


@settings(max_examples=60, deadline=None)
@given(st.lists(_WORDS, max_size=20).map(" ".join))
def test_every_figure_falls_in_exactly_one_of_ragcheckers_parts(answer):
    d = diagnosis(answer)
    n = len(d.figures)
    if not n:
        assert d.rate("hallucination") is None
        return
    correct_supported = sum(f.correct and f.supported_by is not None for f in d.figures) / n
    parts = sum(d.rate(r) for r in ("noise_relevant", "noise_irrelevant", "hallucination",
                                    "self_knowledge"))
    assert abs(parts + correct_supported - 1) < 1e-3
    assert abs(d.rate("faithfulness") - (1 - d.rate("hallucination")
                                         - d.rate("self_knowledge"))) < 1e-3
    assert d.rate("claim_recall") == round(2 / 3, 4)  # the passages, not the answer, decide
