"""nl-answers-gold v1 and v2 files as answer cases: the claims a correct answer must make, where.

The format is the one `golden.nl_gold` reads for retrieval (its docstring); here every field
an answer is judged on is kept: each required claim as its alternatives (`any_of`, or one
anchor), each anchor with its kind, page (`page_index` from 0), `quote`, `text`, `value` and
`unit`; `expected.status` (answered, abstained), `forbidden_numbers` (texts a refusal must not
carry), `grounded_only`, `known_gap` and `known_gap_detail`; a case's optional `tags` (a list of
texts or an object of texts) become its tags beside `case_class`. The documents a file names
(`documents[]`, a case's and a claim's `document_sha256` or `document`) are read by
golden/nl_documents.py: each anchor carries its document (its own, else its case's, else the
pinned release's), and the case its own. Every key of the file is one the format documents
(golden/nl_schema.py): an unknown key at any level is the file's first problem, named with
the nearest known key.

Invariants (the engine's own judge reads a file the same way, so a verdict means the same):
- a case marked `known_gap` has the class `known-gap` (run, reported apart, outside every rate);
- adversarial cases, and cases marked `offline_only`, are kept with a `skip_reason` and never
  asked (the engine's answers carry no envelope for the first, the second scripts a model);
- a case expects abstention when its status is `abstained`; a positive case without required
  claims is judged as grounded-only (an answer with sources), whether or not it says so;
- questions: `en` then `zh`, each stripped, the empty ones left out; ids are unique and hold
  no control character (they name the case in every report and baseline; a quote, copied from
  a document, may hold one);
- every problem is a QuestionFileError `file:line (id 'x'): reason`, the line of its case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragspine_eval.files import reading
from ragspine_eval.golden.nl_documents import DocRef, listed_documents, named_document
from ragspine_eval.golden.nl_gold import MAX_PAGE_INDEX
from ragspine_eval.golden.nl_schema import unknown_keys
from ragspine_eval.golden.question_case import QuestionFileError, member_lines

VERSIONS = ("nl-answers-gold-v1", "nl-answers-gold-v2")
CLASSES = ("positive", "abstain", "adversarial")
STATUSES = ("answered", "abstained")
LANGUAGES = ("en", "zh")
_CHANGELOG_KEYS = ("case_id", "change", "old", "new", "evidence")
SKIP_ADVERSARIAL = ("adversarial probe: it mutates another engine's answer envelope; this "
                    "engine's answers carry none, so there is nothing to probe")
SKIP_OFFLINE_ONLY = "offline_only: the case scripts a model's output for an offline replay"


@dataclass(frozen=True)
class Anchor:
    """One acceptable way to make a claim: a text (quote or text) or a value with its unit, and
    the page it sits on (`page_index` from 0; `page` from 1, as the engine's locators count)."""

    kind: str
    page_index: int
    quote: str | None = None
    text: str | None = None
    value: str | None = None
    unit: str | None = None
    document: DocRef | None = None  # its own, else its case's (golden/nl_documents.py)

    @property
    def page(self) -> int:
        return self.page_index + 1

    def describe(self) -> str:
        """`p<page>:<what>`, the way the engine's judge names an anchor."""
        shown = self.quote or self.text or f"{self.value}{self.unit or ''}"
        return f"p{self.page}:{shown}"


@dataclass(frozen=True)
class AnswerCase:
    """One case of an nl-answers-gold file: its questions (language, text), its required claims
    (each a tuple of alternative anchors), and what else its answer is judged on."""

    case_id: str
    case_class: str
    questions: tuple[tuple[str, str], ...]
    claims: tuple[tuple[Anchor, ...], ...] = ()
    expect_abstain: bool = False
    grounded_only: bool = False
    forbidden_numbers: tuple[str, ...] = ()
    known_gap_detail: str | None = None
    skip_reason: str | None = None
    tags: tuple[str, ...] = ()
    line: int | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    expected_text: str | None = None  # a batch question file's `expected`: content alone
    document: DocRef | None = None  # the case's document (golden/nl_documents.py)

    @property
    def documents(self) -> tuple[DocRef, ...]:
        """Every document the case names: its own, then its claims' own, each once."""
        named = [self.document] + [a.document for group in self.claims for a in group]
        return tuple(dict.fromkeys(d for d in named if d is not None))

    @property
    def kind(self) -> str:
        """What the answer is judged on: `abstain`, `grounded` (an answer with sources),
        `claims`, or `content` (a batch question's expected text, on content alone)."""
        if self.expected_text is not None:
            return "content"
        if self.expect_abstain or self.case_class == "abstain":
            return "abstain"
        return "claims" if self.claims else "grounded"


def load_answer_cases(path: str | Path) -> tuple[AnswerCase, ...]:
    """Every case of the nl-answers-gold file at `path`; QuestionFileError for the first problem."""
    path = Path(path)

    def error(reason: str) -> QuestionFileError:
        return QuestionFileError(path, None, None, reason)

    problem = reading.not_a_file(path, "gold")
    if problem is not None:
        raise error(problem)
    text = reading.decode(reading.read_bytes(path, "golden", error), error)
    if not text.strip():
        raise error("the file is empty: an nl-answers-gold file is one JSON object with "
                    "`schema_version` and `cases` (docs/answers.md)")
    try:
        payload = reading.parse_json(text, controls=True)  # quotes are copied from documents
    except reading.JSONProblem as exc:
        raise QuestionFileError(path, exc.line, None, exc.reason) from None
    if not isinstance(payload, dict) or payload.get("schema_version") not in VERSIONS:
        raise error(f"not an nl-answers-gold file: `schema_version` must be one of "
                    f"{', '.join(VERSIONS)}")
    for problem in unknown_keys(path, text, payload):
        raise problem  # the first: a typo is named before what it broke
    documents = member_lines(text, "documents")
    listed = listed_documents(payload.get("documents"), error, lambda i: lambda reason: (
        QuestionFileError(path, documents[i] if i < len(documents) else None, None, reason)))
    pinned = payload.get("pinned")
    default = (named_document({"document_sha256": pinned.get("document_sha256")}, listed,
                              "pinned.", error) if isinstance(pinned, dict) else None)
    raw_cases = payload.get("cases")
    if not isinstance(raw_cases, list):
        raise QuestionFileError(path, 1, None, "an nl-answers-gold file needs a `cases` array")
    lines = member_lines(text, "cases")  # the top-level member, never one nested elsewhere
    cases: list[AnswerCase] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_cases):
        line = lines[i] if len(lines) == len(raw_cases) else None
        case = _case(path, line, raw, listed, default)
        if case.case_id in seen:
            raise QuestionFileError(path, line, case.case_id, "this case_id was used before; "
                                    "ids must be unique")
        seen.add(case.case_id)
        cases.append(case)
    if payload["schema_version"] == "nl-answers-gold-v2":
        _check_changelog(path, payload.get("changelog"), seen, member_lines(text, "changelog"))
    return tuple(cases)


