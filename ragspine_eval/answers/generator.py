"""Why at the generator, without a model: RAGChecker's generator diagnostics from the grid an
answer run already has (the required claims × the retrieved passages × the answer).

RAGChecker (Ru et al., "RAGChecker: A Fine-grained Framework for Diagnosing Retrieval-Augmented
Generation", NeurIPS 2024 Datasets and Benchmarks, section 3) has a model extract claims from
the ground-truth answer and the response, and check each against each retrieved chunk. Its
formulas, with gt the ground-truth claims, m the response's claims, a chunk relevant when it
holds a gt claim:
- claim recall = |{c in gt: c in some chunk}| / |gt|;
- context utilization = |{c in gt: c in some chunk and c in m}| / |{c in gt: c in some chunk}|;
- noise sensitivity (relevant) = |{c in m: c incorrect, c in a relevant chunk}| / |m|;
- noise sensitivity (irrelevant) = |{c in m: c incorrect, c in an irrelevant chunk only}| / |m|;
- hallucination = |{c in m: c incorrect, c in no chunk}| / |m|;
- self-knowledge = |{c in m: c correct, c in no chunk}| / |m|;
- faithfulness = |{c in m: c in some chunk}| / |m|;
each per query, averaged over the queries (a query where a denominator is 0 left out of that
mean).

Here, deterministically:
- a chunk is a retrieved passage as the synthesis was given it (its `prompt_text`, its whole
  page with the engine's page parents on, else its text);
- gt is the case's required claims; a claim is "in a chunk" (retrieved) when a retrieved
  passage of its document (where known: answers/gold_check.py) on its page holds the content
  of one of its alternatives (the judge's rules: answers/claims.py, exact or by fragments),
  and "in m" when the judge found its content in the answer (`content_hit`);
- m is the answer's figures: every number of its plain text (`12`, `1.30`, `28%`) after the
  engine's normalisation, leaving out its citation markers (`[3]`), the retrieved passages'
  locators and document names, and the numbers the question itself states; a figure is
  "in a chunk" when a passage's normalised text holds it on its number boundaries, "correct"
  when the case's claims hold it (their values, quotes and texts);
- the unsupported numbers (the figures in no retrieved passage) are the deterministic form of
  RAGChecker's hallucination (incorrect and unsupported) and self-knowledge (correct and
  unsupported) together, listed; a noise figure (incorrect, from a passage) names the rank of
  the first passage that holds it.

`diagnose(case, verdict, outcome, places)` is one question's (`Diagnosis`, None for a question
without required claims or with an engine error, but for its unsupported numbers);
`summarize(diagnoses)` the run's means and totals.

Invariants: pure; the same inputs, the same figures; never a verdict and never a gate.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragspine.common.answer_text import contains_normalized, normalize_answer

from ragspine_eval.answers import claims as hits
from ragspine_eval.answers.citations import passage_document

_MARKER = re.compile(r"[\[［〔【]\s*\d+(?:\s*[,，、\-–]\s*\d+)*\s*[\]］〕】]")
_FIGURE = re.compile(r"(?<![\d.])\d+(?:\.\d+)?%?(?![\d])")
MAX_LISTED = 20  # figures listed per question (all are counted)
RATES = ("claim_recall", "context_utilization", "noise_relevant", "noise_irrelevant",
         "hallucination", "self_knowledge", "faithfulness")


def figures(answer: str, question: str, passages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The answer's figures, each once, in order (module docstring)."""
    text = _MARKER.sub(" ", answer)
    refs = {str(p.get(k) or "") for p in passages for k in ("locator", "doc")} - {""}
    for ref in sorted(refs, key=len, reverse=True):
        text = text.replace(ref, " ")
    asked = normalize_answer(question)
    out: dict[str, None] = {}
    for m in _FIGURE.finditer(normalize_answer(text)):  # the normalisation drops a minus sign
        if not contains_normalized(asked, m.group(0)):
            out.setdefault(m.group(0), None)
    return list(out)


@dataclass(frozen=True)
class AnswerFigure:
    """A figure the answer states, judged: right or not, the first passage holding it, and
    whether that passage holds a required claim (its `kind`: the module docstring)."""

    text: str
    correct: bool
    supported_by: int | None  # the rank of the first passage holding it
    relevant: bool  # held by a passage that holds a required claim

    @property
    def kind(self) -> str:
        if self.supported_by is None:
            return "self_knowledge" if self.correct else "hallucination"
        if self.correct:
            return "supported"
        return "noise_relevant" if self.relevant else "noise_irrelevant"


