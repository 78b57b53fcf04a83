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
no threshold lives here (the thresholds are the stored baselines, see baseline.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragspine_eval.qa.engines.base import CaseOutcome
from ragspine_eval.qa.golden import GoldenCase
from ragspine_eval.qa.groundedness import (
    GROUNDEDNESS_METRICS,
    EntailmentJudge,
    LexicalOverlapJudge,
    accurate,
    faithful,
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
    """One gate's judgement of one case; expected/actual are short texts for people.

    Verdict and CaseResult are read, never changed. They are slotted rather than frozen
    because a run makes one of each per case and gate (600k at 100k cases), and a frozen
    dataclass takes four times as long to build."""

    passed: bool
    expected: str
    actual: str


Gate = Callable[[GoldenCase, CaseOutcome], "Verdict | None"]


def _value_text(value: float | None, unit: str | None) -> str:
    return "no value" if value is None else f"{value:g} {unit or ''}".strip()


def _source_text(source: dict[str, Any] | None) -> str:
    return "no source" if not source else f"{source.get('doc')} · {source.get('locator')}"


def numeric_accuracy(case: GoldenCase, out: CaseOutcome) -> Verdict | None:
    if not case.expects_value:
        return None
    want_value, want_unit = case.expected["value"], case.expected["unit"]
    ok = out.found_value == want_value and out.found_unit == want_unit
    return Verdict(ok, _value_text(want_value, want_unit), _value_text(out.found_value, out.found_unit))


def citation_validity(case: GoldenCase, out: CaseOutcome) -> Verdict | None:
    source, doc = case.expected_source, case.narrative_doc
    if source is None and doc is None:
        return None
    wanted, problems = [], []
    if source is not None:
        wanted.append(_source_text(source))
        found = out.found_source or {}
        if any(found.get(k) != source[k] for k in ("doc", "locator")):
            problems.append(f"cited {_source_text(out.found_source)}")
        elif source["doc"] not in out.answer:
            problems.append(f"{source['doc']} not named in the answer")
    if doc is not None:
        wanted.append(f"narrative {doc}")
        if not any(str(s.get("doc")) == doc for s in out.sources):
            problems.append(f"{doc} not among the sources")
        elif doc not in out.answer:
            problems.append(f"{doc} not named in the answer")
    return Verdict(not problems, "; ".join(wanted), "; ".join(problems) or "cited as expected")


def refusal_appropriateness(case: GoldenCase, out: CaseOutcome) -> Verdict:
    if case.expected["refuse"]:
        ok = out.refused and out.found_value is None
        actual = "refused" if ok else ("answered" if not out.refused else "refused but gave a value")
        return Verdict(ok, "refuse", actual)
    return Verdict(not out.refused, "answer", "refused" if out.refused else "answered")


def clarification_appropriateness(case: GoldenCase, out: CaseOutcome) -> Verdict:
    want = case.expected["clarification"]
    return Verdict(out.clarification_mode == want, want, out.clarification_mode)


def fabrication(case: GoldenCase, out: CaseOutcome) -> Verdict | None:
    if not case.expected["refuse"]:
        return None
    numbers = fabricated_numbers(out.answer)
    return Verdict(not numbers, "no number", ", ".join(numbers) or "no number")


def groundedness_gates(
    reference_texts: dict[str, str], judge: EntailmentJudge
) -> dict[str, Gate]:
    """faithfulness and answer_accuracy, bound to the KB's narrative texts and a judge."""

    def faithfulness(case: GoldenCase, out: CaseOutcome) -> Verdict | None:
        if case.narrative_doc is None:
            return None
        ok, observed = faithful(out.narrative_answer, out.retrieved_context, judge)
        return Verdict(ok, "every claim entailed by the retrieved context", observed)

    def answer_accuracy(case: GoldenCase, out: CaseOutcome) -> Verdict | None:
        doc = case.narrative_doc
        if doc is None:
            return None
        if doc not in reference_texts:
            return Verdict(False, f"covers {doc}", f"{doc} is not in the knowledge base")
        ok, observed = accurate(reference_texts[doc], out.answer)
        return Verdict(ok, f"covers {doc}", observed)

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
