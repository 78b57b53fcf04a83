"""The engine answering over a workspace as an engine of the run path (pipeline/): one
(question, language, route) in, a `CaseOutcome` holding the engine's answer and its evidence out.

`AnswerQuestion` is a case of the run path: one question of a gold case, in one language, on
one route (its `id` is `<case>:<lang>@<route>`; its `fingerprint()` what the engine is asked:
the question's text and the route, so editing a claim re-judges the stored answer without
asking again). `AnswersEngine(workspace, config)` answers it with a `CaseOutcome` whose
`retrieved_context` holds the whole `AnswerOutcome` (engine.py: the answer, its plain text, the
cited sources, the ranked passages, the engine's route and its judge's label) as one JSON text,
and whose `error` is the engine's where the answer raised; `answer_outcome(case, outcome)` reads
it back (an outcome the runner made, a time limit or a crashed worker, reads as an error on
that route). The runner (execution/runner.py) then runs it as it runs a retrieval run's
questions: threads, forked or spawned worker processes, a Dask cluster, each answer stored in
the outcome cache as it comes.

Invariants:
- each process and thread opens its own `WorkspaceAnswerer` on first use (a scratch copy of the
  workspace: the folder given is only read) and closes only what it opened, so a forked worker
  never touches its parent's handles and a pickled engine carries only the workspace and the
  configuration;
- the outcome is kept as JSON text and always read back from it, so an answer made now and one
  read from the outcome cache are the same value and the report is the same byte for byte
  whether the question was asked or reused; the wall time and the LLM calls are the runner's
  (provenance.times.latency), never in the text.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragspine_eval.answers.engine import AnswerOutcome
from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.engines.engine_config import DEFAULT, EngineConfig
from ragspine_eval.golden.nl_answers import AnswerCase


KEPT = "outcome 2: model_answer, guard, prompt_text"  # what an AnswerOutcome holds (engine.py)


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
        """What the engine is asked: the question and the route (the claims are judged after),
        and the shape of what is kept of its answer (`KEPT`: an answer kept before the number
        guard's account was kept is asked again, never read as one the guard left alone)."""
        text = json.dumps([self.question, self.route, KEPT], ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# what the runner measures around each call (execution/latency.timed), under the report's
# provenance.times: the wall time, and the LLM calls (their count depends on what the engine's
# caches hold, so on which worker asked the question after which: never in the kept answer)
_THE_RUNNERS = ("seconds", "llm_calls")


class AnswersEngine:
    """The engine answering the run's questions over the workspace (module docstring)."""

    name = "ragspine"
    label = "answers"
    mode = "answers"
    # CPU-bound Python over SQLite handles: parallel questions in worker processes, forked
    # where that is safe (execution/workers.py); each process opens its own answerer
    parallel = "processes"
    forkable = True

    def __init__(self, workspace: str | Path, config: EngineConfig = DEFAULT, model: Any = None):
        self.workspace, self.config = Path(workspace), config
        self.model = model  # models.ModelRun, or None: the MockProvider
        self.repeat_index = 0  # set by the answer step: a cassette keeps each repeat apart
        self._local = threading.local()
        self._opened: list[tuple[int, Any]] = []  # (pid, answerer) of every one opened
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return {"workspace": self.workspace, "config": self.config, "model": self.model,
                "repeat": self.repeat_index}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["workspace"], state["config"],  # type: ignore[misc]
                      state.get("model"))
        self.repeat_index = state.get("repeat", 0)

    def _answerer(self) -> Any:
        local = self._local
        if getattr(local, "pid", None) != os.getpid():  # a forked child: its own, not the parent's
            from ragspine_eval.answers.engine import WorkspaceAnswerer

            local.answerer = WorkspaceAnswerer(self.workspace, self.config,
                                               self.model).__enter__()
            local.pid = os.getpid()
            with self._lock:
                self._opened.append((local.pid, local.answerer))
        return local.answerer

    def run_case(self, case: AnswerQuestion) -> CaseOutcome:
        got = self._answerer().answer(case.question, case.route, case.id, self.repeat_index)
        kept = {k: v for k, v in asdict(got).items() if k not in _THE_RUNNERS}
        return CaseOutcome(retrieved_context=[json.dumps(kept, ensure_ascii=False, default=str)],
                           error=got.error)

    def close(self) -> None:
        """Close the answerers this process opened (never a parent's, after a fork)."""
        pid = os.getpid()
        with self._lock:
            mine = [a for p, a in self._opened if p == pid]
            self._opened = [(p, a) for p, a in self._opened if p != pid]
        for answerer in mine:
            answerer.close()
        self._local = threading.local()


def answer_outcome(case: AnswerQuestion, outcome: CaseOutcome) -> AnswerOutcome:
    """The `AnswerOutcome` an outcome of AnswersEngine holds; for one the runner made (a time
    limit, a crashed worker, a case not run), the runner's error on the case's route."""
    if outcome.retrieved_context:
        return AnswerOutcome(**json.loads(outcome.retrieved_context[0]))
    return AnswerOutcome(route=case.route, agent_route="error", route_label="error",
                         error=outcome.error or "no answer")
