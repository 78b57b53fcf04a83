"""Failure stages: where in the engine each failing verdict went wrong, and RAGChecker's claim split.

`stage_of` places one failing verdict of one case at the first of these stages that explains it:
- `engine_error`: the engine raised, timed out or answered malformed (no verdict at all);
- `routing`: the engine clarified wrongly (the clarification gate failed, or it asked first
  where the case expects an answer), or routed the question where the answer cannot come from
  (a narrative case not sent to the narrative retriever, a numeric one not sent to the fact
  tools);
- `refusal_guard`: the refusal gate or fabrication failed, or the engine refused a case that
  expects an answer (whatever else then fails follows from the refusal);
- `retrieval`: a verdict that needs a passage (faithfulness, answer_accuracy, citation_validity,
  the retrieval gate) failed on a case with relevance, and no relevant passage is in the top k
  (k: the retrieval gate's);
- `answer`: a relevant passage was in the top k, and the answer is still wrong or unsupported
  (and every numeric failure the stages above do not explain: the fact was looked up);
- `unobserved`: a verdict that needs a passage failed and the engine did not report what it
  retrieved (an HTTP or callable engine without `passages`): retrieval or answer, nobody can
  say which, and it is never counted as a retrieval miss.
A case's stage (`case_stage`) is the first in `STAGES` order among its failing verdicts' stages.

`answer_stage` places a failing answer of the answer harness (answers/, an nl-answers-gold
question) with the same stages and one more, `citation`, the claim-level rules in that order
(the answer harness puts a question whose gold is in question at `gold` before asking this:
answers/placing.py; pages here are bare pages or (document, page) pairs, compared as given):
- `engine_error`: the engine raised;
- `routing`: a question that needs an answer was clarified, sent out of scope, or sent to the
  structured channel (found or not) where a narrative answer was needed;
- `refusal_guard`: a question that expects abstention was answered, or its refusal leaked a
  forbidden number; or a question that needs an answer was refused although a passage from a
  claim's page (any page, for a grounded-only question) was retrieved;
- `retrieval`: a failing claim none of whose pages is among the retrieved passages' pages (the
  engine's own top k for the answer), or a refusal with no such passage;
- `answer`: a claim's page was retrieved and the claim is not in the answer;
- `citation`: the claim is in the answer and its page is not among the cited sources (or its
  content and page hit different alternatives), or an answer carries no source at all.
The inputs are plain values (gate names, verdicts, the route, ranks), so this module stays below
the QA harness and any harness can place its failures the same way.

`claim_split` is RAGChecker's retriever/generator split of a narrative answer's claims (Ru et
al., "RAGChecker: A Fine-grained Framework for Diagnosing Retrieval-Augmented Generation",
NeurIPS 2024 Datasets and Benchmarks, section 3): RAGChecker checks each response claim for
entailment against each retrieved chunk; a claim entailed by a relevant chunk counts towards
*noise sensitivity in relevant chunks* when the claim is wrong and towards *context utilization*
when it is right, one entailed only by irrelevant chunks towards *noise sensitivity in
irrelevant chunks*, and one entailed by no chunk towards *hallucination* (wrong) or
*self-knowledge* (right); faithfulness is the share entailed by any chunk. This project has no
per-claim ground truth, so it counts the three supports alone: claims supported by a relevant
retrieved passage, by an irrelevant one only, by none. Each passage is judged on its own, as
RAGChecker does per chunk (so a claim the judge finds only in several passages together counts
as "none" here, though faithfulness, which judges against all of them, passes it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Stage = Literal["engine_error", "gold", "routing", "refusal_guard", "retrieval", "answer",
                "citation", "unobserved"]
STAGES: tuple[Stage, ...] = ("engine_error", "gold", "routing", "refusal_guard", "retrieval",
                             "answer", "citation", "unobserved")
STAGE_TEXT = {
    "engine_error": "engine error",
    "gold": "gold (the gold case does not fit the workspace, or its text is not on its page)",
    "routing": "routing or clarification",
    "refusal_guard": "refusal guard",
    "retrieval": "retrieval (no relevant passage in the top k)",
    "answer": "answer (what it needed was retrieved or looked up)",
    "citation": "citation (the claim is in the answer, its page not cited)",
    "unobserved": "retrieval not observed (retrieval or answer)",
}
# verdicts whose failure may come from the passages retrieved (and the retrieval gate, retrieval@k)
NEEDS_PASSAGE = frozenset({"faithfulness", "answer_accuracy", "citation_validity", "retrieval"})
REFUSAL_GATES = frozenset({"refusal_appropriateness", "fabrication"})
CLARIFICATION_GATE = "clarification_appropriateness"
# the routes that can answer each case type (the engine's route names)
ROUTES_FOR = {"narrative": frozenset({"narrative", "composite"}),
              "composite": frozenset({"composite"}),
              "numeric": frozenset({"structured", "composite"})}


@dataclass(frozen=True, slots=True)
class CaseFacts:
    """What placing a case's failures needs to know about it, as plain values: its type, what it
    expects (clarification mode, refusal), what the engine did (route, clarification mode,
    refused, error), and its retrieval (observed; rank of the first relevant passage)."""

    case_type: str
    expected_clarification: str
    expects_refusal: bool
    route: str
    clarification_mode: str
    refused: bool
    error: bool = False
    retrieval_observed: bool = False
    rank: int | None = None
    has_relevance: bool = True  # the case has relevance rules (a case without needs no passage)


def stage_of(gate: str, facts: CaseFacts, k: int) -> Stage:
    """The stage of one failing verdict of `gate` on the case `facts` describes (see above)."""
    if facts.error:
        return "engine_error"
    if gate == CLARIFICATION_GATE or facts.clarification_mode != facts.expected_clarification:
        return "routing"
    if gate in REFUSAL_GATES or (facts.refused and not facts.expects_refusal):
        return "refusal_guard"
    routes = ROUTES_FOR.get(facts.case_type)
    if routes is not None and facts.route not in routes:
        return "routing"
    if facts.has_relevance and (gate in NEEDS_PASSAGE or gate.startswith("retrieval@")):
        if not facts.retrieval_observed:
            return "unobserved"
        if facts.rank is None or facts.rank > k:
            return "retrieval"
    return "answer"


@dataclass(frozen=True, slots=True)
class AnswerFacts:
    """What placing a failing answer needs, as plain values: what the question expects, what
    the engine did (error, route label, refused, sources cited, forbidden numbers leaked), the
    pages of its retrieved passages, and per required claim (its pages, content hit, page hit,
    satisfied)."""

    expects_abstain: bool
    error: bool
    route_label: str
    refused: bool
    cited: bool
    leaked: bool
    retrieved_pages: frozenset[Any]  # pages, or (document, page) pairs (answers/placing.py)
    claims: tuple[tuple[frozenset[Any], bool, bool, bool], ...] = ()


# route labels (the engine judge's) that mean the question never reached the narrative channel
NOT_NARRATIVE = frozenset({"clarify", "out_of_scope", "structured"})


def answer_stage(facts: AnswerFacts, agent_route: str = "") -> Stage:
    """The stage of one failing answer (see the module docstring, `answer_stage`)."""
    if facts.error:
        return "engine_error"
    if facts.expects_abstain:
        return "refusal_guard"
    if facts.route_label in NOT_NARRATIVE or agent_route == "structured":
        return "routing"
    pages_retrieved = [bool(pages & facts.retrieved_pages) for pages, *_ in facts.claims]
    if facts.refused:
        some = any(pages_retrieved) if facts.claims else bool(facts.retrieved_pages)
        return "refusal_guard" if some else "retrieval"
    failing = [(seen, content) for (pages, content, page, ok), seen
               in zip(facts.claims, pages_retrieved) if not ok]
    if any(not seen for seen, _ in failing):
        return "retrieval"
    if any(not content for _, content in failing):
        return "answer"
    return "citation"


def case_stage(stages: Iterable[Stage]) -> Stage | None:
    """The first stage in STAGES order among a case's failing verdicts (None: none failed)."""
    found = set(stages)
    return next((s for s in STAGES if s in found), None)


