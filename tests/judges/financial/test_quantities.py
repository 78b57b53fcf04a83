"""Quantities: a number with its scale, unit and hedge, and when a claim's is a passage's; and
the number reader's spans they are built on."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval.judges.financial.quantities import APPROX_TOLERANCE, matches, read_quantities
from ragspine_eval.judges.numbers import normalized, number_spans, number_values


def one(text: str):
    found = read_quantities(text.lower())
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(("text", "value", "unit"), [
    ("17.02亿美元", Decimal("1702000000"), "USD"),
    ("USD 4.5 billion", Decimal("4500000000"), "USD"),
    ("1702 USD_M", Decimal("1702000000"), "USD"),
    ("1,702 million US dollars", Decimal("1702000000"), "USD"),
    ("US$1.7bn", Decimal("1700000000"), "USD"),
    ("百分之十四点八", Decimal("14.8"), "PCT"),
    ("14.8 PCT", Decimal("14.8"), "PCT"),
    ("14.8%", Decimal("14.8"), "PCT"),
    ("３个百分点", Decimal("3"), "PP"),
    ("十三亿二千万元", Decimal("1320000000"), "CNY"),
    ("0.9 percentage points", Decimal("0.9"), "PP"),  # points, not percent
    ("one thousand seven hundred and two million US dollars", Decimal("1702000000"), "USD"),
    ("three million four hundred thousand US dollars", Decimal("3400000"), "USD"),
    ("USD 905k", Decimal("905000"), "USD"),
    # number words end at their last number word: the currency or percent after them is read
    ("two million dollars", Decimal("2000000"), "USD"),
    ("twenty-five percent", Decimal("25"), "PCT"),
    ("three hundred thousand yuan", Decimal("300000"), "CNY"),
    # batch 9's forms (issue 32)
    ("4亿1500万美元", Decimal("415000000"), "USD"),  # a larger scale then a smaller: one
    ("81亿8千万美元", Decimal("8180000000"), "USD"),
    ("3.104 thousand million US dollars", Decimal("3104000000"), "USD"),
    ("HK$1,702 million", Decimal("1702000000"), "HKD"),  # HK$ is not $
    ("1,702 million Hong Kong dollars", Decimal("1702000000"), "HKD"),
    ("90个基点", Decimal("0.9"), "PP"),  # basis points are hundredths of a point
    ("148 basis points", Decimal("1.48"), "PP"),
    ("千分之十四点八", Decimal("1.48"), "PCT"),  # per mille
    ("1.12倍", Decimal("1.12"), "TIMES"), ("1.29 times", Decimal("1.29"), "TIMES"),
    ("七成", Decimal("70"), "PCT"), ("一成二", Decimal("12"), "PCT"),
    ("三分之二", Decimal("66.67"), "PCT"), ("two-thirds", Decimal("66.67"), "PCT"),
    ("14.8pc", Decimal("14.8"), "PCT"),
])
def test_a_number_its_scale_and_its_unit_are_one_quantity(text, value, unit):
    q = one(normalized(text))
    assert (q.value, q.unit) == (value, unit)


@pytest.mark.parametrize(("claim", "passage", "same"), [
    ("17.02亿美元", "1702 USD_M", True),
    ("17亿美元", "1702 USD_M", True),  # rounded at the precision written, within 1%
    ("20亿美元", "1702 USD_M", False),  # rounds to 2 billion, but 17% away
    ("约17亿美元", "1702 USD_M", True),
    ("约18亿美元", "1702 USD_M", False),  # 5.8% away: beyond the 5% tolerance
    ("roughly 15%", "14.8 PCT", True),
    ("15%", "14.8 PCT", False),  # stated plainly: 1.4% away
    ("超过15亿美元", "1702 USD_M", True),
    ("超过18亿美元", "1702 USD_M", False),
    ("just under USD 1.2 billion", "1180 USD_M", True),
    ("nearly USD 1.2 billion", "1230 USD_M", False),
    ("17.02亿元", "1702 USD_M", False),  # yuan are not dollars
    ("14.8%", "14.8 USD_M", False),  # a percent is not a sum of money
    ("1702", "1702 USD_M", True),  # no unit: the value alone
    ("0.148", "14.8 PCT", True),  # a ratio written as a fraction is the percentage
    ("0.0148", "14.8 PCT", False),
    ("0.148%", "14.8 PCT", False),  # a wrong scale stays wrong
    ("1.48%", "14.8 PCT", False),
    ("17.02百万美元", "1702 USD_M", False),
    ("818千美元", "818 USD_M", False),
])
def test_when_a_claims_quantity_is_the_passages(claim, passage, same):
    assert matches(one(normalized(claim)), one(normalized(passage))) is same


@pytest.mark.parametrize(("text", "spelled"), [
    ("it cost two million dollars in 2019", ["two million", "2019"]),
    ("two hundred and five men", ["two hundred and five"]),
    ("two hundred and then more", ["two hundred"]),
    ("the third man", ["third"]),
])
def test_a_number_in_words_spans_its_number_words_only(text, spelled):
    assert [text[s.start:s.end] for s in number_spans(text)] == spelled


def test_a_sum_in_words_is_held_by_the_same_sum_in_digits_not_by_another_currency():
    words = one("two million dollars")
    assert matches(words, one(normalized("usd 2,000,000")))
    assert not matches(words, one(normalized("2,000,000 yuan")))


def test_a_sum_is_described_with_its_zeros():
    assert one("usd 140 million").describe() == "140 million USD"
    assert one("1.702亿美元").describe() == "170.2 million USD"


def test_the_approximation_tolerance_is_five_percent():
    assert APPROX_TOLERANCE == Decimal("0.05")
    assert matches(one("约105"), one("100"))
    assert not matches(one("约106"), one("100"))


@given(st.text(alphabet=st.sampled_from("0123456789.,亿万百千十一二三四五点约% USDmillion"),
               max_size=30))
def test_number_spans_are_the_values_number_values_gives_and_point_at_them(text):
    spans = number_spans(text)
    assert frozenset(s.value for s in spans) == number_values(text)
    plain = normalized(text)
    for span in spans:
        assert plain[span.start:span.end].strip()


def test_half_a_billion_is_a_figure_and_two_drivers_a_count():
    half = one("roughly half a billion dollars")
    assert (half.value, half.unit, half.hedge) == (Decimal("500000000"), "USD", "approx")
    assert one("17亿多美元").hedge == "over"  # 多 after the number: more than
    assert one("some USD 1.7 billion").hedge == "approx"


def test_a_round_approximation_may_be_off_by_its_rounding_up_to_ten_percent():
    fact = one("10.66%")
    assert matches(one("约10%"), fact)  # 6% off, but 10 is what 10.66 rounds to
    assert not matches(one("约20亿美元"), one("1702 USD_M"))  # rounds at 1e9, but 17% off
    assert not matches(one("约15亿美元"), one("1702 USD_M"))
