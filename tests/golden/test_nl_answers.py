"""nl-answers-gold files read as answer cases: every field a verdict depends on, and every problem
as one line `file:line (id 'x'): reason`."""

from __future__ import annotations

import json

import pytest

from ragspine_eval.golden.nl_answers import SKIP_ADVERSARIAL, SKIP_OFFLINE_ONLY, load_answer_cases
from ragspine_eval.golden.question_case import QuestionFileError


def write(tmp_path, cases, version="nl-answers-gold-v1", **extra):
    path = tmp_path / "gold.json"
    body = ",\n".join(json.dumps(c, ensure_ascii=False) for c in cases)
    head = "".join(f'"{k}": {json.dumps(v)},\n' for k, v in extra.items())
    path.write_text(f'{{"schema_version": "{version}",\n{head}"cases": [\n{body}\n]}}\n',
                    encoding="utf-8")
    return path


def case(case_id="c", **expected):
    return {"case_id": case_id, "case_class": expected.pop("case_class", "positive"),
            "question": expected.pop("question", {"en": " What? ", "zh": "  "}),
            "expected": {"status": "answered", **expected}}


def test_claims_alternatives_abstention_gaps_and_skips_are_kept(tmp_path):
    path = write(tmp_path, [
        case("a", required_claims=[{"kind": "quote", "page_index": 2, "quote": "x"},
                                   {"any_of": [{"kind": "n", "page_index": 0, "value": "5",
                                                "unit": "%"},
                                               {"kind": "t", "page_index": 1, "text": "y"}]}]),
        case("b", case_class="abstain", status="abstained", forbidden_numbers=["42"]),
        case("g", known_gap=True, known_gap_detail="why", grounded_only=True),
        {**case("adv"), "case_class": "adversarial"},
        {**case("off"), "offline_only": True, "tags": ["t1", 2]},
    ])
    a, b, g, adv, off = load_answer_cases(path)
    assert a.questions == (("en", "What?"),) and a.line == 3 and a.kind == "claims"
    assert [len(c) for c in a.claims] == [1, 2]
    assert a.claims[0][0].page == 3 and a.claims[0][0].describe() == "p3:x"
    assert a.claims[1][0].describe() == "p1:5%"
    assert b.kind == "abstain" and b.forbidden_numbers == ("42",)
    assert (g.case_class, g.known_gap_detail, g.kind) == ("known-gap", "why", "grounded")
    assert adv.skip_reason == SKIP_ADVERSARIAL and off.skip_reason == SKIP_OFFLINE_ONLY
    assert off.tags == ("t1", "2")


@pytest.mark.parametrize(("bad", "reason"), [
    ({"case_class": "other"}, "case_class must be one of"),
    ({"question": {"en": " "}}, "question needs a non-empty en or zh"),
    ({"expected": {"status": "maybe"}}, "expected.status must be one of"),
    ({"expected": {"status": "answered", "required_claims": [{"any_of": []}]}},
     "any_of must be a non-empty array"),
    ({"expected": {"status": "answered", "required_claims": [{"kind": "q", "page_index": -1,
                                                              "quote": "x"}]}},
     "page_index must be a whole number from 0"),
    ({"expected": {"status": "answered", "required_claims": [{"kind": "q", "page_index": 0}]}},
     "needs a quote, a text or a value"),
    ({"expected": {"status": "answered", "forbidden_numbers": [42]}},
     "forbidden_numbers must be an array of texts"),
])
def test_a_bad_case_names_its_file_line_and_id(tmp_path, bad, reason):
    path = write(tmp_path, [case("ok"), {**case("bad"), **bad}])
    with pytest.raises(QuestionFileError) as err:
        load_answer_cases(path)
    assert str(err.value).startswith(f"{path}:4 (id 'bad')") and reason in str(err.value)


def test_duplicate_ids_and_a_v2_file_without_changelog_are_refused(tmp_path):
    with pytest.raises(QuestionFileError, match="used before"):
        load_answer_cases(write(tmp_path, [case("a"), case("a")]))
    with pytest.raises(QuestionFileError, match="changelog"):
        load_answer_cases(write(tmp_path, [case("a")], version="nl-answers-gold-v2"))
    ok = write(tmp_path, [case("a")], version="nl-answers-gold-v2",
               changelog=[{"case_id": "a", "change": "c", "old": 1, "new": 2,
                           "evidence": "p1"}])
    assert [c.case_id for c in load_answer_cases(ok)] == ["a"]
    with pytest.raises(QuestionFileError, match="schema_version"):
        load_answer_cases(write(tmp_path, [case("a")], version="v9"))
