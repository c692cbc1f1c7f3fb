"""The journal's pending events, read by a lookup that must not wait for an ingest (standard
library only; used on hot paths). Read-only, bounded in rows and in time."""

import os
import sqlite3
import time

from memhooks.config import journal_path
from memhooks.store.sqlite_file import connect_reader


def open_journal(db: str, budget_s: float):
    """The journal beside the store `db`, read-only, every statement stopped once `budget_s`
    has passed; None when there is no journal or it cannot be opened."""
    path = journal_path(db)
    if not os.path.isfile(path):
        return None
    try:
        conn = connect_reader(path)
    except sqlite3.Error:
        return None
    deadline = time.monotonic() + budget_s
    conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 1000)
    return conn


def newest_tool_events(conn, tool_suffixes: tuple, limit: int) -> list:
    """(id, tool_name, payload) of the newest pending PostToolUse events whose tool name (as the
    capture hook recorded it) ends with one of `tool_suffixes`, newest first; [] when the
    journal cannot answer within its budget."""
    like = " OR ".join("tool_name LIKE ? ESCAPE '\\'" for _ in tool_suffixes)
    escaped = ("%" + t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") for t in tool_suffixes)
    try:
        return conn.execute(
            "SELECT id, tool_name, payload FROM events WHERE state = 'pending'"
            f" AND hook_event_name = 'PostToolUse' AND ({like}) ORDER BY id DESC LIMIT ?",
            (*escaped, limit)).fetchall()
    except sqlite3.Error:
        return []  # no events table yet, locked, or over the budget


def newest_cache_writes(conn, limit: int) -> list:
    """(id, project, received_at, payload) of the newest pending cache writes (an
    lc-cache-write the projections could not take yet, journaled after admission judged
    it), newest first; [] when the journal cannot answer within its budget."""
    try:
        return conn.execute(
            "SELECT id, project, received_at, payload FROM events WHERE state = 'pending'"
            " AND hook_event_name = 'CacheWrite' ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
    except sqlite3.Error:
        return []


def has_pending_answers(conn) -> bool:
    """Whether any pending event could add an answer (a SessionStart never does)."""
    try:
        return conn.execute(
            "SELECT 1 FROM events WHERE state = 'pending'"
            " AND coalesce(hook_event_name, '') <> 'SessionStart' LIMIT 1").fetchone() is not None
    except sqlite3.Error:
        return False
