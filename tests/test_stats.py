"""Wilson intervals against published and hand-computed values; exact McNemar against binomial
sums worked out by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval.stats import format_interval, mcnemar_exact, wilson_interval


@pytest.mark.parametrize(("passed", "total", "lo", "hi"), [
    # hand-computed with z = 1.96: at 0/n the upper bound is z²/(n + z²)
    (0, 10, 0.0, 3.8416 / 13.8416),
    (10, 10, 1 - 3.8416 / 13.8416, 1.0),
    (5, 10, 0.2366, 0.7634),
    # Newcombe (1998), Statistics in Medicine 17:857, Table I, method 3 (score, no correction)
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
])
def test_wilson_interval_matches_known_values(passed, total, lo, hi):
    got_lo, got_hi = wilson_interval(passed, total)
    assert got_lo == pytest.approx(lo, abs=5e-5)
    assert got_hi == pytest.approx(hi, abs=5e-5)


def test_wilson_bounds_are_exact_at_the_ends_and_uninformative_without_cases():
    assert wilson_interval(0, 71)[0] == 0.0
    assert wilson_interval(71, 71)[1] == 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(("passed", "total"), [(-1, 3), (4, 3), (1, -1)])
def test_wilson_rejects_impossible_counts(passed, total):
    with pytest.raises(ValueError, match="passed <= total"):
        wilson_interval(passed, total)


@given(st.integers(0, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_interval_holds_the_rate_inside_the_unit_interval(counts):
    passed, total = counts
    lo, hi = wilson_interval(passed, total)
    rate = passed / total if total else 0.5
    assert 0.0 <= lo <= rate <= hi <= 1.0


@given(st.integers(1, 200), st.floats(0.05, 0.95))
def test_more_cases_at_the_same_rate_narrow_the_interval(n, share):
    passed = round(share * n)
    lo1, hi1 = wilson_interval(passed, n)
    lo4, hi4 = wilson_interval(4 * passed, 4 * n)
    assert hi4 - lo4 < hi1 - lo1


def test_format_interval_is_two_decimals():
    assert format_interval(wilson_interval(70, 71)) == "[0.92, 1.00]"


@pytest.mark.parametrize(("b", "c", "p"), [
    (0, 0, 1.0),                  # nothing flipped
    (0, 5, 2 * 1 / 32),           # 2 * C(5,0) / 2^5
    (5, 0, 2 * 1 / 32),           # symmetric
    (0, 6, 2 * 1 / 64),           # 2 * C(6,0) / 2^6
    (1, 5, 2 * (1 + 6) / 64),     # 2 * (C(6,0) + C(6,1)) / 2^6 = 0.21875
    (2, 8, 2 * (1 + 10 + 45) / 1024),  # 0.109375
    (1, 9, 2 * (1 + 10) / 1024),       # 0.021484375: below 0.05
    (3, 4, 1.0),                  # 2 * (1 + 7 + 21 + 35) / 128 = 1.0
    (2, 2, 1.0),                  # 2 * 11 / 16 > 1 is capped
])
def test_mcnemar_exact_equals_the_binomial_sum(b, c, p):
    assert mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)


def test_mcnemar_rejects_negative_counts():
    with pytest.raises(ValueError, match="non-negative"):
        mcnemar_exact(-1, 2)


@given(st.integers(0, 300), st.integers(0, 300))
def test_mcnemar_is_a_symmetric_probability(b, c):
    p = mcnemar_exact(b, c)
    assert 0.0 < p <= 1.0
    assert p == mcnemar_exact(c, b)
    if b != c:  # one more flip on the side already ahead makes the change less like noise
        hi, lo = max(b, c), min(b, c)
        assert mcnemar_exact(hi + 1, lo) <= p
