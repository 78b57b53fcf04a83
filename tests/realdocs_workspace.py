"""The realdocs workspace shared by the tests that need one: ../shared/realdocs ingested once per
session by `kb build` into a temporary folder (skipped where that folder is absent; never
written to)."""

from __future__ import annotations

from pathlib import Path

import pytest

import os


def _realdocs() -> Path:
    """$RAGSPINE_EVAL_REALDOCS, else ../shared/realdocs beside the checkout (a worktree under
    /work/wt/<name> finds /work/shared one folder further up)."""
    if os.environ.get("RAGSPINE_EVAL_REALDOCS"):
        return Path(os.environ["RAGSPINE_EVAL_REALDOCS"])
    root = Path(__file__).resolve().parents[1]
    for up in (root.parent, root.parent.parent):
        if (up / "shared" / "realdocs").is_dir():
            return up / "shared" / "realdocs"
    return root.parent / "shared" / "realdocs"


REALDOCS = _realdocs()
QUESTIONS = Path(__file__).resolve().parent / "fixtures" / "realdocs_questions"
needs_realdocs = pytest.mark.skipif(not REALDOCS.is_dir(), reason="../shared/realdocs absent")


@pytest.fixture(scope="session")
def realdocs_workspace(tmp_path_factory):
    if not REALDOCS.is_dir():
        pytest.skip("../shared/realdocs absent")
    from ragspine_eval.knowledge.workspace_build import build_workspace

    out = tmp_path_factory.mktemp("realdocs-ws") / "realdocs"
    return build_workspace(REALDOCS, out)
