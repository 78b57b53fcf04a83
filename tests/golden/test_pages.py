"""The pages a question names: numbers, lists and ranges from 1, bounded before they are built."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval.golden.pages import MAX_PAGE, MAX_QUESTION_PAGES, parse_pages


def test_parse_pages():
    assert parse_pages("12, 14-15") == {12, 14, 15}
    assert parse_pages([1, "3-4"]) == {1, 3, 4}
    assert parse_pages(None) == parse_pages("") == frozenset()
    assert parse_pages(7.0) == {7}
    with pytest.raises(ValueError):
        parse_pages([[1]])


@pytest.mark.parametrize("value", [0, -1, True, MAX_PAGE + 1, "5-3", "0-2", "x", "1-300000000",
                                   "9" * 200_000, f"1-{MAX_QUESTION_PAGES + 1}", 1.5])
def test_a_page_that_is_no_page_or_too_many_is_a_reason_not_a_memory_error(value):
    with pytest.raises(ValueError):
        parse_pages(value)


@given(st.sets(st.integers(min_value=1, max_value=MAX_PAGE), min_size=1, max_size=50))
def test_pages_written_as_text_or_a_list_read_back_as_the_same_set(pages):
    assert parse_pages(", ".join(map(str, sorted(pages)))) == pages
    assert parse_pages(sorted(pages)) == pages
