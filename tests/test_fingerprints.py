"""Fingerprints: 16 hex of sha256, blind to key order and whitespace, seeing every edit."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval.fingerprints import canonical_hash, file_fingerprint, golden_fingerprint


def test_golden_fingerprint_ignores_order_and_sees_an_edit():
    cases = {"a": "1111", "b": "2222"}
    assert golden_fingerprint(cases) == golden_fingerprint(dict(reversed(cases.items())))
    assert golden_fingerprint(cases) != golden_fingerprint({"a": "1111", "b": "2223"})
    assert golden_fingerprint(cases) != golden_fingerprint({"a": "1111"})


@given(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=8))
def test_canonical_hash_is_16_hex_and_blind_to_key_order(data):
    reordered = dict(reversed(list(data.items())))
    assert canonical_hash(data) == canonical_hash(reordered)
    assert len(canonical_hash(data)) == 16 and int(canonical_hash(data), 16) >= 0


def test_a_files_fingerprint_is_its_bytes_hash(tmp_path):
    path = tmp_path / "facts.jsonl"
    path.write_bytes(b"x" * (3 << 20))  # more than one block of the reader
    assert file_fingerprint(path) == hashlib.sha256(b"x" * (3 << 20)).hexdigest()[:16]
