"""How sure a pass rate is, and whether a change between two runs is more than noise.

Pure math on counts, no scipy:
- `wilson_interval(passed, total)`: the Wilson score interval of a proportion (95% with the
  default z = 1.96). It stays inside [0, 1], is defined at 0/n and n/n (where the textbook
  normal interval collapses to a point), and is (0.0, 1.0) when there is no case at all.
- `mcnemar_exact(b, c)`: the two-sided exact McNemar p-value on paired verdicts, where b cases
  went one way (pass -> fail) and c the other (fail -> pass). Under "no change", each discordant
  case is a fair coin, so p = min(1, 2 * P[Binomial(b + c, 1/2) <= min(b, c)]), summed in exact
  integer arithmetic. p is 1.0 when nothing flipped.
- `pass_at_k(counts, n, k)`: over cases each run n times, `counts` each case's passing runs,
  the unbiased estimators of pass@k (at least one of k runs drawn passes) and pass^k (every
  one does), averaged over the cases; at k = n each is a share of cases, with its interval.

Invariants: intervals inform, they never decide. No gate reads these numbers; the pass/fail rules
stay with the stored baselines (see ragspine_eval.ratchet).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

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


def pass_at_k(counts: list[int], n: int, k: int | None = None) -> dict[str, Any]:
    """pass@k and pass^k of cases run `n` times (k defaults to n), `counts` each case's passing
    runs: per case 1 - C(n-c, k)/C(n, k) and C(c, k)/C(n, k), averaged (1.0 with no case). At
    k = n they are the shares of cases that passed at least once and every time, so each has
    its Wilson interval (`pass@k_ci`, `pass^k_ci`)."""
    k = n if k is None else k
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the {n} repeats, got {k}")
    total = len(counts)
    at_k = sum(1 - math.comb(n - c, k) / math.comb(n, k) for c in counts) / total if total else 1.0
    every = sum(math.comb(c, k) / math.comb(n, k) for c in counts) / total if total else 1.0
    out: dict[str, Any] = {"k": k, "n": n, "cases": total, "pass@k": round(at_k, 6),
                           "pass^k": round(every, 6)}
    if k == n:
        out["pass@k_ci"] = wilson_interval(sum(c > 0 for c in counts), total)
        out["pass^k_ci"] = wilson_interval(sum(c == n for c in counts), total)
    return out


def format_interval(interval: tuple[float, float]) -> str:
    """`[0.93, 1.00]`: how tables show an interval."""
    lo, hi = interval
    return f"[{lo:.2f}, {hi:.2f}]"
