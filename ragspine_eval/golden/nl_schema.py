"""The keys an nl-answers-gold file may hold, at every level, and every key it holds that is none
of them: a typo (`required_claim` for `required_claims`, `page` for `page_index`) never
weakens a case in silence.

The known keys are the format's documented ones: the fields the engine's strict schema of the
format names (the v1 set: `corpus`, `review`, `pinned`, `minimum_positive_cases`; a case's
`document_sha256`, `request`, `model_output`, `rationale`, `evidence`; an expectation's
`abstain_reason`, `min_claims`, `required_citation_fields`, `filters_expected`, ... ; a claim's
`field_path`, `field_path_prefix`), v2's `changelog`, the engine's reader's `tags` and
`offline_only`, and the documents a file names (`documents`: `file`, `sha256`, `pages`; a
claim's own `document_sha256`, and `document`, a file name, on a case or a claim: this
project's, golden/nl_documents.py). Keys the engine reads but this harness does not judge on
(`request`, `min_claims`, ...) are accepted and left to the engine's own runners.

`unknown_keys(path, text, payload)` walks the payload: each unknown key is one
QuestionFileError `file:line (id 'x'): \\`key\\`: unknown key in <where>; did you mean
\\`nearest\\`?` (the nearest known key of that level by difflib; else the level's keys listed),
in file order, with the line of the key itself (else of its case). A value of another shape
than the format's (a case that is not an object, ...) is skipped here: the readers name it.

Invariants: pure; every level of the format has its table below, and nothing else is walked.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragspine_eval.files.reading import printable
from ragspine_eval.golden.question_case import QuestionFileError, json_spans, member_start

DOCUMENT_KEYS = ("document_sha256", "document")
TOP = ("schema_version", "cases", "changelog", "documents", "corpus", "review", "pinned",
       "minimum_positive_cases")
DOCUMENT = ("file", "sha256", "pages")
PINNED = ("document_sha256", "processing_id", "snapshot_id", "selected_physical_pages",
          "member_count", "embedding_fingerprint")
CHANGELOG = ("case_id", "change", "old", "new", "evidence")
CASE = ("case_id", "case_class", "question", *DOCUMENT_KEYS, "request", "expected",
        "model_output", "offline_only", "rationale", "evidence", "tags")
QUESTION = ("en", "zh")
REQUEST = ("rerank", "filters", "repeat_of")
FILTERS = ("periods", "regions")
EXPECTED = ("status", "abstain_reason", "abstain_detail_contains", "min_claims",
            "required_claims", "required_citation_fields", "grounded_only", "forbidden_numbers",
            "filters_expected", "filters_relaxed", "cache_hit", "known_gap", "known_gap_detail")
ANCHOR = ("kind", "page_index", "field_path", "field_path_prefix", "quote", "text", "value",
          "unit", *DOCUMENT_KEYS)
ALTERNATIVES = ("any_of",)
MODEL_OUTPUT = ("abstain", "abstain_reason", "answer", "claims")
SCRIPTED_CLAIM = ("claim_id", "kind", "page_index", "field_path", "text", "row", "col",
                  "header")


def nearest(key: str, known: tuple[str, ...]) -> str | None:
    """The known key closest to `key`: difflib's closest (ratio 0.6 at least), else one that
    differs only in case or `-`, or that `key` shortens (`page` for `page_index`); or None."""
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    if close:
        return close[0]
    folded = key.casefold().replace("-", "_")
    for k in known:  # the same but for case and `-`, or a shortening (`page` for `page_index`)
        if k == folded or (len(folded) >= 3 and (k.startswith(folded) or folded.startswith(k))):
            return k
    return None


def _shown(key: str) -> str:
    return printable(key)  # a control or bidirectional character escaped, never raw


def reason_for(key: str, where: str, known: tuple[str, ...]) -> str:
    """`\\`key\\`: unknown key in <where>; did you mean \\`nearest\\`?` (or the known keys)."""
    near = nearest(key, known)
    hint = (f"did you mean `{near}`?" if near is not None
            else f"its keys are {', '.join(known)}")
    return f"`{_shown(key)}`: unknown key in {where}; {hint}"


def _key_line(text: str, key: str, start: int, end: int) -> int | None:
    """The line of the first `"key":` between `start` and `end` of `text`, or None."""
    pattern = re.compile(re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:")
    found = pattern.search(text, start, end)
    if found is None:
        found = re.compile(re.escape(json.dumps(key)) + r"\s*:").search(text, start, end)
    return None if found is None else text.count("\n", 0, found.start()) + 1


def _walk(value: Any, known: tuple[str, ...], where: str) -> Iterator[tuple[str, str, tuple]]:
    """(key, where, known) of every unknown key of the object `value` (nothing if not one)."""
    if isinstance(value, dict):
        for key in value:
            if key not in known:
                yield key, where, known


def _anchor_keys(spec: Any, where: str) -> Iterator[tuple[str, str, tuple]]:
    if isinstance(spec, dict) and "any_of" in spec:
        for key in spec:
            if key != "any_of":
                yield key, f"{where} beside `any_of` (each alternative carries its own keys)", \
                    ALTERNATIVES
        options = spec["any_of"] if isinstance(spec["any_of"], list) else []
        for i, option in enumerate(options):
            yield from _walk(option, ANCHOR, f"{where}, alternative {i + 1}")
    else:
        yield from _walk(spec, ANCHOR, where)


def _filters(value: Any, where: str) -> Iterator[tuple[str, str, tuple]]:
    if isinstance(value, dict) and "any_of" in value:
        yield from ((k, where, ALTERNATIVES) for k in value if k != "any_of")
        for option in value["any_of"] if isinstance(value["any_of"], list) else []:
            yield from _walk(option, FILTERS, where)
    else:
        yield from _walk(value, FILTERS, where)


def case_unknown_keys(raw: Any) -> Iterator[tuple[str, str, tuple]]:
    """(key, where, the level's known keys) of every unknown key of one case, in order."""
    if not isinstance(raw, dict):
        return
    yield from _walk(raw, CASE, "the case")
    yield from _walk(raw.get("question"), QUESTION, "question")
    request = raw.get("request")
    yield from _walk(request, REQUEST, "request")
    if isinstance(request, dict):
        yield from _filters(request.get("filters"), "request.filters")
    expected = raw.get("expected")
    yield from _walk(expected, EXPECTED, "expected")
    if isinstance(expected, dict):
        claims = expected.get("required_claims")
        for n, spec in enumerate(claims if isinstance(claims, list) else [], start=1):
            yield from _anchor_keys(spec, f"required claim {n}")
        yield from _filters(expected.get("filters_expected"), "expected.filters_expected")
    output = raw.get("model_output")
    yield from _walk(output, MODEL_OUTPUT, "model_output")
    if isinstance(output, dict) and isinstance(output.get("claims"), list):
        for n, claim in enumerate(output["claims"], start=1):
            yield from _walk(claim, SCRIPTED_CLAIM, f"model_output claim {n}")


def _top_unknown_keys(payload: dict[str, Any]) -> Iterator[tuple[str, str, tuple]]:
    yield from _walk(payload, TOP, "the file's top level")
    yield from _walk(payload.get("pinned"), PINNED, "pinned")
    for name, known in (("changelog", CHANGELOG), ("documents", DOCUMENT)):
        items = payload.get(name)
        for i, item in enumerate(items if isinstance(items, list) else []):
            yield from _walk(item, known, f"{name}[{i}]")


def unknown_keys(path: Path, text: str, payload: Any) -> list[QuestionFileError]:
    """Every unknown key of the file (module docstring), in file order: top level first, then
    case by case."""
    if not isinstance(payload, dict):
        return []
    problems = [QuestionFileError(path, _key_line(text, key, 0, len(text)), None,
                                  reason_for(key, where, known))
                for key, where, known in _top_unknown_keys(payload)]
    raw_cases = payload.get("cases")
    if not isinstance(raw_cases, list):
        return problems
    start = member_start(text, "cases")
    spans = list(json_spans(text, start)) if start is not None and text[start] == "[" else []
    for i, raw in enumerate(raw_cases):
        line, begin, end = spans[i][:3] if len(spans) == len(raw_cases) else (None, 0, len(text))
        case_id = raw.get("case_id") if isinstance(raw, dict) else None
        for key, where, known in case_unknown_keys(raw):
            problems.append(QuestionFileError(
                path, _key_line(text, key, begin, end) or line,
                case_id if isinstance(case_id, str) else None, reason_for(key, where, known)))
    return problems
