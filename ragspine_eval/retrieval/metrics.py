"""Retrieval metrics: per case from its rules and ranked passages, per run and by tag.

Per case (`measure_case`), binary relevance (relevance.py), ranks 1-based in the engine's order:
- `rank`: the rank of the first relevant passage, None when none was retrieved;
- `covering_rank`: the smallest k whose top k matches every rule (a question file's "all page
  groups in the top k"), None when some rule is never matched; equals `rank` for one rule;
- `page_rank`: the rank of the first relevant passage counted in distinct (doc, page or slide)
  units, the passages without a page or slide counting one each; None when no passage has a
  page or slide or none is relevant;
- hit@k (k in `KS`): rank <= k; reciprocal rank 1/rank (0 without one), whose mean is MRR;
- precision@k: relevant passages in the top k over k (trec_eval's P@k: over k even when fewer
  were returned); recall@k: the share of the case's rules that a top-k passage matches (one
  rule, one needed thing: equals hit@k for a case with one rule);
- nDCG@10: binary gains, DCG = sum of 1/log2(rank + 1) over the relevant passages of the top
  10, over the ideal DCG of min(R, 10) relevant passages at the top, where R is the number of
  relevant passages the engine returned (the judged pool is what it returned: the knowledge
  base's other passages are unjudged, as in pooled TREC qrels), 0 when R = 0.
A case whose engine did not report its passages (an HTTP or callable engine without the
outcome's `passages` field) is *not observed*: it has no metric and is never a miss.

Per run and by tag (`summarize`): the cases measured, the cases not observed, hit@k rates with
their 95% Wilson intervals (stats.py), MRR, nDCG@10, mean precision@k and recall@k, and the page
figures over the cases that have a page rank.

Own code, not an IR library, measured (`python -m benchmarks.retrieval_metrics`, 10,000 cases,
this 2-core machine, figures in benchmarks/RESULTS.md): RR, nDCG@10, P@k and Success@k for
every case took 40-50 ms here, 0.8-2.2 s through ir-measures (its qrels and run dicts built
first, then pytrec_eval underneath) and 0.2-0.3 s through pytrec-eval-terrier directly, whose
import costs another ~0.2 s (ranx needs numba, heavier still). The metrics are a few lines of
arithmetic over a ranked list of flags, so the package keeps its own and imports no library;
tests/retrieval/test_metrics.py checks ours against ir-measures (the dev extra installs it) on
200 random rankings.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragspine_eval.retrieval.passages import KEEP_PASSAGES, RankedPassage, kept, passages_from
from ragspine_eval.retrieval.relevance import (
    RelevanceRule,
    needs_passages,
    rule_hits,
    rules_from_expected,
)
from ragspine_eval.stats import wilson_interval

KS = (1, 3, 5, 10)
NDCG_K = 10
GATE_K = 5  # the retrieval gate's default k: a case passes when a relevant passage is in the top 5
_DISCOUNT = [1 / math.log2(i + 2) for i in range(NDCG_K)]  # the gain of rank i + 1


def first_rank(flags: Sequence[bool]) -> int | None:
    """The 1-based rank of the first True, else None."""
    for i, flag in enumerate(flags):
        if flag:
            return i + 1
    return None


def covering_rank(hits: Sequence[Sequence[bool]]) -> int | None:
    """The smallest k whose top k has a match for every rule (None: a rule is never matched)."""
    worst = 0
    for per_rule in hits:
        rank = first_rank(per_rule)
        if rank is None:
            return None
        worst = max(worst, rank)
    return worst or None


def unit_rank(passages: Sequence[RankedPassage], flags: Sequence[bool]) -> int | None:
    """The first relevant passage's rank in distinct (doc, page or slide) units (see above)."""
    if not any(p.unit is not None for p in passages):
        return None
    seen: set[object] = set()
    for i, (passage, flag) in enumerate(zip(passages, flags, strict=True)):
        seen.add(("#", i) if passage.unit is None else (passage.doc, passage.unit))
        if flag:
            return len(seen)
    return None


