"""Issue 45's readers fuzzed: question files in all five formats (.jsonl, .json, .csv, .txt,
nl-answers-gold), engine configurations (TOML and JSON), and SQLite workspaces with mutated rows,
schemas and bytes. Each reader either reads or raises its RagspineEvalError (exit 2), never
anything else; an error's line lies in the file; a workspace is never changed by reading it, and
`kb show` prints no raw control character.

RAGSPINE_EVAL_FUZZ_EXAMPLES examples per property (`make fuzz`: thousands); `make test` runs
FUZZ_DEFAULT (a few hundred, about a minute for the file)."""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hostile_workspaces import digest, make_workspace

from ragspine_eval.cli.app import main
from ragspine_eval.engines.engine_config import EngineConfigError, load_engine_config
from ragspine_eval.golden.question_files import (
    QuestionFileError,
    check_question_file,
    load_question_file,
)
from ragspine_eval.retrieval.question_check import check_against_workspace
from ragspine_eval.knowledge.workspace import (
    WorkspaceError,
    doc_texts,
    fingerprints,
    is_workspace,
    read_workspace,
)

FUZZ_DEFAULT = 150
EXAMPLES = int(os.environ.get("RAGSPINE_EVAL_FUZZ_EXAMPLES", FUZZ_DEFAULT))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))

HOSTILE_TEXT = ["\x1b[2J", "\x9b31m", "\r", "\x00", "\ud800", "\u202e", "#", ",", '"', "\n",
                "1-300000000", "9" * 5000, "1e400", "@page=" + "9" * 400, "@page=1000000000#",
                "\ufeff", "é", "中文"]
HOSTILE_VALUES: list[Any] = [None, True, False, 0, -1, 10**30, 1.5, float("inf"), [], {},
                             [[1]], {"a": [1]}, "", "x", "1-300000000", "7" * 400, ["c1"],
                             {"value": 3, "source": {"doc": ["x"]}}, [1, "2-3", None]]
RAW_BYTES = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\r", b"\x1b", b'"', b"\n", b"[",
             b"{", b",", b"\\u", b"\xef\xbb\xbf"]

texts = st.one_of(st.sampled_from(HOSTILE_TEXT), st.text(max_size=12))
values = st.one_of(st.sampled_from(HOSTILE_VALUES), texts, st.integers(-5, 10**6))
records = st.dictionaries(st.sampled_from(["id", "question", "pages", "page", "doc", "expected",
                                           "team", "q"]), values, max_size=6)


def nl_case(draw: Any) -> Any:
    claim = draw(st.fixed_dictionaries({"kind": values, "page_index": values, "value": values},
                                       optional={"quote": values, "any_of": values}))
    claims = draw(st.one_of(st.lists(st.one_of(st.just(claim), values), max_size=3), values))
    return draw(st.fixed_dictionaries(
        {"case_id": values, "case_class": st.sampled_from(["positive", "abstain", "x"]),
         "question": st.one_of(st.fixed_dictionaries({"en": texts}), values),
         "expected": st.one_of(st.fixed_dictionaries(
             {"status": st.sampled_from(["answered", "abstained", 3]),
              "required_claims": st.just(claims)}), values)}))


@st.composite
def question_files(draw: Any) -> tuple[str, bytes]:
    """A question file in one of the five formats, its structure drawn, then maybe its bytes
    mutated (an invalid byte, a hostile token, cut short)."""
    kind = draw(st.sampled_from(["jsonl", "json", "csv", "txt", "nl-gold"]))
    rows = draw(st.lists(records, min_size=0, max_size=5))
    if kind == "jsonl":
        text = "\n".join(json.dumps(r) for r in rows)
    elif kind == "json":
        text = json.dumps(draw(st.sampled_from([rows, {"questions": rows},
                                                {"x": {"questions": rows}, "questions": rows}])),
                          indent=draw(st.sampled_from([None, 1])))
    elif kind == "csv":
        columns = sorted({k for r in rows for k in r}) or ["question"]
        lines = [",".join(columns)] + [",".join(str(r.get(c, "")) for c in columns) for r in rows]
        text = "\n".join(lines)
    elif kind == "txt":
        text = "\n".join(str(r.get("question", "")) for r in rows)
    else:
        cases = [nl_case(draw) for _ in range(draw(st.integers(0, 3)))]
        payload = {"schema_version": draw(st.sampled_from(["nl-answers-gold-v1",
                                                           "nl-answers-gold-v2"])),
                   "cases": cases, "changelog": draw(st.lists(st.fixed_dictionaries(
                       {"case_id": values, "change": values, "old": values, "new": values,
                        "evidence": values}), max_size=2))}
        text = json.dumps(payload, indent=1)
    data = text.encode("utf-8", "surrogatepass")
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(data)))
        piece = draw(st.one_of(st.sampled_from(RAW_BYTES),
                               st.sampled_from(HOSTILE_TEXT).map(
                                   lambda t: t.encode("utf-8", "surrogatepass"))))
        data = data[:at] + piece + data[at:]
    if draw(st.booleans()) and data:
        data = data[:draw(st.integers(0, len(data)))]
    suffix = ".json" if kind == "nl-gold" else f".{kind}"
    return suffix, data


