"""One question of an engine question file (`QuestionCase`), its error, and where a JSON
array's elements start: shared by the question-file reader and the nl-answers-gold reader.

Invariants: a `QuestionCase` is the engine's notion of a batch question (id, question, expected
text, page groups, documents) plus its tags and the line it was read from; its `fingerprint`
covers what it asserts and not its tags.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.golden.cases import error_line


class QuestionFileError(RagspineEvalError, ValueError):
    """A question file that cannot be used: `file:line (id 'x'): reason`."""

    def __init__(self, path: Path | str, line: int | None, case_id: str | None, reason: str):
        self.path, self.line, self.case_id, self.reason = str(path), line, case_id, reason
        super().__init__(error_line(path, line, case_id, reason))


@dataclass(frozen=True)
class QuestionCase:
    """One question of a question file, in the engine's terms (see the module docstring)."""

    id: str
    question: str
    expected: str | None = None
    page_groups: tuple[frozenset[int], ...] = ()
    docs: tuple[str, ...] = ()
    tags: dict[str, str] = field(default_factory=dict)
    line: int | None = None

    @property
    def basis(self) -> str:
        """How relevance is judged: `page` (page groups), `content` (the expected text) or
        `none` (neither: the question is not judged, as in the engine)."""
        return "page" if self.page_groups else ("content" if self.expected else "none")

    def fingerprint(self) -> str:
        """What the question asserts (question, expected, pages, docs); tags left out."""
        payload = [self.question, self.expected, [sorted(g) for g in self.page_groups],
                   list(self.docs)]
        return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode()).hexdigest()[:16]


def json_items(text: str, start: int) -> Iterator[tuple[int, Any]]:
    """(line, raw value) of each element of the JSON array starting at text[start] == '['."""
    for line, _, _, value in json_spans(text, start):
        yield line, value


def json_spans(text: str, start: int) -> Iterator[tuple[int, int, int, Any]]:
    """(line, start, end, raw value) of each element of the JSON array at text[start] == '['
    (decoded without the strict reader's checks: only where each element lies is wanted)."""
    decoder = json.JSONDecoder()
    i = start + 1
    line, counted = 1, 0  # lines counted up to `counted`: linear, not once per element
    while True:
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        if i >= len(text) or text[i] == "]":
            return
        value, end = decoder.raw_decode(text, i)
        line += text.count("\n", counted, i)
        counted = i
        yield line, i, end, value
        i = end


def member_lines(text: str, key: str) -> list[int]:
    """The line of each element of the top-level object's array member `key` (`cases`,
    `changelog`, `documents`), or [] when it is not an array."""
    start = member_start(text, key)
    if start is None or text[start:start + 1] != "[":
        return []
    try:
        return [line for line, _ in json_items(text, start)]
    except (ValueError, RecursionError):  # text the strict reader has not accepted
        return []


def member_start(text: str, key: str) -> int | None:
    """Where the value of the top-level object's member `key` starts in `text`, or None: the
    object's members are walked one by one, so a `key` nested inside another member is never
    taken for it (a regular expression would)."""
    decoder = json.JSONDecoder()
    i = len(text) - len(text.lstrip())
    if text[i:i + 1] != "{":
        return None
    i += 1
    try:
        while True:
            while i < len(text) and text[i] in " \t\r\n,":
                i += 1
            if text[i:i + 1] != '"':
                return None
            name, i = decoder.raw_decode(text, i)
            while i < len(text) and text[i] in " \t\r\n:":
                i += 1
            if name == key:
                return i
            _, i = decoder.raw_decode(text, i)
    except (ValueError, RecursionError):
        return None


def element_problem(text: str, start: int | None, id_key: str
                    ) -> tuple[int, str | None, str] | None:
    """(line, id, reason) of the first element of the array at `start` that the strict reader
    refuses (a key twice, a control character: problems the parser gives no place for), or None.
    The id is the element's `id_key` when it is a text or a number."""
    from ragspine_eval.files import reading

    if start is None:
        return None
    try:
        for line, begin, end, value in json_spans(text, start):
            try:
                reading.parse_json(text[begin:end])
            except reading.JSONProblem as exc:
                raw = value.get(id_key) if isinstance(value, dict) else None
                shown = (str(raw) if isinstance(raw, str | int) and not isinstance(raw, bool)
                         else None)
                return line, shown, exc.reason
    except (ValueError, RecursionError):
        return None
    return None
