"""What a gold file covers: documents, pages, claim kinds, languages and stages.

`coverage_of(gold, pages)` reads an nl-answers-gold file (any the gold reader reads) against the
workspace's pages and counts, per document of the workspace, its pages and the pages some case
reaches (an anchor's page in that document: the anchor's `document_sha256`, else its case's,
else `documents[]` when the file names one document; an anchor that names no document is
counted apart, `unplaced`), and over the file: the claims by kind, the questions by language,
the cases by stage (their `stage` tag, `untagged` without) and by class.

Invariants: pure of the file's JSON and the pages; every page of the workspace appears once in
`pages`, covered or not, so the pages no case reaches are listed, never guessed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragspine_eval.drafting.pages import Pages


@dataclass(frozen=True)
class GoldCoverage:
    """The counts (module docstring); `pages` one row per page of the workspace."""

    documents: list[dict[str, Any]]
    pages: list[dict[str, Any]]
    kinds: dict[str, int]
    languages: dict[str, int]
    stages: dict[str, int]
    classes: dict[str, int]
    unplaced: int = 0
    cases: int = 0
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The console's table."""
        out = [f"{'document':<34} {'pages':>5} {'reached':>7}  not reached"]
        for d in self.documents:
            missing = ", ".join(str(p) for p in d["not_reached"][:12])
            more = f" (+{len(d['not_reached']) - 12})" if len(d["not_reached"]) > 12 else ""
            out.append(f"{d['document'][:34]:<34} {d['pages']:>5} {d['reached']:>7}  "
                       f"{missing or '-'}{more}")
        for title, counts in (("claims by kind", self.kinds), ("questions by language",
                              self.languages), ("cases by stage", self.stages),
                              ("cases by class", self.classes)):
            out.append(f"{title}: " + (", ".join(f"{k} {v}" for k, v in counts.items()) or "-"))
        if self.unplaced:
            out.append(f"{self.unplaced} claims name no document (pages counted in none)")
        return out + self.notes


def _anchors(case: dict[str, Any]) -> list[dict[str, Any]]:
    specs = (case.get("expected") or {}).get("required_claims") or []
    return [a for s in specs for a in (s["any_of"] if isinstance(s, dict) and "any_of" in s
                                       else [s]) if isinstance(a, dict)]


def _stage(case: dict[str, Any]) -> str:
    tags = case.get("tags")
    if isinstance(tags, dict):
        return str(tags.get("stage", "untagged"))
    for tag in tags or ():
        if isinstance(tag, str) and tag.startswith("stage="):
            return tag.split("=", 1)[1]
    return "untagged"


def coverage_of(gold: str | Path, pages: Pages) -> GoldCoverage:
    """The coverage of the gold file at `gold` over `pages` (module docstring)."""
    from ragspine_eval.drafting.review import read_draft

    _, payload = read_draft(gold)
    docs = payload.get("documents") or []
    only = docs[0].get("sha256") if len(docs) == 1 else None
    reached: set[tuple[str, int]] = set()
    kinds, langs, stages, classes = Counter(), Counter(), Counter(), Counter()
    unplaced = 0
    for case in payload["cases"]:
        classes[case.get("case_class", "?")] += 1
        stages[_stage(case)] += 1
        for lang in ("en", "zh"):
            if str((case.get("question") or {}).get(lang) or "").strip():
                langs[lang] += 1
        for anchor in _anchors(case):
            kinds[str(anchor.get("kind"))] += 1
            sha = anchor.get("document_sha256") or case.get("document_sha256") or only
            doc = pages.by_sha(sha) if isinstance(sha, str) else None
            if doc is None:
                unplaced += 1
            else:
                reached.add((doc, int(anchor["page_index"]) + 1))
    rows = [{"document": p.doc, "page": p.page, "reached": p.key in reached} for p in pages.pages]
    documents = []
    for doc in pages.documents:
        mine = [r for r in rows if r["document"] == doc]
        documents.append({"document": doc, "pages": len(mine),
                          "reached": sum(r["reached"] for r in mine),
                          "not_reached": [r["page"] for r in mine if not r["reached"]]})
    notes = [f"{doc}: slides only, no page a claim can name" for doc in pages.slide_only]
    return GoldCoverage(documents, rows, dict(kinds), dict(langs), dict(stages), dict(classes),
                        unplaced, len(payload["cases"]), notes)
