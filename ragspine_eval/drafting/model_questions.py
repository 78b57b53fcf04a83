"""Questions of a document's fact written by the user's model, behind its cassette, and checked.

`asked_of_model(model, fact, case)` asks the model (a `models.ModelRun`: its provider behind the
cassette, record or replay, through the engine's own `chat(messages)`; the call is filed under
`gold-draft:<case id>`) to write, from the fact's page, one question in English and one in
Chinese whose answer is the fact, and the answer, as JSON `{"en": ..., "zh": ..., "answer":
...}`. The reply is kept only when it is that JSON with both questions and an answer stating at
least one figure, and every figure the answer states is on the fact's page (drafting/pages.py):
otherwise the case is dropped (`Skipped`, with why), never kept with the template's questions.
The claim is the answer's first figure on that page.

Invariants: one call per fact; a failed call, a cassette miss and a bad reply are the fact's
`Skipped` reason, the draft goes on; nothing the model says is kept without its page's check.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ragspine_eval.drafting.draft_file import DraftCase, Located
from ragspine_eval.drafting.figures import figures_of
from ragspine_eval.drafting.pages import find_figure
from ragspine_eval.drafting.questions import Skipped

SYSTEM = ("You write evaluation questions for a question-answering system over documents. "
          "Answer with one JSON object and nothing else.")
PROMPT = ("Page {page} of the document {doc}:\n---\n{text}\n---\nWrite one question in English "
          "and the same question in Chinese whose answer is the figure {value} given for "
          "'{label}'{period} on this page, and the answer as one short sentence stating the "
          'figure. Reply as JSON: {{"en": "...", "zh": "...", "answer": "..."}}')
PAGE_CLIP = 6000


def _reply_text(reply: Any) -> str:
    choices = getattr(reply, "choices", None) or ()
    message = getattr(choices[0], "message", None) if choices else None
    return str(getattr(message, "content", None) or "")


def _parsed(text: str) -> dict[str, str] | None:
    match = re.search(r"\{.*\}", text, re.DOTALL)
    try:
        data = json.loads(match.group()) if match else None
    except ValueError:
        return None
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) and data[k].strip()
                                             for k in ("en", "zh", "answer")):
        return None
    return {k: data[k].strip() for k in ("en", "zh", "answer")}


def asked_of_model(model: Any, fact: Any, case: DraftCase) -> DraftCase | Skipped:
    """The case with the model's questions, or why it is dropped (module docstring)."""
    page = fact.page
    prompt = PROMPT.format(page=page.page, doc=page.doc, text=page.text[:PAGE_CLIP],
                           value=fact.value, label=fact.label,
                           period=f" ({fact.period})" if fact.period else "")
    provider = model.provider_for(f"gold-draft:{case.case_id}", None)
    try:
        reply = provider.chat([{"role": "system", "content": SYSTEM},
                               {"role": "user", "content": prompt}], tools=None)
    except Exception as exc:  # noqa: BLE001 - one fact's failure drops that fact
        return Skipped(case.case_id, None, f"the model's call failed: {type(exc).__name__}: "
                                           f"{str(exc)[:200]}")
    got = _parsed(_reply_text(reply))
    if got is None:
        return Skipped(case.case_id, None, "the model's reply is not the JSON asked for "
                                           "(en, zh, answer): dropped")
    figures = figures_of(got["answer"])
    off_page = [f.value for f in figures if not find_figure(f.value, f.unit, [page])]
    if not figures or off_page:
        return Skipped(case.case_id, None, f"the model's answer '{got['answer'][:80]}' states "
                       f"{'no figure' if not figures else ', '.join(off_page)} not on "
                       f"{page.doc} page {page.page}: dropped")
    hit = find_figure(figures[0].value, figures[0].unit, [page])[0]
    claim = Located("number", page.doc, page.sha256, page.page, hit.passage, figures[0].value,
                    figures[0].unit)
    return DraftCase(case.case_id, case.case_class, {"en": got["en"], "zh": got["zh"]},
                     ((claim,),), tags={**case.tags, "from": "documents+model"},
                     rationale=case.rationale + "; questions written by the model, its answer "
                               "checked on the page")
