"""Issue 45, workspaces: each kind of hostile workspace through the real command line (`kb show`,
`golden --kb`, `retrieval`, `qa --kb`) is exit 2 with one line naming the file and the table and
row at fault (or the documented exit), never a crash file, within seconds, and every file of the
workspace folder is byte-identical after each command (WAL included)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from hostile_workspaces import QUESTIONS, copy_of, digest, make_workspace

from ragspine_eval import paths
from ragspine_eval.cli.app import main


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return make_workspace(tmp_path_factory.mktemp("hostile-ws") / "base")


@pytest.fixture
def questions(tmp_path) -> Path:
    path = tmp_path / "q.jsonl"
    path.write_text(QUESTIONS, encoding="utf-8")
    return path


@pytest.fixture
def qa_golden(tmp_path) -> Path:
    path = tmp_path / "golden.jsonl"
    lines = paths.QA_GOLDEN_SET.read_text(encoding="utf-8").splitlines()[:2]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def commands(ws: Path, questions: Path, qa_golden: Path, tmp_path: Path) -> list[list[str]]:
    return [["kb", "show", str(ws)], ["kb", "show", str(ws), "--json"],
            ["golden", str(questions), "--kb", str(ws)],
            ["retrieval", "--kb", str(ws), "--golden", str(questions), "--no-store",
             "--baseline", str(tmp_path / "retrieval-baseline.json")],
            ["qa", "--kb", str(ws), "--golden", str(qa_golden), "--no-store",
             "--baseline", str(tmp_path / "qa-baseline.json")]]


def run_all(capsys, monkeypatch, tmp_path, ws, questions, qa_golden) -> list[tuple]:
    """Every command over `ws`: (argv, exit code, stdout, stderr), each checked to leave the
    folder byte-identical, write no crash file and end within seconds."""
    crashes = tmp_path / "crashes"
    crashes.mkdir(exist_ok=True)
    monkeypatch.setattr("tempfile.tempdir", str(crashes))
    out = []
    for argv in commands(ws, questions, qa_golden, tmp_path):
        before = digest(ws)
        started = time.monotonic()
        code = main(argv)
        o, e = capsys.readouterr()
        assert time.monotonic() - started < 60, argv
        assert digest(ws) == before, f"{argv} changed the workspace"
        assert not [p for p in crashes.iterdir() if p.name.startswith("ragspine-eval-crash")], e
        assert "\x1b" not in o + e and "\x9b" not in o + e
        out.append((argv, code, o, e))
    return out


def sql(statements: str):
    def mutate(ws: Path) -> None:
        con = sqlite3.connect(ws / "knowledge.db")
        con.executescript(statements)
        con.commit()
        con.close()
    return mutate


def loose_chunks(setting: str):
    """narrative_chunk rebuilt without its constraints (NOT NULL, types), then `setting`."""
    return sql("CREATE TABLE loose AS SELECT * FROM narrative_chunk; DROP TABLE narrative_chunk; "
               f"ALTER TABLE loose RENAME TO narrative_chunk; UPDATE narrative_chunk SET {setting} "
               "WHERE chunk_id = 'report.pdf#c1'")


def random_mapping(ws: Path) -> None:
    (ws / "mapping.db").write_bytes(bytes(range(256)) * 64)


def non_utf8_error(ws: Path) -> None:
    """A schema entry whose name is not UTF-8: SQLite's own error message then is not either."""
    con = sqlite3.connect(ws / "knowledge.db")
    con.execute("CREATE TABLE zz (a)")
    con.execute("PRAGMA writable_schema=ON")
    con.execute("UPDATE sqlite_master SET name = CAST(X'7AFF' AS TEXT), sql = 'CREATE TABLE zz ('"
                " WHERE name = 'zz'")
    con.commit()
    con.close()


