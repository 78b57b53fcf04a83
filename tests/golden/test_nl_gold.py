"""nl-answers-gold v1/v2 read as question cases: a question per case and language, page groups
from the required claims, abstain cases unjudged, adversarial and offline_only left out."""

from __future__ import annotations

import json

import pytest

from ragspine_eval.golden.question_files import QuestionFileError, load_question_file


def gold(tmp_path, cases, version="nl-answers-gold-v1", **extra):
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"schema_version": version, "cases": cases, **extra}, indent=1),
                    encoding="utf-8")
    return path


def case(case_id="c1", case_class="positive", question=None, **expected):
    return {"case_id": case_id, "case_class": case_class,
            "question": question or {"en": "q en", "zh": "q zh"},
            "expected": {"status": "answered", **expected}}


CLAIM = {"kind": "quote", "page_index": 2, "quote": "x"}


def test_questions_per_language_with_page_groups_from_the_claims(tmp_path):
    path = gold(tmp_path, [case(required_claims=[CLAIM, {"any_of": [
        {"kind": "number", "page_index": 0, "value": "1"}, {**CLAIM, "page_index": 4}]}])])
    en, zh = load_question_file(path)
    assert (en.id, en.question, zh.id) == ("c1:en", "q en", "c1:zh")
    assert en.page_groups == (frozenset({3}), frozenset({1, 5}))
    assert en.tags == {"case_class": "positive", "language": "en"} and en.line == 4


def test_abstain_is_unjudged_and_adversarial_and_offline_only_are_left_out(tmp_path):
    abstain = case("a", "abstain", {"en": "none"})
    abstain["expected"]["status"] = "abstained"
    path = gold(tmp_path, [abstain, case("b", "adversarial", required_claims=[CLAIM]),
                           {**case("c", required_claims=[CLAIM]), "offline_only": True},
                           case("d", required_claims=[CLAIM], known_gap=True)])
    cases = load_question_file(path)
    assert [(c.id, c.basis) for c in cases] == [("a:en", "none"), ("d:en", "page"),
                                                ("d:zh", "page")]
    assert cases[1].tags["case_class"] == "known-gap"


@pytest.mark.parametrize(("broken", "reason"), [
    ({"case_class": "other"}, "case_class must be one of"),
    ({"question": {"en": " "}}, "question needs a non-empty en or zh"),
    ({"expected": {"status": "maybe"}}, "expected.status must be one of"),
    ({"expected": {"status": "answered", "required_claims": [{"kind": "q", "page_index": -1,
                                                              "quote": "x"}]}},
     "page_index must be a whole number from 0"),
    ({"expected": {"status": "answered", "required_claims": [{"kind": "q", "page_index": 1}]}},
     "needs a quote, a text or a value"),
])
def test_a_bad_case_names_its_line(tmp_path, broken, reason):
    path = gold(tmp_path, [case("ok"), {**case("bad"), **broken}])
    with pytest.raises(QuestionFileError, match=reason) as err:
        load_question_file(path)
    assert f"{path}:" in str(err.value) and "(id 'bad')" in str(err.value)


def test_v2_needs_its_changelog(tmp_path):
    with pytest.raises(QuestionFileError, match="non-empty `changelog`"):
        load_question_file(gold(tmp_path, [case()], "nl-answers-gold-v2"))
    with pytest.raises(QuestionFileError, match="unknown case 'zz'"):
        load_question_file(gold(tmp_path, [case()], "nl-answers-gold-v2", changelog=[
            {"case_id": "zz", "change": "c", "old": 1, "new": 2, "evidence": "e"}]))
    ok = gold(tmp_path, [case()], "nl-answers-gold-v2", changelog=[
        {"case_id": "c1", "change": "c", "old": 1, "new": 2, "evidence": "e"}])
    assert len(load_question_file(ok)) == 2
