"""Facts and ground-truth files (extraction_records.py): the formats they may take and the one
line that names the file, the line or record, and the reason when they are malformed."""

from __future__ import annotations

import json

import pytest

from ragspine_eval.extraction.records import (
    ExtractionInputError,
    load_facts,
    load_ground_truth,
)

A1 = {"sheet": "Performance", "cell_ref": "A1", "value": "Product line"}
B4 = {"sheet": "Performance", "cell_ref": "B4", "value": 1234567.5, "tags": {}}


def jsonl(path, *lines: str):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_facts_load_with_their_line_numbers_and_skip_blank_lines(tmp_path):
    path = jsonl(tmp_path / "f.jsonl", json.dumps(A1), "", json.dumps(B4))
    assert load_facts(path) == [(f"{path}:1", A1), (f"{path}:3", B4)]


@pytest.mark.parametrize("content", [[A1, B4], {"facts": [A1, B4]}])
def test_json_facts_are_an_array_or_an_object_with_facts(tmp_path, content):
    path = tmp_path / "f.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    assert [r for _, r in load_facts(path)] == [A1, B4]


def test_bad_json_on_a_jsonl_line_names_the_line(tmp_path):
    path = jsonl(tmp_path / "f.jsonl", json.dumps(A1), '{"sheet": "Performance", "cell_ref": ')
    with pytest.raises(ExtractionInputError, match=rf"^{path}:2: bad JSON \(Expecting value"):
        load_facts(path)


def test_bad_json_in_a_json_file_names_line_and_column(tmp_path):
    path = tmp_path / "f.json"
    path.write_text('[\n  {"sheet": "S", "cell_ref": "A1"},\n  {"sheet": "S" "cell_ref": "A2"}\n]',
                    encoding="utf-8")
    with pytest.raises(ExtractionInputError, match=rf"^{path}:3:17: bad JSON \(Expecting ','"):
        load_facts(path)


def test_jsonl_content_in_a_json_file_says_to_name_it_jsonl(tmp_path):
    path = tmp_path / "f.json"
    path.write_text(json.dumps(A1) + "\n" + json.dumps(B4) + "\n", encoding="utf-8")
    with pytest.raises(ExtractionInputError, match=r"Extra data.*name the file \*\.jsonl"):
        load_facts(path)


@pytest.mark.parametrize("missing", ["sheet", "cell_ref"])
def test_a_fact_missing_sheet_or_cell_ref_names_its_line(tmp_path, missing):
    broken = {k: v for k, v in B4.items() if k != missing}
    path = jsonl(tmp_path / "f.jsonl", json.dumps(A1), json.dumps(broken))
    with pytest.raises(ExtractionInputError, match=rf"^{path}:2: missing '{missing}'"):
        load_facts(path)


def test_a_json_fact_is_named_by_its_index(tmp_path):
    path = tmp_path / "f.json"
    path.write_text(json.dumps({"facts": [A1, {"sheet": "S"}]}), encoding="utf-8")
    with pytest.raises(ExtractionInputError, match=rf"^{path}: facts\[1\]: missing 'cell_ref'"):
        load_facts(path)


def test_a_facts_file_of_the_wrong_shape_says_what_it_expected(tmp_path):
    path = tmp_path / "f.json"
    path.write_text('{"rows": []}', encoding="utf-8")
    with pytest.raises(ExtractionInputError, match="expected an array of facts or an object"):
        load_facts(path)


def test_missing_and_undecodable_files_are_named(tmp_path):
    with pytest.raises(ExtractionInputError, match="no such facts file"):
        load_facts(tmp_path / "nope.json")
    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"sheet": "\xff"}\n')
    with pytest.raises(ExtractionInputError, match="not UTF-8"):
        load_facts(path)


def test_ground_truth_loads_cells_and_keeps_its_metadata(tmp_path):
    path = tmp_path / "gt.json"
    path.write_text(json.dumps({"document": "mine.xlsx", "cells": [A1, B4]}), encoding="utf-8")
    truth = load_ground_truth(path)
    assert truth["document"] == "mine.xlsx" and truth["cells"] == [A1, B4]
    path.write_text(json.dumps([A1]), encoding="utf-8")
    assert load_ground_truth(path) == {"document": None, "cells": [A1]}


@pytest.mark.parametrize("document", [5, "", "  ", ["q3.xlsx"]])
def test_a_ground_truth_document_that_is_no_file_name_is_named(tmp_path, document):
    path = tmp_path / "gt.json"
    path.write_text(json.dumps({"document": document, "cells": [A1]}), encoding="utf-8")
    with pytest.raises(ExtractionInputError,
                       match=rf"^{path}: \"document\" must be the file name of the document"):
        load_ground_truth(path)


@pytest.mark.parametrize("document, name", [("q3.xlsx", "q3.xlsx"), ("reports/q3.xlsx", "q3.xlsx"),
                                            (None, None)])
def test_stated_document_is_the_file_name_the_ground_truth_names(tmp_path, document, name):
    from ragspine_eval.extraction.records import stated_document

    path = tmp_path / "gt.json"
    path.write_text(json.dumps({"document": document, "cells": [A1]}), encoding="utf-8")
    assert stated_document(load_ground_truth(path)) == name


def test_a_ground_truth_cell_missing_cell_ref_is_named_by_its_index(tmp_path):
    path = tmp_path / "gt.json"
    path.write_text(json.dumps({"cells": [A1, {"sheet": "Performance", "value": 3}]}),
                    encoding="utf-8")
    with pytest.raises(ExtractionInputError, match=rf"^{path}: cells\[1\]: missing 'cell_ref'"):
        load_ground_truth(path)


def test_a_duplicate_locator_names_both_places(tmp_path):
    path = jsonl(tmp_path / "f.jsonl", json.dumps(A1), json.dumps(B4), json.dumps(A1))
    records = load_facts(path)
    from ragspine_eval.extraction.records import check_unique

    with pytest.raises(ExtractionInputError,
                       match=rf"{path}:3: Performance!A1 appears twice .*first at {path}:1"):
        check_unique(records, "facts")
