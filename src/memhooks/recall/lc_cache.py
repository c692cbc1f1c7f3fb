"""tier1/tier2 cache lookups: counted, and the read-only hit path of the lc-cache-lookup
commands (memhooks.entry.lc_cache runs them; a miss goes on in memhooks.recall.lc_miss, the
write is memhooks.recall.lc_write).

Standard library only, and what a hit needs alone: sqlite3 and the store's queries (no json,
no re, no hashing, no logging). The lookup commands only read: the projections are opened
read-only, the journal only on a miss, and the answer is counted through the reads log
(memhooks.store.reads), which the ingester folds into the counters. `lookup`/`lookup_docs`
(the CLI's and MCP's) count in the store directly.
"""

import os
import sqlite3

from memhooks.config import db_path, project_dir, store_exists
from memhooks.gate import blocked
from memhooks.store.queries import find_tier1, find_tier2, has_pending, main_file
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


class Unread:
    """Why `read` could not read the projections (see lc_miss.answer)."""

    def __init__(self, damaged: bool):
        self.damaged = damaged


BEHIND = Unread(False)  # missing, new, or behind the migrations: the ingester brings it up
DAMAGED = Unread(True)  # the read-only open failed: the full open heals it


def read(db: str, find):
    """`find(conn)` over the projections, opened read-only and current: its answer, None on
    a miss, or BEHIND/DAMAGED when the projections could not be read. A lookup never waits
    on an ingest; the miss path (pending events, starting an ingester, healing) is
    memhooks.recall.lc_miss, loaded only on a miss."""
    if not os.path.lexists(db):
        return BEHIND  # no store yet (a directory or other non-file there is damage: healed)
    try:
        conn = connect_reader(db)
    except sqlite3.Error:
        return DAMAGED
    with closing(conn):
        try:
            if not is_current(conn):
                return BEHIND
        except sqlite3.Error:
            return DAMAGED
        return find(conn)
