"""Inputs checked once: in one gated run from the command line, the engine's spec is parsed, the
judge resolved, the golden set, question file or gold file read, and the workspace read once
each; nothing below the CLI parses, reloads or re-resolves what was checked. (The baseline file
is read once before the run and again by the ratchet under its lock, per key gated: that second
read is what makes a concurrent update safe.)

Counted by a profile hook on the functions' code objects, so a call through any import path,
in any thread, counts."""

from __future__ import annotations

import importlib
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from realdocs_workspace import QUESTIONS, realdocs_workspace  # noqa: F401

from ragspine_eval import paths
from ragspine_eval.cli.app import main

COUNTED = {
    "parse_engine": ("ragspine_eval.engines.factory", "parse_engine"),
    "judge": ("ragspine_eval.judges.registry", "get"),
    "golden set": ("ragspine_eval.golden.cases", "load_golden_set"),
    "golden set (remembered)": ("ragspine_eval.execution.golden_memo",
                                "load_golden_set_cached"),
    "question file": ("ragspine_eval.golden.question_files", "load_question_file"),
    "gold file": ("ragspine_eval.golden.nl_answers", "answer_cases_of"),
    "workspace": ("ragspine_eval.knowledge.workspace", "read_workspace"),
    "baseline file": ("ragspine_eval.ratchet.baseline_file", "load_baselines"),
}


@contextmanager
def counted() -> Iterator[Counter]:
    codes = {getattr(importlib.import_module(module), name).__code__: label
             for label, (module, name) in COUNTED.items()}
    calls: Counter = Counter()

    def profile(frame, event, arg):  # noqa: ANN001, ANN202
        if event == "call" and frame.f_code in codes:
            calls[codes[frame.f_code]] += 1

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        yield calls
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["tool", "agent"])
def test_a_qa_run_parses_resolves_and_reads_each_input_once(mode, tmp_path):
    with counted() as calls:
        code = main(["qa", "--mode", mode, "--baseline", str(tmp_path / "b.json"), "--jobs",
                     "1", "--no-store"])
    assert code == 0
    assert calls["parse_engine"] == 1 and calls["judge"] == 1
    assert calls["golden set (remembered)"] == 1 and calls["golden set"] <= 1
    assert calls["baseline file"] == 2  # before the run; the ratchet's, under its lock


def test_a_retrieval_run_reads_the_workspace_and_its_questions_once(realdocs_workspace,  # noqa: F811
                                                                    tmp_path):
    with counted() as calls:
        code = main(["retrieval", "--kb", str(realdocs_workspace.workspace.path), "--golden",
                     str(QUESTIONS / "questions.jsonl"), "--baseline", str(tmp_path / "b.json"),
                     "--jobs", "1", "--no-store"])
    assert code == 0
    assert (calls["workspace"], calls["question file"], calls["baseline file"]) == (1, 1, 2)


def test_an_answer_run_reads_the_workspace_and_its_gold_once(realdocs_workspace, tmp_path):  # noqa: F811
    with counted() as calls:
        code = main(["answers", "--kb", str(realdocs_workspace.workspace.path), "--golden",
                     str(paths.GOLDEN_DIR / "realdocs_answers_gold.json"), "--baseline",
                     str(tmp_path / "b.json"), "--jobs", "1", "--no-store"])
    assert code == 0
    # the baseline: once before the run, then the ratchet's own read per route gated
    assert (calls["workspace"], calls["gold file"], calls["baseline file"]) == (1, 1, 3)


def test_the_count_can_fail(tmp_path):
    """The hook sees a second parse made below the CLI (here, by a test calling it)."""
    from ragspine_eval.engines import parse_engine

    with counted() as calls:
        parse_engine("ragspine", "tool")
        parse_engine("ragspine", "agent")
    assert calls["parse_engine"] == 2
