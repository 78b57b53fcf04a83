"""The golden memo gives the cases `load_golden_set` gives; a set read twice in one process (the
gated run checks the file, then the run reads it) is read once, and an edited file is read
again."""

from __future__ import annotations

import json

import pytest

from ragspine_eval.execution import golden_memo
from ragspine_eval.golden.cases import load_golden_set


@pytest.fixture
def reads(monkeypatch):
    """The folders the memo read a set from (its database or the file)."""
    seen: list[str] = []
    real = golden_memo._read

    def counting(folder, key, path):
        seen.append(str(folder))
        return real(folder, key, path)

    monkeypatch.setattr(golden_memo, "_read", counting)
    monkeypatch.setattr(golden_memo, "_LAST", [])
    return seen


def test_the_same_cases_as_the_file_gives_and_read_once(tiny_golden, tmp_path, reads):
    first = golden_memo.load_golden_set_cached(tiny_golden, tmp_path / "memo")
    second = golden_memo.load_golden_set_cached(tiny_golden, tmp_path / "memo")
    assert first == second == load_golden_set(tiny_golden)
    assert len(reads) == 1
    assert first is not second  # each caller's own list
    second.pop()
    assert golden_memo.load_golden_set_cached(tiny_golden, tmp_path / "memo") == first


def test_an_edited_file_or_another_folder_is_read_again(tiny_golden, tmp_path, reads):
    before = golden_memo.load_golden_set_cached(tiny_golden, tmp_path / "memo")
    golden_memo.load_golden_set_cached(tiny_golden, tmp_path / "other")
    assert len(reads) == 2
    lines = tiny_golden.read_text(encoding="utf-8").splitlines()
    case = json.loads(lines[0])
    case["tags"] = {**case["tags"], "topic": "edited"}
    lines[0] = json.dumps(case, ensure_ascii=False)
    tiny_golden.write_text("\n".join(lines) + "\n", encoding="utf-8")
    after = golden_memo.load_golden_set_cached(tiny_golden, tmp_path / "memo")
    assert len(reads) == 3 and after != before and after[0].tags["topic"] == "edited"
    assert after == load_golden_set(tiny_golden)
