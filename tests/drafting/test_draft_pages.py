"""drafting/pages.py (a name apart from tests/golden/test_pages.py): a workspace's pages as the
engine read them, chunks joined with their shared lines once, and every place a figure or a
quote sits, its passage the line it is on."""

from __future__ import annotations

from hostile_workspaces import make_workspace

from ragspine_eval.drafting.pages import Page, find_figure, find_quote, merge_chunks, read_pages

PAGE = Page("r.pdf", "a" * 64, 1, "Revenue 1,702.5 up 12%\nMargin 12 % and 4.1%\nRevenue 1702.5\n")


def test_chunks_overlapping_by_lines_are_joined_with_those_lines_once():
    assert merge_chunks(["a\nb\nc", "b\nc\nd", "e"]) == "a\nb\nc\nd\ne"


def test_a_figure_is_found_by_its_digits_and_a_percent_only_before_a_percent_sign():
    assert [(h.start, h.passage) for h in find_figure("1702.5", None, [PAGE])] == [
        (8, "Revenue 1,702.5 up 12%"), (PAGE.text.rindex("1702.5"), "Revenue 1702.5")]
    assert [h.passage for h in find_figure("12", "%", [PAGE])] == [
        "Revenue 1,702.5 up 12%", "Margin 12 % and 4.1%"]
    assert find_figure("4.1", None, [PAGE])[0].passage == "Margin 12 % and 4.1%"
    assert find_figure("1.7", None, [PAGE]) == []


def test_a_quote_is_found_after_the_engines_normalisation():
    [hit] = find_quote("margin 12 %", [PAGE])
    assert PAGE.text[hit.start:hit.end] == "Margin 12 %"


def test_read_pages_gives_paged_documents_and_names_slide_only_ones(tmp_path):
    pages = read_pages(make_workspace(tmp_path / "ws"))
    assert [(p.doc, p.page) for p in pages.pages] == [("report.pdf", 1), ("report.pdf", 2)]
    assert pages.slide_only == ("deck.pptx",)
    assert "38.5 million" in pages.get("report.pdf", 1).text
