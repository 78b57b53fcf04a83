"""The documents an nl-answers-gold file names: its `documents[]`, each case's document and each
claim's own.

The format's keys (the engine's strict schema names a case's document by its sha256; the list
of documents is the multi-document form, this project's reading of it documented in
docs/answers.md):
- top level `documents`: an array of `{"file": name, "sha256": hex, "pages": n}` (`file` or
  `sha256` at least; `pages` the document's page count, optional);
- `pinned.document_sha256`: the document of every case that names none itself (v1's pinned
  release);
- a case's `document_sha256` (64 hex digits) and/or `document` (a file name, as `file` above);
- an anchor's `document_sha256` and/or `document`: that alternative's own document, for a case
  whose claims sit in several documents (it overrides the case's).
A reference given by sha256 takes its file name and page count from `documents[]` when listed
there; one given by file name takes the sha256 and page count of the listed file of that name.

`DocRef` is what a case says (never what a workspace holds: answers/gold_check.py maps each to a
workspace document, by sha256, else by file name).

Invariants: a sha256 is 64 hex digits, kept in lower case; a file name is a non-empty text; a
case's and an anchor's sha256 and file name, given both and both listed, name the same listed
document; every problem is a QuestionFileError naming the file, the case's line and its id.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragspine_eval.files.reading import MAX_PAGE, clip, printable

_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


@dataclass(frozen=True)
class DocRef:
    """A document a case (or claim) names: its sha256 and/or file name, and its page count
    where the file's `documents[]` gives one."""

    sha256: str | None = None
    file: str | None = None
    pages: int | None = None

    def describe(self) -> str:
        """The file name, with the sha256's first 12 digits; or the sha256 alone."""
        file = printable(self.file, 200) if self.file else None  # data, shown escaped
        if file and self.sha256:
            return f"{file} (sha256 {self.sha256[:12]}…)"
        return file or f"sha256 {self.sha256}"

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in (("file", self.file), ("sha256", self.sha256),
                                  ("pages", self.pages)) if v is not None}


Bad = Callable[[str], Exception]


def listed_documents(raw: Any, bad: Bad, bad_at: Callable[[int], Bad] | None = None
                     ) -> tuple[DocRef, ...]:
    """The file's `documents[]` (module docstring); `bad(reason)` the error to raise, and
    `bad_at(i)` the one for a problem of the i-th document (naming its line)."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise bad("`documents` must be an array of {\"file\", \"sha256\", \"pages\"}")
    out = []
    for i, item in enumerate(raw):
        where = f"documents[{i}]"
        fail = bad_at(i) if bad_at is not None else bad
        if not isinstance(item, dict):
            raise fail(f"{where} must be an object")
        sha = _sha(item.get("sha256"), f"{where}.sha256", fail)
        file = _file(item.get("file"), f"{where}.file", fail)
        pages = item.get("pages")
        if pages is not None and (not isinstance(pages, int) or isinstance(pages, bool)
                                  or pages < 1):
            raise fail(f"{where}.pages must be a whole number from 1, got {clip(pages)}")
        if pages is not None and pages > MAX_PAGE:
            raise fail(f"{where}.pages {clip(pages, 24)} is beyond the {MAX_PAGE:,} pages a "
                       f"document may have")
        if sha is None and file is None:
            raise fail(f"{where} needs a `file` or a `sha256`")
        out.append(DocRef(sha, file, pages))
    return tuple(out)


def _sha(value: Any, where: str, bad: Bad) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _HEX64.fullmatch(value):
        raise bad(f"{where} must be a sha256: 64 hexadecimal digits, got {clip(value)}")
    return value.lower()


def _file(value: Any, where: str, bad: Bad) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise bad(f"{where} must be a file name (a non-empty text)")
    return value.strip()


def named_document(raw: Mapping[str, Any], listed: Sequence[DocRef], where: str, bad: Bad
                   ) -> DocRef | None:
    """The document `raw` (a case or an anchor) names by `document_sha256` and/or `document`,
    completed from `listed`; None when it names none."""
    sha = _sha(raw.get("document_sha256"), f"{where}document_sha256", bad)
    file = _file(raw.get("document"), f"{where}document", bad)
    if sha is None and file is None:
        return None
    by_sha = next((d for d in listed if sha is not None and d.sha256 == sha), None)
    by_file = next((d for d in listed if file is not None and d.file is not None
                    and d.file.casefold() == file.casefold()), None)
    found = by_sha or by_file
    clash = (by_sha is not None and by_file is not None and by_sha != by_file) or (
        found is not None and sha is not None and file is not None
        and (found.sha256 not in (None, sha)
             or (found.file or file).casefold() != file.casefold()))
    if clash:
        raise bad(f"{where}document_sha256 {sha[:12]}… and {where}document {clip(file)} do not name "
                  f"the same document of `documents` (listed: {found.describe()}); give one, "
                  f"or make them agree")
    if found is None:
        return DocRef(sha, file)
    return DocRef(found.sha256 or sha, found.file or file, found.pages)
