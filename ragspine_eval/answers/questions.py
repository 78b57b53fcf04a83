"""The answer harness's case on the run path (pipeline/): one question of a gold case, in one
language, on one route.

`AnswerQuestion` is what the engine is asked (engines/workspace_answers.AnswersEngine answers it
with an `AnswerOutcome`): its `id` is `<case>:<lang>@<route>`, its `tags` what latency is
summarised by, and its `fingerprint()` what the engine is asked: the question's text and the
route, so editing a claim re-judges the stored answer without asking again (the outcome
cache's key, execution/cache.py).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from ragspine_eval.golden.nl_answers import AnswerCase


@dataclass(frozen=True)
class AnswerQuestion:
    """One question of a gold case, in one language, on one route: a case of the run path."""

    case: AnswerCase
    language: str
    question: str
    route: str

    @property
    def id(self) -> str:
        return f"{self.case.case_id}:{self.language}@{self.route}"

    @property
    def tags(self) -> dict[str, str]:
        """What latency is summarised by (execution/latency.py)."""
        return {"route": self.route, "language": self.language, "class": self.case.case_class}

    @property
    def line(self) -> int | None:
        return self.case.line

    def fingerprint(self) -> str:
        """What the engine is asked: the question and the route (the claims are judged after)."""
        text = json.dumps([self.question, self.route], ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