def _check_changelog(path: Path, changelog: Any, ids: set[str], lines: list[int]) -> None:
    if not isinstance(changelog, list) or not changelog:
        raise QuestionFileError(path, None, None, "nl-answers-gold-v2 needs a non-empty "
                                                  "`changelog`")
    for i, entry in enumerate(changelog):
        def bad(reason: str, i: int = i) -> QuestionFileError:
            return QuestionFileError(path, lines[i] if len(lines) == len(changelog) else None,
                                     None, reason)

        if not isinstance(entry, dict):
            raise bad(f"changelog[{i}] must be an object")
        missing = [k for k in _CHANGELOG_KEYS if k not in entry]
        if missing:
            raise bad(f"changelog[{i}] lacks {', '.join(missing)}")
        if not isinstance(entry["evidence"], str) or not entry["evidence"].strip():
            raise bad(f"changelog[{i}]: evidence must be a non-empty text")
        if not isinstance(entry["case_id"], str):
            raise bad(f"changelog[{i}]: case_id must be a text, got "
                      f"{reading.clip(entry['case_id'])}")
        if entry["case_id"] not in ids:
            raise bad(f"changelog[{i}] names the unknown case {reading.clip(entry['case_id'])}")


def _case(path: Path, line: int | None, raw: Any, listed: tuple[DocRef, ...] = (),
          default: DocRef | None = None) -> AnswerCase:
    if not isinstance(raw, dict):
        raise QuestionFileError(path, line, None, "a case must be an object")
    case_id = raw.get("case_id")
    if not isinstance(case_id, str) or not case_id:
        raise QuestionFileError(path, line, None, "missing case_id (a non-empty text)")
    control = reading.forbidden_character(case_id)
    if control is not None:  # an id names the case in every report and baseline: no control
        raise QuestionFileError(path, line, None, f"case_id {reading.clip(case_id)} holds a "
                                                  f"control character ({control}); write it "
                                                  f"plainly")

    def bad(reason: str) -> QuestionFileError:
        return QuestionFileError(path, line, case_id, reason)

    case_class = raw.get("case_class")
    if case_class not in CLASSES:
        raise bad(f"case_class must be one of {', '.join(CLASSES)}, got "
                  f"{reading.clip(case_class)}")
    question = raw.get("question")
    if not isinstance(question, dict):
        raise bad('question must be an object {"en": ..., "zh": ...}')
    questions = tuple((lang, q.strip()) for lang in LANGUAGES
                      if isinstance(q := question.get(lang), str) and q.strip())
    if not questions:
        raise bad("question needs a non-empty en or zh")
    expected = raw.get("expected")
    if not isinstance(expected, dict):
        raise bad("missing expected (an object)")
    status = expected.get("status")
    if status not in STATUSES:
        raise bad(f"expected.status must be one of {', '.join(STATUSES)}, got "
                  f"{reading.clip(status)}")
    specs = expected.get("required_claims") or []
    if not isinstance(specs, list):
        raise bad("expected.required_claims must be an array")
    document = named_document(raw, listed, "", bad) or default
    claims = []
    for n, spec in enumerate(specs, start=1):
        options = spec.get("any_of") if isinstance(spec, dict) and "any_of" in spec else [spec]
        if not isinstance(options, list) or not options:
            raise bad(f"required claim {n}: any_of must be a non-empty array")
        claims.append(tuple(_anchor(bad, n, option, listed, document) for option in options))
    forbidden = expected.get("forbidden_numbers") or []
    if not isinstance(forbidden, list) or not all(isinstance(x, str) for x in forbidden):
        raise bad("forbidden_numbers must be an array of texts")
    detail = expected.get("known_gap_detail")
    if detail is not None and not isinstance(detail, str):
        raise bad("known_gap_detail must be a text")
    skip = (SKIP_ADVERSARIAL if case_class == "adversarial"
            else SKIP_OFFLINE_ONLY if raw.get("offline_only") else None)
    return AnswerCase(
        case_id=case_id,
        case_class="known-gap" if expected.get("known_gap") else case_class,
        questions=questions, claims=tuple(claims), expect_abstain=status == "abstained",
        grounded_only=bool(expected.get("grounded_only")), forbidden_numbers=tuple(forbidden),
        known_gap_detail=detail, skip_reason=skip, tags=_tags(bad, raw.get("tags")), line=line,
        document=document)


