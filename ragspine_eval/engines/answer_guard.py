"""What the model said where the engine's number guard replaced it, and which figures the guard
objected to.

The engine's narrative number guard (ADR 0024, `ragspine.agent.number_guard`) rewrites an answer
whose figures are not in the retrieved passages: a lead with such a figure becomes its fixed
notice ("资料中没有直接给出该数值 ...", a refusal to the judge), and other sentences with one
are dropped. Its trace says only how many figures it removed (`narrative_number_guard`:
`ungrounded`, `rewritten`; never the text). So around one question (`Said`):
- the provider handed to the engine is passed through (`SaidProvider`), keeping the text the
  model returned to the synthesis prompt (a replay returns the recorded text, so a replay shows
  the recorded one);
- a handler on the engine's trace (`GuardTrace`) keeps that question's `narrative_number_guard`;
- where the trace says the guard rewrote, `guarded(...)` gives the model's text and the figures
  the guard objected to: the engine's own `ungrounded_numbers` on that text, with the question,
  the retrieved passages' texts and their sources, the inputs the guard itself was given.

Invariants: the provider's answers are never changed; nothing is kept when the guard did not
rewrite; per thread (worker threads answer questions side by side).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any


def _text_of(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


class SaidProvider:
    """The engine's provider, passed through; the synthesis' answer kept (`said`)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.said: str | None = None

    def chat(self, messages: list[dict[str, Any]], *args: Any, **kwargs: Any) -> Any:
        from ragspine.agent.llm_provider import NARRATIVE_PROMPT_PREFIX

        response = self._inner.chat(messages, *args, **kwargs)
        last = messages[-1] if messages else {}
        if last.get("role") == "user" and NARRATIVE_PROMPT_PREFIX in _text_of(last):
            try:
                self.said = response.choices[0].message.content or ""
            except (AttributeError, IndexError, TypeError):
                self.said = None
        return response

    def __getattr__(self, name: str) -> Any:  # everything else is the provider's own
        return getattr(self._inner, name)


class GuardTrace(logging.Handler):
    """The engine trace's `narrative_number_guard` of the question each thread is answering."""

    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self._seen: dict[int, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        fields = getattr(record, "narrative_number_guard", None)
        if isinstance(fields, dict):
            with self._lock:
                self._seen[record.thread or 0] = dict(fields)

    def take(self) -> dict[str, Any] | None:
        """This thread's guard fields since the last `take` (None: the guard did not rewrite)."""
        with self._lock:
            return self._seen.pop(threading.get_ident(), None)


def guarded(said: str | None, trace: Mapping[str, Any] | None, question: str,
            passages: Sequence[Mapping[str, Any]]) -> tuple[str | None, dict[str, Any] | None]:
    """(the model's text, the guard's account) where the guard rewrote, else (None, None)."""
    if not trace or said is None:
        return None, None
    from ragspine.agent.number_guard import ungrounded_numbers

    evidence = [str(p.get("prompt_text") or p.get("text") or p.get("content") or "")
                for p in passages]
    refs = [str(r) for p in passages for r in (
        p.get("doc_id") or p.get("source_doc_id") or p.get("doc"),
        p.get("locator") or p.get("source_locator")) if r]
    objected = ungrounded_numbers(said, question=question, evidence=evidence, source_refs=refs)
    return said, {"ungrounded": trace.get("ungrounded"), "rewritten": trace.get("rewritten"),
                  "objected": list(objected)}