def stage_counts(stages: Iterable[tuple[str, Stage]]) -> dict[str, dict[str, int]]:
    """{gate: {stage: failures}} from (gate, stage) pairs, stages in STAGES order."""
    counts: dict[str, dict[str, int]] = {}
    for gate, stage in stages:
        bucket = counts.setdefault(gate, {})
        bucket[stage] = bucket.get(stage, 0) + 1
    return {g: {s: c[s] for s in STAGES if s in c} for g, c in counts.items()}


# --- RAGChecker's claim split -----------------------------------------------------------------

Support = Literal["relevant", "irrelevant", "none"]


@dataclass(frozen=True, slots=True)
class ClaimSplit:
    """Per claim of a narrative answer, which retrieved passages support it (see above)."""

    claims: tuple[str, ...]
    support: tuple[Support, ...]

    def count(self, support: Support) -> int:
        return sum(1 for s in self.support if s == support)

    def to_dict(self) -> dict[str, Any]:
        return {"relevant": self.count("relevant"), "irrelevant": self.count("irrelevant"),
                "none": self.count("none"),
                "claims": [{"claim": c, "support": s}
                           for c, s in zip(self.claims, self.support, strict=True)]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClaimSplit:
        claims = data.get("claims", ())
        return cls(tuple(c["claim"] for c in claims), tuple(c["support"] for c in claims))


def claim_split(claims: Sequence[str], passages: Sequence[str], relevant: Sequence[bool],
                judge: Any) -> ClaimSplit:
    """Each claim's support: entailed (judge.entails(claim, [passage])) by a relevant passage,
    else by an irrelevant one, else by none. Passages are judged one at a time, each against
    every claim, so a judge that remembers its last context reads each passage once."""
    if len(passages) != len(relevant):
        raise ValueError(f"{len(passages)} passages but {len(relevant)} relevance flags")
    by_relevant = [False] * len(claims)
    by_other = [False] * len(claims)
    for text, is_relevant in zip(passages, relevant, strict=True):
        found = by_relevant if is_relevant else by_other
        for i, claim in enumerate(claims):
            if not found[i] and not by_relevant[i] and judge.entails(claim, [text]):
                found[i] = True
    support: list[Support] = ["relevant" if r else "irrelevant" if o else "none"
                              for r, o in zip(by_relevant, by_other, strict=True)]
    return ClaimSplit(tuple(claims), tuple(support))