@FUZZ
@given(question_files())
def test_fuzz_question_files_in_all_five_formats(file: tuple[str, bytes]) -> None:
    suffix, data = file
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"q{suffix}"
        path.write_bytes(data)
        n_lines = data.count(b"\n") + 1
        try:
            cases = load_question_file(path)
        except QuestionFileError as exc:
            assert exc.line is None or 1 <= exc.line <= n_lines, (exc.line, n_lines, str(exc))
            cases = None
        try:  # collects every problem; raises only when the file itself cannot be read
            valid, errors = check_question_file(path)
        except QuestionFileError as exc:
            assert cases is None and (exc.line is None or 1 <= exc.line <= n_lines)
            return
        for err in errors:
            assert isinstance(err, QuestionFileError)
            assert err.line is None or 1 <= err.line <= n_lines
        if cases is not None:
            assert not errors and list(valid) == list(cases)
            for case in cases:
                assert sum(len(g) for g in case.page_groups) <= 10_000
                assert all(1 <= p <= 100_000 for g in case.page_groups for p in g)


@st.composite
def configurations(draw: Any) -> tuple[str, str]:
    keys = st.sampled_from(["name", "profile", "contextual_index", "page_parent", "graph",
                            "query_translation", "reranker", "top_k", "other"])
    table = draw(st.dictionaries(keys, st.one_of(values, st.sampled_from(
        ["economy", "quality", "off", "auto", "local-http", "none", 10])), max_size=5))
    if draw(st.booleans()):
        return ".json", json.dumps(table)
    lines = []
    for key, value in table.items():
        try:
            lines.append(f"{key} = {json.dumps(value)}")
        except ValueError:
            lines.append(f"{key} = nan")
    text = "\n".join(lines)
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(HOSTILE_TEXT + ["[" * 3000, "= =", "[a]\n"])) \
            + text[at:]
    return ".toml", text


@FUZZ
@given(configurations())
def test_fuzz_engine_configurations(config: tuple[str, str]) -> None:
    suffix, text = config
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"engine{suffix}"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        try:
            loaded = load_engine_config(path)
        except EngineConfigError as exc:
            assert str(path) in str(exc)
            return
        assert loaded.top_k is None or 1 <= loaded.top_k <= 10_000


# --- SQLite workspaces -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def base_workspace(tmp_path_factory) -> Path:
    return make_workspace(tmp_path_factory.mktemp("fuzz-ws") / "base")


SQL_VALUES = [None, 0, -1, 2**63 - 1, 1.5, float("inf"), float("-inf"), float("nan"), "",
              "abc", "\x1b[2J", "x@page=" + "9" * 300 + "#p", "d@page=1000000000#p",
              "d@page=0#p", "d@slide=99999999999", b"\xff\xfe", b"", "中文@page=2#p",
              "d@page=" + "0" * 5000 + "1#p", "d@slide=" + "0" * 5000 + "2",
              "d@page=" + "\u0669" * 5000 + "#p", "d@frame=1,slide=" + "9" * 5000]
