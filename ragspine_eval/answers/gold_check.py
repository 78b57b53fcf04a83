"""An nl-answers-gold file against the workspace it is asked of, before any question: where each
claim sits (which document of the workspace), which cases the workspace cannot answer at all
(gold errors), and which claims the workspace's text does not bear out (gold doubts).

Each anchor (one alternative of a required claim) is placed (`AnchorPlace`):
- the document it names (its own, else its case's: golden/nl_documents.py) is the workspace's
  document whose file hash (the engine's sha256 of the file) is that sha256, else the one whose
  doc id, stem or source file name is that file name (case-folded): `how` "sha256" or "file";
  when none is, the case names a document the workspace lacks: `how` "absent";
- an anchor that names no document is placed on the one document whose chunks on its page
  hold its text (`how` "inferred"); when none or several do, its document is unknown (`how`
  "unknown", `note` says which held it), never taken as any document.
Holding a text: an anchor's quote, text or value (`value%` for the unit `%`) in a chunk after
the engine's normalisation, or its quote or text by the judge's fragment rule (answers/claims.py),
so a cross-language quote is found where the judge would find it.

Gold errors (`errors`, per case; `ragspine-eval answers` stops on them, exit 2, unless
`--allow-gold-errors`): a document the case names that the workspace lacks; a claim's page
past the pages `documents[]` gives for its document, or past the last page of its document in
the workspace (of every document, for a claim that names none); a claim on a document whose
chunks carry no page (a deck: slides), which no answer can cite by page.
Gold doubts (`doubts`, per anchor): an anchor whose text is on no page of its document, or not
on its own page (it is on others), or on a page of its document that holds no chunk. A
document found by its file name whose sha256 is not the one the gold names (another version of
the file, perhaps) is noted (`versions`), its claims placed on it all the same.

Invariants: read-only; skipped cases (adversarial, offline_only) and cases without claims are
placed only by their documents; every line names the file, the case's line and id; the order is
the file's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragspine.common.answer_text import contains_normalized, normalize_answer

from ragspine_eval.answers import claims as hits
from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.golden.cases import error_line
from ragspine_eval.golden.nl_answers import Anchor, AnswerCase
from ragspine_eval.golden.nl_documents import DocRef
from ragspine_eval.knowledge.workspace import Workspace, WorkspaceDoc, iter_chunks

MAX_LISTED = 5


class GoldError(RagspineEvalError, ValueError):
    """Cases the workspace cannot answer at all (module docstring): exit 2 before any question."""


@dataclass(frozen=True)
class AnchorPlace:
    """Where one anchor's claim sits in the workspace (module docstring)."""

    doc_id: str | None
    how: str  # sha256, file, inferred, unknown, absent
    named: DocRef | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"doc_id": self.doc_id, "how": self.how}
        if self.named is not None:
            out["named"] = self.named.to_dict()
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class GoldCheck:
    """The placed claims, the gold errors and doubts of a gold file on one workspace."""

    places: dict[str, tuple[tuple[AnchorPlace, ...], ...]] = field(default_factory=dict)
    errors: dict[str, list[str]] = field(default_factory=dict)
    doubts: dict[str, list[tuple[int, str]]] = field(default_factory=dict)  # (claim n, text)
    lines: dict[str, int | None] = field(default_factory=dict)
    missing: dict[str, list[str]] = field(default_factory=dict)  # the documents it lacks
    versions: list[str] = field(default_factory=list)  # found by name, another sha256
    path: str = ""

    def problem_lines(self) -> list[str]:
        """One `file:line (id 'x'): reason` line per gold error, in file order."""
        return [error_line(self.path, self.lines.get(c), c, e)
                for c, errs in self.errors.items() for e in errs]

    def doubt_lines(self) -> list[str]:
        return [error_line(self.path, self.lines.get(c), c, f"claim {n}: {text}")
                for c, ds in self.doubts.items() for n, text in ds]

    def raise_errors(self, workspace: Path) -> None:
        """GoldError naming the first problem, how many more, and the two ways on."""
        problems = self.problem_lines()
        if not problems:
            return
        cases = list(self.errors)
        more = (f" (and {len(problems) - 1} more: {len(cases)} case(s), "
                f"{', '.join(repr(c) for c in cases[:MAX_LISTED])}"
                f"{', ...' if len(cases) > MAX_LISTED else ''})" if len(problems) > 1 else "")
        raise GoldError(f"{problems[0]}{more}; the gold does not fit the workspace {workspace}, "
                        f"so nothing was asked: `ragspine-eval golden {self.path} --kb "
                        f"{workspace}` lists every problem; --allow-gold-errors runs these "
                        f"cases as gold errors, outside every rate")

    def to_dict(self) -> dict[str, Any]:
        return {"errors": {c: list(e) for c, e in self.errors.items()},
                "doubts": {c: [{"claim": n, "doubt": t} for n, t in d]
                           for c, d in self.doubts.items()},
                "missing_documents": {c: list(m) for c, m in self.missing.items()},
                "versions": list(self.versions),
                "places": {c: [[p.to_dict() for p in group] for group in groups]
                           for c, groups in self.places.items()}}


