"""tier1/tier2 cache: counted lookups, the journaled write, and the lc-cache-* commands.

Standard library only. The commands always exit 0 and print nothing on a miss
or on any problem; problems go to memhooks.log. The lookup commands only read: the
projections are opened read-only, the journal only on a miss, and the answer is
counted through the reads log (memhooks.store.reads), which the ingester folds into
the counters. `lookup`/`lookup_docs` (the CLI's and MCP's) count in the store directly.
"""

import os
import sys
import time

# --------------------------------------------------------------------------- lookups

def _find_fresh(conn, find, on_pending):
    """Try `find`; on a miss with pending events, let `on_pending` ingest them, try again."""
    # lazy: lc-cache-* hot path (-I -S): each command loads only the store code it needs
    from memhooks.store.queries import has_pending

    result = find()
    if result is None and on_pending is not None and has_pending(conn):
        on_pending()
        result = find()
    return result


def lookup(conn, name: str, project: str, *, on_pending=None, origin: str = "agent") -> dict | None:
    """tier1 lookup that counts a hit or a miss (through the reads log, memhooks.store.reads)."""
    # lazy: lc-cache-* hot path (-I -S): each command loads only the store code it needs
    from memhooks.store.queries import find_tier1, main_file
    from memhooks.store.reads import note

    hit = _find_fresh(conn, lambda: find_tier1(conn, name, project), on_pending)
    note(main_file(conn), "tier1", "hit" if hit else "miss", project, origin=origin)
    return hit


def lookup_docs(conn, library_id: str, topic: str, project: str, *,
                on_pending=None, origin: str = "agent") -> tuple[int, str, str] | None:
    """tier2 lookup that counts a hit or a miss, and a read of the document (through the
    reads log, memhooks.store.reads)."""
    # lazy: lc-cache-* hot path (-I -S): each command loads only the store code it needs
    from memhooks.store.queries import find_tier2, main_file
    from memhooks.store.reads import note

    hit = _find_fresh(conn, lambda: find_tier2(conn, library_id, topic), on_pending)
    note(main_file(conn), "tier2", "hit" if hit else "miss", project, hit[2] if hit else "",
         origin=origin)
    return hit


# --------------------------------------------------------------------------- writes

def _write_payload(record: dict, project: str) -> str:
    """The journaled form of a cache write (redacted, like every event)."""
    # lazy: lc-cache-* hot path (-I -S): each command loads only the store code it needs
    import json

    from memhooks.redact import redact_text
    from memhooks.store.journal import CACHE_WRITE_EVENT

    payload = json.dumps({"hook_event_name": CACHE_WRITE_EVENT, "cwd": project, **record},
                         ensure_ascii=False)
    return redact_text(payload)


def write(conn, record: dict, project: str) -> int:
    """Journal a cache write, then apply it, in one transaction. Returns the event id."""
    # lazy: lc-cache-* hot path (-I -S): each command loads only the store code it needs
    import json

    from memhooks.store.admission import Refused
    from memhooks.store.connect import transaction
    from memhooks.store.journal import CACHE_WRITE_EVENT, append, mark_done, mark_skipped
    from memhooks.store.projections import apply_cache_write

    now = time.time()
    payload = _write_payload(record, project)
    with transaction(conn):
        event_id = append(conn, payload, size=len(payload), project=project,
                          hook_event_name=CACHE_WRITE_EVENT, received_at=now)
        try:
            apply_cache_write(conn, json.loads(payload), event_id=event_id, project=project,
                              now=now)
        except Refused as exc:
            # admission refused it (nothing was written): journaled as skipped, with why
            mark_skipped(conn, event_id, f"refused: {exc.reason}"[:500], now)
        else:
            mark_done(conn, event_id, now)
    return event_id


def journal_write(db: str, record: dict, project: str) -> int:
    """Journal a cache write and leave it pending (the projections are new or behind: the
    ingester migrates them and applies it). Returns the event id."""
    # lazy: lc-cache-* hot path (-I -S): each command loads only the store code it needs
    from memhooks.store.connect import closing, connect_journal
    from memhooks.store.journal import CACHE_WRITE_EVENT, append

    payload = _write_payload(record, project)
    with closing(connect_journal(db)) as conn:
        return append(conn, payload, size=len(payload), project=project,
                      hook_event_name=CACHE_WRITE_EVENT, received_at=time.time())


# --------------------------------------------------------------------------- commands