def question_file_ranks(basis: str, rules: Sequence[RelevanceRule],
                        passages: Sequence[RankedPassage]
                        ) -> tuple[int | None, int | None, list[bool]]:
    """(rank, page rank, relevant flags) of a question of an engine question file, counted as the
    engine's `ragspine batch --retrieval-only` counts them (its summary's notes):
    - basis "page" (a rule per page group): rank is the covering rank over the passages that
      carry a page only (one without a page takes no place); page rank the same over distinct
      pages, the first passage of a page standing for it, a page being (doc, page) when the
      question names documents and the page number alone otherwise;
    - basis "content" (the expected text's rule): rank is the first relevant passage's place
      among all; page rank the distinct pages seen up to it (the same key; a passage without a
      page a unit of its own);
    - basis "none": (None, None, all False)."""
    from ragspine_eval.retrieval.relevance import engine_page

    hits = rule_hits(rules, passages)
    flags = [any(col) for col in zip(*hits)] if hits else [False] * len(passages)
    if basis == "none" or not rules:
        return None, None, [False] * len(passages)
    named = any(r.docs for r in rules)
    pages = [engine_page(p.locator) for p in passages]

    def unit(i: int) -> object:
        return (passages[i].doc, pages[i]) if named else pages[i]

    if basis == "page":
        paged = [i for i, page in enumerate(pages) if page is not None]
        per_rule = [[hits[r][i] for i in paged] for r in range(len(rules))]
        seen: set[object] = set()
        distinct = []
        for i in paged:
            if unit(i) not in seen:
                seen.add(unit(i))
                distinct.append(i)
        per_rule_distinct = [[hits[r][i] for i in distinct] for r in range(len(rules))]
        return covering_rank(per_rule), covering_rank(per_rule_distinct), flags
    seen = set()
    for i, flag in enumerate(flags):
        seen.add(("#", i) if pages[i] is None else unit(i))
        if flag:
            return i + 1, len(seen), flags
    return None, None, flags


def precision_at(flags: Sequence[bool], k: int) -> float:
    return sum(1 for f in flags[:k] if f) / k


def recall_at(hits: Sequence[Sequence[bool]], k: int) -> float:
    """The share of rules matched in the top k (1.0 when there is no rule: nothing is needed)."""
    if not hits:
        return 1.0
    return sum(1 for per_rule in hits if any(per_rule[:k])) / len(hits)


def ndcg_at(flags: Sequence[bool], k: int = NDCG_K) -> float:
    relevant = sum(1 for f in flags if f)
    if not relevant:
        return 0.0
    discount = _DISCOUNT if k <= NDCG_K else [1 / math.log2(i + 2) for i in range(k)]
    dcg = sum(discount[i] for i, f in enumerate(flags[:k]) if f)
    return dcg / sum(discount[:min(relevant, k)])


@dataclass(frozen=True, slots=True)
class CaseRetrieval:
    """One case's retrieval as a report keeps it: whether it was observed, how many passages
    came back, the ranks, each metric, the rules (in words), and the top passages kept with
    their relevance (`relevant[i]` for `passages[i]`)."""

    observed: bool
    retrieved: int = 0
    rank: int | None = None
    covering_rank: int | None = None
    page_rank: int | None = None
    ndcg: float = 0.0
    precision: dict[int, float] = field(default_factory=dict)
    recall: dict[int, float] = field(default_factory=dict)
    rules: tuple[str, ...] = ()
    passages: tuple[RankedPassage, ...] = ()
    relevant: tuple[bool, ...] = ()

    def hit(self, k: int) -> bool:
        return self.rank is not None and self.rank <= k

    @property
    def reciprocal_rank(self) -> float:
        return 0.0 if self.rank is None else 1.0 / self.rank

    def to_dict(self) -> dict[str, Any]:
        """The report's form, kept small (a 10,000-case report grows by at most 20%): what the
        rank, the kept passages' flags and the rules give back is left out (MRR is 1/rank,
        precision@k the flags of the top k; recall@k is written for several rules only, as it
        is hit@k for one; covering_rank when it differs from rank, page_rank when known)."""
        if not self.observed:
            return {"observed": False, "rules": list(self.rules)}
        data: dict[str, Any] = {"observed": True, "retrieved": self.retrieved,
                                "rank": self.rank, "hit": {str(k): self.hit(k) for k in KS},
                                "ndcg@10": round(self.ndcg, 4)}
        if self.covering_rank != self.rank:
            data["covering_rank"] = self.covering_rank
        if self.page_rank is not None:
            data["page_rank"] = self.page_rank
        if len(self.rules) > 1:
            data["recall"] = {str(k): round(v, 4) for k, v in self.recall.items()}
        data["rules"] = list(self.rules)
        data["passages"] = [{**p.to_dict(), "relevant": r}
                            for p, r in zip(self.passages, self.relevant, strict=True)]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseRetrieval:
        """What `to_dict` wrote, the figures it leaves out computed again (exact: the kept
        passages are the top KEEP_PASSAGES >= every k)."""
        rules = tuple(data.get("rules", ()))
        if not data.get("observed"):
            return cls(False, rules=rules)
        passages = tuple(RankedPassage.from_dict(p) for p in data.get("passages", ()))
        flags = tuple(bool(p.get("relevant")) for p in data.get("passages", ()))
        rank = data.get("rank")
        recall = ({int(k): v for k, v in data["recall"].items()} if "recall" in data else
                  {k: float(rank is not None and rank <= k) for k in KS})
        return cls(True, data.get("retrieved", len(passages)), rank,
                   data.get("covering_rank", rank), data.get("page_rank"),
                   data.get("ndcg@10", 0.0), {k: precision_at(flags, k) for k in KS}, recall,
                   rules, passages, flags)


