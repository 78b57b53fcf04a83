"""Groundedness of narrative answers: claims, the entailment judge, and the two metrics.

`GROUNDEDNESS_METRICS = ("faithfulness", "answer_accuracy")`, scored on every case that expects a
narrative_doc (narrative and composite cases):
- faithfulness: every claim of the outcome's narrative_answer is entailed by its
  retrieved_context under the judge. An empty narrative answer has nothing grounded in it and fails.
- answer_accuracy: the recall of the expected narrative doc's content tokens in the answer
  reaches `ANSWER_RECALL_THRESHOLD`.

Each metric also says why: `judge_claims` gives every claim as a `ClaimCheck` (entailed, the
share of its content tokens the context holds, the tokens it lacks), and `recall_check` gives
the recall with the reference's tokens the answer lacks. A judge that only answers `entails`
still works: its ClaimChecks carry no coverage (None) and no missing tokens.

The default judge, `LexicalOverlapJudge`, is deterministic: a claim is entailed iff the share of
its content tokens found in the context reaches `ENTAILMENT_THRESHOLD`. Tokens are ASCII
alphanumeric runs (lower-cased) and single CJK characters; a short list of function words is not
content. Any other judge (an NLI model, say) plugs in through the `EntailmentJudge` protocol;
none ships here, because runs must need no model and no network.

Speed (every narrative case of a 100k-case run is scored here): a text's tokens are memoised
for the last few dozen texts, so a claim is tokenized once though split_claims and the judge
both need it; the judge keeps the vocabulary of the context it saw last, because faithful()
asks it about every claim of one answer against one context; a reference text's token set
is memoised, the knowledge base holding only a few of them. None of this changes a result.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import Any, Protocol

GROUNDEDNESS_METRICS = ("faithfulness", "answer_accuracy")

# Both 0.6: the values RAGSpine's own groundedness gates use, so our verdicts are comparable.
ENTAILMENT_THRESHOLD = 0.6
ANSWER_RECALL_THRESHOLD = 0.6

_TOKEN = re.compile(r"[A-Za-z0-9]+|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_STOPWORDS = frozenset(
    "a an and are as at be by for from in is it of on or that the this to was were with "
    "的 了 和 与 及 是 在 为 也 而 并 之".split()
)
# "（来源：doc locator）", "（资料来源：…）", "(source: …)": citation tails the engine appends.
_CITATION_TAIL = re.compile(r"[（(]\s*(?:资料)?来源[:：][^）)]*[）)]|[（(]\s*sources?:[^)）]*[)）]",
                            re.IGNORECASE)
_CITE_MARK = re.compile(r"\[\d+\]")
# Lines that frame an answer rather than claim anything: headers ending in a colon, the
# restated question, assumption notes, and lines of punctuation only.
_FRAMING_LINE = re.compile(r"^(?:.*[:：]|问题[:：].*|question:.*|【假设】.*|\[assumption\].*|\W*)$",
                           re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|(?<=\.)(?=\s|$)")


class EntailmentJudge(Protocol):
    """Decides whether a claim is entailed by a context (a list of retrieved passages).

    A judge may also offer `assess(claim, context) -> ClaimCheck`, to say how much of the claim
    the context covers and what it lacks; `check_claim` uses it where it exists."""

    def entails(self, claim: str, context: Sequence[str]) -> bool: ...


@dataclass(frozen=True, slots=True)
class ClaimCheck:
    """One claim as the judge saw it: entailed or not, the share of its content tokens found in
    the context (None when the judge cannot say), and the distinct tokens the context lacks, in
    the claim's order; a judge that explains itself also names its deciding rule, the passage
    it judged against and why."""

    claim: str
    entailed: bool
    coverage: float | None = None
    missing: tuple[str, ...] = ()
    # what a judge that explains its decision adds (the financial judge): the rule that decided,
    # the passage judged against (1 = the first retrieved passage) and one sentence of detail
    rule: str | None = None
    passage: int | None = None
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = {"claim": self.claim, "entailed": self.entailed,
               "coverage": None if self.coverage is None else round(self.coverage, 4),
               "missing": list(self.missing)}
        if self.rule is not None:  # judges without rules keep the report as it was
            out |= {"rule": self.rule, "passage": self.passage, "detail": self.detail}
        return out


def check_claim(judge: EntailmentJudge, claim: str, context: Sequence[str],
                reference_date: date | None = None) -> ClaimCheck:
    """The judge's `assess` where it has one, else its bare `entails` verdict; a judge that
    reads dates (`dated = True`: 去年 / last year) is given the case's reference date."""
    assess = getattr(judge, "assess", None)
    if getattr(judge, "dated", False):
        return assess(claim, context, reference_date)  # type: ignore[misc]
    if assess is not None:
        return assess(claim, context)
    return ClaimCheck(claim, bool(judge.entails(claim, context)))


def tokens(text: str) -> list[str]:
    """Content tokens: ASCII alphanumeric runs (lower-cased) and single CJK characters."""
    return list(_tokens(text))


# The only characters outside ASCII whose lower case holds an ASCII letter or digit (found by
# trying every code point): U+0130 (İ -> i + a combining dot) and U+212A (the Kelvin sign -> k).
# In a text without them, lower-casing the whole text first gives the same tokens, faster.
_LOWERS_TO_ASCII = ("\u0130", "\u212a")


