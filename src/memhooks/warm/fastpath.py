"""SessionStart: the fast path and the context text (standard library only).

When the project's lockfile fingerprint is unchanged and every ranked name
has a fresh tier1 entry (or the network is off limits), the answer comes from
tier1 without scanning and without network. Otherwise memhooks.warm.resolve runs.
"""

import os
import sqlite3
import time

from memhooks._jsonlite import loads
from memhooks.config import offline
from memhooks.names import normalize
from memhooks.store.connect import connect
from memhooks.store.queries import api_retry_row, document_count, project_tier1, warm_state
from memhooks.store.sqlite_file import closing, connect_reader, is_current
from memhooks.warm.context import (
    PARTIAL,
    backoff_of,
    blocked_by,
    build_context,
    fingerprint,
    hook_json,
    note_of,
    status_note,
)


def tier1_entries(conn, project: str, ranked: list[dict], now: float) -> tuple[list[dict], bool]:
    """(entries for the ranked names, whether every name has a fresh answer)."""
    keys = [normalize(dep["name"], dep.get("ecosystem")) for dep in ranked]
    rows = project_tier1(conn, project, keys)
    entries, complete = [], True
    for dep, key in zip(ranked, keys, strict=True):
        row = rows.get(key)
        if row is None or row["expires_at"] <= now:
            complete = False
            continue
        suggested = row["matched"] == "team-suggestion"
        if suggested:
            complete = False  # unverified: a warm asks Context7 when it can
        entries.append({"name": dep["name"], "ecosystem": dep.get("ecosystem"),
                        "version": dep.get("version"), "library_id": row["library_id"],
                        "versioned_id": row["versioned_id"], "cached": True, "suggested": suggested})
    return entries, complete


def fast_answer(conn, project: str) -> str | None:
    """The context from tier1 when nothing changed, else None (the caller warms)."""
    row = warm_state(conn, project)
    if row is None:
        return None
    fp = row["fingerprint"]
    if fp == PARTIAL or fingerprint(project, loads(row["files"]), loads(row["dirs"])) != fp:
        return None
    now = time.time()
    entries, complete = tier1_entries(conn, project, loads(row["ranked"]), now)
    backoff = backoff_of(api_retry_row(conn), now)
    if not complete:
        if not offline() and not blocked_by(backoff):
            return None
    resolved = any(e.get("library_id") for e in entries)
    return build_context(entries, note=note_of(lambda: document_count(conn), backoff,
                                               documents=not resolved))


def fast_output(db: str, project: str) -> str | None:
    """The hook's JSON from tier1 when the lockfiles are unchanged (standard library only),
    or None when a warm is needed. The store is opened read-only."""
    if not project or not os.path.isdir(project) or not os.path.isfile(db):
        return None

    try:
        # Only reads: no journal attached, nothing to checkpoint. A hot path never migrates.
        with closing(connect_reader(db)) as conn:
            if not is_current(conn):
                return None  # new or behind: the full interpreter migrates and warms
            context = fast_answer(conn, project)
    except sqlite3.Error:
        return None  # damaged or unreadable as it is: the full interpreter heals and warms
    return hook_json(context) if context is not None else None


def status_output(db: str, project: str | None = None) -> str:
    """The hook's JSON when no warm answer is available (no project, the warm failed or ran
    out of time): what is cached and whether Context7 is rate-limited. Never raises."""
    context = "memhooks: no Context7 library IDs are cached for this project's dependencies yet."
    try:
        with closing(connect(db, migrate=False)) as conn:  # also on the hot path: no migrating
            if is_current(conn):
                context = build_context([], note=status_note(conn, time.time()))
    except (sqlite3.Error, OSError):  # a store that cannot say more: the note above stays
        pass
    return hook_json(context)
