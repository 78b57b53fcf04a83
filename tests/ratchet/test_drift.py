"""Drift: a run on another knowledge base or engine than its baseline entry is compared as any
other, with a note naming what changed above every regression; drift never fails a gate by
itself, a record makes the entry name the run's, and entries without these keys still read."""

from __future__ import annotations

import json

import pytest

from ragspine_eval.ratchet import (
    BaselineError,
    GateOptions,
    compare,
    describe,
    history_path,
    ratcheted,
    run_gate,
)

KB = {"fingerprint": "0123abcd00000000",
      "files": {"facts.csv": "aaaa000000000000", "narratives.jsonl": "bbbb000000000000"}}
KB_FACT_CHANGED = {"fingerprint": "4567ef0100000000",
                   "files": {"facts.csv": "cccc000000000000", "narratives.jsonl": "bbbb000000000000"}}
ENGINE = {"name": "rag-spine", "version": "0.17.2"}
HEADLINE = "knowledge base changed since the baseline was recorded"


def entry(rate: float = 0.5, **extra) -> dict:
    return {"metrics": {"g": rate}, "fabrication_count": 0, "n_cases": 2,
            "passed_ids": {"g": ["a"]}, "golden": {"a": "fa", "b": "fb"}, **extra}


def test_the_same_kb_and_engine_is_no_drift():
    cmp = compare(entry(kb=KB, engine=ENGINE), entry(kb=KB, engine=ENGINE))
    assert cmp.passed and cmp.drift == [] and cmp.notes == []
    assert not any("DRIFT" in line for line in describe(cmp, "tool"))


def test_a_changed_fact_file_is_named_above_every_regression():
    cmp = compare(entry(0.25, kb=KB_FACT_CHANGED, engine=ENGINE), entry(kb=KB, engine=ENGINE))
    assert not cmp.passed  # the drop is a regression all the same
    assert cmp.drift == [{"kind": "kb", "then": KB, "now": KB_FACT_CHANGED,
                          "files": [{"file": "facts.csv", "change": "differs"}],
                          "text": cmp.notes[0]}]
    assert cmp.notes[0] == (f"{HEADLINE}: facts.csv differs (kb 0123abcd… -> 4567ef01…); a "
                            f"regression below may come from the data, not the engine")
    lines = describe(cmp, "tool")
    assert lines[0] == f"DRIFT [tool] {cmp.notes[0]}"
    assert sum(HEADLINE in line for line in lines) == 1  # once, not again as a note
    assert any(line.startswith("REGRESSION [tool] g") for line in lines)
    first_regression = next(i for i, l in enumerate(lines) if "REGRESSION" in l)
    assert 0 < first_regression


def test_files_added_and_removed_are_named():
    now = {"fingerprint": "ffff000000000000",
           "files": {"facts.csv": "aaaa000000000000", "extra.csv": "dddd000000000000"}}
    text = compare(entry(kb=now), entry(kb=KB)).notes[0]
    assert "extra.csv added, narratives.jsonl removed" in text
    assert "facts.csv" not in text
    # an entry that lists no files: the note still says the knowledge base changed
    bare = compare(entry(kb=now), entry(kb={"fingerprint": "0123abcd00000000"}))
    assert bare.drift[0]["files"] == [] and "its files differ" in bare.notes[0]


def test_another_engine_version_is_named_and_an_unknown_version_said_so():
    cmp = compare(entry(engine={"name": "rag-spine", "version": "0.18.0"}), entry(engine=ENGINE))
    assert cmp.passed  # drift alone never fails
    assert cmp.notes == [("engine changed since the baseline was recorded: rag-spine 0.17.2 -> "
                          "rag-spine 0.18.0")]
    assert cmp.drift[0]["kind"] == "engine"
    http = {"name": "http://127.0.0.1:8000", "version": None}
    note = compare(entry(engine=http), entry(engine=ENGINE)).notes[0]
    assert note.endswith("rag-spine 0.17.2 -> http://127.0.0.1:8000 (version unknown)")
    assert compare(entry(engine=http), entry(engine=http)).drift == []


def test_kb_drift_comes_before_the_judge_warning_and_the_engine_note():
    lexical, numeric = {"name": "lexical", "threshold": 0.6}, {"name": "numeric", "threshold": 0.6}
    cmp = compare(entry(kb=KB_FACT_CHANGED, engine={"name": "rag-spine", "version": "0.18.0"},
                        judge=numeric),
                  entry(kb=KB, engine=ENGINE, judge=lexical))
    assert [d["kind"] for d in cmp.drift] == ["kb", "engine"]
    lines = describe(cmp, "tool")
    assert lines[0].startswith(f"DRIFT [tool] {HEADLINE}")
    assert lines[1].startswith("DRIFT [tool] engine changed")
    assert lines[2].startswith("warning: the baseline was recorded with judge lexical")


