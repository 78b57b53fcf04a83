"""A run judged by another faithfulness judge than its baseline entry: compared with a warning,
recorded only as a reviewed change; entries without a judge read as the lexical judge's."""

from __future__ import annotations

import json

from ragspine_eval.ratchet import GateOptions, compare, ratcheted, run_gate
from ragspine_eval.ratchet.compare import LEGACY_JUDGE, describe

LEXICAL = {"name": "lexical", "threshold": 0.6}
NUMERIC = {"name": "numeric", "threshold": 0.6}


def entry(rate: float = 0.5, **extra) -> dict:
    return {"metrics": {"faithfulness": rate}, "fabrication_count": 0, "n_cases": 2,
            "passed_ids": {"faithfulness": ["a"]}, "golden": {"a": "fa", "b": "fb"}, **extra}


def test_another_judge_is_compared_with_a_warning_above_any_regression():
    cmp = compare(entry(0.4, judge=NUMERIC), entry(0.5, judge=LEXICAL))
    assert not cmp.passed  # compared all the same: the drop is a regression
    lines = describe(cmp, "tool")
    assert lines[0].startswith("warning: the baseline was recorded with judge lexical "
                               "(threshold 0.6) and this run used numeric (threshold 0.6)")
    assert any(line.startswith("REGRESSION [tool] faithfulness") for line in lines[1:])


def test_an_entry_without_a_judge_reads_as_the_lexical_judges():
    assert LEGACY_JUDGE == LEXICAL
    assert not any("judge" in n for n in compare(entry(judge=LEXICAL), entry()).notes)
    assert any("recorded with judge lexical" in n
               for n in compare(entry(judge=NUMERIC), entry()).notes)
    # an extraction entry names no judge: no judge check at all
    assert not any("judge" in n for n in compare(entry(), entry(judge=NUMERIC)).notes)


def test_the_same_judge_at_another_threshold_is_another_judge():
    cmp = compare(entry(judge={"name": "lexical", "threshold": 0.7}), entry(judge=LEXICAL))
    assert "threshold 0.7" in cmp.notes[0]


def test_ratcheting_a_legacy_entry_with_the_same_judge_leaves_it_as_it_was():
    stored = entry()
    assert ratcheted(stored, entry(judge=LEXICAL)) == stored
    assert ratcheted(entry(judge=LEXICAL), entry(judge=NUMERIC))["judge"] == NUMERIC


def test_an_update_to_another_judge_is_refused_without_a_reviewed_reason(tmp_path):
    path = tmp_path / "b.json"
    run_gate(path, "tool", entry(0.5, judge=LEXICAL))
    before = path.read_bytes()
    options = GateOptions(update=True, record_command="ragspine-eval qa --mode tool --judge "
                                                      "numeric --update-baseline")
    result = run_gate(path, "tool", entry(0.75, judge=NUMERIC), options)
    assert result.status == "refused" and result.exit_code == 1
    assert path.read_bytes() == before
    assert ("record it with: ragspine-eval qa --mode tool --judge numeric --update-baseline "
            "--allow-regression --reason") in result.lines[-1]
    reviewed = GateOptions(update=True, allow_regression=True, reason="numeric judge from now on")
    assert run_gate(path, "tool", entry(0.4, judge=NUMERIC), reviewed).status == "updated"
    stored = json.loads(path.read_text(encoding="utf-8"))["tool"]
    assert stored["judge"] == NUMERIC and stored["metrics"]["faithfulness"] == 0.4


def test_an_improved_run_under_another_judge_is_not_ratcheted_automatically(tmp_path):
    path = tmp_path / "b.json"
    run_gate(path, "tool", entry(0.5, judge=LEXICAL))
    before = path.read_bytes()
    better = entry(0.75, judge=NUMERIC, passed_ids={"faithfulness": ["a", "b"]})
    result = run_gate(path, "tool", better, GateOptions(ratchet=True))
    assert result.status == "improved" and result.exit_code == 0
    assert "not ratcheted automatically" in result.lines[-1]
    assert path.read_bytes() == before
    same_judge = entry(0.75, judge=LEXICAL, passed_ids={"faithfulness": ["a", "b"]})
    assert run_gate(path, "tool", same_judge, GateOptions(ratchet=True)).status == "ratcheted"


def test_a_hand_edited_judge_that_is_not_an_object_is_shown_not_crashed_on():
    cmp = compare(entry(judge=NUMERIC), entry(judge="numeric"))
    assert "judge 'numeric'" in cmp.notes[0]
