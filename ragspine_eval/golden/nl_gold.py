"""nl-answers-gold v1 and v2 files as question cases, read strictly with the line of each case.

The format (the part the engine's batch reads, its documented shape): an object with
`schema_version` (`nl-answers-gold-v1` or `-v2`) and `cases`, each with `case_id`, `case_class`
(positive, abstain, adversarial), `question` ({"en": ..., "zh": ...}, at least one non-empty),
`expected` with `status` (answered, abstained), `required_claims` (each an anchor or
{"any_of": [anchors]}; an anchor has `kind`, `page_index` from 0, and one of `quote`, `text`,
`value`), optional `forbidden_numbers`, `known_gap`; a case may be `offline_only`. v2 adds a
non-empty `changelog` whose entries name a case and give `change`, `old`, `new`, `evidence`.

Invariants: one question per case and language, id `<case_id>:<lang>`, tagged `case_class`
(known-gap for a case marked `known_gap`) and `language`; adversarial and offline_only cases
are left out (no question the engine's retrieval could be judged on); a case expected to abstain
has no page group, so it is not judged; every problem is a QuestionFileError naming the line of
the case it is in. Total for any JSON: a `case_id` that is not a text, a changelog entry whose
`case_id` is not a text, `required_claims` that is not an array, and a `page_index` past the
question files' `MAX_PAGE` are such errors, never a TypeError. Every key is one the format
documents (golden/nl_schema.py): each unknown key is one such error (its case is left out);
the documents a case names are the answer harness's (answers/gold_check.py): the engine's
batch judges a retrieved page of any document, and so do the questions read here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragspine_eval.files import reading
from ragspine_eval.golden.nl_schema import unknown_keys
from ragspine_eval.golden.question_case import (
    QuestionCase,
    QuestionFileError,
    member_lines,
)

_CLASSES = ("positive", "abstain", "adversarial")
_STATUSES = ("answered", "abstained")
_CHANGELOG_KEYS = ("case_id", "change", "old", "new", "evidence")


# a claim's page, from 0, as high as a question file's page may go (question_files.MAX_PAGE)
MAX_PAGE_INDEX = 100_000 - 1




def nl_gold_cases(path: Path, text: str, payload: dict[str, Any]
                  ) -> Iterator[tuple[int | None, int, QuestionCase | QuestionFileError]]:
    """(line, index, question) for every question of the file, an unknown key's error in its
    place (the reader raises it, or `golden` lists it); QuestionFileError on another problem."""
    raw_cases = payload.get("cases")
    if not isinstance(raw_cases, list):
        raise QuestionFileError(path, 1, None, "an nl-answers-gold file needs a `cases` array")
    lines = member_lines(text, "cases")  # the top-level member, never one nested elsewhere
    ids = {c.get("case_id") for c in raw_cases
           if isinstance(c, dict) and isinstance(c.get("case_id"), str)}
    problems = unknown_keys(path, text, payload)
    for problem in problems:
        if problem.case_id is None:  # the file's own keys, first
            yield problem.line, 0, problem
    if payload["schema_version"] == "nl-answers-gold-v2":
        _check_changelog(path, payload.get("changelog"), ids, member_lines(text, "changelog"))
    index = 0
    for i, raw in enumerate(raw_cases):
        line = lines[i] if len(lines) == len(raw_cases) else None
        own = [p for p in problems if p.case_id is not None
               and isinstance(raw, dict) and p.case_id == raw.get("case_id")]
        if own:  # a case with an unknown key is refused whole: a typo never weakens it
            for problem in own:
                yield problem.line, index, problem
            continue
        for question in _questions(path, line, raw):
            index += 1
            yield line, index, question


def _check_changelog(path: Path, changelog: Any, ids: set[Any], lines: list[int]) -> None:
    if not isinstance(changelog, list) or not changelog:
        raise QuestionFileError(path, None, None, "nl-answers-gold-v2 needs a non-empty "
                                                  "`changelog`")
    for i, entry in enumerate(changelog):
        where = f"changelog[{i}]"
        line = lines[i] if len(lines) == len(changelog) else None
        if not isinstance(entry, dict):
            raise QuestionFileError(path, line, None, f"{where} must be an object")
        missing = [k for k in _CHANGELOG_KEYS if k not in entry]
        if missing:
            raise QuestionFileError(path, line, None, f"{where} lacks {', '.join(missing)}")
        if not isinstance(entry["evidence"], str) or not entry["evidence"].strip():
            raise QuestionFileError(path, line, None,
                                    f"{where}: evidence must be a non-empty text")
        if not isinstance(entry["case_id"], str):
            raise QuestionFileError(path, line, None, f"{where}: case_id must be a text, got "
                                                      f"{reading.clip(entry['case_id'])}")
        if entry["case_id"] not in ids:
            raise QuestionFileError(path, line, None, f"{where} names the unknown case "
                                                      f"{reading.clip(entry['case_id'])}")


def _questions(path: Path, line: int | None, raw: Any) -> list[QuestionCase]:
    if not isinstance(raw, dict):
        raise QuestionFileError(path, line, None, "a case must be an object")
    case_id = raw.get("case_id")
    if not isinstance(case_id, str) or not case_id:
        raise QuestionFileError(path, line, None, "missing case_id" if case_id in (None, "") else
                                f"case_id must be a text, got {reading.clip(case_id)}")

    def bad(reason: str) -> QuestionFileError:
        return QuestionFileError(path, line, case_id, reason)

    case_class = raw.get("case_class")
    if case_class not in _CLASSES:
        raise bad(f"case_class must be one of {', '.join(_CLASSES)}, got "
                  f"{reading.clip(case_class)}")
    question = raw.get("question")
    if not isinstance(question, dict):
        raise bad("question must be an object {\"en\": ..., \"zh\": ...}")
    texts = [(lang, q.strip()) for lang in ("en", "zh")
             if isinstance(q := question.get(lang), str) and q.strip()]
    if not texts:
        raise bad("question needs a non-empty en or zh")
    expected = raw.get("expected")
    if not isinstance(expected, dict):
        raise bad("missing expected")
    status = expected.get("status")
    if status not in _STATUSES:
        raise bad(f"expected.status must be one of {', '.join(_STATUSES)}, got "
                  f"{reading.clip(status)}")
    claims = expected.get("required_claims")
    if claims is not None and not isinstance(claims, list):
        raise bad(f"expected.required_claims must be an array of claims, got "
                  f"{reading.clip(claims)}")
    groups = []
    for spec in claims or []:
        options = spec.get("any_of") if isinstance(spec, dict) and "any_of" in spec else [spec]
        if not isinstance(options, list) or not options:
            raise bad("any_of must be a non-empty array")
        groups.append(frozenset(_anchor_page(bad, option) for option in options))
    forbidden = expected.get("forbidden_numbers") or []
    if not isinstance(forbidden, list) or not all(isinstance(n, str) for n in forbidden):
        raise bad("forbidden_numbers must be an array of texts")
    if case_class == "adversarial" or raw.get("offline_only"):
        return []
    shown_class = "known-gap" if expected.get("known_gap") else case_class
    page_groups = () if status == "abstained" else tuple(groups)
    return [QuestionCase(f"{case_id}:{lang}", text, None, page_groups, (),
                         {"case_class": shown_class, "language": lang}, line)
            for lang, text in texts]


def _anchor_page(bad: Any, anchor: Any) -> int:
    if not isinstance(anchor, dict):
        raise bad("a claim must be an object")
    page_index = anchor.get("page_index")
    if not isinstance(page_index, int) or isinstance(page_index, bool) or page_index < 0:
        raise bad(f"page_index must be a whole number from 0, got {reading.clip(page_index)}")
    if page_index > MAX_PAGE_INDEX:
        raise bad(f"page_index {reading.clip(page_index, 24)} is beyond the {MAX_PAGE_INDEX:,} "
                  f"a claim may name (no document has that many pages)")
    if not isinstance(anchor.get("kind"), str):
        raise bad("a claim needs a kind")
    for key in ("quote", "text", "value", "unit"):
        if anchor.get(key) is not None and not isinstance(anchor[key], str):
            raise bad(f"a claim's {key} must be a text")
    if not (anchor.get("quote") or anchor.get("text") or anchor.get("value")):
        raise bad("a claim needs a quote, a text or a value")
    return page_index + 1
