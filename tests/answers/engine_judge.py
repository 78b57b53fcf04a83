"""The engine's own nl-gold judge, run as a subprocess by the agreement tests (never imported by
the package): `python engine_judge.py run WORKSPACE GOLD OUT.json` runs the engine judge's
`run_route` on both routes over a scratch copy of WORKSPACE, opened as the engine's facade opens
a workspace (MockProvider, default preset), and writes one record per question, language and
route; `python engine_judge.py judge` reads [{"case": <raw gold case>, "answer": ..., "locators":
[...]}, ...] on stdin and writes the engine's judgement of each; `python engine_judge.py refusal`
reads a list of texts and writes the engine's `is_refusal` of each."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from ragspine.eval import nl_gold_ragspine as ng

ROUTE_NAMES = {ng.ROUTE_ASK: "ask", ng.ROUTE_FORCED_NARRATIVE: "narrative"}


def _judgement(j: ng.Judgement) -> dict:
    return {"passed": j.passed, "reason": j.reason, "refusal": j.refusal,
            "claims": [asdict(c) for c in j.claims], "forbidden": list(j.forbidden_hits)}


def run(workspace: str, gold: str, out: str) -> None:
    from ragspine.agent.llm_provider import MockProvider
    from ragspine.session import RAGSpine
    from ragspine.storage.fact_store import SqliteFactStore

    cases = ng.load_nl_gold(gold)
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / Path(workspace).name
        shutil.copytree(workspace, copy)
        rag = RAGSpine.local(copy, provider=MockProvider())
        store = SqliteFactStore(rag.db_path)
        store.init_schema()
        with rag.open_retriever() as retriever:
            for route in ng.ROUTES:
                for r in ng.run_route(cases, route, store=store, retriever=retriever,
                                      provider=rag.provider, reference_date=rag.reference_date):
                    records.append({"route": ROUTE_NAMES[route], "case_id": r.case_id,
                                    "language": r.language, "case_class": r.case_class,
                                    "route_label": r.route_label, "answer": r.answer_plain,
                                    "retrieved_pages": r.retrieved_pages,
                                    **_judgement(r.judgement)})
        store.close()
    skipped = [{"case_id": c.case_id, "reason": c.skip_reason} for c in cases if c.skip_reason]
    Path(out).write_text(json.dumps({"runs": records, "skipped": skipped}, ensure_ascii=False),
                         encoding="utf-8")


def judge() -> None:
    items = json.load(sys.stdin)
    out = []
    for item in items:
        case = ng._parse_case(item["case"], 0)
        out.append(_judgement(ng.judge_case(case, answer=item["answer"],
                                            locators=item["locators"])))
    json.dump(out, sys.stdout, ensure_ascii=False)


def refusal() -> None:
    json.dump([ng.is_refusal(t) for t in json.load(sys.stdin)], sys.stdout)


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "run":
        run(*sys.argv[2:5])
    elif command == "judge":
        judge()
    else:
        refusal()
