"""One answered question whole: both routes side by side, each claim on its own document, the
answer and the ranked passages with each claim's value marked, and what the number guard hid.

`case_html(report, results, case)` (the results of one question, one per route) shows:
- the question, its class, tags and line; the gold's word on the case: a gold error (the
  workspace lacks a document it names, or a page: answers/gold_check.py), the documents it
  names that the workspace lacks (in red), and its gold doubts;
- per route: the verdict and its stage; the claims, each with its content and page hits (the
  engine judge's), its strict citation (its page cited on its own document, and how the answer
  cited it: its markers, or the engine's source list), and its document (short name, the full
  one on hover; red where the workspace lacks it, grey where unknown);
- the pages with their documents: expected, cited, retrieved (ranked);
- the answer, each claim's text (and any forbidden number) marked; where the engine's number
  guard replaced what the model said, the model's own text beside it, the claim's text marked
  in it and each figure the guard objected to marked apart (`rse-ans-guard`);
- the generator's diagnostics (answers/generator.py): claim recall, context utilization, the
  unsupported numbers, the noise;
- the ranked passages, each claim's value marked inside each passage (where the mark falls
  past the shown excerpt, the excerpt is the part around it), and a row on a claim's page of
  its own document green, one on that page of another document only amber;
- with `--repeat N`, per route every repeat side by side (`repeats_html`): its verdict and
  reason, the engine error or the answer with each claim's text marked.

Given a `Labelling` (views/answer_labels.py: a faithfulness judge, the run, a file name), each
route also shows each claim of its answer with that judge's verdict against the passages the
engine was given (answers/faithfulness.py), to be confirmed or marked wrong with a reason, and
the view opens with the bar that exports those labels for `ragspine-eval judge check`.

Marking is for the eye (`mark`): an anchor's text is found case-insensitively with any
punctuation or spaces between its normalised words, so a thousands separator or a different
quote mark may leave a hit the judge counted unmarked (the verdict is the judge's, never this).
Invariants: every text from the gold, the engine or the model is escaped; pure functions.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

ANSWER_CLIP = 4000
PASSAGE_CLIP = 400
SHORT_NAME = 22
CSS = """.rse-ans-routes{display:flex;gap:14px;align-items:flex-start}
.rse-ans-route{flex:1 1 0;min-width:0;border:1px solid #ddd;border-radius:6px;padding:6px 10px}
.rse-ans-pass{color:#1b5e20;font-weight:700}.rse-ans-fail{color:#b71c1c;font-weight:700}
.rse-ans-answer{white-space:pre-wrap;font-size:12.5px;max-height:22em;overflow:auto;
 background:#fafafa;padding:6px;border-radius:4px}
.rse-ans-said{border-left:3px solid #e65100;background:#fff8f0}
.rse-ans-answer mark,.rse-ans-t mark{background:#ffe082;padding:0 1px}
mark.rse-ans-guard{background:#ffab91;outline:1px solid #bf360c}
.rse-ans-t{width:100%;border-collapse:collapse;table-layout:fixed;font-size:12.5px}
.rse-ans-t th,.rse-ans-t td{text-align:left !important;vertical-align:top;overflow-wrap:anywhere;
 padding:3px 5px;border-bottom:1px solid #eee}
.rse-ans-t tr.rse-ans-expected td{background:#eef8ee}
.rse-ans-t tr.rse-ans-otherdoc td{background:#fff4d6}
.rse-ans-doc{border-bottom:1px dotted #777}.rse-ans-missing{color:#b71c1c;font-weight:700}
.rse-ans-unknown{color:#777;font-style:italic}
.rse-ans-gold{border:1px solid #b71c1c;border-radius:4px;padding:4px 8px;background:#fdecea}
.rse-ans-repeats{display:grid;grid-auto-flow:column;grid-auto-columns:minmax(180px,1fr);gap:8px;
 overflow-x:auto}
.rse-ans-repeat{border:1px solid #ddd;border-radius:4px;padding:4px 8px;min-width:0}"""


def _spans(text: str, needles: Sequence[str]) -> list[tuple[int, int]]:
    from ragspine.common.answer_text import normalize_answer

    spans: list[tuple[int, int]] = []
    for needle in needles:
        words = normalize_answer(needle).split()
        if not words:
            continue
        pattern = re.compile(r"[\W_]*".join(re.escape(w) for w in words), re.IGNORECASE)
        spans += [(m.start(), m.end()) for m in pattern.finditer(text) if m.end() > m.start()]
    return sorted(spans)


def mark(answer: str, needles: Sequence[str], clip: int = ANSWER_CLIP,
         apart: Sequence[str] = ()) -> str:
    """The text, escaped, each needle's occurrences in <mark> (those of `apart` in
    <mark class="rse-ans-guard">); past `clip` characters, the part around the first mark."""
    text = unicodedata.normalize("NFKC", answer)
    spans = [(s, e, "") for s, e in _spans(text, needles)] + \
        [(s, e, ' class="rse-ans-guard"') for s, e in _spans(text, apart)]
    spans.sort()
    start = 0
    if len(text) > clip and spans and spans[0][1] > clip:
        start = max(0, spans[0][0] - clip // 3)
    end = start + clip
    out, at = ["…" if start else ""], start
    for s, e, cls in spans:
        if s < at or e > end:
            continue
        out += [escape(text[at:s]), f"<mark{cls}>{escape(text[s:e])}</mark>"]
        at = e
    out.append(escape(text[at:end]))
    return "".join(out) + ("…" if len(text) > end else "")


def doc_html(doc: str | None, missing: bool = False, note: str = "") -> str:
    """A document's short name, its full name (and `note`) on hover; red when missing."""
    if not doc:
        return f'<span class="rse-ans-unknown" title="{escape(note)}">document unknown</span>'
    name = Path(doc).name
    short = name if len(name) <= SHORT_NAME else name[:SHORT_NAME - 1] + "…"
    cls = "rse-ans-missing" if missing else "rse-ans-doc"
    title = doc + (f" — {note}" if note else "") + (" (not in the workspace)" if missing else "")
    return f'<span class="{cls}" title="{escape(title)}">{escape(short)}</span>'


def _pages(locators: Sequence[str], limit: int = 15) -> str:
    from ragspine_eval.answers.claims import document_of, page_of

    shown = []
    for loc in list(dict.fromkeys(locators))[:limit]:
        page = page_of(loc)
        if page is not None:
            shown.append(f"{page} ({doc_html(document_of(loc))})")
    return ", ".join(dict.fromkeys(shown)) or "—"


def _claims_table(verdict: Any, case: Any, missing: Sequence[str]) -> str:
    rows = []
    for claim, group in zip(verdict.claims, case.claims, strict=False):
        docs = []
        for anchor, place in zip(group, claim.places or [None] * len(group), strict=False):
            named = anchor.document.describe() if anchor.document else None
            if place is None or place.doc_id is None:
                docs.append(doc_html(named, missing=bool(named and named in missing),
                                     note=getattr(place, "note", "")) if named
                            else doc_html(None, note=getattr(place, "note", "")))
            else:
                docs.append(doc_html(place.doc_id, note=f"found by {place.how}"))
        strict = claim.strict
        rows.append(
            f"<tr><td>{escape(' | '.join(claim.anchors))}</td>"
            f"<td>{'✔' if claim.content_hit else '✘'}"
            f"{' (fragments)' if claim.fragment_hit else ''}</td>"
            f"<td>{'✔' if claim.page_hit else '✘'}</td>"
            f"<td title=\"{escape(strict.reason if strict else '')}\">"
            f"{'✔' if strict and strict.cited else '✘'}"
            f"<br><small>{escape(strict.reason if strict else 'not placed')}</small></td>"
            f"<td>{'<br>'.join(dict.fromkeys(docs))}"
            f"{'<br><i>' + escape(claim.page_note) + '</i>' if claim.page_note else ''}</td></tr>")
    if not rows:
        return ""
    return ('<table class="rse-ans-t"><col style="width:25%"><col style="width:11%">'
            '<col style="width:11%"><col style="width:27%"><col>'
            "<tr><th>claim (alternatives)</th><th>content</th><th>page, any document "
            "(engine)</th><th>page on its own document (strict)</th><th>its document</th></tr>"
            + "".join(rows) + "</table>")


def wanted(verdict: Any, case: Any) -> list[str]:
    """What to mark: each alternative's text or value, a fragment hit's key words, the
    expected text, and any forbidden number the answer carries."""
    from ragspine_eval.answers.claims import key_tokens, needles

    out = [n for group in case.claims for a in group for n in needles(a)]
    for claim, group in zip(verdict.claims, case.claims, strict=False):
        if claim.fragment_hit:
            out += [t for a in group for q in (a.quote, a.text) if q for t in key_tokens(q)]
    if case.expected_text:
        out.append(case.expected_text)
    return out + list(verdict.forbidden_leaked)


def _passages_html(outcome: Any, verdict: Any, case: Any, marks: Sequence[str]) -> str:
    from ragspine_eval.answers.citations import passage_document
    from ragspine_eval.answers.claims import page_of

    own = {(p.doc_id, page) for c in verdict.claims
           for p, page in zip(c.places, c.alternative_pages, strict=False) if p.doc_id}
    bare = {page for c in verdict.claims  # a claim whose document is unknown: any document's
            for p, page in zip(c.places, c.alternative_pages, strict=False) if not p.doc_id}
    pages = {page for c in verdict.claims for page in c.expected_pages}
    rows = []
    for x in outcome.passages[:10]:
        page, doc = page_of(x["locator"]), passage_document(x)
        cls = ("rse-ans-expected" if (doc, page) in own or page in bare
               else "rse-ans-otherdoc" if page in pages else "")
        text = x.get("prompt_text") or x["text"]
        where = x["locator"][len(doc):] if x["locator"].startswith(doc) else x["locator"]
        rows.append(f'<tr class="{cls}"><td>{x["rank"]}</td><td>{doc_html(doc)} '
                    f"<small>{escape(where)}</small></td>"
                    f"<td>{mark(text, marks, PASSAGE_CLIP)}</td></tr>")
    if not rows:
        return "<p>no passage retrieved</p>"
    return ('<table class="rse-ans-t"><col style="width:6%"><col style="width:28%"><col>'
            "<tr><th>rank</th><th>document, locator</th><th>text (each claim's value "
            "marked)</th></tr>" + "".join(rows) + "</table>")


def _said_html(outcome: Any, marks: Sequence[str]) -> str:
    """What the model said where the number guard replaced it (engines/answer_guard.py)."""
    if not outcome.model_answer:
        return ""
    objected = list((outcome.guard or {}).get("objected") or [])
    return (f"<p><b>what the model said</b>, before the engine's number guard replaced it "
            f"(the guard objected to: {escape(', '.join(objected) or 'no figure it named')}; "
            f"marked red)</p><div class=\"rse-ans-answer rse-ans-said\">"
            f"{mark(outcome.model_answer, marks, apart=objected)}</div>")


def _generator_html(diagnosis: Any) -> str:
    if diagnosis is None or not diagnosis.claims and not diagnosis.figures:
        return ""
    d = diagnosis.to_dict()

    def rate(name: str) -> str:
        value = d.get(name)
        return "—" if value is None else f"{value:.2f}"

    unsupported = ", ".join(d["unsupported_numbers"]) or "none"
    parts = [f"unsupported numbers (in no retrieved passage): {escape(unsupported)}"]
    if diagnosis.claims:
        noise = ", ".join(f"{n['figure']} (rank {n['passage_rank']})" for n in d["noise"][:6])
        parts = [f"claim recall {rate('claim_recall')} ({d['retrieved']} of {d['claims']} "
                 f"claims in a retrieved passage)",
                 f"context utilization {rate('context_utilization')}",
                 f"noise {rate('noise_relevant')} + {rate('noise_irrelevant')} "
                 f"(wrong figures from passages{': ' + escape(noise) if noise else ''})",
                 *parts]
    return ("<p><b>at the generator</b> (RAGChecker's diagnostics, without a model): "
            + " · ".join(parts) + "</p>")


def route_html(report: Any, result: Any, case: Any, missing: Sequence[str],
               labelling: Any = None) -> str:
    """One route's side of the case view (module docstring)."""
    from ragspine_eval.retrieval.stages import STAGE_TEXT

    v, o = result.verdict, result.outcome
    ok = "rse-ans-pass" if v.passed and not result.gold_error else "rse-ans-fail"
    word = "GOLD ERROR" if result.gold_error else ("PASS" if v.passed else "FAIL")
    head = (f'<p><b>{escape(result.route)}</b> · <span class="{ok}">{word}</span>: '
            f"{escape(v.reason)}"
            + (f" · stage: {escape(STAGE_TEXT.get(result.stage or '', result.stage or ''))}"
               if result.stage else "")
            + f"<br>route taken: {escape(o.route_label)} · refused: {'yes' if v.refused else 'no'}"
            + (f" · forbidden numbers in the answer: {escape(', '.join(v.forbidden_leaked))}"
               if v.forbidden_leaked else "")
            + (f" · cited by {escape(v.cited.basis)}" if v.cited else "") + "</p>")
    expected = [f"{page} ({doc_html(place.doc_id, note=place.note)})"
                for c in v.claims for place, page in zip(c.places, c.alternative_pages,
                                                        strict=False)]
    cited = v.cited.locators if v.cited and v.cited.basis == "markers" else o.locators
    pages = (f"<p>pages — expected: {', '.join(dict.fromkeys(expected)) or '—'} · cited: "
             f"{_pages(cited)} · retrieved (ranked): "
             f"{_pages([x['locator'] for x in o.passages])}</p>")
    marks = wanted(v, case)
    answer = f'<div class="rse-ans-answer">{mark(o.answer_plain, marks) or "(empty)"}</div>'
    error = f"<p><b>engine error:</b> {escape(o.error)}</p>" if o.error else ""
    return (f'<div class="rse-ans-route">{head}{error}{pages}{_claims_table(v, case, missing)}'
            f"<p><b>answer</b> (each claim's text, and any forbidden number, marked where "
            f"found)</p>{answer}{_said_html(o, marks)}{_labels_html(result, labelling)}"
            f"{_generator_html(report.diagnosis(result))}"
            f"<p><b>ranked passages</b> (on a claim's page of its own document: green; on "
            f"that page of another document: amber)</p>{_passages_html(o, v, case, marks)}</div>")


_REPEATS: dict[int, tuple[Any, dict[tuple[str, str], list[Any]]]] = {}


def _repeats_of(report: Any) -> dict[tuple[str, str], list[Any]]:
    """The report's results by (question id, route), in repeat order: made once per report
    (an explorer shows every question's view)."""
    held = _REPEATS.get(id(report))
    if held is not None and held[0] is report:
        return held[1]
    index: dict[tuple[str, str], list[Any]] = {}
    for r in sorted(report.run.results, key=lambda r: r.repeat):
        index.setdefault((r.id, r.route), []).append(r)
    _REPEATS.clear()  # a notebook shows one answer run at a time
    _REPEATS[id(report)] = (report, index)
    return index


def repeats_html(report: Any, results: Sequence[Any], case: Any) -> str:
    """Per route of `results`, the question in every repeat side by side (module docstring);
    "" for a run of one repeat."""
    if report.run.repeat <= 1:
        return ""
    rows = []
    for shown in results:
        columns = []
        for r in _repeats_of(report).get((shown.id, shown.route), []):
            v = r.verdict
            ok = ("rse-ans-pass" if v.passed and not r.gold_error and not r.outcome.error
                  else "rse-ans-fail")
            said = (f"<p><b>engine error:</b> {escape(r.outcome.error)}</p>" if r.outcome.error
                    else f'<div class="rse-ans-answer">'
                         f'{mark(r.outcome.answer_plain, wanted(v, case)) or "(empty)"}</div>')
            word = "ERROR" if r.outcome.error else "PASS" if v.passed else "FAIL"
            columns.append(f'<div class="rse-ans-repeat" data-repeat="{r.repeat}">'
                           f"<b>repeat {r.repeat + 1}</b> · <span class=\"{ok}\">"
                           f"{word}</span>: {escape(v.reason)}{said}</div>")
        rows.append(f"<p><b>{escape(shown.route)}</b>, every repeat ({len(columns)}; the "
                    f"gates read the first)</p><div class=\"rse-ans-repeats\">"
                    f"{''.join(columns)}</div>")
    return "".join(rows)


def _labels_html(result: Any, labelling: Any) -> str:
    if labelling is None:
        return ""
    from ragspine_eval.answers.faithfulness import judged_answer
    from ragspine_eval.workbench.views.answer_labels import answer_html

    return answer_html(judged_answer(result, labelling.judge))


def case_html(report: Any, results: Sequence[Any], case: Any, labelling: Any = None) -> str:
    """The case view of one question, its routes side by side (module docstring); with a
    `labelling`, the judge's verdicts to label and the bar that exports them."""
    r0 = results[0]
    gold = report.run.gold_check
    missing = (gold.missing.get(case.case_id) or []) if gold is not None else []
    doubts = [t for _, t in (gold.doubts.get(case.case_id) or [])] if gold is not None else []
    named = ", ".join(doc_html(d.describe(), missing=d.describe() in missing)
                      for d in case.documents) or "none (each claim's document is inferred)"
    warn = "".join(
        f'<p class="rse-ans-gold"><b>{escape(what)}</b>: {escape(text)}</p>'
        for what, text in ([("gold error", r0.gold_error)] if r0.gold_error else [])
        + [("gold doubt", t) for t in doubts])
    head = (f"<h3>{escape(r0.id)}</h3><p><b>{escape(r0.question)}</b></p>"
            f"<p>class {escape(r0.case_class)} · tags {escape(', '.join(r0.tags) or '—')}"
            + (f" · line {case.line}" if case.line else "")
            + f" · documents named: {named}</p>{warn}")
    routes = "".join(route_html(report, r, case, missing, labelling) for r in results)
    bar = ""
    if labelling is not None:
        from ragspine_eval.workbench.views.answer_labels import bar_html

        bar = bar_html(labelling)
    return (f"<style>{CSS}</style>" + head + bar + f'<div class="rse-ans-routes">{routes}</div>'
            + repeats_html(report, results, case))
