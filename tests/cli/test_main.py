"""The command line as a new user meets it: --version, whole flags, suggestions, help texts that
show their defaults, exit 3 for a bug, diff of two extraction reports."""

from __future__ import annotations

import argparse
import json
from importlib.metadata import version

import pytest

from ragspine_eval import __version__
from ragspine_eval.cli import main as cli_main
from ragspine_eval.cli.app import build_parser, main


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own exits
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_version_names_the_project_and_the_engine(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0
    assert f"ragspine-eval {__version__}" in out and f"rag-spine {version('rag-spine')}" in out


def test_a_prefix_of_a_flag_is_not_the_flag(capsys):
    code, _, err = run(capsys, "qa", "--mod", "agent")
    assert code == 2
    assert "--mod agent" in err and "did you mean --mode?" in err


def test_a_misspelt_flag_prints_the_subcommands_usage_and_the_closest_flag(capsys):
    code, _, err = run(capsys, "qa", "--upate-baseline")
    assert code == 2
    assert err.startswith("usage: ragspine-eval qa")
    assert "did you mean --update-baseline?" in err


def test_a_flag_nothing_resembles_gets_no_suggestion(capsys):
    code, _, err = run(capsys, "golden", "x.jsonl", "--zzzzzz")
    assert code == 2 and "unrecognized arguments: --zzzzzz" in err and "did you mean" not in err


def _options(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from ((name, a) for a in sub._actions)


def test_every_flag_with_a_default_shows_it_in_its_help():
    missing = [f"{name} {a.option_strings[0]}" for name, a in _options(build_parser())
               if a.option_strings and a.default not in (None, False, argparse.SUPPRESS)
               and "default" not in (a.help or "")]
    assert not missing


def test_the_top_level_help_is_written_for_users(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "No logic here" not in out
    assert "Exit codes: 0 pass, 1 a regression, 2 bad input" in out
    for command in ("qa", "extraction", "golden", "diff", "notebooks", "serve", "fixtures"):
        assert command in out


def test_a_bug_in_the_tool_exits_3_with_one_line_and_the_traceback_kept(capsys, monkeypatch,
                                                                       tmp_path, tiny_golden):
    def broken_gate(*args, **kwargs):
        raise ZeroDivisionError("injected")

    monkeypatch.setattr("ragspine_eval.qa.evaluation.evaluate", broken_gate)
    monkeypatch.setattr("ragspine_eval.qa.run.evaluate", broken_gate)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    code, out, err = run(capsys, "qa", "--golden", str(tiny_golden),
                         "--baseline", str(tmp_path / "b.json"))
    assert code == 3
    assert "bug in ragspine-eval" in err and "ZeroDivisionError: injected" in err
    crash = [p for p in tmp_path.iterdir() if p.name.startswith("ragspine-eval-crash-")]
    assert len(crash) == 1 and "Traceback" in crash[0].read_text(encoding="utf-8")
    assert not (tmp_path / "b.json").exists()  # nothing recorded


def test_the_package_entry_point_is_the_same_main():
    assert cli_main.__module__ == "ragspine_eval.cli"


@pytest.fixture(scope="module")
def extraction_reports(tmp_path_factory):
    """Two xlsx extraction reports from facts files; the second reads one cell wrong."""
    from builders import TRUTHS, fact_of, write_jsonl

    folder = tmp_path_factory.mktemp("ext")
    cells = TRUTHS["xlsx"]["cells"]
    good = [fact_of(c, doc="xlsx") for c in cells]
    target = next(i for i, c in enumerate(cells) if isinstance(c.get("value"), float))
    bad = [dict(f) for f in good]
    bad[target]["value"] = bad[target]["value"] + 1
    reports = {}
    for name, facts in (("a", good), ("b", bad)):
        path = write_jsonl(folder / f"{name}.jsonl", facts)
        report = folder / f"{name}.json"
        assert main(["extraction", "--docs", "xlsx", "--facts", str(path), "--baseline",
                     str(folder / f"{name}_baseline.json"), "--report", str(report)]) == 0
        reports[name] = report
    loc = f"{cells[target]['sheet']}!{cells[target]['cell_ref']}"
    return reports, loc, cells[target]["value"]


def test_diff_of_two_extraction_reports_names_the_cell_that_went_wrong(capsys,
                                                                      extraction_reports):
    reports, loc, value = extraction_reports
    code, out, _ = run(capsys, "diff", str(reports["a"]), str(reports["b"]))
    assert code == 1
    assert f"pass→fail xlsx cell_value: {loc}: expected {value!r}, got {value + 1!r}" in out
    assert "in 1 cell(s)" in out
    code, out, _ = run(capsys, "diff", str(reports["b"]), str(reports["a"]))
    assert code == 0 and f"fail→pass xlsx cell_value: {loc}" in out


def test_diff_refuses_a_qa_report_against_an_extraction_report(capsys, extraction_reports,
                                                               tmp_path):
    from builders import sample_report

    qa = tmp_path / "qa.json"
    qa.write_text(json.dumps(sample_report().to_dict()), encoding="utf-8")
    code, _, err = run(capsys, "diff", str(qa), str(extraction_reports[0]["a"]))
    assert code == 2 and "diff compares two reports of one harness" in err
