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


def test_a_file_in_rollback_mode_is_switched_to_wal_and_a_wal_file_is_not_asked(tmp_path):
    """open_file reads the mode from the file's header and asks SQLite to switch only when
    the header does not say WAL (asking costs a hook a fraction of a millisecond)."""
    from memhooks.store.sqlite_file import file_header, is_wal_header, open_file

    path = tmp_path / "journal.db"
    plain = sqlite3.connect(path)
    plain.execute("PRAGMA journal_mode = DELETE")
    plain.execute("CREATE TABLE t (x)")
    plain.commit()
    plain.close()
    assert not is_wal_header(file_header(str(path)))
    conn = open_file(str(path))
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.execute("INSERT INTO t VALUES (1)")
    finally:
        conn.close()
    assert is_wal_header(file_header(str(path)))
    again = open_file(str(path))
    try:
        assert again.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert again.execute("SELECT x FROM t").fetchall() == [(1,)]
    finally:
        again.close()
    # an empty file, a file of something else, and no file at all are not WAL
    (tmp_path / "empty.db").write_bytes(b"")
    (tmp_path / "text.db").write_bytes(b"not a database" + b"\x02" * 100)
    for name in ("empty.db", "text.db", "missing.db"):
        assert not is_wal_header(file_header(str(tmp_path / name))), name
    fresh = open_file(str(tmp_path / "new.db"))
    fresh.close()
    assert is_wal_header(file_header(str(tmp_path / "new.db")))


def test_reading_the_header_of_a_fifo_does_not_wait_for_a_writer(tmp_path):
    import os

    from memhooks.store.sqlite_file import file_header

    fifo = tmp_path / "journal.db"
    os.mkfifo(fifo)
    assert file_header(str(fifo)) == b""  # (an open without O_NONBLOCK would block here)
