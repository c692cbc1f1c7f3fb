"""The journal's WAL stays small when hooks run with no ingester to reset it: each hook
leaves its connection open (no checkpoint at exit), so without trim_wal the WAL grew by
every event and every hook re-read it whole."""

from __future__ import annotations

import os
import sqlite3

from conftest import journal_file, load_payload, run_hook
from memhooks.store.connect import connect_journal
from memhooks.store.sqlite_file import HOOK_WAL_BYTES, trim_wal


def test_hooks_without_an_ingester_keep_the_wal_under_the_limit(store):
    env = dict(os.environ, MEMHOOKS_NO_SPAWN="1")  # no ingester: nothing else resets the WAL
    start = {"session_id": "s-wal", "transcript_path": "/tmp/t.jsonl", "cwd": os.environ["CLAUDE_PROJECT_DIR"],
             "hook_event_name": "SessionStart", "source": "startup"}
    page = load_payload("webfetch")
    page["tool_response"] = {"result": "word " * 8000, "code": 200}
    sizes = []
    for i in range(30):
        assert run_hook("session-start", start, env=env).returncode == 0
        assert run_hook("post-tool-use", {**page, "tool_use_id": f"toolu_wal_{i}"}, env=env).returncode == 0
        wal = str(journal_file(store)) + "-wal"
        sizes.append(os.path.getsize(wal) if os.path.exists(wal) else 0)
    # one event's pages past the limit at most (the trim runs after each hook's insert)
    assert max(sizes) <= HOOK_WAL_BYTES + 256 * 1024, sizes
    assert min(sizes[5:]) < max(sizes), sizes  # it was trimmed, again and again
    conn = sqlite3.connect(journal_file(store))
    try:
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 60  # nothing lost
    finally:
        conn.close()


def test_trim_wal_never_waits_for_a_reader_and_leaves_a_small_wal_alone(store, tmp_path):
    conn = connect_journal(str(store))
    path = str(journal_file(store))
    try:
        conn.execute("INSERT INTO events (received_at, hook_event_name, payload, bytes, state)"
                     " VALUES (1, 'Test', '{}', 2, 'pending')")
        assert trim_wal(conn, path) is False  # under the limit: nothing to do
        reader = sqlite3.connect(path)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM events").fetchone()  # holds a read snapshot
        try:
            assert trim_wal(conn, path, limit=0) is False  # a reader: not truncated, not waited for
            assert os.path.getsize(path + "-wal") > 0
        finally:
            reader.rollback()
            reader.close()
        assert trim_wal(conn, path, limit=0) is True
        assert os.path.getsize(path + "-wal") == 0
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 1
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000  # restored
    finally:
        conn.close()
