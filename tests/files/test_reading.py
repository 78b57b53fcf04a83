"""The strict, bounded reading layer: every hostile JSON kind is a JSONProblem naming the reason,
files and lines are bounded, nothing else ever escapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.files import reading


class Bad(RagspineEvalError):
    pass


@pytest.mark.parametrize(("text", "reason"), [
    ('{"value": 1' + "0" * 400 + "}", "digits, beyond the range of a number"),
    ('{"value": 1' + "0" * 5000 + "}", "5,001 digits"),
    ('{"value": 1e400}', "beyond the range of a number"),
    ('{"value": -1e400}', "beyond the range of a number"),
    ("[" * 1500 + "]" * 1500, "nested more than 64 levels deep"),
    ('{"a": ' * 990 + "1" + "}" * 990, "nested more than 64 levels deep"),
    ('{"id": "q\\ud800"}', "a lone surrogate (\\ud800) in id"),
    ('{"id": "\\udfff x"}', "a lone surrogate"),
    ('{"id": "clar-\\u0001"}', "a control character (\\x01) in id"),
    ('{"id": "\\u001b[31mred"}', "a control character (\\x1b) in id"),
    ('{"a\\u009b": 1}', "in the key a"),
    ('{"cases": [{"id": "x"}, {"id": "\\u0007"}]}', "in cases[1].id"),
    ('{"id": "a", "id": "b"}', "the key 'id' appears twice"),
    ('{"x": {"k": 1, "k": 1}}', "the key 'k' appears twice"),
    ("{]", "not valid JSON"),
])
def test_every_hostile_kind_is_a_json_problem_naming_the_reason(text, reason):
    with pytest.raises(reading.JSONProblem) as err:
        reading.parse_json(text)
    assert reason in err.value.reason
    assert len(str(err.value)) < 300


def test_valid_json_is_read_as_json_reads_it():
    text = '{"q": "香港\\t营收\\n", "n": [1, 2.5, -3e10, null, true], "pair": "\\ud83d\\ude00"}'
    assert reading.parse_json(text) == json.loads(text)


def test_an_engine_answer_may_hold_control_characters_but_no_lone_surrogate():
    assert reading.parse_json('{"answer": "a\\u001bb"}', controls=True) == {"answer": "a\x1bb"}
    with pytest.raises(reading.JSONProblem, match="lone surrogate"):
        reading.parse_json('{"answer": "\\ud800"}', controls=True)


def test_a_duplicated_key_message_is_cut_to_a_readable_length():
    key = "k" * 2_000_000
    with pytest.raises(reading.JSONProblem) as err:
        reading.parse_json(f'{{"{key}": 1, "{key}": 2}}')
    assert len(err.value.reason) < 200


def fail(reason: str) -> Bad:
    return Bad(f"f: {reason}")


def test_an_endless_stream_is_refused_after_its_bound(monkeypatch):
    monkeypatch.setenv("RAGSPINE_EVAL_MAX_BASELINE_MB", "0.5")
    with pytest.raises(Bad, match="larger than the 0.5 MiB allowed for a baseline file"):
        reading.read_bytes(Path("/dev/zero"), "baseline", fail)
    with pytest.raises(Bad, match="line 1: the line is longer than the 1 MiB allowed"):
        list(reading.iter_lines(Path("/dev/zero"), "golden", fail))


def test_the_bound_of_a_kind_is_overridden_by_its_environment_variable(monkeypatch, tmp_path):
    path = tmp_path / "r.json"
    path.write_bytes(b"[" + b"1," * 1000 + b"1]")
    assert len(reading.read_json(path, "report", fail)) == 1001
    monkeypatch.setenv("RAGSPINE_EVAL_MAX_REPORT_MB", "0.001")
    with pytest.raises(Bad, match="RAGSPINE_EVAL_MAX_REPORT_MB"):
        reading.read_json(path, "report", fail)
    monkeypatch.setenv("RAGSPINE_EVAL_MAX_REPORT_MB", "lots")
    with pytest.raises(RagspineEvalError, match="expected a positive number of MiB"):
        reading.size_limit("report")


def test_jsonl_lines_are_numbered_and_invalid_utf8_names_its_line(tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"\xef\xbb\xbf{}\r\n\n{}\n\xff\n")
    lines = reading.iter_lines(path, "facts", fail)
    assert next(lines) == (1, "{}") and next(lines) == (2, "") and next(lines) == (3, "{}")
    with pytest.raises(Bad, match="line 4: not UTF-8 text"):
        next(lines)


def test_clip_escapes_control_characters_and_cuts():
    assert reading.clip("a\x1b[2Jb") == "'a\\x1b[2Jb'"
    assert len(reading.clip("x" * 10_000)) == reading.MESSAGE_CLIP


@seed(14)
@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.binary().map(lambda b: b.decode("utf-8", "replace")),
                 st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                              lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
                              max_leaves=20).map(lambda v: json.dumps(v))))
def test_parse_json_is_total_it_returns_or_raises_a_json_problem(text):
    try:
        data = reading.parse_json(text)
    except reading.JSONProblem:
        return
    json.dumps(data, ensure_ascii=False).encode("utf-8")  # whatever it returns can be written


def test_a_lone_surrogate_in_a_list_of_strings_is_named_by_its_place():
    # such lists are searched whole first; the one that holds it is walked to name where
    from ragspine_eval.files.reading import JSONProblem, check_tree

    check_tree(["plain", "文本", "tab\tand\nnewline"], controls=True)
    with pytest.raises(JSONProblem, match=r"lone surrogate .* in \[2\]"):
        check_tree(["plain", "文本", "bad \ud800 text"], controls=True)
    with pytest.raises(JSONProblem, match=r"control character .* in \[1\]"):
        check_tree(["plain", "bell \x07"])


def test_a_lone_surrogate_in_a_shallow_tree_is_named_by_its_place():
    from ragspine_eval.files.reading import JSONProblem, check_tree

    sources = [{"doc": "a.pptx", "locator": "slide=1"}, {"doc": "b.pdf", "page": 3}]
    check_tree(sources, controls=True)
    with pytest.raises(JSONProblem, match=r"lone surrogate .* in \[1\]\.doc"):
        check_tree([sources[0], {"doc": "b\udc80.pdf"}], controls=True)
    with pytest.raises(JSONProblem, match=r"lone surrogate .* in the key \[0\]"):
        check_tree([{"k\ud800": 1}], controls=True)


@pytest.mark.parametrize("digits, most, value", [
    ("12", 100_000, 12), ("0012", 100_000, 12), ("100000", 100_000, 100_000),
    ("100001", 100_000, None), ("0000001", 100_000, None),  # longer than the bound is written
    ("9" * 200_000, 100_000, None), ("0" * 200_000 + "1", 100_000, None),
    ("\u0663", 100_000, 3), ("\u0669" * 200_000, 100_000, None),  # any script's digits
])
def test_a_whole_number_past_its_bound_is_none_never_the_int_string_limit(digits, most, value):
    assert reading.whole_number(digits, most) == value


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0123456789\u0660\u0669\u09e6\uff10", min_size=1, max_size=9000))
def test_whole_number_never_raises_on_a_run_of_digits(digits):
    got = reading.whole_number(digits, reading.MAX_PAGE)
    assert got is None or 0 <= got <= reading.MAX_PAGE
