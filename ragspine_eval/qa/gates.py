"""The gates: small functions `(case, outcome) -> Verdict | None` (None: the gate does not apply).

`GATE_METRICS` are the four pass rates of the pipeline, kept apart and never merged:
- numeric_accuracy: cases that expect a value: found_value == value and found_unit == unit.
- citation_validity: cases that expect a source and/or a narrative_doc: the found source equals
  the expected one field by field and its doc name appears in the answer; the narrative_doc is
  among the outcome's sources and appears in the answer. A right number with a wrong source fails.
- refusal_appropriateness: every case, both ways: a refusal expected means refused and no value;
  none expected means not refused.
- clarification_appropriateness: every case, both ways: the outcome's mode equals the expected one.
With `GROUNDEDNESS_METRICS` (faithfulness, answer_accuracy, see groundedness.py) they make the six
metrics of a report. `fabrication` is a gate of its own: a refusal-expected case fails when its
answer holds any number once citations and period tokens are stripped.

A gate reads only the golden case and the outcome, so any engine is scored by the same rules;
no threshold lives here (the thresholds are the stored baselines, see ragspine_eval.ratchet). Every
verdict says why: a one-sentence `explanation` and the `evidence` the gate compared (numeric:
expected and found value and unit; citation: the source field by field, whether the doc is
named, the narrative doc among the sources; refusal and clarification: expected, observed,
route and tool statuses; fabrication: the numbers left; faithfulness: every claim with its
coverage and missing tokens, and the judge's threshold; answer_accuracy: the recall, the
threshold, the expected document's tokens the answer lacks).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.golden.cases import GoldenCase
from ragspine_eval.judges.groundedness import (
    ANSWER_RECALL_THRESHOLD,
    GROUNDEDNESS_METRICS,
    ClaimCheck,
    EntailmentJudge,
    LexicalOverlapJudge,
    faithful_text,
    judge_claims,
    recall_check,
    strip_citations,
)

GATE_METRICS = (
    "numeric_accuracy",
    "citation_validity",
    "refusal_appropriateness",
    "clarification_appropriateness",
)
ALL_METRICS = GATE_METRICS + GROUNDEDNESS_METRICS
FABRICATION = "fabrication"

# Period tokens are not numbers an answer can fabricate: FY2024, 2025H1, 2025Q1, 2030年,
# 2024年上半年, H1, and bare years (a full stop may end the sentence: "no data for 2023.").
# Years are 19xx/20xx only, so 9999 counts as fabricated, and so does 2023.5.
_YEAR = r"(?<![\d.])(?:19|20)\d{2}(?!\.?\d)"
_PERIOD_TOKEN = re.compile(
    rf"FY\s*(?:19|20)\d{{2}}(?:\s*[HQ][1-4])?"
    rf"|(?:19|20)\d{{2}}\s*(?:[HQ][1-4]|年\s*(?:上半年|下半年|第?[一二三四1-4]季度)?)"
    rf"|(?<![A-Za-z0-9])[HQ][1-4](?![A-Za-z0-9])"
    rf"|{_YEAR}",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def fabricated_numbers(answer: str) -> list[str]:
    """The numbers left in an answer once citations (a source's locator such as `#para1` or
    `row=2,col=3`, and [n] marks) and period tokens are stripped."""
    return _NUMBER.findall(_PERIOD_TOKEN.sub(" ", strip_citations(answer)))


# --- verdicts and gates ------------------------------------------------------------------------


@dataclass(slots=True)
class Verdict:
    """One gate's judgement of one case: expected/actual are short texts for people,
    `explanation` one plain sentence saying why it passed or failed, and `evidence` what the
    gate compared (JSON-safe: str, numbers, bools, None, lists and dicts of them).

    Verdict and CaseResult are read, never changed. They are slotted rather than frozen
    because a run makes one of each per case and gate (600k at 100k cases), and a frozen
    dataclass takes four times as long to build."""

    passed: bool
    expected: str
    actual: str
    explanation: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)


Gate = Callable[[GoldenCase, CaseOutcome], "Verdict | None"]


def _value_text(value: float | None, unit: str | None) -> str:
    return "no value" if value is None else f"{value:g} {unit or ''}".strip()


def _source_text(source: dict[str, Any] | None) -> str:
    return "no source" if not source else f"{source.get('doc')} · {source.get('locator')}"


def _what_the_engine_did(out: CaseOutcome) -> str:
    statuses = ", ".join(out.tool_statuses) or "none"
    return f"route {out.route or 'none'}, tool statuses {statuses}"


def numeric_accuracy(case: GoldenCase, out: CaseOutcome) -> Verdict | None:
    if not case.expects_value:
        return None
    want_value, want_unit = case.expected["value"], case.expected["unit"]
    value_ok, unit_ok = out.found_value == want_value, out.found_unit == want_unit
    want, found = _value_text(want_value, want_unit), _value_text(out.found_value, out.found_unit)
    if value_ok and unit_ok:
        why = f"The engine found {found}, the expected value and unit."
    elif out.found_value is None:
        why = f"Expected {want}, but the engine found no value."
    else:
        differs = "value and unit differ" if not (value_ok or unit_ok) else (
            "value differs" if not value_ok else "unit differs")
        why = f"Expected {want}, but the engine found {found}: the {differs}."
    evidence = {"expected_value": want_value, "expected_unit": want_unit,
                "found_value": out.found_value, "found_unit": out.found_unit,
                "value_matches": value_ok, "unit_matches": unit_ok}
    return Verdict(value_ok and unit_ok, want, found, why, evidence)


def citation_validity(case: GoldenCase, out: CaseOutcome) -> Verdict | None:
    source, doc = case.expected_source, case.narrative_doc
    if source is None and doc is None:
        return None
    wanted, problems = [], []
    evidence: dict[str, Any] = {"expected_source": source, "found_source": out.found_source}
    if source is not None:
        wanted.append(_source_text(source))
        found = out.found_source or {}
        fields = [{"field": k, "expected": source[k], "found": found.get(k),
                   "matches": found.get(k) == source[k]} for k in ("doc", "locator")]
        named = source["doc"] in out.answer
        evidence |= {"fields": fields, "doc_named_in_answer": named}
        if not all(f["matches"] for f in fields):
            problems.append(f"cited {_source_text(out.found_source)}")
        elif not named:
            problems.append(f"{source['doc']} not named in the answer")
    source_docs = list(dict.fromkeys(str(s.get("doc")) for s in out.sources))
    evidence |= {"narrative_doc": doc, "source_docs": source_docs}
    if doc is not None:
        wanted.append(f"narrative {doc}")
        among, named = doc in source_docs, doc in out.answer
        evidence |= {"narrative_doc_in_sources": among, "narrative_doc_named_in_answer": named}
        if not among:
            problems.append(f"{doc} not among the sources")
        elif not named:
            problems.append(f"{doc} not named in the answer")
    why = (f"The citation is wrong: {'; '.join(problems)}." if problems else
           "The answer cites what was expected, field by field, and names it.")
    return Verdict(not problems, "; ".join(wanted), "; ".join(problems) or "cited as expected",
                   why, evidence)


def refusal_appropriateness(case: GoldenCase, out: CaseOutcome) -> Verdict:
    did = _what_the_engine_did(out)
    evidence = {"refused": out.refused, "found_value": out.found_value, "route": out.route,
                "tool_statuses": list(out.tool_statuses)}
    if case.expected["refuse"]:
        ok = out.refused and out.found_value is None
        actual = "refused" if ok else ("answered" if not out.refused else "refused but gave a value")
        why = (f"A refusal was expected and the engine refused ({did})." if ok else
               f"A refusal was expected, but the engine {actual} ({did}).")
        return Verdict(ok, "refuse", actual, why,
                       {"expected": "refuse", "observed": actual, **evidence})
    actual = "refused" if out.refused else "answered"
    why = (f"An answer was expected and the engine answered ({did})." if not out.refused else
           f"An answer was expected, but the engine refused ({did}).")
    return Verdict(not out.refused, "answer", actual, why,
                   {"expected": "answer", "observed": actual, **evidence})


def clarification_appropriateness(case: GoldenCase, out: CaseOutcome) -> Verdict:
    want, got = case.expected["clarification"], out.clarification_mode
    did = _what_the_engine_did(out)
    why = (f"Clarification {want!r} was expected and the engine's was {got!r} ({did})."
           if got == want else
           f"Clarification {want!r} was expected, but the engine's was {got!r} ({did}).")
    return Verdict(got == want, want, got, why,
                   {"expected": want, "observed": got, "route": out.route,
                    "tool_statuses": list(out.tool_statuses)})


def fabrication(case: GoldenCase, out: CaseOutcome) -> Verdict | None:
    if not case.expected["refuse"]:
        return None
    numbers = fabricated_numbers(out.answer)
    why = (f"The refusal answer holds {len(numbers)} number(s) that are neither a period nor a "
           f"citation: {', '.join(numbers)}." if numbers else
           "The refusal answer holds no number once citations and periods are stripped.")
    return Verdict(not numbers, "no number", ", ".join(numbers) or "no number", why,
                   {"numbers": numbers, "refused": out.refused})


def _faithfulness_why(checks: list[ClaimCheck], threshold: float | None, passages: int) -> str:
    if not checks:
        return (f"The narrative answer makes no claim to check against the {passages} retrieved "
                f"passage(s), so nothing in it is grounded.")
    bad = [c for c in checks if not c.entailed]
    if not bad:
        return f"All {len(checks)} claim(s) are entailed by the {passages} retrieved passage(s)."
    first = bad[0]
    share = "" if first.coverage is None else (
        f", {first.coverage:.0%} of its words are in the context"
        + ("" if threshold is None else f" (needs {threshold:.0%})"))
    lacks = f"; missing: {', '.join(first.missing)}" if first.missing else ""
    if first.rule is not None:  # a judge that names its deciding rule says it instead
        share, lacks = "", f" ({first.rule}: {first.detail})"
    return (f"{len(bad)} of {len(checks)} claim(s) are not entailed by the retrieved context; "
            f"the first is \u201c{first.claim}\u201d{share}{lacks}.")


def groundedness_gates(
    reference_texts: dict[str, str], judge: EntailmentJudge
) -> dict[str, Gate]:
    """faithfulness and answer_accuracy, bound to the KB's narrative texts and a judge."""
    threshold = getattr(judge, "threshold", None)

    def faithfulness(case: GoldenCase, out: CaseOutcome) -> Verdict | None:
        if case.narrative_doc is None:
            return None
        checks = judge_claims(out.narrative_answer, out.retrieved_context, judge,
                              case.reference_date)
        ok, observed = faithful_text(checks)
        evidence = {"threshold": threshold, "passages": len(out.retrieved_context),
                    "claims": [c.to_dict() for c in checks],
                    "unsupported": sum(1 for c in checks if not c.entailed)}
        return Verdict(ok, "every claim entailed by the retrieved context", observed,
                       _faithfulness_why(checks, threshold, len(out.retrieved_context)), evidence)

    def answer_accuracy(case: GoldenCase, out: CaseOutcome) -> Verdict | None:
        doc = case.narrative_doc
        if doc is None:
            return None
        if doc not in reference_texts:
            return Verdict(False, f"covers {doc}", f"{doc} is not in the knowledge base",
                           f"The expected document {doc} is not in the knowledge base, so the "
                           f"answer cannot be scored against it.",
                           {"doc": doc, "in_knowledge_base": False, "recall": None,
                            "threshold": ANSWER_RECALL_THRESHOLD, "missing": []})
        recall, missing = recall_check(reference_texts[doc], out.answer)
        ok = recall >= ANSWER_RECALL_THRESHOLD
        why = (f"The answer holds {recall:.0%} of {doc}'s distinct words "
               f"({'at least' if ok else 'below'} the {ANSWER_RECALL_THRESHOLD:.0%} needed)"
               + ("." if ok or not missing else f"; it lacks {', '.join(missing[:12])}"
                  + (f" and {len(missing) - 12} more." if len(missing) > 12 else ".")))
        return Verdict(ok, f"covers {doc}", f"recall {recall:.2f}", why,
                       {"doc": doc, "in_knowledge_base": True, "recall": round(recall, 4),
                        "threshold": ANSWER_RECALL_THRESHOLD, "missing": missing})

    return {"faithfulness": faithfulness, "answer_accuracy": answer_accuracy}


def default_gates(reference_texts: dict[str, str], judge: EntailmentJudge | None = None
                  ) -> dict[str, Gate]:
    """Every gate of `ALL_METRICS`, in order."""
    return {
        "numeric_accuracy": numeric_accuracy,
        "citation_validity": citation_validity,
        "refusal_appropriateness": refusal_appropriateness,
        "clarification_appropriateness": clarification_appropriateness,
        **groundedness_gates(reference_texts, judge or LexicalOverlapJudge()),
    }
