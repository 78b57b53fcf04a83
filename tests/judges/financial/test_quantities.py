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
