"""The first step of a run: which cases the caches already answer, and so which must reach the
engine.

`outcome_cache(identity, mode, kb, how, fingerprint_of, outcome)` is the run's outcome cache
(execution/cache.py), holding the harness's outcome type, or None; `plan(cases, cache, scoring,
decode, decode_run)` reads, per case, its stored outcome and
its stored scoring (the verdicts of qa/scored.py, under the scoring key `scoring`) into a
`Plan`: the cases neither answers are the ones the answer step sends to the engine.

Why it is fast (figures of benchmarks/RESULTS.md):
- every case's outcome and verdicts are looked up in one statement per table (the keys bound as
  one JSON array), not one per case, and all entries parsed in two `json.loads` calls;
- a case whose verdicts are reused needs no scoring, and with `decode_run` the whole-run entry
  (execution/whole_run.py) is read first: one entry and one checksum instead of two entries
  and two checksums a case (20,000 at 10k cases). Warm / cold at 10,000 tool cases, whole
  processes, main and the branch interleaved three pairs: 11.3% before, 6.7% after ("Second
  pass (branch perf2)"); reading the entry is 0.17 s of the warm run's 0.8 s;
- the golden set itself comes from the memo of validated sets (execution/golden_memo.py: 0.1 s
  at 10k instead of 0.4 s of strict parsing);
- the key's hash state of everything but the case is made once per run (cache.OutcomeCache).

Invariants: a stored answer is used only when nothing that could change it changed (the cache's
key, execution/cache.py); a case is in `todo` exactly when neither an outcome nor a scoring is
known for it; with no cache every case is to run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ragspine_eval.pipeline.spec import RunHow


@dataclass
class Plan:
    """Per case (case order) what the caches answer: its stored outcome (`known`) and its stored
    scoring (`scored`), both None without a cache; `cache` and `scoring` the run's outcome
    cache and scoring key (None: none)."""

    cases: list[Any]
    cache: Any = None
    scoring: str | None = None
    known: list[Any] | None = None
    scored: list[Any] | None = None

    @cached_property
    def todo(self) -> list[int]:
        """The positions of the cases the engine must answer."""
        if self.known is None:
            return list(range(len(self.cases)))
        if self.scored is None:
            return [i for i, out in enumerate(self.known) if out is None]
        return [i for i, (o, s) in enumerate(zip(self.known, self.scored, strict=True))
                if o is None and s is None]

    @property
    def to_run(self) -> int:
        return len(self.todo)

    @property
    def answered(self) -> bool:
        """Every case known (and scored): the engine is neither imported nor started."""
        return self.known is not None and self.to_run == 0

    def have(self) -> list[Any]:
        """Per case what answers it without the engine (its stored scoring, else its stored
        outcome) or None."""
        if self.known is None:
            return [None] * len(self.cases)
        if self.scored is None:
            return self.known
        return [o if s is None else s for o, s in zip(self.known, self.scored)]


def outcome_cache(identity: Callable[[], Any], mode: str | None, kb_fingerprint: str,
                  how: RunHow, fingerprint_of: Callable[[Any], str] | None = None,
                  outcome: type[Any] | None = None) -> Any:
    """The run's OutcomeCache, or None when this run uses none (RunHow.uses_cache) or
    `identity()` names no engine (execution/cache.EngineIdentity; None: an engine nothing we
    can see names, never cached). `identity` is called only when the cache is used: naming the
    installed engine hashes its files. `fingerprint_of(case)`: what a case asserts, in its key
    (None: a golden case's fingerprint); `outcome`: the outcome type the harness's engine
    returns and the cache holds (engines/base.Outcome; None: CaseOutcome)."""
    if how.uses_cache is False:
        return None
    identity = identity()
    if identity is None:
        return None
    from ragspine_eval.execution.cache import OutcomeCache, cache_dir

    extra: dict[str, Any] = {} if fingerprint_of is None else {"fingerprint_of": fingerprint_of}
    if outcome is not None:
        extra["outcome"] = outcome
    return OutcomeCache(cache_dir(), identity, mode, kb_fingerprint, **extra)  # type: ignore[arg-type]


def plan(cases: Sequence[Any], cache: Any, scoring: str | None = None,
         decode: Callable[..., Any] | None = None, decode_run: Callable[..., Any] | None = None
         ) -> Plan:
    """What the caches answer for these cases (module docstring). Without `scoring` only the
    outcomes are read; `decode` and `decode_run` read a harness's stored scoring (qa:
    `ScoredCase.many`, `ScoredCase.from_run`)."""
    cases = list(cases)
    if cache is None:
        return Plan(cases)
    if scoring is None:
        return Plan(cases, cache, None, cache.get_many(cases), None)
    known, scored = cache.get_scored(cases, scoring, decode, decode_run)
    return Plan(cases, cache, scoring, known, scored)
