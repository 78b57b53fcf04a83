"""An nl-answers-gold file read strictly: an unknown key at any level is exit 2 naming the file,
the key's line, the case and the nearest known key; every key the format documents is taken."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragspine_eval.golden import nl_schema
from ragspine_eval.golden.nl_answers import load_answer_cases
from ragspine_eval.golden.question_case import QuestionFileError
from ragspine_eval.golden.question_files import check_question_file, load_question_file

CLAIM = {"kind": "number", "page_index": 0, "value": "94.97"}


def case(**over):
    raw = {"case_id": "c", "case_class": "positive", "question": {"en": "How much rice?"},
           "expected": {"status": "answered", "required_claims": [dict(CLAIM)]}}
    raw.update(over)
    return raw


def write(tmp_path, cases, **top):
    path = tmp_path / "gold.json"
    payload = {"schema_version": "nl-answers-gold-v1", **top, "cases": cases}
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def line_of(path, text):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_the_issues_typo_is_named_with_the_key_it_meant(tmp_path):
    bad = case()
    bad["expected"] = {"status": "answered", "required_claim": [dict(CLAIM)]}
    path = write(tmp_path, [case(case_id="ok"), {**bad, "case_id": "typo"}])
    with pytest.raises(QuestionFileError) as err:
        load_answer_cases(path)
    line = line_of(path, '"required_claim"')
    assert str(err.value) == (f"{path}:{line} (id 'typo'): `required_claim`: unknown key in "
                              f"expected; did you mean `required_claims`?")
    # the retrieval reader (the engine's batch formats) refuses it the same way
    with pytest.raises(QuestionFileError, match="did you mean `required_claims`"):
        load_question_file(path)


# one unknown key at each level of the format, and the key each should suggest
LEVELS = [
    (lambda p: p.update(case_list=[]), "the file's top level", "cases"),
    (lambda p: p.update(pinned={"document_sha25": "a" * 64}), "pinned", "document_sha256"),
    (lambda p: p.update(documents=[{"file": "a.pdf", "sha": "a" * 64}]), "documents[0]",
     "sha256"),
    (lambda p: p["cases"][0].update(documet_sha256="a" * 64), "the case", "document_sha256"),
    (lambda p: p["cases"][0]["question"].update(eng="x"), "question", "en"),
    (lambda p: p["cases"][0].update(request={"rerank": True, "filter": {}}), "request",
     "filters"),
    (lambda p: p["cases"][0]["expected"].update(forbiden_numbers=["1"]), "expected",
     "forbidden_numbers"),
    (lambda p: p["cases"][0]["expected"]["required_claims"][0].update(page=0),
     "required claim 1", "page_index"),
    (lambda p: p["cases"][0]["expected"].update(required_claims=[
        {"any_of": [dict(CLAIM), {**CLAIM, "qoute": "x"}]}]), "required claim 1, alternative 2",
     "quote"),
    (lambda p: p["cases"][0]["expected"].update(required_claims=[
        {"any_off": [dict(CLAIM)]}]), "required claim 1", None),
    (lambda p: p["cases"][0].update(model_output={"answr": ""}), "model_output", "answer"),
    (lambda p: p["cases"][0]["expected"].update(filters_expected={"period": []}),
     "expected.filters_expected", "periods"),
]


@pytest.mark.parametrize(("edit", "where", "near"), LEVELS)
def test_an_unknown_key_at_every_level_is_named_with_its_nearest(tmp_path, edit, where, near):
    payload = {"schema_version": "nl-answers-gold-v1", "cases": [case()]}
    edit(payload)
    path = tmp_path / "gold.json"
    path.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    with pytest.raises(QuestionFileError) as err:
        load_answer_cases(path)
    text = str(err.value)
    assert f"unknown key in {where}" in text, text
    assert (f"did you mean `{near}`?" in text) if near else ("its keys are" in text)
    assert text.startswith(f"{path}:")
    key = text.split("`")[1]
    line = line_of(path, json.dumps(key))
    assert text.startswith((f"{path}:{line} ", f"{path}:{line}:"))  # the key's own line


def test_golden_lists_every_unknown_key_and_keeps_the_valid_cases(tmp_path):
    bad = case(case_id="b", documnt="a.pdf")
    bad["question"] = {"en": "q", "zn": "问"}
    path = write(tmp_path, [case(case_id="a"), bad], extra_top=1)
    cases, errors = check_question_file(path)
    assert [c.id for c in cases] == ["a:en"]
    reasons = [e.reason for e in errors]
    assert reasons == ["`extra_top`: unknown key in the file's top level; its keys are "
                       + ", ".join(nl_schema.TOP),
                       "`documnt`: unknown key in the case; did you mean `document`?",
                       "`zn`: unknown key in question; its keys are en, zh"]
    assert [e.case_id for e in errors] == [None, "b", "b"]


def test_every_documented_key_of_the_engines_strict_schema_is_accepted(tmp_path):
    full = case(document_sha256="A" * 64, rationale="why", evidence="response.json",
                request={"rerank": True, "filters": {"periods": ["1H2026"], "regions": []},
                         "repeat_of": None},
                model_output={"abstain": False, "answer": "x", "claims": [
                    {"claim_id": "c1", "kind": "quote", "page_index": 0, "field_path": "p",
                     "text": "t", "row": None, "col": None, "header": None}]},
                offline_only=False, tags=["t"])
    full["expected"].update(abstain_detail_contains=None, min_claims=1,
                            required_citation_fields=["page_index"], forbidden_numbers=[],
                            filters_expected={"any_of": [{"periods": []}, {"regions": []}]},
                            filters_relaxed=False, cache_hit=None, known_gap=False)
    full["expected"]["required_claims"][0].update(field_path="a.b", quote="94.97")
    path = write(tmp_path, [full], corpus="c", review=["r"], minimum_positive_cases=1,
                 pinned={"document_sha256": "b" * 64, "processing_id": "x",
                         "snapshot_id": "y", "selected_physical_pages": [1],
                         "member_count": 1, "embedding_fingerprint": "z"},
                 documents=[{"file": "agstat.pdf", "sha256": "a" * 64, "pages": 1}])
    (loaded,) = load_answer_cases(path)
    assert loaded.document.file == "agstat.pdf" and loaded.document.sha256 == "a" * 64
    assert loaded.claims[0][0].document == loaded.document


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(nl_schema.EXPECTED), st.integers(0, 3), st.sampled_from("xq_-"))
def test_a_one_letter_typo_of_a_known_key_is_never_accepted(key, at, letter):
    typo = key[:at] + letter + key[at:]
    problems = list(nl_schema.case_unknown_keys(
        {"case_id": "c", "expected": {"status": "answered", typo: 1}}))
    if typo in nl_schema.EXPECTED:
        assert problems == []
    else:
        assert [(k, w) for k, w, _ in problems] == [(typo, "expected")]
        assert nl_schema.nearest(typo, nl_schema.EXPECTED) is not None


def test_the_golden_command_lists_them_all_with_their_lines(tmp_path, capsys):
    from ragspine_eval.cli.app import main

    bad = case(case_id="b")
    bad["expected"]["required_claims"] = [{"kind": "number", "page": 0, "value": "1"}]
    typo = case(case_id="t")
    typo["expected"] = {"status": "answered", "required_claim": [dict(CLAIM)]}
    path = write(tmp_path, [case(case_id="ok"), bad, typo])
    assert main(["golden", str(path)]) == 2
    out = capsys.readouterr().out
    assert f"INVALID {path}:{line_of(path, '\"page\"')} (id 'b'): `page`: unknown key in " \
           f"required claim 1; did you mean `page_index`?" in out
    assert f"INVALID {path}:{line_of(path, '\"required_claim\"')} (id 't'): `required_claim`" in out
    assert "1 valid questions, 2 invalid line(s)" in out
