"""A drafted gold file: drafted cases written as nl-answers-gold v2, every case marked for review.

The file is an nl-answers-gold v2 file the engine's judge and `ragspine-eval answers` read as
they are, with what a draft adds kept in fields that format already has:

- `documents`: every document a claim names, `{"file", "sha256", "pages"}` (the file name the
  workspace knows it by, the sha256 of the file the engine ingested, its pages);
- each anchor names its document by `document_sha256` beside its `page_index`, and a case whose
  anchors all sit in one document names it as the case's `document_sha256` too;
- the `changelog` (v2's record of every change, with its evidence): one entry per anchor and per
  forbidden number, `change` "drafted, to review", `new` what was drafted and `evidence` where
  it was found, the document, page and the passage text (`agstat.pdf page 1: '2 Bhadrak ...'`);
  a case whose last changelog entry is a drafted one is unreviewed (`unreviewed`), which is how
  every case of a draft is marked for review: no field is added that the format does not know;
- `rationale`: why the case exists (the question file's line, or the document's fact).

Invariants: the same cases give the same bytes (`dumps`: keys in a fixed order, no time, no
path of this machine); `write_draft` never replaces an existing file unless `force`, and writes
whole or not at all (files/atomic.py); `fingerprint` is the sha256 of the bytes written, which a
review's decisions file names so that a decision is never applied to a draft that changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.files.atomic import write_atomic
from ragspine_eval.files.output_paths import check_replaceable

SCHEMA = "nl-answers-gold-v2"
DRAFTED = "drafted, to review"
REVIEWED = "reviewed"


class DraftError(RagspineEvalError, ValueError):
    """A draft that cannot be written or read: which file, and why."""


@dataclass(frozen=True)
class Located:
    """One alternative of a claim: a figure or a quote, on one page of one document."""

    kind: str  # "number" or "quote", the anchor kinds the project's gold files use
    doc: str
    sha256: str
    page: int  # from 1
    passage: str
    value: str | None = None
    unit: str | None = None
    quote: str | None = None

    @property
    def shown(self) -> str:
        return self.quote if self.quote is not None else f"{self.value}{self.unit or ''}"

    def anchor(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "page_index": self.page - 1}
        if self.quote is not None:
            out["quote"] = self.quote
        else:
            out["value"] = self.value
            if self.unit:
                out["unit"] = self.unit
        out["document_sha256"] = self.sha256
        return out

    def evidence(self) -> str:
        return f"{self.doc} page {self.page}: '{self.passage}'"


@dataclass(frozen=True)
class DraftCase:
    """A drafted case: its questions, its claims (each a tuple of alternatives) or, for an
    abstention, the figures a refusal must not carry (each with where it was seen)."""

    case_id: str
    case_class: str  # positive | abstain
    questions: dict[str, str]
    claims: tuple[tuple[Located, ...], ...] = ()
    forbidden: tuple[Located, ...] = ()
    tags: dict[str, str] = field(default_factory=dict)
    rationale: str = ""

    @property
    def located(self) -> list[Located]:
        return [a for claim in self.claims for a in claim] + list(self.forbidden)

    def to_json(self) -> dict[str, Any]:
        docs = {a.sha256 for claim in self.claims for a in claim}
        out: dict[str, Any] = {"case_id": self.case_id, "case_class": self.case_class,
                               "question": {k: self.questions[k] for k in ("en", "zh")
                                            if self.questions.get(k)}}
        if len(docs) == 1:
            out["document_sha256"] = next(iter(docs))
        out["tags"] = dict(self.tags)
        if self.case_class == "abstain":
            expected: dict[str, Any] = {"status": "abstained",
                                        "forbidden_numbers": [f.shown for f in self.forbidden]}
        else:
            expected = {"status": "answered", "required_claims": [
                claim[0].anchor() if len(claim) == 1 else {"any_of": [a.anchor() for a in claim]}
                for claim in self.claims]}
        out["expected"] = expected
        out["rationale"] = self.rationale
        return out

    def changelog(self) -> list[dict[str, Any]]:
        entries = []
        for n, claim in enumerate(self.claims, start=1):
            for m, alt in enumerate(claim, start=1):
                which = f"claim {n}" + (f" (alternative {m} of {len(claim)})" if len(claim) > 1
                                        else "")
                entries.append(_entry(self.case_id, f"{which}: {alt.shown} on {alt.doc} page "
                                      f"{alt.page}", alt.evidence()))
        for alt in self.forbidden:
            entries.append(_entry(self.case_id, f"forbidden number {alt.shown} (seen on "
                                  f"{alt.doc} page {alt.page})", alt.evidence()))
        if not entries:
            entries.append(_entry(self.case_id, self.case_class, self.rationale))
        return entries


def _entry(case_id: str, new: str, evidence: str) -> dict[str, Any]:
    return {"case_id": case_id, "change": DRAFTED, "old": None, "new": new,
            "evidence": evidence}


def draft_document(cases: Sequence[DraftCase], pages_of: dict[str, int],
                   changelog: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    """The gold file of `cases`: documents (`pages_of`: file -> its pages), changelog, cases."""
    named: dict[str, str] = {}
    for case in cases:
        for alt in case.located:
            named.setdefault(alt.sha256, alt.doc)
    documents = [{"file": doc, "sha256": sha, "pages": pages_of.get(doc, 0)}
                 for sha, doc in sorted(named.items(), key=lambda kv: (kv[1], kv[0]))]
    log = list(changelog) + [e for case in cases for e in case.changelog()]
    return {"schema_version": SCHEMA, "documents": documents, "changelog": log,
            "cases": [case.to_json() for case in cases]}


def dumps(document: dict[str, Any]) -> str:
    """The file's text: one changelog entry, one document and one case a line, so a review's
    diff reads case by case; the same document gives the same text."""
    def line(item: Any) -> str:
        return json.dumps(item, ensure_ascii=False, separators=(", ", ": "))

    parts = ["{", f'  "schema_version": {line(document["schema_version"])},']
    for key in (k for k in document if k not in ("schema_version", "cases")):
        value = document[key]
        if isinstance(value, list):
            body = ",\n".join(f"    {line(v)}" for v in value)
            parts.append(f'  "{key}": [\n{body}\n  ],' if value else f'  "{key}": [],')
        else:
            parts.append(f'  "{key}": {line(value)},')
    body = ",\n".join(f"    {line(c)}" for c in document["cases"])
    parts.append(f'  "cases": [\n{body}\n  ]' if document["cases"] else '  "cases": []')
    return "\n".join(parts) + "\n}\n"


def fingerprint(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def check_out(path: str | Path, *, force: bool = False, inputs: Iterable[str | Path] = ()
              ) -> Path:
    """The output path, refused before anything runs: an existing file without `force`, a
    folder, or one of the inputs (an output never replaces an input, `force` or not)."""
    return check_replaceable(
        path, force=force, inputs=inputs, error=DraftError,
        is_input="is an input of this command; write the output elsewhere",
        exists="a draft or a review never replaces a gold file: give another --out, or --force "
               "to replace it")


def write_draft(path: str | Path, document: dict[str, Any], *, force: bool = False) -> str:
    """Write the file whole (atomic); refuse to replace an existing one unless `force`. Returns
    the fingerprint of what was written."""
    path = check_out(path, force=force)
    text = dumps(document)
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise DraftError(f"{path}: cannot be written ({exc.strerror or exc})") from None
    return fingerprint(text)


def unreviewed(document: dict[str, Any]) -> list[str]:
    """The cases whose last changelog entry is a drafted one (module docstring)."""
    last: dict[str, str] = {}
    for entry in document.get("changelog") or ():
        if isinstance(entry, dict) and isinstance(entry.get("case_id"), str):
            last[entry["case_id"]] = str(entry.get("change", ""))
    return [c["case_id"] for c in document.get("cases") or ()
            if isinstance(c, dict) and last.get(c.get("case_id")) == DRAFTED]
