"""Retrieval: the knowledge base the engine retrieves from, and what it retrieved.

kb (the synthetic knowledge base, facts.csv and narratives.jsonl, and the engine's stores built
from it); passages (`RankedPassage`: what a retriever returned, in its order, bounded as a
report keeps it); relevance (`RelevanceRule` and `matches`: which passages a case needs);
metrics (rank, hit@k, MRR, nDCG@10, precision@k, recall@k per case, per run and by tag); stages
(where a failing verdict went wrong; RAGChecker's claim split). The home of relevance (which passages a case needs), the retrieval metrics (rank,
hit@k, MRR, nDCG) and the failure stages (routing, retrieval, answer), shared by the QA harness
and retrieval-only runs: one implementation. Nothing here knows a gate or a report.

The names below are imported on first use, so that importing one part does not import all.
"""

from ragspine_eval.lazy import lazy_exports

_WHERE = {
    "EvalKB": "kb",
    "KnowledgeBaseError": "kb",
    "build_eval_kb": "kb",
    "RankedPassage": "passages",
    "passages_from": "passages",
    "RelevanceRule": "relevance",
    "matches": "relevance",
    "rules_of": "relevance",
    "CaseRetrieval": "metrics",
    "RunRetrieval": "metrics",
    "measure_case": "metrics",
    "summarize": "metrics",
    "stage_of": "stages",
    "claim_split": "stages",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE)
