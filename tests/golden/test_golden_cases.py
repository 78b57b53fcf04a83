"""Golden-set loading: valid files load, every bad-input class names its file and line."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval import paths
from ragspine_eval.golden.cases import (
    GoldenSetError,
    check_golden_set,
    fingerprint,
    load_golden_set,
    summarize,
)
from ragspine_eval.qa.golden_check import check_against_kb

NUM_001 = ('{"id": "num-001", "question": "香港FY2025的REVENUE是多少", "case_type": "numeric", '
           '"expected": {"clarification": "none", "refuse": false, "value": 1702.0, "unit": "USD_M", '
           '"source": {"doc": "ACME_FY2025_Results.pptx", "locator": "slide=5,table=1,row=2,col=3"}}, '
           '"tags": {"topic": "FIN", "scope": "ACME_HK", "qtype": "must_not_clarify"}, '
           '"reference_date": "2026-06-12"}')
REFUSAL = {"id": "ref-001", "question": "竞安去年营收多少", "case_type": "refusal",
           "expected": {"clarification": "none", "refuse": True},
           "tags": {"topic": "COMPETITOR", "scope": "EXTERNAL", "qtype": "competitor"},
           "reference_date": "2026-06-12"}


def write(tmp_path, *lines: str, name: str = "set.jsonl", newline: str = "\n", bom: bool = False):
    path = tmp_path / name
    text = newline.join(lines) + newline
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def refusal(**changes) -> str:
    record = json.loads(json.dumps(REFUSAL))
    for key, value in changes.items():
        if value is None:
            record.pop(key)
        else:
            record[key] = value
    return json.dumps(record, ensure_ascii=False)


def test_valid_file_loads_with_dates_parsed(tmp_path):
    cases = load_golden_set(write(tmp_path, NUM_001, refusal()))
    assert [c.id for c in cases] == ["num-001", "ref-001"]
    assert cases[0].reference_date.isoformat() == "2026-06-12"
    assert cases[0].expected["value"] == 1702.0


def test_blank_lines_bom_and_crlf_are_accepted(tmp_path):
    path = write(tmp_path, "", NUM_001, "   ", refusal(), newline="\r\n", bom=True)
    assert [c.id for c in load_golden_set(path)] == ["num-001", "ref-001"]


@pytest.mark.parametrize(
    ("bad_line", "reason"),
    [
        ('{"id": "x", "question": ', "bad JSON"),
        (refusal(reference_date=None), "missing field 'reference_date'"),
        (refusal(question=42), "wrong type for 'question'"),
        (refusal(case_type="opinion"), "unknown case_type 'opinion'"),
        (refusal(id="num-001"), "duplicate id"),
        (refusal(reference_date="2026-13-01"), "bad ISO date"),
        (refusal(reference_date="12/06/2026"), "bad ISO date"),
        (refusal(question="   "), "empty question"),
        (refusal(expected={"clarification": "none", "refuse": False}), "refusal case must expect refuse: true"),
        (refusal(case_type="clarification"), "clarification case cannot expect clarification 'none'"),
        (refusal(expected={"clarification": "maybe", "refuse": True}), "expected.clarification"),
        (refusal(expected={"clarification": "none", "refuse": "yes"}), "wrong type for 'expected.refuse'"),
        (refusal(tags={"topic": "FIN", "scope": "X"}), "missing field 'tags.qtype'"),
        (refusal(tags={"topic": "FIN"}), "missing fields 'tags.scope', 'tags.qtype' (every case "
                                         "is tagged with topic, scope, qtype)"),
        (refusal(tags=None, reference_date=None), "missing fields 'tags', 'reference_date'"),
        (refusal(case_type="numeric"), "missing field 'expected.value'"),
        (refusal(case_type="narrative"), "missing field 'expected.narrative_doc'"),
        ("[1, 2]", "must be a JSON object"),
        (refusal(expected={"clarification": "none", "refuse": True, "valeu": 3}),
         "unknown field(s) 'expected.valeu'; allowed: clarification, refuse, value"),
        (refusal(expected={"clarification": "none", "refuse": True, "value": 3.0}),
         "missing field 'expected.unit' (a case that expects a value needs value, unit and source)"),
        (NUM_001.replace('"num-001"', '"num-009"').replace('"locator"', '"locatr"'),
         "missing field 'expected.source.locator'"),
        (NUM_001.replace('"num-001"', '"num-009"').replace('"doc":', '"page": 3, "doc":'),
         "unknown field(s) 'expected.source.page'; allowed: doc, locator"),
        (NUM_001.replace('"num-001"', '"num-009"').replace("1702.0", "NaN"), "must be a finite number"),
        (NUM_001.replace('"num-001"', '"num-009"').replace("1702.0", "Infinity"), "must be a finite number"),
    ],
)
def test_each_bad_line_rejects_the_file_naming_file_line_and_reason(tmp_path, bad_line, reason):
    path = write(tmp_path, NUM_001, "", bad_line, refusal(id="ref-009"))
    with pytest.raises(GoldenSetError) as err:
        load_golden_set(path)
    assert err.value.line == 3
    assert f"{path}:3" in str(err.value)
    assert reason in str(err.value)


def test_error_names_the_case_id_when_it_could_be_read(tmp_path):
    path = write(tmp_path, refusal(reference_date="yesterday"))
    with pytest.raises(GoldenSetError, match=r"\(id 'ref-001'\)"):
        load_golden_set(path)


def test_unreadable_and_empty_files_are_errors(tmp_path):
    with pytest.raises(GoldenSetError, match="cannot read"):
        load_golden_set(tmp_path / "missing.jsonl")
    with pytest.raises(GoldenSetError, match="no case"):
        load_golden_set(write(tmp_path, ""))


def test_a_repeated_id_names_the_line_it_first_appeared_on(tmp_path):
    path = write(tmp_path, refusal(), NUM_001, refusal())
    with pytest.raises(GoldenSetError, match=r":3 \(id 'ref-001'\): duplicate id.*first on line 1"):
        load_golden_set(path)


def test_check_golden_set_lists_every_invalid_line_and_keeps_the_valid_cases(tmp_path):
    path = write(tmp_path, NUM_001, '{"id": "x", "question": ', refusal(reference_date=None),
                 "", refusal(id="ref-002"), refusal(id="num-001"))
    check = check_golden_set(path)
    assert [(line, case.id) for line, case in check.cases] == [(1, "num-001"), (5, "ref-002")]
    assert [(err.line, err.case_id) for err in check.errors] == [
        (2, None), (3, "ref-001"), (6, "num-001")]
    assert [err.reason.split(":")[0] for err in check.errors] == [
        "bad JSON", "missing field 'reference_date'", "duplicate id"]


@given(st.lists(st.sampled_from(["good", "bad_json", "no_date", "dup", "blank"]), max_size=8))
def test_the_first_error_collected_is_the_one_loading_stops_at(kinds):
    import tempfile
    from pathlib import Path

    lines = [{"good": refusal(id=f"ref-{i:03d}"), "bad_json": "{", "blank": "",
              "no_date": refusal(id=f"nd-{i:03d}", reference_date=None),
              "dup": refusal(id="ref-dup")}[kind] for i, kind in enumerate(kinds)]
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), *lines) if lines else write(Path(tmp), "")
        check = check_golden_set(path)
        if check.errors:
            with pytest.raises(GoldenSetError) as err:
                load_golden_set(path)
            assert str(err.value) == str(check.errors[0])
        elif check.cases:
            assert [c.id for c in load_golden_set(path)] == [c.id for _, c in check.cases]


@given(st.permutations(["question", "case_type", "expected", "tags", "reference_date", "id"]))
def test_fingerprint_ignores_key_order_but_not_content(order):
    record = json.loads(NUM_001)
    reordered = json.dumps({k: record[k] for k in order}, ensure_ascii=False)
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        a = load_golden_set(write(Path(tmp), NUM_001, name="a.jsonl"))[0]
        b = load_golden_set(write(Path(tmp), reordered, name="b.jsonl"))[0]
        changed = json.loads(NUM_001)
        changed["expected"]["value"] = 1703.0
        c = load_golden_set(write(Path(tmp), json.dumps(changed), name="c.jsonl"))[0]
    assert fingerprint(a) == fingerprint(b)
    assert fingerprint(a) != fingerprint(c)


# --- the committed golden set ------------------------------------------------------------------


def test_committed_golden_set_holds_num_001_verbatim():
    lines = paths.QA_GOLDEN_SET.read_text(encoding="utf-8").splitlines()
    assert NUM_001 in lines


def test_committed_golden_set_covers_every_case_type_with_at_least_60_cases():
    summary = summarize(load_golden_set(paths.QA_GOLDEN_SET))
    assert summary["n_cases"] >= 60
    assert set(summary["by_case_type"]) == {"numeric", "clarification", "refusal", "narrative", "composite"}


def test_every_expected_source_and_narrative_doc_exists_in_the_default_kb():
    assert check_against_kb(paths.QA_GOLDEN_SET, paths.KB_DIR) == []


def test_kb_check_catches_a_typo_in_a_case(tmp_path):
    typo = json.loads(NUM_001)
    typo["expected"]["value"] = 1720.0
    wrong_doc = json.loads(NUM_001)
    wrong_doc["id"] = "num-002"
    wrong_doc["expected"]["source"]["locator"] = "slide=5,table=1,row=2,col=4"
    path = write(tmp_path, json.dumps(typo), json.dumps(wrong_doc))
    problems = check_against_kb(path, paths.KB_DIR)
    assert len(problems) == 2
    assert f"{path}:1" in problems[0] and "1702.0 USD_M" in problems[0]
    assert f"{path}:2" in problems[1] and "not a fact" in problems[1]


# --- contradictions: expectations no answer can meet together ------------------------------------

_VALUE = {"value": 1702.0, "unit": "USD_M",
          "source": {"doc": "ACME_FY2025_Results.pptx", "locator": "slide=5,table=1,row=2,col=3"}}


@pytest.mark.parametrize(("case_type", "expected", "reason"), [
    ("refusal", {"clarification": "none", "refuse": True, **_VALUE},
     "contradiction: refuse: true with a value and source"),
    ("numeric", {"clarification": "none", "refuse": True, **_VALUE},
     "contradiction: refuse: true with a value and source"),
    ("refusal", {"clarification": "none", "refuse": True, "narrative_doc": "HK_QBR_2025Q4.pptx"},
     "contradiction: refuse: true with a narrative_doc"),
    ("narrative", {"clarification": "none", "refuse": True, "narrative_doc": "HK_QBR_2025Q4.pptx"},
     "contradiction: refuse: true with a narrative_doc"),
    ("refusal", {"clarification": "ask_first", "refuse": True},
     "contradiction: refuse: true with clarification 'ask_first'"),
    ("clarification", {"clarification": "answer_with_assumptions", "refuse": True},
     "contradiction: refuse: true with clarification 'answer_with_assumptions'"),
    ("numeric", {"clarification": "ask_first", "refuse": False, **_VALUE},
     "contradiction: clarification 'ask_first' with a value and source"),
    ("clarification", {"clarification": "ask_first", "refuse": False, **_VALUE},
     "contradiction: clarification 'ask_first' with a value and source"),
    ("clarification", {"clarification": "ask_first", "refuse": False,
                       "narrative_doc": "HK_QBR_2025Q4.pptx"},
     "contradiction: clarification 'ask_first' with a narrative_doc"),
])
def test_a_contradiction_rejects_the_file_naming_file_line_and_what_to_change(
        tmp_path, case_type, expected, reason):
    path = write(tmp_path, NUM_001, refusal(id="bad-1", case_type=case_type, expected=expected))
    with pytest.raises(GoldenSetError) as err:
        load_golden_set(path)
    assert str(err.value).startswith(f"{path}:2 (id 'bad-1'): {reason}")
    assert "drop expected." in str(err.value) or "set clarification 'none'" in str(err.value)
    assert [e.line for e in check_golden_set(path).errors] == [2]


@pytest.mark.parametrize(("case_type", "expected"), [
    ("numeric", {"clarification": "answer_with_assumptions", "refuse": False, **_VALUE}),
    ("clarification", {"clarification": "ask_first", "refuse": False}),
    ("refusal", {"clarification": "none", "refuse": True}),
])
def test_what_is_not_a_contradiction_still_loads(tmp_path, case_type, expected):
    path = write(tmp_path, refusal(id="ok-1", case_type=case_type, expected=expected))
    assert [c.id for c in load_golden_set(path)] == ["ok-1"]


def test_the_committed_golden_set_holds_no_contradiction():
    assert check_golden_set(paths.QA_GOLDEN_SET).errors == []


# --- expected.relevant: the passages a case needs (retrieval/relevance.py) -----------------------

NARRATIVE = {"id": "nar-x", "question": "What are the latest regulatory developments in China?",
             "case_type": "narrative",
             "expected": {"clarification": "none", "refuse": False,
                          "narrative_doc": "REG_WATCH_CN.pptx"},
             "tags": {"topic": "REG", "scope": "ACME_CN", "qtype": "regulatory"},
             "reference_date": "2026-06-12"}


def narrative(relevant) -> str:
    record = json.loads(json.dumps(NARRATIVE))
    record["expected"]["relevant"] = relevant
    return json.dumps(record, ensure_ascii=False)


@pytest.mark.parametrize("relevant, reason", [
    ([], "expected.relevant must be a non-empty list"),
    ({"doc": "a"}, "expected.relevant must be a non-empty list"),
    ([{"page": 2}], "missing field 'expected.relevant[0].doc'"),
    ([{"doc": "a", "pgae": 2}], "unknown field(s) 'expected.relevant[0].pgae'"),
    ([{"doc": "a", "page": 0}], "a page is a whole number from 1, got 0"),
    ([{"doc": "a", "pages": []}], "pages must be a non-empty list"),
    ([{"doc": "a", "text": " "}], "expected.relevant[0].text is empty"),
    ([{"doc": 3}], "wrong type for 'expected.relevant[0].doc'"),
])
def test_a_bad_relevant_list_names_file_line_and_reason(tmp_path, relevant, reason):
    path = write(tmp_path, NUM_001, narrative(relevant))
    with pytest.raises(GoldenSetError) as err:
        load_golden_set(path)
    assert str(err.value).startswith(f"{path}:2 (id 'nar-x'): ") and reason in str(err.value)


def test_relevance_is_checked_against_the_kb(tmp_path):
    good = narrative([{"doc": "REG_WATCH_CN.pptx", "text": "分红险新规"}, {"doc": "CN_QBR_2025.pptx"},
                      {"doc": "ACME_FY2025_Results.pptx", "locator": "slide=6"}])
    path = write(tmp_path, good)
    load_golden_set(path)
    text = load_golden_set(path)[0].expected["relevant"][0]
    assert text == {"doc": "REG_WATCH_CN.pptx", "text": "分红险新规"}
    assert check_against_kb(path, paths.KB_DIR) == []
    missing_text = json.loads(good)
    missing_text["expected"]["relevant"][0]["text"] = "words no passage holds"
    missing_doc = json.loads(good)
    missing_doc["id"] = "nar-y"
    missing_doc["expected"]["relevant"][1]["doc"] = "NOPE.pptx"
    fact_text = json.loads(good)
    fact_text["id"] = "nar-z"
    fact_text["expected"]["relevant"][2]["text"] = "1702"
    path = write(tmp_path, json.dumps(missing_text), json.dumps(missing_doc),
                 json.dumps(fact_text), name="bad.jsonl")
    problems = check_against_kb(path, paths.KB_DIR)
    assert len(problems) == 3
    assert f"{path}:1" in problems[0] and "'words no passage holds' is not found in " \
        "REG_WATCH_CN.pptx" in problems[0]
    assert f"{path}:2" in problems[1] and "'NOPE.pptx' is not a document" in problems[1]
    assert f"{path}:3" in problems[2] and "is a fact source" in problems[2]
