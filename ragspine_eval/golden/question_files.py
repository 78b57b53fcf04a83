"""The engine's question sets as golden sets: `ragspine batch` question files and nl-answers-gold.

Owns reading, strictly and with file:line errors, the formats the engine's `ragspine batch`
reads (its documented contract, read in ragspine/cli/batch.py and its question loader; no code
of it is used here):
- `.jsonl` (one object a line), `.json` (an array, or an object with a `questions` array),
  `.csv` (a header row), `.txt` (one question a line, `#` comments): each question has `question`
  and optionally `id` (default `q<N>`, N its place in the file from 1), `expected` (a text or a
  number, or an object whose `value` is the text and whose `source.doc` is a document, the QA
  golden set's shape), `pages` (or `page`: `12`, `[12, 13]`, `"12, 14-15"`, from 1) and `doc` (a
  document name or a list of them). Any other key is a tag of the question (its value a text);
- nl-answers-gold v1 and v2 (`.json` with `schema_version` `nl-answers-gold-v1`/`-v2`): a
  question per case and language (`<case_id>:<lang>`), its page groups from
  `expected.required_claims` (each `any_of` a group; `page_index` from 0, so page + 1), none for a
  case expected to abstain; adversarial and `offline_only` cases are left out, as the engine does.

Invariants:
- a file loads whole or not at all: the first problem raises `QuestionFileError` naming the file,
  the line (where the format has lines; the object's first line in a `.json`), the question id
  when one could be read, and the reason; `check_question_file` collects every problem instead;
- strict where the engine is lenient in ways that hide a mistake: a key twice in one object, a
  question that is not text or is empty, a page that is not a positive whole number or a range
  start > end, an id given twice, a `doc` that is not text, an `expected` that is a list or a
  boolean, a tag whose value is not a scalar, and an empty file are errors;
- `QuestionCase.page_groups` are the engine's page groups: a hit is relevant to a group when its
  page is in the group (and its document matches `docs` when given); every group must be hit;
- total and bounded for any bytes (docs/workspace.md, "Limits"): a page above `MAX_PAGE`, a
  question of more than `MAX_QUESTION_PAGES` pages or a file of more than `MAX_FILE_PAGES` is
  refused before it is allocated (`"1-300000000"` is one line, not a MemoryError); a CSV cell
  over the csv module's 128 KiB field limit, a carriage return inside an unquoted cell and a
  control character (tab aside) in a .csv or .txt are errors on their line; invalid UTF-8 is
  named by its line; a problem the JSON parser gives no place for (a key twice, a control
  character) in a .json is named by the line and id of the question that holds it.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.files import reading
from ragspine_eval.golden.pages import parse_pages
from ragspine_eval.golden.question_case import (
    QuestionCase,
    QuestionFileError,
    element_problem,
    json_items,
    member_start,
)

__all__ = ["QuestionCase", "QuestionFileError", "check_question_file", "is_question_file",
           "load_question_file"]

SUFFIXES = (".jsonl", ".json", ".csv", ".txt")
NL_GOLD_VERSIONS = ("nl-answers-gold-v1", "nl-answers-gold-v2")
KNOWN_KEYS = frozenset({"id", "question", "expected", "pages", "page", "doc"})
# the limits of a question file (docs/workspace.md, "Limits"): one question's pages are bounded
# in pages.py; the sets are built in memory (a million pages is about 60 MB)
MAX_FILE_PAGES = 1_000_000
# questions in one file: 100,000 is the largest set the project runs (the QA golden set's
# story); each is held in memory with its page sets
MAX_QUESTIONS = 200_000
# C0 controls but tab, LF and CR; DEL and C1 (ESC, CSI); a question file's text is data
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]")
_NL_CLASSES = ("positive", "abstain", "adversarial")


def is_question_file(path: str | Path) -> bool:
    """True for a file the engine's batch reads: a question file suffix other than a QA golden
    set (.jsonl lines with `case_type`, the project's own format, read by golden/cases.py)."""
    path = Path(path)
    if path.suffix.lower() not in SUFFIXES:
        return False
    if path.suffix.lower() != ".jsonl":
        return True
    def error(reason: str) -> QuestionFileError:
        return QuestionFileError(path, None, None, reason)

    try:
        for _, raw in reading.iter_lines(path, "golden", error):
            if raw.strip():
                first = reading.parse_json(raw)
                return not (isinstance(first, dict) and "case_type" in first)
    except (OSError, ValueError, RagspineEvalError):
        return True  # let the reader name the problem
    return True


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value, ensure_ascii=False)


