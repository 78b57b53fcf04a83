"""Cross-checks a golden set against a knowledge base, so a typo in a case cannot pass unseen.

Every expected source must be a fact of the KB with the same value and unit, and every
narrative_doc must be one of its documents. Every `expected.relevant` entry must name a document
of the KB (a narrative document or a fact's source document), and its `text`, when given, must
be found in that narrative document (retrieval/relevance.py's normalisation: NFKC, case folded,
white space collapsed), so a relevance rule no passage could ever meet cannot pass unseen.
A mismatch is reported with the case's file line.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ragspine_eval.golden.cases import GoldenCase, iter_numbered
from ragspine_eval.knowledge.kb import load_fact_rows, load_narrative_docs
from ragspine_eval.retrieval.relevance import normalize_text


def check_against_kb(golden_path: str | Path, kb_dir: str | Path,
                     cases: Iterable[tuple[int, GoldenCase]] | None = None) -> list[str]:
    """One line per problem: "FILE:LINE (id ID): what does not match the KB".

    `cases` are the (line, case) pairs of golden_path when already read (the valid ones of
    `check_golden_set`); by default the file is read and its first invalid line raises.
    """
    facts = {(f.doc, f.locator): f for f in load_fact_rows(kb_dir)}
    texts = {d.doc_id: d.text for d in load_narrative_docs(kb_dir)}
    docs = set(texts)
    fact_docs = {f.doc for f in facts.values()}
    normalized: dict[str, str] = {}
    problems = []
    for line, case in iter_numbered(golden_path) if cases is None else cases:
        where = f"{golden_path}:{line} (id {case.id!r})"
        source = case.expected_source
        if source is not None:
            fact = facts.get((source["doc"], source["locator"]))
            if fact is None:
                problems.append(f"{where}: source {source['doc']} · {source['locator']} "
                                f"is not a fact of the knowledge base")
            elif (fact.value, fact.unit) != (case.expected["value"], case.expected["unit"]):
                problems.append(f"{where}: expects {case.expected['value']} "
                                f"{case.expected['unit']} but the KB fact at that source is "
                                f"{fact.value} {fact.unit}")
        doc = case.narrative_doc
        if doc is not None and doc not in docs:
            problems.append(f"{where}: narrative_doc {doc!r} is not a document of the knowledge base")
        for i, entry in enumerate(case.expected.get("relevant") or ()):
            name, want = f"expected.relevant[{i}]", entry.get("doc")
            if want not in docs and want not in fact_docs:
                problems.append(f"{where}: {name}.doc {want!r} is not a document of the "
                                f"knowledge base")
            elif entry.get("text") is not None:
                if want not in texts:
                    problems.append(f"{where}: {name}.text cannot be found: {want!r} is a fact "
                                    f"source, not a narrative document with text")
                    continue
                if want not in normalized:
                    normalized[want] = normalize_text(texts[want])
                if normalize_text(entry["text"]) not in normalized[want]:
                    problems.append(f"{where}: {name}.text {entry['text'][:80]!r} is not found "
                                    f"in {want}")
    return problems
