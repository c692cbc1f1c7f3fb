"""What a lookup does after a miss in the projections (memhooks.recall.lc_cache.read): open the
store fully when the read-only open failed (a damaged file heals), answer from the journal's
pending events of that one key (memhooks.recall.pending), and start a detached ingester when
events wait or the store is new or behind. Standard library only; never on a hit's path."""

import sqlite3

from memhooks.detach import spawn_ingest
from memhooks.log import log_exception
from memhooks.recall import pending
from memhooks.recall.lc_cache import Unread
from memhooks.store.connect import connect
from memhooks.store.queries import is_forgotten
from memhooks.store.sqlite_file import closing, connect_reader, is_current


def answer(db: str, state, find, from_pending):
    """The answer after `read(db, find)` gave `state` (None: a miss in current projections;
    an Unread: not read). `from_pending(conn)` may answer from pending events (conn is None
    when the store is new or behind)."""
    conn = None
    if state is None:
        conn = connect_reader(db)
    elif isinstance(state, Unread) and state.damaged:
        conn = open_current(db)
    if conn is not None:
        with closing(conn):
            found = find(conn) if state is not None else None
            if found is None:
                found = from_pending(conn)
        if found is None:
            kick(db)
        return found
    found = from_pending(None)
    kick(db, behind=found is None)
    return found


def kick(db: str, behind: bool = False) -> None:
    """Start a detached ingester (unless one runs) when events wait, or the store is new or
    behind the migrations. Never waits, never raises."""
    try:
        if behind or pending.has_pending(db):
            spawn_ingest(db)
    except (sqlite3.Error, OSError):  # the answer stands
        log_exception("lookup: starting an ingester")


def open_current(db: str):
    """The store without migrating it (a hot path never does), or None when it is new or
    behind the migrations."""
    conn = connect(db, migrate=False)
    if is_current(conn):
        return conn
    conn.close()
    return None


def pending_tier1(db: str, name: str) -> dict | None:
    lid = pending.tier1(db, name)
    return {"library_id": lid} if lid else None


def pending_tier2(db: str, conn, library_id: str, topic: str):
    """(None, body, hash) like find_tier2's answer, from a pending docs event."""
    def forgotten(digest: str) -> bool:
        return conn is not None and is_forgotten(conn, digest)

    got = pending.tier2(db, library_id, topic, forgotten)
    return (None, got[0], got[1]) if got else None