def _case(record: Mapping[str, Any], index: int, line: int | None, path: Path) -> QuestionCase:
    raw_id = record.get("id")
    case_id = _text(raw_id) if raw_id not in (None, "") else f"q{index}"

    def bad(reason: str) -> QuestionFileError:
        return QuestionFileError(path, line, case_id, reason)

    if isinstance(raw_id, bool | list | dict):
        raise bad(f"id {reading.clip(raw_id)} must be a text or a number")
    question = record.get("question")
    if not isinstance(question, str) or not question.strip():
        raise bad("missing question" if question in (None, "") else
                  f"question must be a text, got {reading.clip(question)}")
    docs: list[str] = []
    raw_doc = record.get("doc")
    if isinstance(raw_doc, str):
        docs += [raw_doc] if raw_doc else []
    elif isinstance(raw_doc, list) and all(isinstance(d, str) for d in raw_doc):
        docs += [d for d in raw_doc if d]
    elif raw_doc is not None:
        raise bad(f"doc must be a document name or a list of them, got {reading.clip(raw_doc)}")
    raw_expected = record.get("expected")
    expected: str | None
    if isinstance(raw_expected, Mapping):  # the QA golden set's expected object
        value = raw_expected.get("value")
        expected = None if value is None else _text(value)
        source = raw_expected.get("source")
        if isinstance(source, Mapping) and source.get("doc"):
            docs.append(str(source["doc"]))
    elif raw_expected is None or raw_expected == "":
        expected = None
    elif isinstance(raw_expected, bool | list):
        raise bad(f"expected must be a text or a number, got {reading.clip(raw_expected)}")
    else:
        expected = _text(raw_expected)
    pages = record["pages"] if "pages" in record else record.get("page")
    try:
        group = parse_pages(pages)
    except ValueError as exc:
        raise bad(str(exc)) from None
    tags: dict[str, str] = {}
    for key, value in record.items():
        if key in KNOWN_KEYS or value is None:
            continue
        if isinstance(value, list | dict):
            raise bad(f"the key {reading.clip(key)} is a tag and must hold a text or a number "
                      f"(the format's own keys are {', '.join(sorted(KNOWN_KEYS))})")
        tags[str(key)] = _text(value)
    return QuestionCase(case_id, question.strip(), expected, (group,) if group else (),
                        tuple(docs), tags, line)


def _array_start(text: str, key: str | None = None) -> int | None:
    """Where the top-level array (key None) or the top-level object's `key` array starts."""
    if key is None:
        i = len(text) - len(text.lstrip())
        return i if text[i:i + 1] == "[" else None
    start = member_start(text, key)
    return start if start is not None and text[start:start + 1] == "[" else None


def _records(path: Path) -> Iterator[tuple[int | None, Any]]:
    """(line, record) of each question of a .jsonl, .json, .csv or .txt file."""
    def error(reason: str) -> QuestionFileError:
        return QuestionFileError(path, None, None, reason)

    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        for line, raw in reading.iter_lines(path, "questions", error,
                                            lambda n, r: QuestionFileError(path, n, None, r)):
            if not raw.strip():
                continue
            try:
                yield line, reading.parse_json(raw)
            except reading.JSONProblem as exc:  # this line's problem: the next lines still read
                yield line, QuestionFileError(path, line, None, exc.reason)
        return
    if suffix in (".txt", ".csv"):
        text = _lines_text(path, reading.read_bytes(path, "questions", error))
    if suffix == ".txt":
        for line, raw in enumerate(io.StringIO(text), start=1):  # lazily, split at LF only
            raw = raw.rstrip("\r\n")
            if raw.strip() and not raw.strip().startswith("#"):
                yield line, {"question": raw.strip()}
        return
    if suffix == ".csv":
        yield from _csv_records(path, text)
        return
    raise error(f"not a question file the engine reads: {suffix or '(no suffix)'} (one of "
                f"{', '.join(SUFFIXES)})")


