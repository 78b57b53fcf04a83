"""The fast indented JSON writer gives the standard library's bytes for every JSON tree, and
hands anything else to the standard library."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from ragspine_eval.files import write_json_atomic
from ragspine_eval.files.jsontext import indented_pieces, indented_text, value_text

scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
           | st.text())
trees = st.recursive(scalars, lambda inner: st.lists(inner, max_size=6)
                     | st.tuples(inner, inner)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=6), max_leaves=40)


def stdlib(data) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


@settings(max_examples=300, deadline=None)
@given(trees)
def test_the_text_is_the_standard_librarys(data):
    assert indented_text(data) == stdlib(data)
    assert b"".join(indented_pieces(data)).decode("utf-8") == stdlib(data) + "\n"


@settings(max_examples=40, deadline=None)
@given(trees, trees)
def test_a_long_list_written_in_pieces_is_the_same_text(item, other):
    data = {"head": other, "cases": [item, other] * 400, "tail": [item]}  # pieces of 4,096
    assert b"".join(indented_pieces(data)).decode("utf-8") == stdlib(data) + "\n"


@settings(max_examples=60, deadline=None)
@given(trees, trees, st.integers(min_value=0, max_value=700))
def test_a_value_given_as_its_text_is_the_same_text(item, other, n):
    # a top-level value written from the text value_text made of it (qa/report_file.py keeps
    # the case list's): the same bytes, a long list or a short one
    data = {"head": other, "cases": [item, other] * n, "tail": item}
    given_text = {"cases": value_text(data["cases"]), "tail": value_text(data["tail"])}
    assert b"".join(indented_pieces(data, given_text)).decode("utf-8") == stdlib(data) + "\n"


class Name(str):
    pass


def test_what_it_does_not_take_is_written_by_the_standard_library(tmp_path):
    for data in ({1: "an int key", None: [float("inf"), -math.inf]}, {"k": Name("a subclass")},
                 {"deep": [[[[[]]]]]}):
        write_json_atomic(tmp_path / "out.json", data)
        assert (tmp_path / "out.json").read_text(encoding="utf-8") == stdlib(data) + "\n"
    assert indented_text({"k": Name("x")}) == stdlib({"k": Name("x")})
