"""tier1/tier2 cache lookups: counted, and the read-only answers of the lc-cache-lookup commands
(memhooks.entry.lc_cache runs them; the write is memhooks.recall.lc_write).

Standard library only, and neither json nor re. The lookup commands only read: the
projections are opened read-only, the journal only on a miss, and the answer is
counted through the reads log (memhooks.store.reads), which the ingester folds into
the counters. `lookup`/`lookup_docs` (the CLI's and MCP's) count in the store directly.
"""

import os
import sqlite3

from memhooks.config import db_path, project_dir, store_exists
from memhooks.detach import spawn_ingest
from memhooks.gate import blocked
from memhooks.log import log_exception
from memhooks.recall import pending
from memhooks.store.connect import connect
from memhooks.store.queries import find_tier1, find_tier2, has_pending, is_forgotten, main_file
from memhooks.store.reads import note
from memhooks.store.sqlite_file import closing, connect_reader, is_current

# --------------------------------------------------------------------------- lookups

def _find_fresh(conn, find, on_pending):
    """Try `find`; on a miss with pending events, let `on_pending` ingest them, try again."""
    result = find()
    if result is None and on_pending is not None and has_pending(conn):
        on_pending()
        result = find()
    return result


def lookup(conn, name: str, project: str, *, on_pending=None, origin: str = "agent") -> dict | None:
    """tier1 lookup that counts a hit or a miss (through the reads log, memhooks.store.reads)."""
    hit = _find_fresh(conn, lambda: find_tier1(conn, name, project), on_pending)
    note(main_file(conn), "tier1", "hit" if hit else "miss", project, origin=origin)
    return hit


def lookup_docs(conn, library_id: str, topic: str, project: str, *,
                on_pending=None, origin: str = "agent") -> tuple[int, str, str] | None:
    """tier2 lookup that counts a hit or a miss, and a read of the document (through the
    reads log, memhooks.store.reads)."""
    hit = _find_fresh(conn, lambda: find_tier2(conn, library_id, topic), on_pending)
    note(main_file(conn), "tier2", "hit" if hit else "miss", project, hit[2] if hit else "",
         origin=origin)
    return hit


# --------------------------------------------------------------------------- commands

def _store() -> tuple[str, str] | None:
    """(store path, project), or None when there is no store yet: a lookup never creates
    one (no file, no folder, no log); the miss is the answer. None too for a project
    excluded from memhooks, or while it is paused (memhooks.gate): nothing is answered."""
    db = db_path()
    if not store_exists(db):
        return None
    project = project_dir()
    return None if blocked(db, project) else (db, project)


def _answer(db: str, find, pending=None):
    """`find(conn)` over the projections, opened read-only. A lookup never waits on an
    ingest: on a miss, `pending(conn)` may answer from the journal's pending events of
    that one key (memhooks.recall.pending; conn is None when the store is new or behind),
    and when events wait to be ingested a detached ingester is started, not waited for."""
    conn = _open_read(db)
    if conn is not None:
        with closing(conn):
            found = find(conn)
            if found is None and pending is not None:
                found = pending(conn)
        if found is not None:
            return found
    elif pending is not None:
        found = pending(None)
        if found is not None:
            _kick(db)
            return found
    _kick(db, conn is None)
    return None


def _kick(db: str, behind: bool = False) -> None:
    """Start a detached ingester (unless one runs) when events wait, or the store is new or
    behind the migrations. Never waits, never raises."""
    try:
        if behind or pending.has_pending(db):
            spawn_ingest(db)
    except (sqlite3.Error, OSError):  # the answer stands

        log_exception("lookup: starting an ingester")


def _open_read(db: str):
    """The projections read-only and current, or None when they are missing, new or behind.
    A file the read-only open cannot use (damaged, say) takes the full open, which heals."""
    if not os.path.lexists(db):
        return None  # no store yet (a directory or other non-file there is damage: healed below)
    try:
        conn = connect_reader(db)
        current = False
        try:
            current = is_current(conn)
        finally:
            if not current:
                conn.close()
        return conn if current else None
    except sqlite3.Error:
        pass

    return _open_current(db, connect)


def _open_current(db: str, connect):
    """The store without migrating it (a hot path never does), or None when it is new or
    behind the migrations."""
    conn = connect(db, migrate=False)
    if is_current(conn):
        return conn
    conn.close()
    return None


def _pending_tier1(db: str, name: str) -> dict | None:
    lid = pending.tier1(db, name)
    return {"library_id": lid} if lid else None


def _pending_tier2(db: str, conn, library_id: str, topic: str):
    """(None, body, hash) like find_tier2's answer, from a pending docs event."""
    def forgotten(digest: str) -> bool:
        return conn is not None and is_forgotten(conn, digest)

    got = pending.tier2(db, library_id, topic, forgotten)
    return (None, got[0], got[1]) if got else None
