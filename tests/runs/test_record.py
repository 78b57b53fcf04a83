"""Every gated run keeps its report (CLI, library, notebook), marked with its verdict, unless
asked not to; a store that cannot be written never changes the run's outcome."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from ragspine_eval import Gate, GatedOutputs, QAHarness, QAWhat, run_gated
from ragspine_eval.pipeline.spec import RunWhat
from ragspine_eval.runs import list_runs, load_report, record


def test_a_library_run_is_kept_with_its_verdict_and_its_report(tiny_golden, tmp_path,
                                                               own_run_store):
    gated = run_gated(QAHarness(), QAWhat(RunWhat(tiny_golden, mode="tool"), tmp_path / "baseline.json"))
    [kept] = list_runs()
    assert kept == gated.kept and kept.path.parent.parent == own_run_store
    assert (kept.kind, kept.key, kept.verdict, kept.cases) == ("qa", "tool", "no baseline", 5)
    assert load_report(kept.id) == json.loads(json.dumps(gated.report.to_dict()))
    assert kept.engine.startswith("rag-spine ") and kept.judge == "lexical" and kept.kb


def test_store_false_keeps_nothing(tiny_golden, tmp_path):
    gated = run_gated(QAHarness(), QAWhat(RunWhat(tiny_golden, mode="tool"), tmp_path / "b.json"),
                      outputs=GatedOutputs(), gate=Gate(store=False))
    assert gated.kept is None and list_runs() == []


def test_a_store_that_cannot_be_written_costs_one_warning_not_the_run(monkeypatch, tmp_path,
                                                                     capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("RAGSPINE_EVAL_RUNS_DIR", str(blocker / "runs"))
    assert record.keep({"mode": "tool"}, kind="qa", key="tool", verdict="pass") is None
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the run was not kept in the run store" in err


def gated(status="complete", errors=(), comparisons=None, gates=None, baseline="b.json"):
    """A gated run as runs.record.verdict reads it (gated/harness.py GatedRun's fields)."""
    return SimpleNamespace(report=SimpleNamespace(status=status, errors=list(errors)),
                           baseline_path=baseline, comparisons=comparisons or {"k": None},
                           gates=gates or {})


PASSED, FAILED = SimpleNamespace(passed=True), SimpleNamespace(passed=False)


@pytest.mark.parametrize("run, verdict", [
    (gated(status="interrupted"), "interrupted"),
    (gated(status="stopped"), "interrupted"),
    (gated(errors=["x"], comparisons={"k": PASSED}), "errors"),
    (gated(), "no baseline"),
    (gated(comparisons={"k": PASSED}), "pass"),
    (gated(comparisons={"k": FAILED}), "fail"),
    (gated(comparisons={"k": PASSED}, gates={"k": SimpleNamespace(exit_code=1)}), "fail"),
    (gated(gates={"k": SimpleNamespace(exit_code=0)}), "no baseline"),
    # several keys (answer routes, document sets): one failing key fails the run
    (gated(comparisons={"ask": PASSED, "narrative": FAILED}), "fail"),
    (gated(comparisons={"ask": PASSED, "narrative": None}), "pass"),
    (gated(baseline=None), "not gated")])
def test_a_gated_runs_verdict_as_listed(run, verdict):
    assert record.verdict(run) == verdict


def test_the_printed_reference_is_one_a_shell_can_take_and_only_when_there_is_one(
        own_run_store, capsys):
    import shlex

    from ragspine_eval.cli.app import main

    said: list[str] = []
    data = {"mode": "answers", "harness": "answers", "metrics": {}, "cases": []}
    first = record.keep(data, kind="answers", key="w@answers:ask, w@answers:narrative",
                        verdict="pass", echo=said.append)
    assert said[-1].endswith("the first run of its key, nothing earlier to diff)")
    second = record.keep(data, kind="answers", key="w@answers:ask, w@answers:narrative",
                         verdict="pass", echo=said.append)
    command = said[-1].split("against the one before: `")[1].rstrip("`)")
    argv = shlex.split(command)
    assert argv == ["ragspine-eval", "diff", "@w@answers:ask, w@answers:narrative~1", second.id]
    from ragspine_eval.runs import resolve

    assert resolve(argv[2]).id == first.id
    assert main(["runs", "show", first.id]) == 0