def _store() -> tuple[str, str] | None:
    """(store path, project), or None when there is no store yet: a lookup never creates
    one (no file, no folder, no log); the miss is the answer. None too for a project
    excluded from memhooks, or while it is paused (memhooks.gate): nothing is answered."""
    # lazy: lc-cache-* hot path (-I -S): each command loads only the store code it needs
    from memhooks.config import db_path, project_dir, store_exists
    from memhooks.gate import blocked

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
    # lazy: lc-cache-* hot path (-I -S): each command loads only the store code it needs
    from memhooks.store.sqlite_file import closing

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
        # lazy: lc-cache-* hot path (-I -S): each command loads only the store code it needs
        from memhooks.recall import pending

        if behind or pending.has_pending(db):
            from memhooks.detach import spawn_ingest

            spawn_ingest(db)
    except Exception:  # noqa: BLE001 - the answer stands
        from memhooks.log import log_exception

        log_exception("lookup: starting an ingester")


def _open_read(db: str):
    """The projections read-only and current, or None when they are missing, new or behind.
    A file the read-only open cannot use (damaged, say) takes the full open, which heals."""
    # lazy: lc-cache-* hot path (-I -S): each command loads only the store code it needs
    import sqlite3

    from memhooks.store.sqlite_file import connect_reader, is_current

    if not os.path.lexists(db):
        return None  # no store yet (a directory or other non-file there is damage: healed below)
    try:
        conn = connect_reader(db)
        try:
            if is_current(conn):
                return conn
        except BaseException:
            conn.close()
            raise
        conn.close()
        return None
    except sqlite3.Error:
        pass
    from memhooks.store.connect import connect

    return _open_current(db, connect)


def _open_current(db: str, connect):
    """The store without migrating it (a hot path never does), or None when it is new or
    behind the migrations."""
    # lazy: lc-cache-* hot path (-I -S): each command loads only the store code it needs
    from memhooks.store.connect import is_current

    conn = connect(db, migrate=False)
    if is_current(conn):
        return conn
    conn.close()
    return None


def ingest_now(timeout: float = 20.0) -> None:
    """Run an ingester in a child process (it needs packages this hot path must not import)."""
    # lazy: lc-cache-* hot path (-I -S): each command loads only the store code it needs
    import subprocess

    from memhooks.config import ENTRY

    python = os.environ.get("MEMHOOKS_PYTHON", "").strip() or sys.executable
    subprocess.run([python, ENTRY, "ingest"], stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout,
                   check=False)


def _pending_tier1(db: str, name: str) -> dict | None:
    # lazy: lc-cache-* hot path (-I -S): each command loads only the store code it needs
    from memhooks.recall import pending

    lid = pending.tier1(db, name)
    return {"library_id": lid} if lid else None


def _pending_tier2(db: str, conn, library_id: str, topic: str):
    """(None, body, hash) like find_tier2's answer, from a pending docs event."""
    # lazy: lc-cache-* hot path (-I -S): each command loads only the store code it needs
    from memhooks.recall import pending

    def forgotten(digest: str) -> bool:
        # lazy: lc-cache-* hot path (-I -S): each command loads only the store code it needs
        from memhooks.store.forget import is_forgotten

        return conn is not None and is_forgotten(conn, digest)

    got = pending.tier2(db, library_id, topic, forgotten)
    return (None, got[0], got[1]) if got else None


def read_regular_file(path: str, limit: int) -> bytes | None:
    """Up to `limit` bytes of a regular file; None for anything else. Opened non-blocking
    (a FIFO never blocks the open) and checked with fstat before a byte is read (a FIFO, a
    device such as /dev/zero, a socket or a folder is refused)."""
    # lazy: lc-cache-* hot path (-I -S): each command loads only the store code it needs
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size < limit:
            chunk = os.read(fd, min(1024 * 1024, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def parse_write_args(args: list[str]) -> dict | None:
    """The record for `lc-cache-write` arguments, or None when they are unusable."""
    if not args:
        return None
    tier = args[0]
    if tier == "tier1" and len(args) >= 3 and args[1].strip() and args[2].strip():
        return {"tier": "tier1", "name": args[1].strip(), "library_id": args[2].strip()}
    if tier == "tier2" and len(args) >= 4 and args[1].strip():
        # lazy: lc-cache-* hot path (-I -S): each command loads only the store code it needs
        from memhooks.config import max_write_bytes
        from memhooks.store.admission import REDACT_MARGIN

        # past the cap by admission's margin: a secret across the cap is read whole, so it
        # is redacted before the cut
        body = read_regular_file(args[3], max_write_bytes() + REDACT_MARGIN + 1)
        if body is None:
            return None
        if not body.strip():
            return None
        return {"tier": "tier2", "library_id": args[1].strip(), "topic": args[2],
                "body": body.decode("utf-8", "replace")}
    return None