class _Texts:
    """The workspace's chunks, normalised once, by document and page."""

    def __init__(self, ws: Workspace) -> None:
        self.versions: dict[str, str] = {}  # a document found by name, another sha256
        self.by_doc: dict[str, list[tuple[int | None, str]]] = {}
        for chunk in iter_chunks(ws.path):
            self.by_doc.setdefault(chunk.doc_id, []).append(
                (chunk.page, normalize_answer(chunk.text)))

    def pages_holding(self, anchor: Anchor, doc_id: str) -> list[int | None]:
        wanted = hits.needles(anchor)
        quotes = [t for t in (anchor.quote, anchor.text) if t]
        found = [page for page, text in self.by_doc.get(doc_id, ())
                 if any(contains_normalized(text, w) for w in wanted)
                 or any(hits.fragment_hit(text, q) for q in quotes)]
        return sorted(set(found), key=lambda p: (p is None, p or 0))


def find_document(ws: Workspace, ref: DocRef) -> tuple[WorkspaceDoc | None, str]:
    """The workspace's document `ref` names and how it was found (module docstring)."""
    if ref.sha256:
        for doc in ws.docs:
            if doc.file_hash.lower() == ref.sha256:
                return doc, "sha256"
    if ref.file:
        wanted = {ref.file.casefold(), Path(ref.file).name.casefold()}
        for doc in ws.docs:
            names = {doc.doc_id.casefold(), doc.stem.casefold(),
                     Path(doc.source_path).name.casefold()}
            if wanted & names:
                return doc, "file"
    return None, "absent"


def check_gold(path: str | Path, cases: Iterable[AnswerCase], ws: Workspace) -> GoldCheck:
    """Every case of the gold file at `path` against `ws` (module docstring)."""
    out = GoldCheck(path=str(path))
    texts = _Texts(ws)
    for case in cases:
        if case.skip_reason:
            continue
        out.lines[case.case_id] = case.line
        errors: list[str] = []
        for ref in case.documents:
            if find_document(ws, ref)[0] is None:
                out.missing.setdefault(case.case_id, []).append(ref.describe())
                errors.append(f"the document {ref.describe()} is not in the workspace (its "
                              f"documents: {_names(ws)})")
        groups = []
        for n, group in enumerate(case.claims, start=1):
            placed = []
            for anchor in group:
                place, problem, doubt = _place(anchor, ws, texts)
                placed.append(place)
                if problem and place.how != "absent":
                    errors.append(f"claim {n} {anchor.describe()!r}: {problem}")
                if doubt:
                    out.doubts.setdefault(case.case_id, []).append(
                        (n, f"{anchor.describe()!r}: {doubt}"))
            groups.append(tuple(placed))
        out.places[case.case_id] = tuple(groups)
        if errors:
            out.errors[case.case_id] = list(dict.fromkeys(errors))
    out.versions = [f"{path}: {text}" for text in texts.versions.values()]
    return out


