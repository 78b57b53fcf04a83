"""periods.py: every common spelling of a period keyed, relative ones resolved, never guessed."""

from datetime import date

import pytest

from ragspine_eval.judges.financial.periods import is_stated, read_periods, resolve, span


def keys(text: str) -> list[str]:
    return [k for k, _, _ in read_periods(text.lower())]


@pytest.mark.parametrize(("text", "key"), [
    ("FY2025", "2025FY"), ("FY25", "2025FY"), ("2025财年", "2025FY"), ("fiscal 2025", "2025FY"),
    ("2025年上半年", "2025H1"), ("1H25", "2025H1"), ("H1 2025", "2025H1"), ("HY2025", "2025H1"),
    ("2025年中期", "2025H1"), ("the first half of 2025", "2025H1"), ("2H 2025", "2025H2"),
    ("2025年第三季度", "2025Q3"), ("Q3 2025", "2025Q3"), ("3Q25", "2025Q3"),
    ("the third quarter of 2025", "2025Q3"), ("去年", "rel-1"), ("上一财年", "rel-1"),
    ("the prior year", "rel-1"), ("今年", "rel0"), ("去年上半年", "rel-1H1"), ("三季度", "relxQ3"),
    ("25财年", "2025FY"), ("二〇二五年", "2025FY"), ("2025年1-6月", "2025H1"),
    ("2025年1月至6月", "2025H1"), ("jan-jun 2025", "2025H1"), ("the six months to June 2025", "2025H1"),
    ("2025年前六个月", "2025H1"), ("2025年7-9月", "2025Q3"), ("2025年前三季度", "2025M0109"),
    ("the first nine months of 2025", "2025M0109"), ("9M25", "2025M0109"),
    ("the year before last", "rel-2"), ("上一个会计年度", "rel-1"), ("last year's first half", "rel-1H1"),
    ("全年", "relxFY"), ("最近一个完整财年", "relxFY"), ("the latest full year", "relxFY"),
    # a span named by its end and its length (issue 32, batch 9's wordings)
    ("截至2025年12月31日止年度", "2025FY"), ("截至2025年6月30日止六个月", "2025H1"),
    ("截至2025年6月30日止半年度", "2025H1"), ("截至2025年9月30日止三个月", "2025Q3"),
    ("the year ended 31 December 2025", "2025FY"), ("the six months ended 30 June 2025", "2025H1"),
    ("the half-year ended 30 June 2025", "2025H1"), ("the quarter ended 30 September 2025", "2025Q3"),
    ("the six months ended 31 December 2025", "2025H2"),
    # a year that crosses a year end is no calendar span: its own key
    ("the year ended 30 June 2025", "2025E0612"), ("截至2025年3月31日止年度", "2025E0312"),
    ("the twelve months to June 2025", "2025E0612"),
    ("2025年首半年", "2025H1"), ("2025年后六个月", "2025H2"), ("the back half of 2025", "2025H2"),
    ("二〇二五财政年度", "2025FY"), ("FY'25", "2025FY"), ("calendar 2025", "2025FY"),
    ("the 2025 fiscal year", "2025FY"), ("financial year 2025", "2025FY"),
    ("2025年半年度", "2025H1"), ("2025年一至六月", "2025H1"),
    ("两年前", "rel-2"), ("two fiscal years ago", "rel-2"), ("earlier this year", "rel0"),
    ("上财年", "rel-1"), ("上年度", "rel-1"), ("the preceding fiscal year", "rel-1"),
    ("前一财年", "rel-1"), ("过去一个财年", "relxFY"),
])
def test_each_spelling_has_its_key(text, key):
    assert keys(text) == [key]


def test_a_relative_period_is_resolved_from_the_clause_then_the_reference_date():
    assert resolve("rel-1", "2025FY", "2025", None) == "2024FY"  # a year before the clause's
    assert resolve("rel-1", "2025H1", "2025", None) == "2024H1"  # the same part, a year on
    assert resolve("rel-1", None, None, date(2026, 3, 31)) == "2025FY"
    assert resolve("relxQ3", None, "2025", None) == "2025Q3"  # 三季度 of the claim's year
    assert resolve("relxQ3", None, None, date(2026, 2, 1)) == "2025Q3"  # the latest ended
    assert resolve("relxH1", None, None, date(2025, 8, 1)) == "2025H1"
    assert resolve("rel-1H1", None, None, date(2026, 1, 10)) == "2025H1"
    assert resolve("relxFY", None, None, date(2026, 3, 31)) == "2025FY"  # the latest full year
    assert resolve("rel0", "2024FY", "2024", date(2025, 6, 1)) == "2025FY"  # this year: the date's
    assert keys("一年后") == ["rel1"] and resolve("rel1", "2024FY", "2024", None) == "2025FY"


def test_nothing_unresolvable_is_guessed():
    assert resolve("rel-1", None, None, None) is None
    assert resolve("relxQ3", None, None, None) is None
    assert not is_stated("rel-1") and is_stated("2025H1")


def test_spans_nest_a_half_and_a_quarter_in_their_year():
    year, half, quarter = span("2025FY"), span("2025H2"), span("2025Q3")
    assert year and half and quarter
    assert year[0] <= half[0] <= quarter[0] <= quarter[1] <= half[1] == year[1]
    assert span("rel-1") is None
    assert span("2025M0109") == (2025 * 12 + 1, 2025 * 12 + 9)  # the first nine months


def test_a_year_ended_in_june_spans_two_calendar_years_and_no_calendar_key():
    assert span("2025E0612") is None  # compared by key: no passage states such a year
    assert keys("the year ended 30 June 2025") != keys("the year ended 31 December 2025")
