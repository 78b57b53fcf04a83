"""What an answer cites, read from its own text: the markers the engine's prompt numbers, the
engine's own source form, and the source list only where the answer carries no marker; and the
strict citation of a claim: its page on its own document."""

from __future__ import annotations

import pytest

from ragspine_eval.answers.citations import cited_passages, strict_citation
from ragspine_eval.answers.gold_check import AnchorPlace
from ragspine_eval.golden.nl_answers import Anchor

P = [{"locator": "a.pdf@page=1#para1-2"}, {"locator": "b.pdf@page=1#para1-29"},
     {"locator": "a.pdf@page=2#p1"}, {"locator": "a.pdf@page=1#para1-29"}]
SOURCES = [p["locator"] for p in P]


@pytest.mark.parametrize(("answer", "basis", "cited"), [
    ("It is 5 [2].", "markers", ["b.pdf@page=1#para1-29"]),
    ("It is 5【2】 and 6〔3〕 and 7［1］.", "markers",
     ["b.pdf@page=1#para1-29", "a.pdf@page=2#p1", "a.pdf@page=1#para1-2"]),
    ("It is 5 [1, 3].", "markers", ["a.pdf@page=1#para1-2", "a.pdf@page=2#p1"]),
    ("It is 5 [2-4].", "markers", SOURCES[1:]),
    ("It is 5 (来源：a.pdf a.pdf@page=1#para1-29).", "markers", ["a.pdf@page=1#para1-29"]),
    ("It is 5.", "sources", SOURCES),
    ("It is 5 [9].", "markers", []),
])
def test_markers_name_the_passages_the_prompt_numbered(answer, basis, cited):
    got = cited_passages(answer, P, SOURCES)
    assert got.basis == basis and list(got.locators) == cited


def test_a_locator_is_never_read_inside_a_longer_one_and_a_dangling_marker_is_named():
    got = cited_passages("see a.pdf@page=1#para1-29 [7]", P, SOURCES)
    assert got.locators == ("a.pdf@page=1#para1-29",)  # not para1-2, its prefix
    assert got.dangling == ("[7]",)


def test_a_claim_is_strictly_cited_only_on_its_own_document():
    anchor = Anchor("number", 0, value="5")
    on_a = [AnchorPlace("a.pdf", "sha256")]
    other = cited_passages("5 [2]", P, SOURCES)  # page 1 of b.pdf
    verdict = strict_citation([anchor], on_a, other)
    assert not verdict.cited
    assert verdict.reason == ("page 1 of a.pdf not cited by a marker of the answer (that page "
                              "is cited of b.pdf only)")
    assert strict_citation([anchor], on_a, cited_passages("5 [1]", P, SOURCES)).cited
    unknown = strict_citation([anchor], [AnchorPlace(None, "unknown", note="two hold it")],
                              cited_passages("5 [1]", P, SOURCES))
    assert not unknown.cited and unknown.reason == "document unknown: two hold it"
