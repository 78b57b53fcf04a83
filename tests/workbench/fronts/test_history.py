"""The history notebook's data and HTML without a kernel, on a synthetic baseline history and a
run store of the test's own: a row per recorded gate value with its commit, action and reason,
the stored runs beside it, a bad line named by file and line, and each run's panel."""

from __future__ import annotations

import json

import pytest
from builders import compare_report

from ragspine_eval import runs
from ragspine_eval.workbench.fronts import history


def line(mode: str, time: str, action: str, metrics: dict, count: int = 0, **extra) -> str:
    return json.dumps({"action": action, "commit": "abcdef0123456789", "mode": mode,
                       "new": {"fabrication_count": count, "metrics": metrics, "n_cases": 3},
                       "old": None, "reason": f"{action} of {mode}", "time": time, **extra})


@pytest.fixture
def synthetic(tmp_path):
    path = tmp_path / "qa_baseline_history.jsonl"
    path.write_text("\n".join([
        line("tool", "2026-01-01T10:00:00+00:00", "bootstrap", {"numeric_accuracy": 0.5}, 2),
        line("tool", "2026-01-02T10:00:00+00:00", "ratchet", {"numeric_accuracy": 0.75}, 1),
        line("agent", "2026-01-01T11:00:00+00:00", "bootstrap", {"numeric_accuracy": 1.0}),
    ]) + "\n", encoding="utf-8")
    return path


def test_each_recorded_gate_value_is_a_row_with_commit_action_and_reason(synthetic):
    frame = history.history_frame([synthetic])
    tool = frame[(frame["key"] == "tool") & (frame["gate"] == "numeric_accuracy")]
    assert list(tool["value"]) == [0.5, 0.75] and list(tool["action"]) == ["bootstrap", "ratchet"]
    assert set(frame["commit"]) == {"abcdef012345"} and "ratchet of tool" in set(frame["reason"])
    fab = frame[(frame["key"] == "tool") & (frame["gate"] == "fabrication")]
    assert list(fab["value"]) == [2.0, 1.0] and set(fab["measure"]) == {"count"}
    assert set(frame["harness"]) == {"qa"}


def test_the_changes_table_lists_every_entry_newest_first(synthetic):
    table = history.changes_table([synthetic])
    assert list(table["action"]) == ["ratchet", "bootstrap", "bootstrap"]
    assert list(table["key"]) == ["tool", "agent", "tool"]


def test_a_missing_history_is_empty_and_a_bad_line_is_named(synthetic, tmp_path):
    assert history.history_frame([tmp_path / "none.jsonl"]).empty
    synthetic.write_text(synthetic.read_text("utf-8") + '{"mode": "tool"}\n', encoding="utf-8")
    with pytest.raises(history.HistoryError, match=r"qa_baseline_history.jsonl:4: not a baseline "
                                                   r"history entry"):
        history.history_frame([synthetic])
    synthetic.write_text("{oops\n", encoding="utf-8")
    with pytest.raises(history.HistoryError, match=r"jsonl:1: not a JSON line"):
        history.read_history(synthetic)


def test_stored_runs_are_points_with_their_fabrication_count(tmp_path):
    root = tmp_path / "store"
    runs.store_report(compare_report(), kind="qa", key="tool", root=root, verdict="pass")
    frame = history.runs_frame(runs.list_runs(root=root))
    assert set(frame["source"]) == {"run"} and frame["run"].str.len().min() > 10
    assert frame.loc[frame["gate"] == "numeric_accuracy", "value"].tolist() == [1.0]
    assert frame.loc[frame["gate"] == "fabrication", "value"].tolist() == [0.0]


def test_the_page_draws_the_committed_history_with_an_empty_store(tmp_path):
    page = history.history_page(runs_root=tmp_path / "empty-store")
    assert page.count('class="rse-chart"') >= 3  # QA rates, fabrication, extraction
    assert "The run store holds no run yet" in page and "data-run=" not in page


def test_a_run_panel_names_its_failures_and_its_flips_against_the_run_before(synthetic,
                                                                             tmp_path):
    root = tmp_path / "store"
    older = runs.store_report(compare_report(), kind="qa", key="tool", root=root, verdict="pass")
    newer = runs.store_report(compare_report(wrong="num-002"), kind="qa", key="tool", root=root,
                              verdict="fail")
    page = history.history_page([synthetic], runs_root=root)
    panel = page[page.index(f'data-run="{newer.id}"'):]
    panel = panel[:panel.index("</div>")]
    assert "<b>numeric_accuracy</b>: 1 failing: num-002" in panel
    assert "FAIL: 1 case went from pass to fail: num-002" in panel
    assert f"-p before {older.id} -p after {newer.id}" in panel
    first = page[page.index(f'data-run="{older.id}"'):]
    assert "No earlier run of this key" in first[:first.index("</div>")]
