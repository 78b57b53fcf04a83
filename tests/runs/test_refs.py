"""Run references: @latest, @latest~N, @KEY, @KEY~N, @qa, id prefixes, report paths; a bad one
names itself and the closest candidates."""

from __future__ import annotations

import gzip
import json

import pytest
from builders import sample_report

from ragspine_eval.errors import RagspineEvalError, ReportError
from ragspine_eval.runs import RunRefError, RunSummary, load_report, resolve, store_report
from ragspine_eval.runs import store as run_store


@pytest.fixture
def three(tmp_path, monkeypatch):
    """tool (oldest), agent, tool (newest), with ids fixed so that prefixes are known."""
    report = sample_report().to_dict()
    ids = iter(["20260101-100000-aaaa11", "20260101-110000-aaaa22",
                "20260102-090000-bbbb33"])
    monkeypatch.setattr(run_store, "new_id", lambda now=None: next(ids))
    runs = [store_report({**report, "mode": k}, kind="qa", key=k, root=tmp_path)
            for k in ("tool", "agent", "tool")]
    return tmp_path, [r.id for r in runs]


@pytest.mark.parametrize("ref, index", [
    ("@latest", 2), ("@", 2), ("@latest~1", 1), ("@latest~2", 0), ("@tool", 2), ("@tool~1", 0),
    ("@agent", 1), ("@qa~1", 1), ("20260102", 2), ("20260101-11", 1),
    ("20260101-100000-aaaa11", 0)])
def test_a_reference_names_one_run(three, ref, index):
    root, ids = three
    found = resolve(ref, root)
    assert isinstance(found, RunSummary) and found.id == ids[index]


@pytest.mark.parametrize("ref, said", [
    ("20260101", "ambiguous run reference, 2 runs start with it"),
    ("@latest~3", "holds 3 runs, so ~3 goes past the oldest (~2 is the oldest)"),
    ("@tool~2", "holds 2 runs of key tool"),
    ("@tooll", "no stored run has the key 'tooll'; closest: @tool"),
    ("@extraction", "holds no extraction runs"),
    ("20270101", "no such report file or stored run; closest:"),
    ("202", "a prefix needs 4 characters"),
    ("out/nothing.json", "out/nothing.json: no such report file")])
def test_a_bad_reference_is_one_line_naming_it_and_what_is_close(three, ref, said):
    root, _ids = three
    with pytest.raises(RunRefError) as caught:
        resolve(ref, root)
    text = str(caught.value)
    assert text.startswith(ref) and said in text and "\n" not in text, text
    assert isinstance(caught.value, RagspineEvalError)  # the CLI: exit 2


def test_an_unknown_id_lists_the_closest_ids(three):
    root, ids = three
    with pytest.raises(RunRefError, match=ids[2]):
        resolve("20260102-090000-bbbb3X", root)


def test_an_empty_store_says_how_to_fill_it(tmp_path):
    for ref in ("@latest", "20260101"):
        with pytest.raises(RunRefError, match="is empty; run `ragspine-eval qa`"):
            resolve(ref, tmp_path)


def test_report_paths_work_where_refs_do(three, tmp_path):
    root, ids = three
    plain = tmp_path / "report.json"
    report = sample_report().to_dict()
    plain.write_text(json.dumps(report), encoding="utf-8")
    packed = tmp_path / "report.json.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert resolve(str(plain), root) == plain
    expected = json.loads(json.dumps(report))
    assert load_report(plain, root) == load_report(packed, root) == expected
    assert load_report("@agent", root)["mode"] == "agent"
    assert load_report(resolve("@tool", root).path)["mode"] == "tool"


def test_a_damaged_stored_report_is_named_not_a_traceback(three):
    root, ids = three
    found = resolve("@latest", root)
    found.path.write_bytes(found.path.read_bytes()[:40])
    with pytest.raises(ReportError, match=f"{found.path}: not a readable gzip file"):
        load_report("@latest", root)
    found.path.write_bytes(gzip.compress(b'{"metrics": 3}'))
    with pytest.raises(ReportError, match="not a ragspine-eval QA report"):
        load_report("@latest", root)


def test_a_gzip_bomb_is_refused_at_the_report_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGSPINE_EVAL_MAX_REPORT_MB", "1")
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b" " * (3 * 1024 * 1024)))
    with pytest.raises(ReportError, match="decompresses to more than 1 MiB"):
        load_report(bomb, tmp_path)
