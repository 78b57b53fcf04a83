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
    decoder = json.JSONDecoder()
    i = start + 1
    while True:
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        if i >= len(text) or text[i] == "]":
            return
        value, end = decoder.raw_decode(text, i)
        yield text.count("\n", 0, i) + 1, value
        i = end