def _names(ws: Workspace) -> str:
    shown = [d.doc_id for d in ws.docs[:MAX_LISTED]]
    return ", ".join(shown) + (f", ... ({len(ws.docs)} in all)" if len(ws.docs) > MAX_LISTED
                               else "") if shown else "none"


def _place(anchor: Anchor, ws: Workspace, texts: _Texts
           ) -> tuple[AnchorPlace, str | None, str | None]:
    """(the anchor's place, a gold error or None, a gold doubt or None)."""
    ref = anchor.document
    if ref is None:
        return _inferred(anchor, ws, texts)
    doc, how = find_document(ws, ref)
    if doc is None:
        return AnchorPlace(None, "absent", ref), "document absent", None
    place = AnchorPlace(doc.doc_id, how, ref)
    if how == "file" and ref.sha256 and doc.file_hash and doc.file_hash.lower() != ref.sha256:
        place = AnchorPlace(doc.doc_id, how, ref, note="found by its file name; its sha256 "
                                                       "differs from the gold's")
        texts.versions.setdefault(doc.doc_id, (
            f"the workspace's {doc.doc_id} is not the file the gold names (sha256 "
            f"{doc.file_hash[:12]}…, the gold's {ref.sha256[:12]}…): another version?"))
    if ref.pages is not None and anchor.page > ref.pages:
        return place, (f"page {anchor.page} is past the {ref.pages} page(s) `documents` gives "
                       f"for {ref.describe()}"), None
    if not doc.pages:
        unit = f"slides {doc.slides[0]}-{doc.slides[-1]}" if doc.slides else "no page"
        return place, (f"{doc.doc_id} has no page in its locators ({unit}): no answer can "
                       f"cite page {anchor.page} of it (the judge reads `@page=`)"), None
    if anchor.page > max(doc.pages):
        return place, (f"page {anchor.page} is past the last page of {doc.doc_id} (its pages "
                       f"{min(doc.pages)}-{max(doc.pages)})"), None
    return place, None, _doubt(anchor, doc.doc_id, texts, doc.pages)


def _doubt(anchor: Anchor, doc_id: str, texts: _Texts, pages: Sequence[int]) -> str | None:
    found = texts.pages_holding(anchor, doc_id)
    if anchor.page in found:
        return None
    if anchor.page not in pages:
        return f"page {anchor.page} of {doc_id} holds no chunk of the workspace"
    if found:
        shown = ", ".join("no page" if p is None else str(p) for p in found)
        return f"its text is not on page {anchor.page} of {doc_id} (it is on page {shown})"
    return f"its text is on no page of {doc_id}"


def _inferred(anchor: Anchor, ws: Workspace, texts: _Texts
              ) -> tuple[AnchorPlace, str | None, str | None]:
    every = sorted({p for d in ws.docs for p in d.pages})
    if not every or anchor.page > every[-1]:
        last = f"the last page of any document is {every[-1]}" if every else \
            "no document of the workspace has pages in its locators"
        return AnchorPlace(None, "unknown", note=(
            f"the case names no document, and page {anchor.page} is past every document's")), (
            f"page {anchor.page} is past every document's pages ({last})"), None
    holders = [d.doc_id for d in ws.docs if anchor.page in texts.pages_holding(anchor, d.doc_id)]
    if len(holders) == 1:
        return AnchorPlace(holders[0], "inferred", note=(
            f"the case names no document; only {holders[0]} holds its text on page "
            f"{anchor.page}")), None, None
    if holders:
        return AnchorPlace(None, "unknown", note=(
            f"the case names no document, and {len(holders)} hold its text on page "
            f"{anchor.page}: {', '.join(holders[:MAX_LISTED])}")), None, None
    elsewhere = [f"{d.doc_id} page {p}" for d in ws.docs
                 for p in texts.pages_holding(anchor, d.doc_id)][:MAX_LISTED]
    return AnchorPlace(None, "unknown", note="the case names no document, and no document "
                                             f"holds its text on page {anchor.page}"), None, (
        f"its text is on page {anchor.page} of no document"
        + (f" (it is on {', '.join(elsewhere)})" if elsewhere else " (nor on any page)"))
