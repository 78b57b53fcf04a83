"""The documents an nl-answers-gold file names: `documents[]`, a case's document by sha256 or
file name, a claim's own, the pinned release's as the default, and a clash named."""

from __future__ import annotations

import json

import pytest

from ragspine_eval.golden.nl_answers import load_answer_cases
from ragspine_eval.golden.question_case import QuestionFileError

A, B = "a" * 64, "B" * 64
LISTED = [{"file": "agstat.pdf", "sha256": A, "pages": 1}, {"file": "rain.pdf", "sha256": B}]


def claim(**over):
    return {"kind": "number", "page_index": 0, "value": "1", **over}


def case(case_id, claims=None, **over):
    return {"case_id": case_id, "case_class": "positive", "question": {"en": "q"},
            "expected": {"status": "answered", "required_claims": claims or [claim()]}, **over}


def load(tmp_path, cases, **top):
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"schema_version": "nl-answers-gold-v1", **top,
                                "cases": cases}, indent=1), encoding="utf-8")
    return {c.case_id: c for c in load_answer_cases(path)}


def test_a_case_names_its_document_by_sha256_or_by_file_name_completed_from_the_list(tmp_path):
    got = load(tmp_path, [case("by-sha", document_sha256=A), case("by-file", document="RAIN.pdf"),
                          case("unlisted", document_sha256="c" * 64), case("none")],
               documents=LISTED)
    assert got["by-sha"].document.to_dict() == {"file": "agstat.pdf", "sha256": A, "pages": 1}
    assert got["by-file"].document.to_dict() == {"file": "rain.pdf", "sha256": B.lower()}
    assert got["unlisted"].document.to_dict() == {"sha256": "c" * 64}
    assert got["none"].document is None and got["none"].claims[0][0].document is None
    # each claim carries its case's document
    assert got["by-sha"].claims[0][0].document == got["by-sha"].document


def test_a_claim_may_name_its_own_document_and_the_pinned_one_is_the_default(tmp_path):
    got = load(tmp_path, [case("mixed", [claim(), {"any_of": [claim(document="rain.pdf"),
                                                               claim()]}]),
                          case("own", document="agstat.pdf")],
               documents=LISTED, pinned={"document_sha256": A})
    mixed = got["mixed"]
    assert mixed.document.file == "agstat.pdf"  # the pinned release's document
    assert [a.document.file for g in mixed.claims for a in g] == ["agstat.pdf", "rain.pdf",
                                                                  "agstat.pdf"]
    assert [d.file for d in mixed.documents] == ["agstat.pdf", "rain.pdf"]


@pytest.mark.parametrize(("over", "reason"), [
    ({"document_sha256": "abc"}, "document_sha256 must be a sha256: 64 hexadecimal digits"),
    ({"document": " "}, "document must be a file name"),
    ({"document_sha256": A, "document": "rain.pdf"}, "do not name the same document"),
])
def test_a_bad_or_clashing_document_names_the_case(tmp_path, over, reason):
    with pytest.raises(QuestionFileError) as err:
        load(tmp_path, [case("ok"), case("bad", **over)], documents=LISTED)
    assert "(id 'bad')" in str(err.value) and reason in str(err.value)


@pytest.mark.parametrize(("documents", "reason"), [
    ({"file": "a.pdf"}, "`documents` must be an array"),
    ([{"pages": 2}], "documents[0] needs a `file` or a `sha256`"),
    ([{"file": "a.pdf", "pages": 0}], "documents[0].pages must be a whole number from 1"),
])
def test_a_bad_documents_list_is_refused(tmp_path, documents, reason):
    with pytest.raises(QuestionFileError, match=reason.replace("[", r"\[").replace("]", r"\]")):
        load(tmp_path, [case("a")], documents=documents)