def _lines_text(path: Path, data: bytes) -> str:
    """A .csv or .txt file's text: strict UTF-8 and no control character but tab, CR and LF,
    each problem named by its line."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise QuestionFileError(path, line, None, f"not UTF-8 text ({exc.reason} at byte "
                                                  f"{column} of the line); save it as UTF-8"
                                ) from None
    bad = _CONTROL.search(text)
    if bad is not None:
        raise QuestionFileError(path, text.count("\n", 0, bad.start()) + 1, None,
                                f"a control character ({reading.clip(bad.group())[1:-1]}) in the "
                                f"text; remove it")
    return text


def _csv_records(path: Path, text: str) -> Iterator[tuple[int | None, Any]]:
    """(line, row) of each data row of a CSV question file; csv.Error becomes a line's error."""
    reader = csv.DictReader(io.StringIO(text))  # lines split at LF only, as editors count them

    def failed(exc: csv.Error) -> QuestionFileError:
        reason = str(exc)
        if "new-line character" in reason:
            reason = "a line break (CR) inside an unquoted cell; quote the cell or remove it"
        elif "field larger than field limit" in reason:
            reason = (f"a cell longer than the {csv.field_size_limit():,} characters the csv "
                      f"module reads (a question is a sentence, not a document)")
        return QuestionFileError(path, reader.line_num + 1, None, reason)  # the line being read

    try:
        fields = reader.fieldnames
    except csv.Error as exc:
        raise failed(exc) from None
    if fields is None or "question" not in fields:
        raise QuestionFileError(path, 1, None, "the header row has no `question` column")
    twice = sorted({f for f in fields if fields.count(f) > 1})
    if twice:
        raise QuestionFileError(path, 1, None, f"the column {reading.clip(twice[0])} appears "
                                               f"twice in the header row; keep one")
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise failed(exc) from None
        if None in row:
            raise QuestionFileError(path, reader.line_num, None,
                                    "more cells than the header row has columns")
        yield reader.line_num, {k: v for k, v in row.items() if v not in (None, "")}


def _json_payload(path: Path) -> tuple[str, Any]:
    def error(reason: str) -> QuestionFileError:
        return QuestionFileError(path, None, None, reason)

    text = reading.decode(reading.read_bytes(path, "questions", error), error)
    if not text.strip():
        raise error("the file is empty: a .json question file is an array of questions, or an "
                    "nl-answers-gold object")
    try:
        return text, reading.parse_json(text)
    except reading.JSONProblem as exc:
        if exc.line is None:  # a key twice, a control character: find the question that has it
            found = _placed(text)
            if found is not None:
                line, case_id, reason = found
                raise QuestionFileError(path, line, case_id, reason) from None
        raise QuestionFileError(path, exc.line, None, exc.reason) from None


def _placed(text: str) -> tuple[int, str | None, str] | None:
    """The line, id and reason of the element that holds a problem the parser placed nowhere."""
    for key, id_key in (("questions", "id"), ("cases", "case_id")):
        found = element_problem(text, member_start(text, key), id_key)
        if found is not None:
            return found
    return element_problem(text, _array_start(text), "id")


def load_question_file(path: str | Path) -> tuple[QuestionCase, ...]:
    """Every question of the file, or QuestionFileError for the first problem."""
    cases, errors = _load(Path(path), stop=True)
    return cases


def check_question_file(path: str | Path) -> tuple[tuple[QuestionCase, ...],
                                                   list[QuestionFileError]]:
    """Every valid question and every problem (for `ragspine-eval golden`)."""
    return _load(Path(path), stop=False)