def not_observed(rules: Sequence[RelevanceRule]) -> CaseRetrieval:
    return CaseRetrieval(False, rules=tuple(r.describe() for r in rules))


def measure_case(rules: Sequence[RelevanceRule], passages: Sequence[RankedPassage] | None,
                 keep: int = KEEP_PASSAGES) -> CaseRetrieval:
    """A case's retrieval from its rules and every passage the engine returned (full text, in
    its order; None: not observed). Ranks count every passage; `keep` are kept."""
    if passages is None:
        return not_observed(rules)
    hits = rule_hits(rules, passages)
    if len(hits) == 1:
        flags = hits[0]
    else:
        flags = [any(col) for col in zip(*hits)] if hits else [False] * len(passages)
    firsts = [first_rank(per_rule) for per_rule in hits]
    covering = None if not firsts or None in firsts else max(firsts)  # type: ignore[type-var]
    top = tuple(kept(passages, keep))
    return CaseRetrieval(
        True, len(passages), first_rank(flags), covering, unit_rank(passages, flags),
        ndcg_at(flags), {k: precision_at(flags, k) for k in KS},
        {k: (sum(1 for f in firsts if f is not None and f <= k) / len(firsts) if firsts
             else 1.0) for k in KS},
        tuple(r.describe() for r in rules), top, tuple(flags[:len(top)]))


def case_retrieval(expected: Mapping[str, Any], raw: Sequence[Mapping[str, Any]] | None
                   ) -> CaseRetrieval | None:
    """A golden case's retrieval from its `expected` and the engine's passages as an outcome
    holds them (None: not observed). None when the case has no rule, or needs no passage
    (a fact's source only) and the engine retrieved none or did not say."""
    rules = rules_from_expected(expected)
    if not rules:
        return None
    if not needs_passages(expected) and not raw:
        return None
    return measure_case(rules, None if raw is None else passages_from(raw))


# --- per run and by tag ------------------------------------------------------------------------


