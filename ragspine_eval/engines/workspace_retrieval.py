"""The engine's retriever over a workspace as an engine of the run path (pipeline/): one question
in, the engine's passages out, as the retrieval harness's own outcome type.

`RetrievalEngine(workspace, config, top_k, model)` answers a question file's `QuestionCase` with
a `Retrieved` (workspace_retriever.py): the engine's top `top_k` passages
(`WorkspaceRetriever.retrieve`, with the model a `models.ModelRun` names, its calls filed under
the question's id; None: the MockProvider), each whole with the engine's own keys (which
`CaseOutcome.passages` does not take), or `error` where retrieval raised. It says so
(`outcome_type = Retrieved`), so the runner (execution/runner.py) makes a time limit, a crashed
worker or a case not run a `Retrieved` too, and the outcome cache keeps and reads `Retrieved`.
The runner runs it like the QA engine: threads, forked or spawned worker processes, a Dask
cluster, each answer kept in the outcome cache as it comes.

Invariants:
- each process and thread opens its own retriever on first use (a scratch copy of the
  workspace: the folder given is only read) and closes only what it opened (per_process.py),
  so a forked worker never touches its parent's handles and a pickled engine carries only the
  workspace, the configuration, top_k and the model;
- the passages are made plain JSON values before they leave the engine (to JSON and back, a
  value JSON cannot hold as its str), so a passage answered now and one read from the outcome
  cache are the same value and the report is the same byte for byte whether the question was
  asked or reused; the wall time and the LLM calls are the runner's (provenance.times), never
  in the outcome.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragspine_eval.engines.engine_config import DEFAULT, EngineConfig
from ragspine_eval.engines.per_process import PerProcess
from ragspine_eval.engines.workspace_retriever import Retrieved


class RetrievalEngine:
    """The workspace's retriever answering questions (module docstring)."""

    name = "ragspine"
    label = "retrieval"
    outcome_type = Retrieved
    # CPU-bound Python over SQLite handles: parallel questions in worker processes, forked
    # where that is safe (execution/workers.py); each process opens its own retriever
    parallel = "processes"
    forkable = True

    def __init__(self, workspace: str | Path, config: EngineConfig = DEFAULT, top_k: int = 10,
                 model: Any = None):
        self.workspace, self.config, self.top_k = Path(workspace), config, top_k
        self.model = model  # models.ModelRun, or None: the MockProvider
        self.mode = f"retrieval@k{top_k}"
        self._retrievers = PerProcess(self._open)

    def __getstate__(self) -> dict[str, Any]:
        return {"workspace": self.workspace, "config": self.config, "top_k": self.top_k,
                "model": self.model}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["workspace"], state["config"], state["top_k"],  # type: ignore[misc]
                      state.get("model"))

    def _open(self) -> Any:
        from ragspine_eval.engines.workspace_retriever import WorkspaceRetriever

        return WorkspaceRetriever(self.workspace, self.config, self.model)

    def run_case(self, case: Any) -> Retrieved:
        got = self._retrievers.get().retrieve(case.question, self.top_k, case.id)
        if got.error is not None:
            return Retrieved(error=got.error)
        return Retrieved(json.loads(json.dumps(got.hits, ensure_ascii=False, default=str)))

    def close(self) -> None:
        """Close the retrievers this process opened (never a parent's, after a fork)."""
        self._retrievers.close()
