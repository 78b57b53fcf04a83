"""A workspace's SQLite files read without a byte changed, and copied for the engine with only
what can be copied safely (regular files): never a FIFO, a device, a loop or a stale -shm."""

from __future__ import annotations

import os
import sqlite3

import pytest
from hostile_workspaces import digest, make_workspace

from ragspine_eval.knowledge.workspace import read_workspace
from ragspine_eval.knowledge.workspace_files import WorkspaceError, connect, private_copy


def test_the_private_copy_holds_the_regular_files_and_nothing_that_could_block_or_loop(tmp_path):
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "knowledge.db").write_bytes(b"db")
    (ws / "knowledge.db-shm").write_bytes(b"index")
    (ws / "sub" / "vectors.bin").write_bytes(b"v")
    (tmp_path / "elsewhere.txt").write_text("linked")
    (ws / "linked.txt").symlink_to(tmp_path / "elsewhere.txt")
    (ws / "loop").symlink_to(ws / "loop")
    (ws / "dangling").symlink_to(tmp_path / "nowhere")
    (ws / "zero").symlink_to("/dev/zero")
    (ws / "up").symlink_to(tmp_path)  # a folder link: never entered
    os.mkfifo(ws / "pipe")
    copy = private_copy(ws, tmp_path / "copy")
    original = digest(ws)
    assert digest(copy) == {"knowledge.db": original["knowledge.db"],
                            "sub/vectors.bin": original["sub/vectors.bin"],
                            "linked.txt": digest(tmp_path)["elsewhere.txt"]}
    assert (copy / "linked.txt").read_text() == "linked" and not (copy / "linked.txt").is_symlink()


def test_a_store_that_is_a_fifo_is_refused_before_it_is_opened(tmp_path):
    ws = make_workspace(tmp_path / "ws")
    (ws / "review.db").unlink()
    os.mkfifo(ws / "review.db")
    with pytest.raises(WorkspaceError, match="review.db: not a regular file"):
        read_workspace(ws)


def test_a_pending_wal_is_read_from_a_private_copy_and_the_folder_is_left_as_it_was(tmp_path):
    db = tmp_path / "k.db"
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=wal")
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.execute("INSERT INTO t VALUES (2)")  # only in the -wal
    con.commit()
    con.setconfig(sqlite3.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, True)
    con.close()
    before = digest(tmp_path)
    with connect(db) as read:
        assert read.execute("SELECT count(*) FROM t").fetchone() == (1,)
        with pytest.raises(sqlite3.OperationalError):
            read.execute("INSERT INTO t VALUES (3)")  # query_only, even on the copy
    assert digest(tmp_path) == before
