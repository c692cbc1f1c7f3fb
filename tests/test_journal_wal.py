"""The journal's WAL stays bounded when hooks run with no ingester: each hook closes its
journal connection, and the last close checkpoints the WAL (SQLite's own behaviour, with
its default autocheckpoint and the journal_size_limit set on connect)."""

from __future__ import annotations

import os
import sqlite3

from conftest import journal_file, load_payload, run_hook
from memhooks.store.connect import closing, connect, connect_journal
from memhooks.store.sqlite_file import JOURNAL_SIZE_LIMIT


def test_300_hook_runs_without_an_ingester_leave_a_small_wal_and_every_event(store):
    env = dict(os.environ, MEMHOOKS_NO_SPAWN="1")  # no ingester: nothing else checkpoints
    start = {"session_id": "s-wal", "transcript_path": "/tmp/t.jsonl", "cwd": os.environ["CLAUDE_PROJECT_DIR"],
             "hook_event_name": "SessionStart", "source": "startup"}
    page = load_payload("webfetch")
    page["tool_response"] = {"result": "word " * 8000, "code": 200}
    wal = str(journal_file(store)) + "-wal"
    sizes = []
    for i in range(150):
        assert run_hook("session-start", start, env=env).returncode == 0
        assert run_hook("post-tool-use", {**page, "tool_use_id": f"toolu_wal_{i}"}, env=env).returncode == 0
        sizes.append(os.path.getsize(wal) if os.path.exists(wal) else 0)
    # each hook's close was the last one: the WAL was written back and removed every time
    assert max(sizes) <= 256 * 1024, sizes
    conn = sqlite3.connect(journal_file(store))
    try:
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 300  # nothing lost
        ids = {row[0] for row in conn.execute("SELECT json_extract(payload, '$.tool_use_id') FROM events")}
        assert {f"toolu_wal_{i}" for i in range(150)} <= ids
    finally:
        conn.close()


def test_every_connection_bounds_the_wal_and_keeps_the_default_autocheckpoint(store):
    with closing(connect(str(store))) as conn:
        for schema in ("main", "journal"):
            assert conn.execute(f"PRAGMA {schema}.journal_mode").fetchone()[0] == "wal"
            assert conn.execute(f"PRAGMA {schema}.journal_size_limit").fetchone()[0] == JOURNAL_SIZE_LIMIT
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
    with closing(connect_journal(str(store))) as conn:
        assert conn.execute("PRAGMA journal_size_limit").fetchone()[0] == JOURNAL_SIZE_LIMIT
    assert JOURNAL_SIZE_LIMIT <= 4 * 1024 * 1024


def test_a_wal_left_large_by_a_burst_is_cut_back_to_the_limit(store):
    """A reader holds a snapshot while 8 MB are appended (the WAL cannot be reset); once it
    lets go, the next checkpoint resets the WAL and SQLite truncates the file to the limit."""
    path = str(journal_file(store))
    with closing(connect_journal(str(store))) as writer:
        reader = sqlite3.connect(path)
        try:
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM events").fetchone()
            for i in range(64):
                writer.execute("INSERT INTO events (received_at, hook_event_name, payload, bytes, state)"
                               " VALUES (?, 'Test', ?, 131072, 'done')", (i, os.urandom(65536).hex()))
            assert os.path.getsize(path + "-wal") > JOURNAL_SIZE_LIMIT
        finally:
            reader.rollback()
            reader.close()
        writer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        writer.execute("INSERT INTO events (received_at, hook_event_name, payload, bytes, state)"
                       " VALUES (0, 'Test', '{}', 2, 'done')")
        assert os.path.getsize(path + "-wal") <= JOURNAL_SIZE_LIMIT
        assert writer.execute("SELECT count(*) FROM events").fetchone()[0] == 65