BROKEN = {  # kind -> (how the workspace is broken, what the one line must name)
    "seq NULL": (loose_chunks("seq = NULL"), ["knowledge.db", "narrative_chunk", "report.pdf#c1",
                                              "seq is None"]),
    "seq text": (loose_chunks("seq = 'abc'"), ["narrative_chunk", "report.pdf#c1", "seq is 'abc'"]),
    "seq 1e400": (loose_chunks("seq = 9e999"), ["narrative_chunk", "report.pdf#c1", "seq is inf"]),
    "page of 200,000 digits": (
        sql("UPDATE narrative_chunk SET source_locator = 'report.pdf@page=" + "9" * 200_000
            + "#p' WHERE chunk_id = 'report.pdf#c1'"),
        ["narrative_chunk", "report.pdf#c1", "page", "100,000"]),
    # Python's int-string limit (4,300 digits) must never be what refuses them (issue 54)
    "page of 200,000 zeros then 1": (
        sql("UPDATE narrative_chunk SET source_locator = 'report.pdf@page=" + "0" * 200_000
            + "1#p' WHERE chunk_id = 'report.pdf#c1'"),
        ["narrative_chunk", "report.pdf#c1", "page '000", "100,000"]),
    "page of 200,000 Arabic-Indic digits": (  # the engine's \\d reads them as a page
        sql("UPDATE narrative_chunk SET source_locator = 'report.pdf@page=" + "\u0669" * 200_000
            + "#p' WHERE chunk_id = 'report.pdf#c1'"),
        ["narrative_chunk", "report.pdf#c1", "page", "100,000"]),
    "slide of 200,000 digits": (
        sql("UPDATE narrative_chunk SET source_locator = 'deck.pptx@slide=" + "0" * 200_000
            + "3' WHERE chunk_id = 'report.pdf#c1'"),
        ["narrative_chunk", "report.pdf#c1", "slide", "100,000"]),
    "page 10^9 beside page 1": (
        sql("UPDATE narrative_chunk SET source_locator = 'report.pdf@page=1000000000#p' "
            "WHERE chunk_id = 'report.pdf#c1'"), ["report.pdf#c1", "1000000000"]),
    "page 10^30 beside page 1": (
        sql("UPDATE narrative_chunk SET source_locator = 'report.pdf@page=1" + "0" * 30
            + "#p' WHERE chunk_id = 'report.pdf#c1'"), ["report.pdf#c1", "page"]),
    "text not UTF-8": (
        sql("UPDATE narrative_chunk SET text = CAST(X'FFFE41' AS TEXT) "
            "WHERE chunk_id = 'report.pdf#c1'"), ["report.pdf#c1", "text is not UTF-8"]),
    "SQLite error message not UTF-8": (non_utf8_error, ["knowledge.db", "not UTF-8"]),
    "mapping.db random bytes": (random_mapping, ["mapping.db", "not a readable engine store"]),
    "fact_metric wrong columns": (
        sql("DROP TABLE fact_metric; CREATE TABLE fact_metric (x, y)"),
        ["knowledge.db", "fact_metric", "metric_code"]),
    "knowledge.db corrupt pages": (
        lambda ws: ws.joinpath("knowledge.db").write_bytes(
            ws.joinpath("knowledge.db").read_bytes()[:100] + b"\xff" * 8000),
        ["knowledge.db"]),
}


@pytest.mark.parametrize("kind", list(BROKEN))
def test_a_broken_workspace_is_exit_2_naming_file_table_and_row(capsys, monkeypatch, tmp_path,
                                                                 base, questions, qa_golden, kind):
    mutate, needles = BROKEN[kind]
    ws = copy_of(base, tmp_path / "ws")
    mutate(ws)
    for argv, code, out, err in run_all(capsys, monkeypatch, tmp_path, ws, questions, qa_golden):
        assert code == 2, (argv, out, err)
        assert err.startswith("error: ") and err.count("\n") == 1, (argv, err)
        for needle in needles:
            assert needle in err, (argv, needle, err)


def wal_with_pending_transaction(ws: Path) -> None:
    """knowledge.db in WAL mode with a committed change still only in its -wal (no checkpoint)."""
    con = sqlite3.connect(ws / "knowledge.db")
    con.execute("PRAGMA journal_mode=wal")
    con.execute("UPDATE narrative_chunk SET text = 'Revenue grew 14% to 40.1 million.' "
                "WHERE chunk_id = 'report.pdf#c0'")
    con.commit()
    con.setconfig(sqlite3.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, True)
    con.close()


def wal_checkpointed(ws: Path) -> None:
    con = sqlite3.connect(ws / "knowledge.db")
    con.execute("PRAGMA journal_mode=wal")
    con.close()  # checkpointed and the -wal removed; the file still says WAL


@pytest.mark.parametrize("mutate", [wal_with_pending_transaction, wal_checkpointed])
def test_a_wal_workspace_is_read_whole_and_left_byte_identical(capsys, monkeypatch, tmp_path, base,
                                                               questions, qa_golden, mutate):
    ws = copy_of(base, tmp_path / "ws")
    mutate(ws)
    files = set(os.listdir(ws))
    results = run_all(capsys, monkeypatch, tmp_path, ws, questions, qa_golden)
    assert set(os.listdir(ws)) == files  # no -shm or -wal appeared
    assert [code for _, code, _, _ in results] == [0, 0, 0, 0, 0]
    shown = next(o for argv, _, o, _ in results if argv[-1] == "--json")
    from ragspine_eval.knowledge.workspace import fingerprints

    pending = mutate is wal_with_pending_transaction
    # the transaction still in the -wal is read (immutable=1 alone would read the old text)
    assert (fingerprints(ws)[0] != fingerprints(base)[0]) == pending
    assert fingerprints(ws)[0] in shown