def _scan(text: str) -> tuple[str, ...]:
    if _LOWERS_TO_ASCII[0] in text or _LOWERS_TO_ASCII[1] in text:
        return tuple(t for m in _TOKEN.findall(text) if (t := m.lower()) not in _STOPWORDS)
    return tuple([t for t in _TOKEN.findall(text.lower()) if t not in _STOPWORDS])


# Small on purpose: it serves the sentences of the one answer being scored (split_claims, then
# the judge), and a golden set that repeats (a benchmark's cycled set) gets no help from it.
_tokens = lru_cache(maxsize=32)(_scan)


@lru_cache(maxsize=64)
def _token_set(text: str) -> frozenset[str]:
    """The distinct tokens of a reference text (a knowledge-base document)."""
    return frozenset(_scan(text))


def strip_citations(text: str) -> str:
    """The text without the engine's citation tails ("（来源：doc locator）") and [n] marks:
    they point at sources and claim nothing."""
    return _CITE_MARK.sub("", _CITATION_TAIL.sub("", text))


def split_claims(answer: str) -> list[str]:
    """The claims of an answer: citation tails and framing lines removed, split on sentence ends."""
    claims: list[str] = []
    for line in answer.splitlines():
        line = strip_citations(line).strip()
        if not line or _FRAMING_LINE.match(line):
            continue
        for sentence in _SENTENCE_END.split(line):
            sentence = sentence.strip()  # whitespace is no token: the same test as unstripped
            if _tokens(sentence):
                claims.append(sentence)
    return claims


class LexicalOverlapJudge:
    """Entailed iff at least `threshold` of the claim's content tokens occur in the context."""

    def __init__(self, threshold: float = ENTAILMENT_THRESHOLD):
        self.threshold = threshold
        # (context, its vocabulary), replaced whole so that a reader in another thread never
        # pairs one context with another's vocabulary
        self._memo: tuple[tuple[str, ...], frozenset[str]] | None = None

    def entails(self, claim: str, context: Sequence[str]) -> bool:
        claim_tokens = _tokens(claim)
        if not claim_tokens:
            return True
        vocabulary = self._vocabulary_of(tuple(context))
        covered = sum(1 for t in claim_tokens if t in vocabulary)
        return covered / len(claim_tokens) >= self.threshold

    def assess(self, claim: str, context: Sequence[str]) -> ClaimCheck:
        """`entails`, with the coverage it compared with the threshold and the tokens missing."""
        claim_tokens = _tokens(claim)
        if not claim_tokens:
            return ClaimCheck(claim, True, 1.0)
        vocabulary = self._vocabulary_of(tuple(context))
        absent = [t for t in claim_tokens if t not in vocabulary]
        coverage = (len(claim_tokens) - len(absent)) / len(claim_tokens)
        return ClaimCheck(claim, coverage >= self.threshold, coverage, tuple(dict.fromkeys(absent)))

    def _vocabulary_of(self, context: tuple[str, ...]) -> frozenset[str]:
        memo = self._memo
        if memo is None or memo[0] != context:  # by value: a reused list that changed is seen
            memo = self._memo = (context, frozenset(_scan("\n".join(context))))
        return memo[1]


def judge_claims(answer: str, context: Sequence[str], judge: EntailmentJudge,
                 reference_date: date | None = None) -> list[ClaimCheck]:
    """Every claim of the answer, checked against the context (and the case's reference date,
    for a judge that reads one); [] when it makes none."""
    return [check_claim(judge, c, context, reference_date) for c in split_claims(answer)]


def faithful_text(checks: Sequence[ClaimCheck]) -> tuple[bool, str]:
    """(verdict, what was observed) for the faithfulness metric, from the claims' checks."""
    if not checks:
        return False, "no narrative claim to check"
    missing = [c.claim for c in checks if not c.entailed]
    if missing:
        return False, f"{len(missing)}/{len(checks)} claims not entailed: {missing[0][:80]}"
    return True, f"{len(checks)}/{len(checks)} claims entailed"


def faithful(answer: str, context: Sequence[str], judge: EntailmentJudge) -> tuple[bool, str]:
    """(verdict, what was observed) for the faithfulness metric."""
    return faithful_text(judge_claims(answer, context, judge))


def token_recall(reference: str, answer: str) -> float:
    """Share of the reference's distinct content tokens that occur in the answer."""
    wanted = _token_set(reference)
    if not wanted:
        return 1.0
    return len(wanted.intersection(_scan(answer))) / len(wanted)


@lru_cache(maxsize=64)
def _ordered_tokens(text: str) -> tuple[str, ...]:
    """The distinct tokens of a reference text, in the order they first occur."""
    return tuple(dict.fromkeys(_scan(text)))


def recall_check(reference: str, answer: str) -> tuple[float, list[str]]:
    """(token_recall, the reference's distinct content tokens the answer lacks, in the
    reference's order)."""
    wanted = _ordered_tokens(reference)
    if not wanted:
        return 1.0, []
    have = set(_scan(answer))
    missing = [t for t in wanted if t not in have]
    return (len(wanted) - len(missing)) / len(wanted), missing


def token_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, token) of every content token of a text, as `tokens` finds them."""
    return [(m.start(), m.end(), t) for m in _TOKEN.finditer(text)
            if (t := m.group().lower()) not in _STOPWORDS]


def accurate(reference: str, answer: str,
             threshold: float = ANSWER_RECALL_THRESHOLD) -> tuple[bool, str]:
    """(verdict, what was observed) for the answer_accuracy metric."""
    recall = token_recall(reference, answer)
    return recall >= threshold, f"recall {recall:.2f}"
