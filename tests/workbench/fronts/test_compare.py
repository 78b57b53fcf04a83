"""Two QA runs paired for the compare notebook, without a kernel: flips in both directions, the
same run twice, edited golden cases and cases in one run only kept apart, the gate's message,
and references to stored runs (the changed words of an answer: test_changed_words.py)."""

from __future__ import annotations

import pytest
from builders import TAGS_CN, compare_pair, compare_report, id_prefix, written

from ragspine_eval import runs
from ragspine_eval.errors import RagspineEvalError, ReportError
from ragspine_eval.workbench.fronts import compare, compare_view

def test_a_case_that_went_wrong_fails_the_gate_naming_it(tmp_path):
    pair = compare_pair(tmp_path, compare_report(), compare_report(wrong="num-002"))
    assert pair.regressed == ["num-002"]
    with pytest.raises(AssertionError) as failed:
        compare.assert_no_flips(pair)
    message = str(failed.value)
    assert "FAIL: 1 case went from pass to fail: num-002" in message
    assert "numeric_accuracy: num-002" in message
    flips = compare.flip_table(pair)
    assert set(zip(flips["id"], flips["direction"], strict=True)) == {
        ("num-002", compare.PASS_TO_FAIL)} | {
        ("num-002", d) for d in flips["direction"]}  # every flip is num-002's
    assert flips.loc[0, "direction"] == compare.PASS_TO_FAIL
    assert "1872.2" in flips.loc[0, "after answer"] and "1702" in flips.loc[0, "before answer"]


def test_the_other_direction_passes_and_reports_the_fixed_case(tmp_path):
    pair = compare_pair(tmp_path, compare_report(wrong="num-002"), compare_report())
    assert pair.regressed == []
    message = compare.assert_no_flips(pair)
    assert "1 case went from fail to pass: num-002" in message
    assert message.endswith("PASS: no case went from pass to fail")


def test_the_same_run_twice_passes_with_nothing_moved(tmp_path):
    data = compare_report(wrong="num-001")
    pair = compare_pair(tmp_path, data, data)
    assert compare.assert_no_flips(pair).endswith("PASS: no case went from pass to fail")
    gates = compare.gate_changes(pair)
    assert (gates["change"] == 0).all() and (gates["pass → fail"] == 0).all()
    assert compare.flip_table(pair).empty and compare.apart(pair).empty


def test_fail_on_flips_false_reports_without_raising(tmp_path):
    pair = compare_pair(tmp_path, compare_report(), compare_report(wrong="num-002"))
    assert "FAIL: 1 case went from pass to fail" in compare.assert_no_flips(pair, False)


def test_an_edited_golden_case_is_kept_apart_and_never_a_flip(tmp_path):
    pair = compare_pair(tmp_path, compare_report(), compare_report(edit="num-002"))
    assert pair.regressed == [] and compare.flip_table(pair).empty
    kept = compare.apart(pair)
    assert list(zip(kept["id"], kept["why"], strict=True)) == [("num-002", compare.EDITED)]
    assert "num-002 (golden case edited between the runs)" in compare.assert_no_flips(pair)


@pytest.mark.parametrize(("before", "after", "why"), [
    ({}, {"drop": "num-002"}, compare.BEFORE_ONLY),
    ({"drop": "num-002"}, {"wrong": "num-002"}, compare.AFTER_ONLY)])
def test_a_case_in_one_run_only_is_kept_apart(tmp_path, before, after, why):
    pair = compare_pair(tmp_path, compare_report(**before), compare_report(**after))
    assert pair.regressed == []
    kept = compare.apart(pair)
    assert set(kept["id"]) == {"num-002"} and set(kept["why"]) == {why}


def test_tag_changes_put_the_flip_in_its_buckets_only(tmp_path):
    pair = compare_pair(tmp_path, compare_report(), compare_report(wrong="num-002"))
    changes = compare.tag_changes(pair)
    flipped = changes[changes[compare.PASS_TO_FAIL] > 0]
    assert set(zip(flipped["gate"], flipped["bucket"], strict=True)) >= {
        ("numeric_accuracy", f"{t}={v}") for t, v in TAGS_CN.items()}
    assert not any(b.endswith("ACME_HK") for b in flipped["bucket"])
    row = changes[(changes["gate"] == "numeric_accuracy")
                  & (changes["bucket"] == "scope=ACME_CN")].iloc[0]
    assert (row["before rate"], row["after rate"], row["change"]) == (1.0, 0.0, -1.0)


def test_reports_of_other_modes_are_compared_with_a_warning(tmp_path):
    pair = compare_pair(tmp_path, compare_report(), compare_report(mode="agent"))
    assert any(w.startswith("mode differs: tool vs agent") for w in pair.warnings)


def test_an_extraction_report_is_refused_with_what_to_do(tmp_path, capsys):
    from ragspine_eval.cli.app import main

    extraction = tmp_path / "x.json"
    assert main(["extraction", "--docs", "pptx", "--report", str(extraction),
                 "--baseline", str(tmp_path / "b.json")]) == 0
    with pytest.raises(ReportError, match="an extraction report; compare.ipynb compares two QA "
                                          "reports .for extraction runs: ragspine-eval diff"):
        compare.load_pair(str(extraction), written(tmp_path, "a.json", compare_report()))


