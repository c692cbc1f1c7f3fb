"""The one read-only open (store.sqlite_file.connect_reader) and the one read-write open
(store.connect.connect) find the same file under any folder name."""

from __future__ import annotations

import sqlite3

import pytest

from memhooks.store.connect import closing, connect, transaction
from memhooks.store.projections import upsert_document
from memhooks.store.sqlite_file import connect_reader


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