@dataclass(frozen=True)
class Diagnosis:
    """One question's generator diagnostics (module docstring)."""

    claims: int = 0
    retrieved: int = 0
    retrieved_and_stated: int = 0
    figures: tuple[AnswerFigure, ...] = field(default_factory=tuple)

    def rate(self, name: str) -> float | None:
        n = len(self.figures)
        count = {k: sum(f.kind == k for f in self.figures) for k in (
            "noise_relevant", "noise_irrelevant", "hallucination", "self_knowledge")}
        ratio = {
            "claim_recall": (self.retrieved, self.claims),
            "context_utilization": (self.retrieved_and_stated, self.retrieved),
            "faithfulness": (sum(f.supported_by is not None for f in self.figures), n),
            **{k: (v, n) for k, v in count.items()}}[name]
        return round(ratio[0] / ratio[1], 4) if ratio[1] else None

    @property
    def unsupported(self) -> list[str]:
        return [f.text for f in self.figures if f.supported_by is None]

    def to_dict(self) -> dict[str, Any]:
        """Its rates, the unsupported numbers, the noise figures (the first `MAX_LISTED`, with
        the rank of the passage each came from) and the figures by kind; for a question without
        required claims (no gt), its figures and unsupported numbers only."""
        kinds: dict[str, int] = {}
        for f in self.figures:
            kinds[f.kind] = kinds.get(f.kind, 0) + 1
        out: dict[str, Any] = {"figures": len(self.figures),
                               "unsupported_numbers": self.unsupported[:MAX_LISTED]}
        if not self.claims:
            return out
        noise = [f for f in self.figures if f.kind.startswith("noise")]
        return {"claims": self.claims, "retrieved": self.retrieved,
                "retrieved_and_stated": self.retrieved_and_stated,
                **{r: self.rate(r) for r in RATES}, **out, "by_kind": kinds,
                "noise": [{"figure": f.text, "passage_rank": f.supported_by,
                           "relevant_passage": f.relevant} for f in noise[:MAX_LISTED]]}


def _holds(passage: Mapping[str, Any], anchor: Any, place: Any) -> bool:
    locator = str(passage.get("locator") or "")
    if hits.page_of(locator) != anchor.page:
        return False
    if place is not None and place.doc_id is not None and passage_document(passage) != \
            place.doc_id:
        return False
    text = normalize_answer(given(passage))
    return hits.content_hit(anchor, text) or hits.anchor_fragment_hit(anchor, text)


def given(passage: Mapping[str, Any]) -> str:
    """The text the synthesis was given for a passage: its `prompt_text` (its page, with the
    engine's page parents on), else its own."""
    return str(passage.get("prompt_text") or passage.get("text") or "")


def diagnose(case: Any, verdict: Any, answer: str, question: str,
             passages: Sequence[Mapping[str, Any]], places: Sequence[Sequence[Any]] | None = None
             ) -> Diagnosis:
    """One question's diagnostics: `case` (golden.nl_answers.AnswerCase), `verdict`
    (verdicts.AnswerVerdict), the answer's plain text, the question, the ranked passages and
    each claim's places (module docstring)."""
    groups = case.claims if verdict.kind == "claims" else ()
    places = places or [[None] * len(g) for g in groups]
    relevant = [any(_holds(p, a, pl) for g, gp in zip(groups, places, strict=True)
                    for a, pl in zip(g, gp, strict=True)) for p in passages]
    retrieved = [any(_holds(p, a, pl) for p in passages for a, pl in zip(g, gp, strict=True))
                 for g, gp in zip(groups, places, strict=True)]
    stated = [c.content_hit for c in verdict.claims] if groups else []
    gold = normalize_answer(" | ".join(n for g in groups for a in g for n in hits.needles(a)))
    texts = [normalize_answer(given(p)) for p in passages]
    found = []
    for figure in figures(answer, question, passages):
        ranks = [i for i, t in enumerate(texts) if contains_normalized(t, figure)]
        found.append(AnswerFigure(figure, bool(groups) and contains_normalized(gold, figure),
                            int(passages[ranks[0]].get("rank") or ranks[0] + 1) if ranks
                            else None, any(relevant[i] for i in ranks)))
    return Diagnosis(len(groups), sum(retrieved),
                     sum(r and s for r, s in zip(retrieved, stated, strict=True)), tuple(found))


def summarize(diagnoses: Iterable[Diagnosis]) -> dict[str, Any]:
    """The run's means of each rate over the questions where it is defined (RAGChecker's
    averaging), and the totals behind them."""
    diagnoses = list(diagnoses)
    out: dict[str, Any] = {"questions": len(diagnoses)}
    for name in RATES:
        values = [v for d in diagnoses if (v := d.rate(name)) is not None]
        out[name] = round(statistics.fmean(values), 4) if values else None
    out["claims"] = sum(d.claims for d in diagnoses)
    out["retrieved"] = sum(d.retrieved for d in diagnoses)
    out["figures"] = sum(len(d.figures) for d in diagnoses)
    out["unsupported_numbers"] = sum(len(d.unsupported) for d in diagnoses)
    out["questions_with_unsupported_numbers"] = sum(bool(d.unsupported) for d in diagnoses)
    return out
