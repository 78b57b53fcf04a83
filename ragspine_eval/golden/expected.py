"""A golden case's fields checked: the `expected` object's rules and the checks every field of
a line goes through.

`check_expected` holds the rules of `expected` (docs/qa.md, "Writing cases"): the fields each
case_type needs (a value, unit and source for numeric and composite cases, a narrative_doc for
narrative and composite ones), the relevant passages' shape, and the contradictions no answer
can meet (refuse: true with a value, a source, a narrative_doc or a clarification; ask_first
with a value or a narrative_doc). `expect_type`, `check_missing` and `check_unknown` are the
field checks cases.py's line parser uses too. Each raises what `fail(reason)` makes of its
reason (a GoldenSetError naming the file, line and case), so a check never knows the file.
"""

from __future__ import annotations

import math
import re
from datetime import date
from typing import Any

from ragspine_eval.files import reading

CLARIFICATION_MODES = ("none", "ask_first", "answer_with_assumptions")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_NEEDS_VALUE = ("numeric", "composite")
_NEEDS_NARRATIVE = ("narrative", "composite")
EXPECTED_FIELDS = ("clarification", "refuse", "value", "unit", "source", "narrative_doc",
                   "relevant")
SOURCE_FIELDS = ("doc", "locator")
# an `expected.relevant` entry: the passages a case needs (retrieval/relevance.py reads them)
RELEVANT_FIELDS = ("doc", "page", "pages", "locator", "text")
_VALUE_FIELDS = ("value", "unit", "source")


def check_expected(fail: Any, case_type: str, expected: dict[str, Any]) -> None:
    # a misspelt key ("valeu") would otherwise be ignored and the case would assert less
    check_unknown(fail, expected, EXPECTED_FIELDS, "expected.")
    for name in ("clarification", "refuse"):
        if name not in expected:
            raise fail(f"missing field 'expected.{name}'")
    expect_type(fail, "expected.clarification", expected["clarification"], str)
    if expected["clarification"] not in CLARIFICATION_MODES:
        raise fail(
            f"expected.clarification is {reading.clip(expected['clarification'])}; "
            f"expected one of {', '.join(CLARIFICATION_MODES)}"
        )
    expect_type(fail, "expected.refuse", expected["refuse"], bool)

    if case_type in _NEEDS_VALUE or any(name in expected for name in _VALUE_FIELDS):
        why = (f"required for {case_type} cases" if case_type in _NEEDS_VALUE else
               "a case that expects a value needs value, unit and source")
        for name in _VALUE_FIELDS:
            if name not in expected:
                raise fail(f"missing field 'expected.{name}' ({why})")
        value = expected["value"]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise fail(f"wrong type for 'expected.value': expected a number, got {type_name(value)}")
        if not math.isfinite(value):
            raise fail(f"expected.value is {value}: a golden value must be a finite number")
        expect_type(fail, "expected.unit", expected["unit"], str)
        source = expected["source"]
        expect_type(fail, "expected.source", source, dict)
        for name in SOURCE_FIELDS:
            if name not in source:
                raise fail(f"missing field 'expected.source.{name}'")
            expect_type(fail, f"expected.source.{name}", source[name], str)
        check_unknown(fail, source, SOURCE_FIELDS, "expected.source.")
    if case_type in _NEEDS_NARRATIVE and "narrative_doc" not in expected:
        raise fail(f"missing field 'expected.narrative_doc' (required for {case_type} cases)")
    if "narrative_doc" in expected:
        expect_type(fail, "expected.narrative_doc", expected["narrative_doc"], str)
    if "relevant" in expected:
        _validate_relevant(fail, expected["relevant"])
    if case_type == "refusal" and expected["refuse"] is not True:
        raise fail("a refusal case must expect refuse: true")
    if case_type == "clarification" and expected["clarification"] == "none":
        raise fail("a clarification case cannot expect clarification 'none'")
    _check_contradictions(fail, expected)


def _validate_relevant(fail: Any, relevant: Any) -> None:
    """`expected.relevant`: a non-empty list of {doc, and optionally page (a whole number >= 1)
    or pages (a list of them), locator, text (non-empty strings)}."""
    if not isinstance(relevant, list) or not relevant:
        raise fail("expected.relevant must be a non-empty list of {doc, page|pages, locator, "
                   "text} objects")
    for i, entry in enumerate(relevant):
        name = f"expected.relevant[{i}]"
        expect_type(fail, name, entry, dict)
        check_unknown(fail, entry, RELEVANT_FIELDS, f"{name}.")
        if "doc" not in entry:
            raise fail(f"missing field '{name}.doc'")
        for key in ("doc", "locator", "text"):
            if key in entry:
                expect_type(fail, f"{name}.{key}", entry[key], str)
                if not entry[key].strip():
                    raise fail(f"{name}.{key} is empty")
        pages = ([entry["page"]] if "page" in entry else []) + (
            entry["pages"] if isinstance(entry.get("pages"), list) else [])
        if "pages" in entry and (not isinstance(entry["pages"], list) or not entry["pages"]):
            raise fail(f"{name}.pages must be a non-empty list of page numbers")
        for page in pages:
            if isinstance(page, bool) or not isinstance(page, int) or page < 1:
                raise fail(f"{name}: a page is a whole number from 1, got {reading.clip(page)}")


def _check_contradictions(fail: Any, expected: dict[str, Any]) -> None:
    """Expectations no answer can meet together (docs/qa.md, "Writing cases"): the case would fail
    whatever the engine does, or pass by ignoring half of what it asserts."""
    what = {"value": "a value and source", "narrative_doc": "a narrative_doc",
            "relevant": "relevant passages"}
    answers = [name for name in what if name in expected]
    if expected["refuse"] is True:
        if answers:
            raise fail(f"contradiction: refuse: true with {what[answers[0]]}: a refused question "
                       f"gets no answer to check; drop expected.{answers[0]} or set refuse: false")
        if expected["clarification"] != "none":
            raise fail(f"contradiction: refuse: true with clarification "
                       f"{expected['clarification']!r}: a refusal neither asks first nor answers "
                       f"with assumptions; set clarification 'none' or refuse: false")
    if expected["clarification"] == "ask_first" and answers:
        raise fail(f"contradiction: clarification 'ask_first' with {what[answers[0]]}: the engine "
                   f"is to ask before it answers, so this turn has no answer to check; drop "
                   f"expected.{answers[0]} or use 'answer_with_assumptions'")


def check_missing(fail: Any, missing: list[str], note: str = "") -> None:
    """Every missing field of a line at once: an author fixes the line in one go."""
    if missing:
        raise fail(f"missing field{'s' if len(missing) > 1 else ''} "
                   f"{', '.join(map(repr, missing))}{note}")


def check_unknown(fail: Any, record: dict[str, Any], allowed: tuple[str, ...],
                   prefix: str = "") -> None:
    unknown = sorted(set(record) - set(allowed))
    if unknown:
        raise fail(f"unknown field(s) {', '.join(reading.clip(prefix + k) for k in unknown[:5])}; allowed: "
                   f"{', '.join(allowed)}")


def iso_date(text: str) -> date | None:
    if not _ISO_DATE.fullmatch(text):
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def expect_type(fail: Any, name: str, value: object, kind: type) -> None:
    if type(value) is kind:  # what json.loads gives for a right value: decided at once
        return
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise fail(f"wrong type for {name!r}: expected {kind.__name__}, got {type_name(value)}")


def type_name(value: object) -> str:
    return {type(None): "null", bool: "boolean", dict: "object", list: "array", str: "string"}.get(
        type(value), type(value).__name__
    )
