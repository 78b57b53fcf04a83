"""How sure a pass rate is, and whether a change between two runs is more than noise.

Pure math on counts, no scipy:
- `wilson_interval(passed, total)`: the Wilson score interval of a proportion (95% with the
  default z = 1.96). It stays inside [0, 1], is defined at 0/n and n/n (where the textbook
  normal interval collapses to a point), and is (0.0, 1.0) when there is no case at all.
- `mcnemar_exact(b, c)`: the two-sided exact McNemar p-value on paired verdicts, where b cases
  went one way (pass -> fail) and c the other (fail -> pass). Under "no change", each discordant
  case is a fair coin, so p = min(1, 2 * P[Binomial(b + c, 1/2) <= min(b, c)]), summed in exact
  integer arithmetic. p is 1.0 when nothing flipped.

Invariants: intervals inform, they never decide. No gate reads these numbers; the pass/fail rules
stay with the stored baselines (see ragspine_eval.ratchet).
"""

from __future__ import annotations

import math
from fractions import Fraction

Z_95 = 1.96


def wilson_interval(passed: int, total: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval (lo, hi) of `passed` successes out of `total`."""
    if total < 0 or passed < 0 or passed > total:
        raise ValueError(f"need 0 <= passed <= total, got passed={passed}, total={total}")
    if total == 0:
        return 0.0, 1.0
    p = passed / total
    z2 = z * z
    denom = 1 + z2 / total
    centre = (p + z2 / (2 * total)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total))
    # At 0/n and n/n the bound is exactly 0 or 1; rounding would leave 1e-17 off it.
    lo = 0.0 if passed == 0 else max(0.0, centre - half)
    hi = 1.0 if passed == total else min(1.0, centre + half)
    return lo, hi


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for b discordant pairs one way and c the other."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


def format_interval(interval: tuple[float, float]) -> str:
    """`[0.93, 1.00]`: how tables show an interval."""
    lo, hi = interval
    return f"[{lo:.2f}, {hi:.2f}]"
