"""The changed words of two answers (views/changed_words.py): both texts kept whole, equal texts
unmarked, a changed figure in a Chinese sentence marked alone, markup escaped before marking,
and the excerpt around each change."""

from __future__ import annotations

import html
import re

from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval.workbench.views import changed_words


def unmarked(marked: str) -> str:
    return html.unescape(re.sub(r"</?(del|ins)>", "", marked))


@given(st.text(), st.text())
def test_word_diff_keeps_both_texts_whole(a, b):
    old, new = changed_words.word_diff(a, b)
    assert unmarked(old) == a and unmarked(new) == b
    assert "<ins>" not in old and "<del>" not in new


@given(st.text())
def test_equal_texts_are_unmarked_and_words_cover_the_text(text):
    assert "".join(changed_words.words(text)) == text
    old, new = changed_words.word_diff(text, text)
    assert old == new == html.escape(text)


def test_a_changed_figure_in_a_chinese_sentence_is_marked_alone():
    old, new = changed_words.word_diff("香港收入为1702百万美元，同比下降。", "香港收入为1872百万美元，同比下降。")
    assert old == "香港收入为<del>1702</del>百万美元，同比下降。"
    assert new == "香港收入为<ins>1872</ins>百万美元，同比下降。"
    old, new = changed_words.word_diff("收入同比走弱", "收入同比走强")
    assert (old, new) == ("收入同比走<del>弱</del>", "收入同比走<ins>强</ins>")


def test_markup_in_an_answer_is_escaped_before_it_is_marked():
    old, new = changed_words.word_diff("<b>1702</b>", "<script>1872</script>")
    assert "<script" not in new and "<b>" not in old and "</b>" not in old
    assert unmarked(new) == "<script>1872</script>" and "&lt;" in new


@given(st.text(), st.text(), st.integers(0, 30))
def test_the_excerpt_keeps_every_change_and_no_more_context_than_asked(a, b, context):
    old, new = changed_words.word_diff(a, b, context)
    whole_old, whole_new = changed_words.word_diff(a, b)
    assert re.findall(r"<del>.*?</del>", old, re.S) == re.findall(r"<del>.*?</del>", whole_old,
                                                                    re.S)
    assert re.findall(r"<ins>.*?</ins>", new, re.S) == re.findall(r"<ins>.*?</ins>", whole_new,
                                                                    re.S)
    assert len(unmarked(old)) <= len(a) and len(unmarked(new)) <= len(b)
    if context >= max(len(a), len(b)):
        assert (old, new) == (whole_old, whole_new)


def test_the_excerpt_shows_the_change_in_a_long_chinese_answer():
    head = "ACME_HK FY2025 REVENUE: 1702 USD_M（来源：ACME_FY2025_Results.pptx）\n香港 REVENUE 同比走弱，"
    tail = "，以及银保渠道的结构调整。管理层判断香港 REVENUE 短期内仍将承压。"
    old, new = changed_words.word_diff(head + "主要原因是 MCV 客群萎缩" + tail,
                                 head + "主要原因是汇率波动" + tail, 8)
    assert old == "…走弱，主要原因是<del> MCV 客群萎缩</del>，以及银保渠道的…"
    assert new == "…走弱，主要原因是<ins>汇率波动</ins>，以及银保渠道的…"
