"""The retrieval-only harness against the engine's own `ragspine batch --retrieval-only`: on
question files of each format over the realdocs workspace, the same rank and page rank per
question, and the same recall@k, page_recall@k, MRR and page MRR (the engine's CLI run as a
subprocess, on its own copy of the same workspace)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from realdocs_workspace import QUESTIONS, needs_realdocs, realdocs_workspace  # noqa: F401

from ragspine_eval.retrieval_only.run import run_retrieval_eval

ENGINE_CLI = Path(sys.executable).parent / "ragspine"


def engine_batch(workspace: Path, questions: Path, top_k: int, tmp: Path) -> tuple[dict, dict]:
    """The engine's batch on a copy of `workspace`: ({id: (rank, page_rank)}, summary table)."""
    copy = tmp / "engine-ws"
    shutil.copytree(workspace, copy)
    out = tmp / "engine-out"
    done = subprocess.run([str(ENGINE_CLI), "batch", str(questions), "--workspace", str(copy),
                           "--retrieval-only", "--top-k", str(top_k), "--out", str(out)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    ranks = {}
    for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        ranks[record["id"]] = (record["basis"], record["rank"], record["page_rank"])
    table = {}
    for row in re.findall(r"^\| (recall|page_recall) \| (.+) \|$",
                          (out / "summary.md").read_text(encoding="utf-8"), re.M):
        table[row[0]] = [float(v) for v in row[1].split(" | ")]
    return ranks, table


@needs_realdocs
@pytest.mark.parametrize(("name", "top_k"), [("questions.jsonl", 5), ("questions.csv", 3),
                                             ("nl_gold.json", 10)])
def test_rank_and_page_rank_per_question_equal_the_engines_batch(realdocs_workspace, tmp_path,
                                                                  name, top_k):
    ws = realdocs_workspace.workspace.path
    questions = QUESTIONS / name
    ours = run_retrieval_eval(ws, questions, top_k=top_k)
    theirs, table = engine_batch(ws, questions, top_k, tmp_path)
    assert {c.id: (c.basis, c.rank, c.page_rank) for c in ours.cases} == theirs
    assert any(rank is not None for _, rank, _ in theirs.values())  # the file hits something
    assert any(rank is None for basis, rank, _ in theirs.values() if basis != "none")
    metrics = ours.metrics()
    for name_, prefix in (("recall", "recall"), ("page_recall", "page_recall")):
        ks = ours.ks
        mine = [metrics[f"{prefix}@{k}"]["pass_rate"] for k in ks]
        mrr = metrics["mrr" if name_ == "recall" else "page_mrr"]
        assert table[name_] == [*mine, mrr]


@needs_realdocs
def test_the_workspace_given_is_never_written(realdocs_workspace):
    ws = realdocs_workspace.workspace.path
    before = {p.name: p.stat().st_mtime_ns for p in ws.iterdir()}
    run_retrieval_eval(ws, QUESTIONS / "questions.jsonl", top_k=3)
    assert {p.name: p.stat().st_mtime_ns for p in ws.iterdir()} == before
