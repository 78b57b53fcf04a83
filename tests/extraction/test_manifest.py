"""A manifest of one's own documents: loaded whole or refused with the entry and the reason."""

from __future__ import annotations

import json

import pytest

from ragspine_eval.extraction.fixtures import DOCUMENT_SETS
from ragspine_eval.extraction.manifest import load_manifest
from ragspine_eval.extraction.records import ExtractionInputError


def write(path, data) -> object:
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_entries_become_targets_keyed_by_file_name_with_paths_from_the_manifests_folder(tmp_path):
    xlsx, pdf = DOCUMENT_SETS["xlsx"], DOCUMENT_SETS["pdf"]
    (tmp_path / "gt.json").write_text('{"cells": []}', encoding="utf-8")
    manifest = write(tmp_path / "m.json", {"baseline": "b.json", "documents": [
        {"document": str(xlsx.document_path()), "ground_truth": "gt.json"},
        {"document": str(pdf.document_path()), "ground_truth": str(pdf.ground_truth_path())}]})
    targets, baseline = load_manifest(manifest)
    assert [t.key for t in targets] == ["product_lines.xlsx", "product_tables.pdf"]
    assert targets[0].ground_truth == tmp_path / "gt.json" and baseline == tmp_path / "b.json"


@pytest.mark.parametrize(("data", "reason"), [
    ("{", "bad JSON"),
    ({"documents": []}, "non-empty \"documents\""),
    ({"documents": [{"document": "a.xlsx"}]}, r"documents\[0\]: each entry needs"),
    ({"documents": [{"document": "nope.xlsx", "ground_truth": "m.json"}]}, "no such document"),
])
def test_a_bad_manifest_is_refused_naming_the_entry_and_the_reason(tmp_path, data, reason):
    with pytest.raises(ExtractionInputError, match=reason):
        load_manifest(write(tmp_path / "m.json", data))


def test_two_documents_of_one_file_name_are_refused(tmp_path):
    doc = str(DOCUMENT_SETS["xlsx"].document_path())
    gt = str(DOCUMENT_SETS["xlsx"].ground_truth_path())
    manifest = write(tmp_path / "m.json", {"documents": [
        {"document": doc, "ground_truth": gt}, {"document": doc, "ground_truth": gt}]})
    with pytest.raises(ExtractionInputError, match=r"documents\[1\]: a second document"):
        load_manifest(manifest)
