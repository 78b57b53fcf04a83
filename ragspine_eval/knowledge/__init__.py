"""The knowledge bases the engine retrieves from: the synthetic KB folder and engine workspaces.

kb (the synthetic knowledge base, facts.csv and narratives.jsonl, and the engine's stores built
from it in a scratch folder; an engine workspace given as --kb used as the knowledge base),
workspace (an engine workspace read without a byte changed: its documents, pages, fingerprint,
and the one-line error for a workspace that cannot be read), workspace_files (the workspace's
files read strictly and bounded), workspace_build (`kb build`: a folder of documents ingested
by the engine into a workspace, with what it skipped and why). Nothing here knows a gate, a
metric or a report: what the engine retrieved from these is retrieval/'s.

The names below are imported on first use, so that importing one part does not import all.
"""

from ragspine_eval.lazy import lazy_exports

_WHERE = {
    "EvalKB": "kb",
    "KnowledgeBaseError": "kb",
    "build_eval_kb": "kb",
    "read_workspace": "workspace",
    "WorkspaceError": "workspace",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE)
