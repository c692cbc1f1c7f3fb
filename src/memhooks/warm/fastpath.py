"""SessionStart: the fast path and the context text (standard library only).

When the project's lockfile fingerprint is unchanged and every ranked name
has a fresh tier1 entry (or the network is off limits), the answer comes from
tier1 without scanning and without network. Otherwise memhooks.warm.resolve runs.
"""

import os
import time

from memhooks._jsonlite import loads
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
    # lazy: hot path (SessionStart under -I -S; so in every function here): the store's
    # code loads only once there is a store to read.
    from memhooks.names import normalize
    from memhooks.store.queries import project_tier1

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
    # lazy: queries and fingerprinting once a store is open; config only when tier1 is short
    from memhooks.store.queries import api_retry_row, document_count, warm_state

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
        from memhooks.config import offline

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
    # lazy: sqlite3 and the reader only when there is a project and a store file
    import sqlite3

    from memhooks.store.sqlite_file import closing, connect_reader, is_current

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
    # lazy: the store and the status note only for this fallback
    try:
        from memhooks.store.connect import closing, connect, is_current

        with closing(connect(db, migrate=False)) as conn:  # also on the hot path: no migrating
            if is_current(conn):
                context = build_context([], note=status_note(conn, time.time()))
    except Exception:  # noqa: BLE001 - a hook never breaks the session (the note above stays)
        pass
    return hook_json(context)


def session_start_output(db: str, project: str, after_warm=None) -> str:
    """One JSON object for the SessionStart hook, every time. `after_warm(db, project)` is
    the caller's work after a warm that ran (memhooks._launch: a detached team pull)."""
    # lazy: the read-write store, and the full warm (scan, API) only off the fast path
    from memhooks.store.connect import closing, connect

    if not project or not os.path.isdir(project):
        return status_output(db, project)
    with closing(connect(db)) as conn:
        context = fast_answer(conn, project)
        if context is None:
            from memhooks.warm.resolve import warm

            context = warm(conn, project).context
            if after_warm is not None:
                after_warm(db, project)
    return hook_json(context)
