"""Ranked passages: locators parsed, snippets read in either spelling, reports bounded."""

from ragspine_eval.retrieval.passages import (
    KEEP_PASSAGES,
    TEXT_CLIP,
    RankedPassage,
    from_json,
    kept,
    page_of,
    passages_from,
    slide_of,
    to_json,
)


def test_page_and_slide_are_parsed_from_the_locator_forms_engines_write():
    assert page_of("annual.pdf@page=12#para3-4") == 12
    assert page_of("annual.pdf@page=7") == 7
    assert slide_of("deck.pptx@slide=5,frame=2#para1") == 5
    assert slide_of("slide=5,table=1,row=2,col=3") == 5
    assert page_of("#para1") is None and slide_of("#para1") is None
    # a number that merely contains the word is no page
    assert page_of("doc@homepage=3#p1") is None and page_of("doc@page=3x") is None


def test_an_engine_snippet_becomes_a_ranked_passage_with_its_scores():
    raw = [{"text": "first", "doc_id": "A.pptx", "source_locator": "A.pptx@slide=2#p1",
            "chunk_id": "c1", "scores": {"bm25": 3.5, "vector": None, "fused": 0.03}},
           {"content": "second", "doc": "B.pdf", "locator": "B.pdf@page=4#p2", "bm25": 1}]
    first, second = passages_from(raw)
    assert (first.rank, first.doc, first.slide, first.page, first.chunk_id) == \
        (1, "A.pptx", 2, None, "c1")
    assert first.scores == {"bm25": 3.5, "fused": 0.03}  # a score the engine did not give is absent
    assert (second.rank, second.doc, second.page, second.text, second.scores) == \
        (2, "B.pdf", 4, "second", {"bm25": 1.0})
    assert second.chunk_id is None


def test_a_report_keeps_the_top_passages_with_clipped_text_and_reads_them_back():
    raw = [{"doc": f"d{i}", "locator": f"#p{i}", "text": "x" * (TEXT_CLIP + 50)}
           for i in range(KEEP_PASSAGES + 5)]
    top = kept(passages_from(raw))
    assert [p.rank for p in top] == list(range(1, KEEP_PASSAGES + 1))
    assert all(len(p.text) == TEXT_CLIP and p.text.endswith("…") for p in top)
    assert from_json(to_json(top)) == top
    short = RankedPassage(1, "d", text="short")
    assert short.clipped() is short


def test_to_dict_leaves_out_what_a_passage_lacks():
    assert RankedPassage(3, "d", "#p").to_dict() == {"rank": 3, "doc": "d", "locator": "#p",
                                                     "text": ""}
