"""`ragspine-eval kb`: build an engine workspace from documents, or show what one holds.

    ragspine-eval kb build DOCS --out W     the engine ingests DOCS, pages and slides kept
    ragspine-eval kb show W [--json]        documents, chunks, facts, chunking, fingerprint

`build` prints, per document, what each channel of the engine ingested and what it skipped, with
the engine's reason per table, and the review queue (knowledge/workspace_build.py). Exit codes:
0 built or shown, 1 the engine failed on some document (the workspace is still written, the
failure named), 2 bad input (no documents, an --out that exists, a folder that is no workspace).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragspine_eval.cli.common import EXIT_OK, EXIT_REGRESSION

HELP = "build an engine workspace from documents (pages kept in locators), or show one"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="kb_command", required=True, metavar="ACTION")
    build = sub.add_parser("build", help="ingest DOCS with the engine into a new workspace, "
                                         "keeping pages and slides in the chunk locators")
    build.add_argument("docs", type=Path, metavar="DOCS", help="a folder (read recursively) or "
                                                               "one document")
    build.add_argument("--out", type=Path, required=True, metavar="W",
                       help="the workspace folder to create (must not exist, or be empty)")
    show = sub.add_parser("show", help="list a workspace's documents, chunks and facts")
    show.add_argument("workspace", type=Path, metavar="W")
    show.add_argument("--json", action="store_true", help="print it as JSON")


def run(args: argparse.Namespace) -> int:
    if args.kb_command == "build":
        from ragspine_eval.knowledge.workspace_build import build_workspace

        built = build_workspace(args.docs, args.out)
        for line in built.lines():
            print(line)
        failed = [d.name for d in built.documents if d.structured == "failed"
                  or d.narrative == "failed"]
        if failed:
            print(f"FAIL: the engine failed on {len(failed)} document(s): {', '.join(failed)}")
            return EXIT_REGRESSION
        return EXIT_OK
    from ragspine_eval.knowledge.workspace import chunking_of, fingerprint_key, read_workspace

    from ragspine_eval.outputs.escape import terminal

    ws = read_workspace(args.workspace)
    if args.json:
        print(json.dumps({
            "workspace": str(ws.path), "fingerprint": ws.fingerprint, "chunks": ws.n_chunks,
            "facts": ws.n_facts, "facts_by_doc": ws.facts_by_doc, "chunking": ws.chunking,
            "documents": [{"doc": d.doc_id, "chunks": d.n_chunks, "pages": list(d.pages),
                           "slides": list(d.slides), "fingerprint":
                           ws.files.get(fingerprint_key(d.doc_id))}
                          for d in ws.docs],
            "review": list(ws.review)}, ensure_ascii=False, indent=1))
        return EXIT_OK
    print(f"workspace {ws.path} [{ws.fingerprint}]: {len(ws.docs)} documents, {ws.n_chunks} "
          f"chunks, {ws.n_facts} facts, {len(ws.review)} review items")
    print(f"chunking: {chunking_of(ws)}")
    # document ids come from file names: shown escaped (a name may hold ESC), width from that
    names = {d.doc_id: terminal(d.doc_id) for d in ws.docs}
    names.update({doc: terminal(doc) for doc in ws.facts_by_doc if ws.doc(doc) is None})
    width = min(max((len(n) for n in names.values()), default=8), 60)
    print(f"  {'document':<{width}}  chunks  facts  pages or slides")
    for d in ws.docs:
        units = (f"pages {_span(d.pages)}" if d.pages else
                 f"slides {_span(d.slides)}" if d.slides else "-")
        print(f"  {names[d.doc_id]:<{width}}  {d.n_chunks:>6}  "
              f"{ws.facts_by_doc.get(d.doc_id, 0):>5}  {units}")
    for doc, n in sorted(ws.facts_by_doc.items()):
        if ws.doc(doc) is None:
            print(f"  {names[doc]:<{width}}  {0:>6}  {n:>5}  (facts only)")
    return EXIT_OK


def _span(values: tuple[int, ...]) -> str:
    """`3-9` for sorted distinct values without a gap (checked by arithmetic: nothing as long as
    the span is built), else the values, the first 20 shown."""
    if len(values) > 1 and values[-1] - values[0] == len(values) - 1:
        return f"{values[0]}-{values[-1]}"
    shown = ", ".join(map(str, values[:20]))
    return shown + (f", ... ({len(values)} in all)" if len(values) > 20 else "")
