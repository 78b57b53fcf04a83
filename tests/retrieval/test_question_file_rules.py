"""The engine question files' rules inside the retrieval API (relevance.question_file_rules,
metrics.question_file_ranks), on ranked lists written by hand: the batch's own counting."""

from __future__ import annotations

from ragspine_eval.golden.question_case import QuestionCase
from ragspine_eval.retrieval.metrics import question_file_ranks
from ragspine_eval.retrieval.passages import passages_from
from ragspine_eval.retrieval.relevance import question_file_rules, text_with_numbers


def ranks(case, hits):
    basis, rules = question_file_rules(case)
    return (basis, *question_file_ranks(basis, rules, passages_from(hits)))


def hit(doc, locator, text=""):
    return {"doc_id": doc, "source_locator": locator, "text": text}


def test_page_groups_count_only_passages_with_a_page():
    case = QuestionCase("q", "x", page_groups=(frozenset({3}),))
    got = ranks(case, [hit("d.pptx", "d.pptx@slide=3,frame=1#p1"), hit("a.pdf", "a.pdf@page=1#p1"),
                       hit("a.pdf", "a.pdf@page=1#p2"), hit("b.pdf", "b.pdf@page=3#p1")])
    # the slide is no page and takes no place: rank 3 among the paged passages, not 4
    assert got == ("page", 3, 2, [False, False, False, True])


def test_every_group_must_be_hit_and_a_named_doc_matches_by_stem():
    case = QuestionCase("q", "x", page_groups=(frozenset({1}), frozenset({2, 5})), docs=("A",))
    hits = [hit("a.pdf", "a.pdf@page=2#p"), hit("b.pdf", "b.pdf@page=1#p"),
            hit("a.pdf", "a.pdf@page=2#q"), hit("a.pdf", "a.pdf@page=1#p")]
    # distinct (doc, page): (a,2) (b,1) (a,1); the group {1} is met by (a,1), third
    assert ranks(case, hits) == ("page", 4, 3, [True, False, True, True])
    assert ranks(case, hits[:3])[1:3] == (None, None)


def test_distinct_pages_are_page_numbers_alone_when_no_doc_is_named():
    case = QuestionCase("q", "x", page_groups=(frozenset({2}),))
    hits = [hit("a.pdf", "a.pdf@page=1#p"), hit("b.pdf", "b.pdf@page=1#p"),
            hit("c.pdf", "c.pdf@page=2#p")]
    assert ranks(case, hits)[1:3] == (3, 2)  # a and b share "page 1"


def test_expected_text_ranks_among_all_passages_with_its_numbers():
    case = QuestionCase("q", "x", expected="1,234.5 and 7%")
    hits = [hit("a.pptx", "a.pptx@slide=1#p", "nothing here"),
            hit("b.pdf", "b.pdf@page=4#p", "it was 1234.5, up 7 %"),
            hit("b.pdf", "b.pdf@page=4#q", "1,234.5 and 7%")]
    assert ranks(case, hits) == ("content", 2, 2, [False, True, True])
    assert not text_with_numbers("12345 and 7%", "1,234.5 and 7%")
    assert not text_with_numbers("38.00", "38")  # the batch's own note: 38.00 is not 38
    assert text_with_numbers("Revenue: US$5.14 billion", "US$5.14 billion")


def test_a_question_with_neither_is_not_judged():
    assert ranks(QuestionCase("q", "x"), [hit("a", "a@page=1")]) == ("none", None, None, [False])