def test_an_old_entry_without_kb_or_engine_compares_with_no_drift(tmp_path):
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"tool": entry()}), encoding="utf-8")
    result = run_gate(path, "tool", entry(kb=KB, engine=ENGINE))
    assert result.status == "pass" and result.comparison.drift == []
    assert not any("changed since" in line for line in result.lines)
    # nor does a run that names neither (the extraction harness) check a stored one
    assert compare(entry(), entry(kb=KB, engine=ENGINE)).drift == []


@pytest.mark.parametrize("key, bad", [
    ("kb", "0123abcd00000000"),
    ("kb", {"files": {}}),
    ("kb", {"fingerprint": "0123abcd00000000", "files": ["facts.csv"]}),
    ("kb", None),
    ("engine", "rag-spine"),
    ("engine", {"name": "rag-spine", "version": 17}),
    ("engine", {"version": "0.17.2"}),
])
def test_a_bad_kb_or_engine_shape_is_an_error_naming_file_and_key(tmp_path, key, bad):
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"tool": entry(**{key: bad})}), encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(BaselineError) as err:
        run_gate(path, "tool", entry(kb=KB, engine=ENGINE))
    assert str(path) in str(err.value) and f"'{key}' must be" in str(err.value)
    assert path.read_bytes() == before


def test_drift_alone_passes_the_gate_writes_nothing_and_says_how_to_record(tmp_path):
    path = tmp_path / "b.json"
    run_gate(path, "tool", entry(kb=KB, engine=ENGINE))
    before = path.read_bytes()
    result = run_gate(path, "tool", entry(kb=KB_FACT_CHANGED, engine=ENGINE),
                      GateOptions(ratchet=True, record_command="ragspine-eval qa --mode tool "
                                                               "--update-baseline"))
    assert (result.status, result.exit_code) == ("pass", 0)
    assert result.lines[0].startswith(f"DRIFT [tool] {HEADLINE}")
    assert "record it" not in result.lines[-1] and result.lines[-1].endswith(
        "this run's knowledge base with: ragspine-eval qa --mode tool --update-baseline")
    assert path.read_bytes() == before


def test_a_record_makes_the_entry_name_the_runs_kb_and_engine(tmp_path):
    new_engine = {"name": "rag-spine", "version": "0.18.0"}
    assert ratcheted(entry(kb=KB, engine=ENGINE),
                     entry(kb=KB_FACT_CHANGED, engine=new_engine)) == entry(
        kb=KB_FACT_CHANGED, engine=new_engine)
    assert ratcheted(entry(kb=KB), entry()) == entry(kb=KB)  # a run naming none keeps them
    path = tmp_path / "b.json"
    run_gate(path, "tool", entry())  # an old entry, without kb or engine
    result = run_gate(path, "tool", entry(kb=KB, engine=ENGINE), GateOptions(update=True))
    assert result.status == "updated"  # adding them is a change worth a history line
    stored = json.loads(path.read_text(encoding="utf-8"))["tool"]
    assert (stored["kb"], stored["engine"], stored["metrics"]) == (KB, ENGINE, {"g": 0.5})
    last = json.loads(history_path(path).read_text(encoding="utf-8").splitlines()[-1])
    assert "kb" not in last["old"] and last["new"]["kb"] == KB
    again = run_gate(path, "tool", entry(kb=KB, engine=ENGINE), GateOptions(update=True))
    assert again.status == "pass" and "already records this run" in again.lines[-1]


def test_drift_never_blocks_a_gain_being_ratcheted(tmp_path):
    path = tmp_path / "b.json"
    run_gate(path, "tool", entry(kb=KB, engine=ENGINE))
    better = entry(1.0, kb=KB_FACT_CHANGED, engine=ENGINE, passed_ids={"g": ["a", "b"]})
    result = run_gate(path, "tool", better, GateOptions(ratchet=True))
    assert result.status == "ratcheted" and result.lines[0].startswith("DRIFT [tool]")
    assert json.loads(path.read_text(encoding="utf-8"))["tool"]["kb"] == KB_FACT_CHANGED


def test_another_engine_configuration_than_the_entrys_is_drift_named_first():
    """One rule for every harness whose entry keeps its engine configuration (answers and
    retrieval runs; QA entries keep it too): the note names both settings, and the defaults."""
    from ragspine_eval.ratchet.compare import drift_of

    entry = {"metrics": {"recall@5": 0.5}, "n_cases": 1, "passed_ids": {}, "golden": {}}
    then = {**entry, "engine_config": {"fingerprint": "aaaa", "settings": {"top_k": 5}}}
    now = {**entry, "engine_config": {"fingerprint": "bbbb", "settings": {"top_k": 8}}}
    comparison = compare(now, then)
    assert [d["kind"] for d in comparison.drift] == ["engine_config"]
    assert comparison.notes[0] == ("engine configuration changed since the baseline was "
                                   "recorded: {'top_k': 5} -> {'top_k': 8}")
    assert comparison.passed  # drift informs, never fails
    (to_defaults,) = drift_of(then, entry)
    assert to_defaults["text"].endswith("-> engine defaults")
    assert drift_of(then, then) == [] and drift_of(entry, entry) == []