def _anchor(bad: Any, n: int, raw: Any, listed: tuple[DocRef, ...] = (),
            document: DocRef | None = None) -> Anchor:
    where = f"required claim {n}"
    if not isinstance(raw, dict):
        raise bad(f"{where} must be an object")
    page_index = raw.get("page_index")
    if not isinstance(page_index, int) or isinstance(page_index, bool) or page_index < 0:
        raise bad(f"{where}: page_index must be a whole number from 0, got "
                  f"{reading.clip(page_index)}")
    if page_index > MAX_PAGE_INDEX:
        raise bad(f"{where}: page_index {reading.clip(page_index, 24)} is beyond the "
                  f"{MAX_PAGE_INDEX:,} a claim may name (no document has that many pages)")
    if not isinstance(raw.get("kind"), str):
        raise bad(f"{where} needs a kind (a text)")
    for key in ("quote", "text", "value", "unit"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise bad(f"{where}: {key} must be a text")
    if not (raw.get("quote") or raw.get("text") or raw.get("value")):
        raise bad(f"{where} needs a quote, a text or a value")
    own = named_document(raw, listed, f"{where}: ", bad)
    return Anchor(raw["kind"], page_index, raw.get("quote"), raw.get("text"), raw.get("value"),
                  raw.get("unit"), own or document)


def _tags(bad: Any, raw: Any) -> tuple[str, ...]:
    """A case's tags: a list of texts (numbers shown as texts), or an object of texts shown as
    `key=value`; the engine's judge ignores them, so a shape it would accept is never refused
    here unless it is neither a list nor an object."""
    if raw is None:
        return ()
    if isinstance(raw, list):
        return tuple(str(t) for t in raw if isinstance(t, str | int | float)
                     and not isinstance(t, bool))
    if isinstance(raw, dict):
        return tuple(f"{k}={v}" for k, v in raw.items() if isinstance(v, str | int | float))
    raise bad("tags must be an array of texts or an object of texts")


SKIP_NO_TEXT = ("no expected text: a batch question is scored on its expected text alone (its "
                "pages are scored by `ragspine-eval retrieval`)")


def answer_cases_of(path: str | Path) -> tuple[AnswerCase, ...]:
    """The answer cases of any file `answers` reads: an nl-answers-gold file, or one of the
    engine's batch question files (golden/question_files.py), each question a case judged on
    its `expected` text alone (one without is kept as skipped, with the reason)."""
    from ragspine_eval.golden.question_files import load_question_file

    path = Path(path)
    if path.suffix.lower() == ".json" and reading.not_a_file(path, "gold") is None:
        try:
            with open(path, "rb") as handle:  # a regular file: its first 4 KiB say which format
                head = handle.read(4096).decode("utf-8", errors="replace")
        except OSError:
            head = ""  # the reader names the problem
        if '"nl-answers-gold-v' in head:
            return load_answer_cases(path)
    out = []
    for q in load_question_file(path):
        lang = "zh" if re.search(r"[\u4e00-\u9fff]", q.question) else "en"
        out.append(AnswerCase(q.id, "positive", ((lang, q.question),),
                              skip_reason=None if q.expected else SKIP_NO_TEXT,
                              tags=tuple(f"{k}={v}" for k, v in q.tags.items()), line=q.line,
                              expected_text=q.expected))
    return tuple(out)