COLUMNS = ["chunk_id", "doc_id", "seq", "text", "source_locator", "active"]
SCHEMA_CHANGES = [
    "DROP TABLE narrative_chunk",
    "DROP TABLE fact_metric",
    "DROP TABLE fact_metric; CREATE TABLE fact_metric (x, y)",
    "ALTER TABLE narrative_chunk RENAME COLUMN seq TO seq2",
    "ALTER TABLE narrative_chunk RENAME COLUMN text TO body",
    "CREATE TABLE loose AS SELECT * FROM narrative_chunk; DROP TABLE narrative_chunk; "
    "ALTER TABLE loose RENAME TO narrative_chunk",
    "CREATE TABLE ragspine_index_metadata2 (a); INSERT INTO ragspine_index_metadata2 VALUES (1)",
    "DELETE FROM ragspine_index_metadata; INSERT INTO ragspine_index_metadata VALUES "
    "(1, 'f', '" + "[" * 5000 + "')",
    "DELETE FROM ragspine_index_metadata; INSERT INTO ragspine_index_metadata VALUES (1, 'f', 7)",
    'CREATE TABLE "we""ird" (a); INSERT INTO fact_metric (metric_code, entity, geography, '
    "channel, period_type, period, value, unit, source_doc_id, source_locator) VALUES "
    "('m', 'e', 'g', 'c', 'p', '2024', 1e308, 'u', X'FF', 'l')",
    "UPDATE narrative_chunk SET active = 0",
    "PRAGMA journal_mode=wal",
]


@st.composite
def workspace_changes(draw: Any) -> list[tuple[str, Any]]:
    changes: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["row", "row", "schema", "bytes", "file"]))
        if kind == "row":
            changes.append(("row", (draw(st.sampled_from(COLUMNS)), draw(st.integers(0, 2)),
                                    draw(st.sampled_from(SQL_VALUES)))))
        elif kind == "schema":
            changes.append(("schema", draw(st.sampled_from(SCHEMA_CHANGES))))
        elif kind == "bytes":
            changes.append(("bytes", (draw(st.integers(0, 40_000)),
                                      draw(st.binary(min_size=1, max_size=64)))))
        else:
            changes.append(("file", (draw(st.sampled_from(["mapping.db", "review.db",
                                                           "knowledge.db-journal"])),
                                     draw(st.binary(max_size=2048)))))
    return changes


def apply(ws: Path, changes: list[tuple[str, Any]]) -> None:
    for kind, change in changes:
        if kind in ("row", "schema"):
            con = None
            try:
                con = sqlite3.connect(ws / "knowledge.db", timeout=0)
                con.execute("PRAGMA synchronous = OFF")  # no fsync per example
                if kind == "row":
                    column, row, value = change
                    con.execute(f"UPDATE narrative_chunk SET {column} = ? WHERE rowid = "
                                f"(SELECT rowid FROM narrative_chunk LIMIT 1 OFFSET {row})",
                                (value,))
                else:
                    con.executescript(change)
                con.commit()
            except (sqlite3.Error, UnicodeDecodeError):
                pass  # a change SQLite refuses (a NOT NULL column, a corrupted file): skipped
            finally:  # closed here, never later by the collector (a WAL is checkpointed then)
                if con is not None:
                    con.close()
        elif kind == "bytes":
            at, data = change
            db = ws / "knowledge.db"
            whole = db.read_bytes()
            at = min(at, len(whole))
            db.write_bytes(whole[:at] + data + whole[at + len(data):])
        else:
            name, data = change
            (ws / name).write_bytes(data)


@FUZZ
@given(changes=workspace_changes())
def test_fuzz_workspaces_with_mutated_rows_schemas_and_bytes(base_workspace, changes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        ws = Path(folder) / "ws"
        shutil.copytree(base_workspace, ws)
        apply(ws, changes)
        before = digest(ws)
        is_workspace(ws)
        try:
            read = read_workspace(ws)
            fingerprints(ws)
            doc_texts(ws)
            questions = Path(folder) / "q.jsonl"
            questions.write_text('{"question": "x", "pages": "1-3", "doc": "report.pdf"}\n'
                                 '{"question": "y", "expected": "38.5"}\n', encoding="utf-8")
            check_against_workspace(questions, read, load_question_file(questions))
        except WorkspaceError as exc:
            assert "knowledge.db" in str(exc) or "mapping.db" in str(exc) or \
                "review.db" in str(exc), str(exc)
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["kb", "show", str(ws)])
        assert code in (0, 2), err.getvalue()
        for char in "\x1b\x9b\x00\ud800":
            assert char not in out.getvalue() + err.getvalue()
        assert digest(ws) == before, changes

