"""Where a run over a workspace keeps its baseline, and the name of its keys: the committed
sets' own inside the project, beside the golden file (under the gold's stem and the workspace's
fingerprint) outside it."""

from __future__ import annotations

from realdocs_workspace import needs_realdocs, realdocs_workspace  # noqa: F401

from ragspine_eval import paths
from ragspine_eval.gated.own_workspace import default_baseline, run_name


def test_inside_the_project_the_committed_baseline_and_the_folder_name_stay():
    inside = paths.OUT_DIR / "realdocs"
    assert default_baseline(inside, paths.GOLDEN_DIR / "g.json", "answers") == \
        paths.ANSWERS_BASELINE
    assert default_baseline(inside, "q.jsonl", "retrieval") == paths.RETRIEVAL_BASELINE
    assert run_name(inside, "anything.json") == "realdocs"  # `make run`'s keys as before
    assert run_name(inside, "anything.json", "mine") == "mine"


@needs_realdocs
def test_outside_it_beside_the_gold_under_its_stem_and_the_workspaces_fingerprint(
        realdocs_workspace, tmp_path):
    ws = realdocs_workspace.workspace
    gold = tmp_path / "team" / "q3_answers.json"
    assert default_baseline(ws.path, gold, "answers") == \
        tmp_path / "team" / "q3_answers.answers_baseline.json"
    assert run_name(ws.path, gold) == f"q3_answers@{ws.fingerprint[:8]}"
    assert run_name(ws.path, gold, "filings") == f"filings@{ws.fingerprint[:8]}"
    assert not paths.in_project(ws.path) and paths.in_project(paths.GOLDEN_DIR)