def test_a_document_id_with_escape_sequences_reaches_no_terminal_raw(capsys, monkeypatch, tmp_path,
                                                                     base, questions, qa_golden):
    ws = copy_of(base, tmp_path / "ws")
    sql("UPDATE narrative_chunk SET doc_id = 'evil\x1b[2J\x9b31m.pdf' "
        "WHERE chunk_id = 'report.pdf#c1'")(ws)
    results = run_all(capsys, monkeypatch, tmp_path, ws, questions, qa_golden)  # no raw ESC/CSI
    assert [code for _, code, _, _ in results] == [0, 0, 0, 0, 0]
    assert "evil\\x1b[2J\\x9b31m.pdf" in results[0][2]  # shown as its escape
    # recorded in the baseline under an escaped key, so the next run reads it back
    again = main(["retrieval", "--kb", str(ws), "--golden", str(questions), "--no-store",
                  "--baseline", str(tmp_path / "retrieval-baseline.json")])
    assert again == 0, capsys.readouterr()


def test_a_symlink_loop_as_the_workspace_is_exit_2(capsys, monkeypatch, tmp_path, questions,
                                                   qa_golden):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    for argv, code, out, err in run_all(capsys, monkeypatch, tmp_path, loop, questions, qa_golden):
        assert code == 2 and "loop" in err and err.count("\n") == 1, (argv, err)
        assert "symbolic link" in err, (argv, err)  # qa: "Too many levels of symbolic links"


def test_kb_build_refuses_a_symlink_a_file_and_a_non_empty_folder_before_the_engine(
        capsys, monkeypatch, tmp_path):
    import ragspine.session

    def never(*args, **kwargs):
        raise AssertionError("the engine was called")

    monkeypatch.setattr(ragspine.session.RAGSpine, "local", never)
    docs = paths.PROJECT_ROOT / "data" / "fixtures" / "pdf"
    empty, full = tmp_path / "empty", tmp_path / "full"
    empty.mkdir()
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    outs = {"a symlink loop": tmp_path / "loop", "a dangling symlink": tmp_path / "dangling",
            "a symlink to an empty folder": tmp_path / "to-empty", "a file": tmp_path / "file",
            "a non-empty folder": full}
    outs["a symlink loop"].symlink_to(outs["a symlink loop"])
    outs["a dangling symlink"].symlink_to(tmp_path / "nowhere")
    outs["a symlink to an empty folder"].symlink_to(empty)
    outs["a file"].write_text("mine")
    for kind, out in outs.items():
        before = digest(tmp_path)
        code = main(["kb", "build", str(docs), "--out", str(out)])
        err = capsys.readouterr().err
        assert code == 2, (kind, err)
        assert str(out) in err and err.count("\n") == 1, (kind, err)
        assert digest(tmp_path) == before, kind
        assert not [p for p in tmp_path.iterdir() if "-building-" in p.name]
    assert not list(empty.iterdir())


def test_retrieval_has_a_time_limit_per_question(capsys, monkeypatch, tmp_path, base, questions):
    """--case-timeout as qa's: a question past it is an engine error (exit 1), the next question
    is answered by a fresh engine, nothing is recorded. The slow question is the real engine's
    retrieval made to wait 3 s first (a wait that gives the thread up, as a long page window
    in the engine would not need to)."""
    from ragspine_eval.engines import workspace_retriever as engine

    real = engine._Engine._retrieve

    def slow_on_revenue(self, retriever, question, top_k):
        if "revenue" in question:
            time.sleep(3)
        return real(self, retriever, question, top_k)

    monkeypatch.setattr(engine._Engine, "_retrieve", slow_on_revenue)
    ws = copy_of(base, tmp_path / "ws")
    baseline = tmp_path / "b.json"
    started = time.monotonic()
    code = main(["retrieval", "--kb", str(ws), "--golden", str(questions), "--no-store",
                 "--baseline", str(baseline), "--case-timeout", "0.5"])
    out = capsys.readouterr().out
    assert code == 1
    assert "ENGINE ERRORS (1): rev: TimeoutError: no answer within the case timeout of 0.5 s" in out
    assert not baseline.exists()
    assert time.monotonic() - started < 30


def test_retrieval_case_timeout_has_qas_meaning(capsys):
    with pytest.raises(SystemExit):
        main(["retrieval", "--help"])
    text = capsys.readouterr().out
    assert "--case-timeout SECONDS" in text and "engine error" in text
    with pytest.raises(SystemExit) as exit_:
        main(["retrieval", "--kb", "w", "--golden", "q", "--case-timeout", "0"])
    assert exit_.value.code == 2
