"""The figures an answer states: a passage's mark, a row's serial, the question's own numbers,
a source note and a date's parts are none of them; the lines that answer pick the row asked."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval.drafting.figures import answering_lines, figures_of, language_of, quotes_of


def values(text, question=""):
    return [f.value + (f.unit or "") for f in figures_of(text, question)]


def test_what_is_no_figure_of_an_answer():
    text = ("[3] 7 KERALA 30.5 23.9 28 % E（来源：rain.pdf rain.pdf@page=1#para1-21）\n"
            "Period: 01-06-2016 To 10-07-2016, 2016年7月10日 12.3")
    assert values(text, "Kerala rainfall in 2016?") == ["30.5", "23.9", "28%", "12.3"]


def test_the_lines_that_answer_are_the_rows_named_by_the_question():
    rows = "\n".join(f"{n} {name} actual {n}.5 mm normal {n}.7 mm" for n, name in enumerate(
        ["ASSAM", "KERALA", "GOA", "BIHAR", "PUNJAB", "SIKKIM", "TRIPURA", "MANIPUR", "ODISHA",
         "DELHI", "HARYANA", "GUJARAT", "RAJASTHAN", "TELANGANA", "KARNATAKA"], start=1))
    assert len(rows) > 400  # a long answer: not taken whole
    lines = answering_lines("What was Goa's rainfall?", "STATE-WISE RAINFALL\n" + rows)
    assert lines == {3}


def test_quotes_and_language():
    assert quotes_of('He said “demand stayed stable” and 「需求保持稳定的态势」.') == [
        "demand stayed stable", "需求保持稳定的态势"]
    assert language_of("收入为 1702 百万美元") == "zh" and language_of("Revenue 1,702") == "en"


@given(st.text(alphabet="0123456789.,% abcKERALA\n-/年月日", max_size=80))
def test_the_same_text_gives_the_same_figures_each_once(text):
    first = figures_of(text)
    assert first == figures_of(text)
    assert len({f.key for f in first}) == len(first)
