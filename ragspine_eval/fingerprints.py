"""Fingerprints: the one short form every input, golden set and baseline entry is named by.

A fingerprint is 16 hex of sha256: over canonical JSON (sorted keys, no spaces, UTF-8 as is) for
data, so key order and whitespace never change it, and over the bytes for a file read whole.
`golden.fingerprint`, `knowledge.kb.kb_fingerprint`, a provenance's inputs and baseline entry,
and the model cassette's requests are all this form, so two of them compare as text.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def canonical_hash(data: Any) -> str:
    """16 hex of sha256 over canonical JSON: key order and whitespace do not matter."""
    text = _CANONICAL_JSON.encode(data)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")), made once
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def golden_fingerprint(case_fingerprints: Mapping[str, str]) -> str:
    """The fingerprint of a whole golden set from {case id: case fingerprint}: the same cases
    asserting the same things give the same value whatever their order in the file."""
    return canonical_hash(sorted(case_fingerprints.items()))


def file_fingerprint(path: str | Path) -> str:
    """16 hex of sha256 over a file's bytes (an input read whole, such as a facts file)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def entry_fingerprint(entry: Mapping[str, Any]) -> str:
    """The fingerprint of one stored baseline entry."""
    return canonical_hash(entry)