def test_a_missing_report_names_the_file(tmp_path):
    with pytest.raises(RagspineEvalError, match="nothere.json: no such report file"):
        compare.load_pair(str(tmp_path / "nothere.json"), written(tmp_path, "a.json", compare_report()))


# --- stored runs --------------------------------------------------------------------------------


def test_the_default_pair_is_the_two_newest_runs_of_the_newest_key(tmp_path):
    root = tmp_path / "store"
    older = runs.store_report(compare_report(), kind="qa", key="tool", root=root, verdict="pass")
    runs.store_report(compare_report(mode="agent"), kind="qa", key="agent", root=root, verdict="pass")
    newer = runs.store_report(compare_report(wrong="num-002"), kind="qa", key="tool", root=root,
                              verdict="fail")
    assert compare.default_refs(root) == (older.id, newer.id)
    pair = compare.load_pair(root=root)
    assert pair.regressed == ["num-002"]
    assert (pair.before_name, pair.after_name) == (f"run {older.id}", f"run {newer.id}")


def test_run_ids_prefixes_and_short_references_read_like_paths(tmp_path):
    root = tmp_path / "store"
    older = runs.store_report(compare_report(), kind="qa", key="tool", root=root, verdict="pass")
    newer = runs.store_report(compare_report(wrong="num-002"), kind="qa", key="tool", root=root,
                              verdict="fail")
    for before, after in ((older.id, id_prefix(newer.id, older.id)), ("@tool~1", "@tool"),
                          (written(tmp_path, "a.json", compare_report()), "@latest")):
        assert compare.load_pair(before, after, root=root).regressed == ["num-002"]


def test_the_default_pair_needs_two_runs_of_the_newest_key(tmp_path):
    root = tmp_path / "store"
    with pytest.raises(ReportError, match="holds no QA run"):
        compare.load_pair(root=root)
    runs.store_report(compare_report(), kind="qa", key="tool", root=root, verdict="pass")
    with pytest.raises(ReportError, match="holds 1 QA run of key 'tool'; compare needs two"):
        compare.load_pair(root=root)
    runs.store_report(compare_report(wrong="num-001"), kind="qa", key="tool", root=root, verdict="fail")
    assert compare.load_pair(root=root).regressed == ["num-001"]


def test_an_engine_error_in_the_after_run_fails_the_gate_and_is_no_flip(tmp_path):
    after = compare_report(error="num-002")
    pair = compare_pair(tmp_path, compare_report(), after)
    assert pair.regressed == [] and compare.flip_table(pair).empty
    assert set(compare.apart(pair)["why"]) == {compare.AFTER_ERROR}
    with pytest.raises(AssertionError, match="FAIL: 1 engine error in the after run.*num-002"):
        compare.assert_no_flips(pair)


def _narrative_run(ranks: dict[str, int | None]) -> dict:
    """Narrative cases whose one relevant passage (HK_DOC) is at the given rank (None: not
    retrieved); a miss also answers off the document, so answer_accuracy flips with it."""
    from builders import HK_TEXT, narrative_outcome

    from conftest import HK_DOC, make_case
    from ragspine_eval.qa.evaluation import evaluate

    other = {"doc": "OTHER.pptx", "locator": "OTHER.pptx#p1", "text": "unrelated"}
    cases, outcomes = [], []
    for case_id, rank in ranks.items():
        passages = [other] * 12
        if rank is not None:
            passages[rank - 1] = {"doc": HK_DOC, "locator": f"{HK_DOC}#p1", "text": HK_TEXT}
        out = narrative_outcome(passages=passages)
        if rank is None:
            out.answer = out.narrative_answer = "unrelated"
        cases.append(make_case(case_id, "narrative"))
        outcomes.append(out)
    return evaluate(cases, outcomes, "tool", reference_texts={HK_DOC: HK_TEXT}).to_dict()


def test_retrieval_change_pairs_hit_at_k_and_the_flips_carry_their_ranks(tmp_path):
    before = _narrative_run({"nar-1": 2, "nar-2": 1, "nar-3": 4, "nar-4": None})
    after = _narrative_run({"nar-1": None, "nar-2": 1, "nar-3": 8, "nar-4": 1})
    pair = compare_pair(tmp_path, before, after)
    change = compare.retrieval_change(pair).set_index("k")
    assert change.loc[5, "cases"] == 4
    assert (change.loc[5, "hit before"], change.loc[5, "hit after"]) == (0.75, 0.5)
    assert (change.loc[5, "hit → miss"], change.loc[5, "miss → hit"]) == (2, 1)  # nar-1, nar-3
    assert change.loc[5, "McNemar p"] == 1.0
    assert (change.loc[1, "hit → miss"], change.loc[1, "miss → hit"]) == (0, 1)
    assert change.loc[10, "hit → miss"] == 1
    flips = compare.flip_table(pair).set_index(["id", "gate"])
    assert tuple(flips.loc[("nar-1", "answer_accuracy"), ["rank before", "rank after"]]) == \
        ("2", "none")
    assert tuple(flips.loc[("nar-4", "answer_accuracy"), ["rank before", "rank after"]]) == \
        ("none", "1")
    assert "retrieval rank 2 → none" in compare_view.flips_html(pair)
    assert compare.retrieval_change(compare_pair(tmp_path, compare_report(),
                                                 compare_report())).empty
