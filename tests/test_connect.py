"""The one read-only open (store.sqlite_file.connect_reader) and the one read-write open
(store.connect.connect) find the same file under any folder name."""

from __future__ import annotations

import sqlite3

import pytest

from memhooks.store.connect import closing, connect, transaction
from memhooks.store.projections import upsert_document
from memhooks.store.sqlite_file import connect_reader

pytestmark = pytest.mark.version  # runs on every supported Python in CI


@pytest.mark.parametrize("folder", ["a#b", "what?", "50%", "sp ace", "%23", "x?mode=rw"])
def test_read_only_open_reads_the_file_under_any_folder_name(tmp_path, folder):
    db = tmp_path / folder / "memhooks.db"
    with closing(connect(str(db))) as conn, transaction(conn):
        upsert_document(conn, provenance="capture", project="p", source="/facebook/react", source_tool="context7",
                        content="### useState\n\nKeeps state between renders.")
    with closing(connect_reader(str(db))) as conn:
        assert conn.execute("SELECT count(*) FROM documents").fetchone()[0] == 1
        with pytest.raises(sqlite3.OperationalError):
            conn.execute("DELETE FROM documents")
    # the journal beside it too
    with closing(connect_reader(str(db.parent / "journal.db"))) as conn:
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 0


def test_a_file_in_rollback_mode_is_switched_to_wal(tmp_path):
    """open_file asks SQLite for the journal mode and switches a file that is not in WAL."""
    from memhooks.store.sqlite_file import open_file

    path = tmp_path / "journal.db"
    plain = sqlite3.connect(path)
    plain.execute("PRAGMA journal_mode = DELETE")
    plain.execute("CREATE TABLE t (x)")
    plain.commit()
    plain.close()
    conn = open_file(str(path))
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.execute("INSERT INTO t VALUES (1)")
    finally:
        conn.close()
    again = open_file(str(path))
    try:
        assert again.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert again.execute("SELECT x FROM t").fetchall() == [(1,)]
    finally:
        again.close()
    fresh = open_file(str(tmp_path / "new.db"))
    try:
        assert fresh.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert fresh.execute("PRAGMA page_size").fetchone()[0] == 8192
    finally:
        fresh.close()


def test_a_fifo_in_place_of_the_journal_is_refused_without_waiting(tmp_path):
    import os

    from memhooks.store.sqlite_file import NotRegularFile, open_file

    fifo = tmp_path / "journal.db"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile):
        open_file(str(fifo))  # (an open of the fifo would block here)
