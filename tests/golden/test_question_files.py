"""The engine's question files read strictly: every format, file:line errors, the engine's
lenient defaults kept (an id q<N>, expected from a golden-set object, tags)."""

from __future__ import annotations

import json

import pytest

from ragspine_eval.golden.question_files import (
    QuestionFileError,
    check_question_file,
    is_question_file,
    load_question_file,
)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_jsonl_questions_keep_pages_docs_expected_and_tags(tmp_path):
    path = write(tmp_path, "q.jsonl", "\n".join(json.dumps(r) for r in [
        {"id": "a", "question": " what ", "pages": "1, 3-4", "doc": ["x.pdf", "y"], "cat": "k"},
        {"question": "b", "expected": 38.0},
        {"question": "c", "expected": {"value": 12.5, "source": {"doc": "z.xlsx"}}},
        {"question": "d", "page": 2, "pages": None},
    ]) + "\n\n")
    a, b, c, d = load_question_file(path)
    assert (a.id, a.question, a.page_groups, a.docs, a.tags, a.line) == (
        "a", "what", (frozenset({1, 3, 4}),), ("x.pdf", "y"), {"cat": "k"}, 1)
    assert (b.id, b.expected, b.basis) == ("q2", "38", "content")
    assert (c.expected, c.docs) == ("12.5", ("z.xlsx",))
    assert d.page_groups == () and d.basis == "none"  # `pages` given (null) wins over `page`


@pytest.mark.parametrize(("line", "reason"), [
    ({"question": ""}, "missing question"),
    ({"question": 3}, "question must be a text"),
    ({"question": "x", "pages": 0}, "pages count from 1"),
    ({"question": "x", "pages": "5-3"}, "neither a page number nor a range"),
    ({"question": "x", "pages": True}, "not a page number"),
    ({"question": "x", "doc": 7}, "doc must be a document name"),
    ({"question": "x", "expected": [1]}, "expected must be a text or a number"),
    ({"question": "x", "tags": ["a"]}, "is a tag and must hold a text"),
])
def test_a_bad_question_names_its_file_line_and_reason(tmp_path, line, reason):
    path = write(tmp_path, "q.jsonl", '{"question": "fine"}\n' + json.dumps(line) + "\n")
    with pytest.raises(QuestionFileError, match=reason) as err:
        load_question_file(path)
    assert str(err.value).startswith(f"{path}:2")


def test_a_key_given_twice_and_a_duplicate_id_are_errors(tmp_path):
    path = write(tmp_path, "q.jsonl", '{"question": "a", "question": "b"}\n')
    with pytest.raises(QuestionFileError, match=r":1: .*appears twice"):
        load_question_file(path)
    path = write(tmp_path, "d.jsonl", '{"id": 1, "question": "a"}\n{"id": "1", "question": "b"}\n')
    with pytest.raises(QuestionFileError, match=r"d.jsonl:2 \(id '1'\): the id is given twice "
                                                r"\(first on line 1\)"):
        load_question_file(path)


def test_check_collects_every_problem_and_keeps_the_valid_questions(tmp_path):
    path = write(tmp_path, "q.jsonl", '{"question": "a"}\n{"question": ""}\nnot json\n'
                                      '{"question": "b", "page": -1}\n')
    cases, errors = check_question_file(path)
    assert [c.question for c in cases] == ["a"]
    assert [e.line for e in errors] == [2, 3, 4]


def test_json_array_object_csv_and_txt(tmp_path):
    arr = write(tmp_path, "a.json", json.dumps([{"question": "a"}, {"question": "b", "page": 9}],
                                               indent=2))
    assert [(c.id, c.line) for c in load_question_file(arr)] == [("q1", 2), ("q2", 5)]
    obj = write(tmp_path, "o.json", '{"questions": [\n {"question": "x"},\n {"question": ""}]}')
    with pytest.raises(QuestionFileError, match=r"o.json:3 \(id 'q2'\): missing question"):
        load_question_file(obj)
    bad = write(tmp_path, "b.json", '{"items": []}')
    with pytest.raises(QuestionFileError, match="an array of questions"):
        load_question_file(bad)
    csv = write(tmp_path, "q.csv", "id,question,pages,doc,topic\n1,hello,2-3,d.pdf,t\n2,,,,\n")
    cases, errors = check_question_file(csv)
    assert cases[0].page_groups == (frozenset({2, 3}),) and cases[0].tags == {"topic": "t"}
    assert [(e.line, e.case_id) for e in errors] == [(3, "2")]
    txt = write(tmp_path, "q.txt", "# comment\nfirst question\n\nsecond\n")
    assert [(c.id, c.question, c.line) for c in load_question_file(txt)] == [
        ("q1", "first question", 2), ("q2", "second", 4)]


def test_an_empty_file_an_unknown_suffix_and_a_missing_file(tmp_path):
    with pytest.raises(QuestionFileError, match="holds no question"):
        load_question_file(write(tmp_path, "e.jsonl", "\n"))
    with pytest.raises(QuestionFileError, match="not a question file"):
        load_question_file(write(tmp_path, "q.yaml", "question: a"))
    with pytest.raises(QuestionFileError, match="no such file"):
        load_question_file(tmp_path / "absent.jsonl")


def test_a_qa_golden_set_is_not_a_question_file(tmp_path):
    golden = write(tmp_path, "g.jsonl", json.dumps({"id": "x", "case_type": "numeric"}) + "\n")
    assert not is_question_file(golden)
    assert is_question_file(write(tmp_path, "q.jsonl", '{"question": "a"}\n'))
    assert not is_question_file(tmp_path / "q.md")


def test_the_fingerprint_covers_what_a_question_asserts_not_its_tags(tmp_path):
    one = load_question_file(write(tmp_path, "a.jsonl", '{"question": "a", "pages": 1, "t": 1}'))
    two = load_question_file(write(tmp_path, "b.jsonl", '{"question": "a", "pages": 1, "t": 2}'))
    three = load_question_file(write(tmp_path, "c.jsonl", '{"question": "a", "pages": 2}'))
    assert one[0].fingerprint() == two[0].fingerprint() != three[0].fingerprint()
