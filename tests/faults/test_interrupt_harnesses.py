"""Ctrl-C in the retrieval, answer and extraction harnesses, as QA's (test_interrupt.py): the
command exits 130 with one stderr line, its report is marked interrupted (its status and the
cases not run), its JUnit carries interrupted=true, its summary says INTERRUPTED, no baseline is
created or changed, and the same command then runs to a verdict (retrieval and answers reusing
what the outcome cache kept).

The interrupt is raised where a real SIGINT lands, in the main thread while the run waits for
its cases (the progress callback), or between two documents (extraction)."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from realdocs_workspace import QUESTIONS, realdocs_workspace  # noqa: F401

from ragspine_eval import paths
from ragspine_eval.cli.app import main

ANSWERS_GOLD = Path(__file__).resolve().parents[1] / "fixtures" / "answers" / \
    "realdocs_answers_v1.json"


def ctrl_c_after(monkeypatch, done_before: int) -> None:
    """The command's progress bar raises KeyboardInterrupt once `done_before` cases finished."""
    from ragspine_eval.cli import common

    def progress_bar(label: str):  # noqa: ANN202
        def progress(done: int, total: int, errors: int) -> None:
            if done >= done_before:
                raise KeyboardInterrupt
        return progress

    monkeypatch.setattr(common, "progress_bar", progress_bar)


def outputs(tmp_path: Path) -> list[str]:
    return ["--report", str(tmp_path / "r.json"), "--junit", str(tmp_path / "j.xml"),
            "--summary-md", str(tmp_path / "s.md")]


def assert_interrupted_outputs(tmp_path: Path, err: str) -> dict:
    """The three files of an interrupted run and its stderr line; returns the report."""
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["interrupted"] is True and report["status"] == "interrupted"
    root = ET.parse(tmp_path / "j.xml").getroot()
    assert {p.get("name"): p.get("value") for p in root.iter("property")}["interrupted"] == "true"
    assert "INTERRUPTED" in (tmp_path / "s.md").read_text(encoding="utf-8")
    [line] = [line for line in err.splitlines() if line.startswith("interrupted (Ctrl-C) after")]
    assert line.endswith(f"wrote {tmp_path / 'r.json'}, {tmp_path / 'j.xml'}, "
                         f"{tmp_path / 's.md'} with them and the other "
                         f"{report['n_cases'] - finished(report)} as not run; the baseline was "
                         f"not changed")
    assert not (tmp_path / "b.json").exists()
    return report


def finished(report: dict) -> int:
    not_run = [e for e in report.get("errors", []) if e["error"].startswith("not run:")]
    return report["n_cases"] - len(not_run)


def test_ctrl_c_in_a_retrieval_run_writes_what_it_has_and_the_same_command_resumes(
        realdocs_workspace, tmp_path, capsys, monkeypatch):  # noqa: F811
    command = ["retrieval", "--kb", str(realdocs_workspace.workspace.path), "--golden",
               str(QUESTIONS / "questions.jsonl"), "--jobs", "1", "--baseline",
               str(tmp_path / "b.json"), *outputs(tmp_path)]
    with monkeypatch.context() as patched:
        ctrl_c_after(patched, 3)
        assert main(command) == 130
    report = assert_interrupted_outputs(tmp_path, capsys.readouterr().err)
    assert 3 <= finished(report) < report["n_cases"]
    assert main(command) == 0
    out = capsys.readouterr().out
    assert "gate bootstrap" in out
    again = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert "status" not in again and not again["errors"]
    assert again["provenance"]["cache"]["reused"] >= finished(report)


def test_ctrl_c_in_an_answer_run_writes_what_it_has_and_the_same_command_resumes(
        realdocs_workspace, tmp_path, capsys, monkeypatch):  # noqa: F811
    command = ["answers", "--kb", str(realdocs_workspace.workspace.path), "--golden",
               str(ANSWERS_GOLD), "--route", "ask", "--allow-gold-errors", "--jobs", "1",
               "--baseline", str(tmp_path / "b.json"), *outputs(tmp_path)]
    with monkeypatch.context() as patched:
        ctrl_c_after(patched, 2)
        assert main(command) == 130
    report = assert_interrupted_outputs(tmp_path, capsys.readouterr().err)
    assert 2 <= finished(report) < report["n_cases"]
    assert main(command) == 0
    assert "gate ask bootstrap" in capsys.readouterr().out
    again = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert "status" not in again and not again["errors"]
    assert again["provenance"]["cache"]["reused"] >= finished(report)


def test_ctrl_c_between_two_documents_writes_the_sets_scored_and_the_same_command_resumes(
        tmp_path, capsys, monkeypatch):
    from ragspine_eval.extraction import run as extraction_run

    baseline = tmp_path / "baseline.json"
    shutil.copy(paths.EXTRACTION_BASELINE, baseline)
    before = baseline.read_bytes()
    command = ["extraction", "--docs", "all", "--require-baseline", "--baseline", str(baseline),
               "--no-store", *outputs(tmp_path)]
    real = extraction_run._score_one

    def second_document_interrupted(target, *args):  # noqa: ANN001, ANN002, ANN202
        if target.key != "xlsx":
            raise KeyboardInterrupt
        return real(target, *args)

    with monkeypatch.context() as patched:
        patched.setattr(extraction_run, "_score_one", second_document_interrupted)
        assert main(command) == 130
    _, err = capsys.readouterr()
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert (report["status"], report["not_run"]) == ("interrupted", ["pptx", "pdf"])
    assert list(report["documents"]) == ["xlsx"]
    assert report["gate"]["xlsx"]["status"] == "interrupted"  # compared, never recorded
    root = ET.parse(tmp_path / "j.xml").getroot()
    assert {p.get("name"): p.get("value") for p in root.iter("property")}["interrupted"] == "true"
    assert "INTERRUPTED (Ctrl-C) after 1 of 3 document sets" in (tmp_path / "s.md").read_text()
    assert "interrupted (Ctrl-C) after 1 of 3 document sets: wrote" in err
    assert baseline.read_bytes() == before

    assert main(command) == 0
    out = capsys.readouterr().out
    assert all(f"PASS: extraction {key} gate pass" in out for key in ("xlsx", "pptx", "pdf"))
    assert "status" not in json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert baseline.read_bytes() == before


@pytest.mark.parametrize("harness", ["retrieval", "answers"])
def test_the_library_calls_still_end_as_ctrl_c_does(harness, realdocs_workspace, monkeypatch):  # noqa: F811
    """run_retrieval_eval and run_answer_eval, called as a library, raise RunInterrupted (a
    KeyboardInterrupt) carrying what ran; only the gated run turns it into a status."""
    from ragspine_eval.execution.runner import RunInterrupted

    def progress(done: int, total: int, errors: int) -> None:
        if done >= 1:
            raise KeyboardInterrupt

    ws = realdocs_workspace.workspace.path
    with pytest.raises(RunInterrupted) as stopped:
        if harness == "retrieval":
            from ragspine_eval.retrieval_only.run import run_retrieval_eval

            run_retrieval_eval(ws, QUESTIONS / "questions.jsonl", progress=progress, cache=False)
        else:
            from ragspine_eval.answers.run import run_answer_eval

            run_answer_eval(ws, ANSWERS_GOLD, routes=("ask",), progress=progress, cache=False,
                            allow_gold_errors=True)
    assert stopped.value.done >= 1