@dataclass
class RetrievalSummary:
    """The retrieval figures of a set of cases (a run, or one tag value)."""

    measured: int = 0
    not_observed: int = 0
    hits: dict[int, int] = field(default_factory=lambda: dict.fromkeys(KS, 0))
    rr_sum: float = 0.0
    ndcg_sum: float = 0.0
    precision_sum: dict[int, float] = field(default_factory=lambda: dict.fromkeys(KS, 0.0))
    recall_sum: dict[int, float] = field(default_factory=lambda: dict.fromkeys(KS, 0.0))
    paged: int = 0
    page_hits: dict[int, int] = field(default_factory=lambda: dict.fromkeys(KS, 0))
    page_rr_sum: float = 0.0

    def add_dict(self, data: Mapping[str, Any]) -> None:
        """`add` of a case's retrieval as a report keeps it (CaseRetrieval.to_dict), read
        without building its passages again."""
        if not data.get("observed"):
            self.not_observed += 1
            return
        self.measured += 1
        rank = data.get("rank")
        flags = [bool(p.get("relevant")) for p in data.get("passages", ())]
        recall = data.get("recall")
        for k in KS:
            hit = rank is not None and rank <= k
            self.hits[k] += hit
            self.precision_sum[k] += precision_at(flags, k)
            self.recall_sum[k] += recall[str(k)] if recall else float(hit)
        if rank is not None:
            self.rr_sum += 1.0 / rank
        self.ndcg_sum += data.get("ndcg@10", 0.0)
        page_rank = data.get("page_rank")
        if page_rank is not None or any(p.get("page") is not None or p.get("slide") is not None
                                        for p in data.get("passages", ())):
            self.paged += 1
            if page_rank is not None:
                self.page_rr_sum += 1.0 / page_rank
                for k in KS:
                    self.page_hits[k] += page_rank <= k

    def add(self, case: CaseRetrieval) -> None:
        if not case.observed:
            self.not_observed += 1
            return
        self.measured += 1
        for k in KS:
            self.hits[k] += case.hit(k)
            self.precision_sum[k] += case.precision.get(k, 0.0)
            self.recall_sum[k] += case.recall.get(k, 0.0)
        self.rr_sum += case.reciprocal_rank
        self.ndcg_sum += case.ndcg
        if case.page_rank is not None or any(p.unit is not None for p in case.passages):
            self.paged += 1
            if case.page_rank is not None:
                self.page_rr_sum += 1.0 / case.page_rank
                for k in KS:
                    self.page_hits[k] += case.page_rank <= k

    def hit_rate(self, k: int) -> float:
        return self.hits[k] / self.measured if self.measured else 0.0

    def hit_interval(self, k: int) -> tuple[float, float]:
        return wilson_interval(self.hits[k], self.measured)

    @property
    def mrr(self) -> float:
        return self.rr_sum / self.measured if self.measured else 0.0

    @property
    def ndcg(self) -> float:
        return self.ndcg_sum / self.measured if self.measured else 0.0

    def to_dict(self) -> dict[str, Any]:
        n = self.measured
        data: dict[str, Any] = {
            "measured": n, "not_observed": self.not_observed,
            "hit": {str(k): {"hits": self.hits[k], "rate": self.hit_rate(k),
                             "ci_lo": self.hit_interval(k)[0], "ci_hi": self.hit_interval(k)[1]}
                    for k in KS},
            "mrr": self.mrr, "ndcg@10": self.ndcg,
            "precision": {str(k): self.precision_sum[k] / n if n else 0.0 for k in KS},
            "recall": {str(k): self.recall_sum[k] / n if n else 0.0 for k in KS},
        }
        if self.paged:
            data["page"] = {"measured": self.paged, "mrr": self.page_rr_sum / self.paged,
                            "hit": {str(k): self.page_hits[k] / self.paged for k in KS}}
        return data


@dataclass
class RunRetrieval:
    """A run's retrieval: the whole run and each tag value (`by_tag[key][value]`)."""

    overall: RetrievalSummary = field(default_factory=RetrievalSummary)
    by_tag: dict[str, dict[str, RetrievalSummary]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {**self.overall.to_dict(),
                "by_tag": {key: {value: s.to_dict() for value, s in sorted(values.items())}
                           for key, values in sorted(self.by_tag.items())}}


def summarize(cases: Iterable[tuple[Mapping[str, str], CaseRetrieval | Mapping[str, Any] | None]]
              ) -> RunRetrieval:
    """The run's figures from (tags, case retrieval) pairs, a case's retrieval as a
    CaseRetrieval or as its dict (`to_dict`'s); a None retrieval (a case without a rule) is
    left out."""
    run = RunRetrieval()
    for tags, case in cases:
        if case is None:
            continue
        targets = [run.overall, *(run.by_tag.setdefault(key, {}).setdefault(
            value, RetrievalSummary()) for key, value in tags.items())]
        for summary in targets:
            if isinstance(case, CaseRetrieval):
                summary.add(case)
            else:
                summary.add_dict(case)
    return run