def _load(path: Path, *, stop: bool) -> tuple[tuple[QuestionCase, ...], list[QuestionFileError]]:
    problem = reading.not_a_file(path, "question")
    if problem is not None:
        raise QuestionFileError(path, None, None, problem)
    errors: list[QuestionFileError] = []
    cases: list[QuestionCase] = []
    items = _items(path)
    try:
        _read_cases(path, items, cases, errors, stop)
    except QuestionFileError as exc:  # the file itself (not one question) cannot be read on
        if stop:
            raise
        errors.append(exc)
    for exc in _file_problems(path, cases, errors):
        if stop:
            raise exc
        errors.append(exc)
    return tuple(cases), errors


def _items(path: Path) -> Iterator[tuple[int | None, int, Any]]:
    """(line, index from 1, record) of each question of the file, in its format; a record may
    be a QuestionCase (nl-answers-gold) or the QuestionFileError of its question."""
    if path.suffix.lower() != ".json":
        return ((line, index, record) for index, (line, record)
                in enumerate(_records(path), start=1))
    text, payload = _json_payload(path)
    if isinstance(payload, dict) and payload.get("schema_version") in NL_GOLD_VERSIONS:
        from ragspine_eval.golden.nl_gold import nl_gold_cases

        return nl_gold_cases(path, text, payload)
    return _json_questions(path, text, payload)


def _read_cases(path: Path, items: Iterator[tuple[int | None, int, Any]],
                cases: list[QuestionCase], errors: list[QuestionFileError], stop: bool) -> None:
    """Each item read into `cases`, or its problem into `errors` (raised with `stop`); a file
    past MAX_QUESTIONS questions or MAX_FILE_PAGES pages stops whole, before it fills memory."""
    pages = 0
    for line, index, record in items:
        if index > MAX_QUESTIONS:
            raise QuestionFileError(path, line, None, f"more than {MAX_QUESTIONS:,} questions "
                                                      f"in one file; split the file")
        try:
            if isinstance(record, QuestionFileError):
                raise record
            if isinstance(record, QuestionCase):
                case = record
            elif not isinstance(record, Mapping):
                raise QuestionFileError(path, line, None, "a question must be a JSON object")
            else:
                case = _case(record, index, line, path)
            pages += sum(len(g) for g in case.page_groups)
            if pages > MAX_FILE_PAGES:
                raise QuestionFileError(path, line, case.id, f"more than {MAX_FILE_PAGES:,} "
                                        f"pages in the file's page groups; split the file")
            cases.append(case)
        except QuestionFileError as exc:
            if pages > MAX_FILE_PAGES or stop:
                raise
            errors.append(exc)


def _file_problems(path: Path, cases: list[QuestionCase], errors: list[QuestionFileError]
                   ) -> Iterator[QuestionFileError]:
    """What is wrong with the file as a whole: an id given twice, no question at all."""
    seen: dict[str, QuestionCase] = {}
    for case in cases:
        if case.id in seen:
            yield QuestionFileError(path, case.line, case.id,
                                    f"the id is given twice (first on line {seen[case.id].line})")
        seen.setdefault(case.id, case)
    if not cases and not errors:
        yield QuestionFileError(path, None, None, "the file holds no question")


def _json_questions(path: Path, text: str, payload: Any) -> Iterator[tuple[int | None, int, Any]]:
    if isinstance(payload, list):
        start = _array_start(text, None)
    elif isinstance(payload, dict) and isinstance(payload.get("questions"), list):
        payload, start = payload["questions"], _array_start(text, "questions")
    else:
        raise QuestionFileError(path, 1, None, "a .json question file is an array of questions "
                                               "or an object with a `questions` array")
    if len(payload) > MAX_QUESTIONS:
        raise QuestionFileError(path, None, None, f"{len(payload):,} questions, more than the "
                                                  f"{MAX_QUESTIONS:,} one file may hold; split "
                                                  f"the file")
    lines = [line for line, _ in json_items(text, start)] if start is not None else []
    for index, record in enumerate(payload, start=1):
        yield (lines[index - 1] if len(lines) == len(payload) else None), index, record
