"""Opening the SQLite store (standard library only; used on hot paths).

Two files: the projections (`memhooks.db`) and, beside it, the raw journal
(`journal.db`, table `events`), attached to every store connection as schema
`journal`, so `events` resolves to the journal for every query. The capture
hook opens the journal alone (`connect_journal`: one file, one insert).

WAL, a busy timeout, foreign keys, 0600 files in a 0700 folder (tightened when
an existing one is looser and ours), and the append-only migrations applied
once on the cold paths (guarded by PRAGMA user_version so an up-to-date store
costs one pragma read; the runner, memhooks.store.migrate, uses sqlite-utils).
The hot paths open with `migrate=False` and check `is_current`: a store that is
new or behind is theirs to hand over, never to migrate. A file SQLite reports as damaged is moved aside and
replaced (see memhooks.store.health): the projections are rebuilt from the journal.
"""

import os
import sqlite3

from memhooks.config import db_path, journal_path, max_store_bytes
from memhooks.store import health
from memhooks.store.sqlite_file import (
    bound_wal,
    ensure_journal_schema,
    ensure_wal,
    fresh_file,
    open_file,
    prepare_file,
    tune,
)
from memhooks.store.sqlite_file import closing as closing  # the store's users close with it
from memhooks.store.sqlite_file import connect_reader as connect_reader  # the hot paths' read
from memhooks.store.sqlite_file import is_current as is_current
from memhooks.store.sqlite_file import transaction as transaction  # and write with it


def connect(path: str | None = None, *, migrate: bool = True, heal: bool = True) -> sqlite3.Connection:
    """Open (and create) the store with its journal attached. Autocommit mode: use
    `transaction()` to write. A damaged file is moved aside and replaced, once."""
    if path is None:
        path = db_path()
    before = _identity(path)
    try:
        return _connect(path, migrate)
    except sqlite3.DatabaseError as exc:
        if not heal or not health.is_corruption(exc):
            raise
        # Healed here, or by another process meanwhile (the files are not the same ones).
        if not health.heal(path, str(exc)) and _identity(path) == before:
            raise
    return _connect(path, migrate)


def _identity(path: str) -> tuple:
    out: list[tuple[int, int] | None] = []
    for p in (path, journal_path(path)):
        try:
            st = os.stat(p)
            out.append((st.st_dev, st.st_ino))
        except OSError:
            out.append(None)
    return tuple(out)


def _connect(path: str, migrate: bool) -> sqlite3.Connection:
    conn = open_file(path)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        jpath = journal_path(path)
        prepare_file(jpath)
        fresh = os.path.getsize(jpath) == 0
        conn.execute("ATTACH DATABASE ? AS journal", (jpath,))
        if fresh:
            fresh_file(conn, "journal", journal=True)
        ensure_wal(conn, "journal")
        tune(conn, "journal")
        # Ingestion rewrites payloads (re-redacted, or cut to metadata): the old bytes are
        # zeroed, not left in free pages.
        conn.execute("PRAGMA journal.secure_delete = ON")
        ensure_journal_schema(conn, "journal")
        bound_wal(conn, max_store_bytes())
        if migrate:
            apply_migrations(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def connect_journal(db: str | None = None) -> sqlite3.Connection:
    """The journal alone (the capture hook's one insert). A damaged journal is moved
    aside and capture goes on in a fresh one."""
    path = journal_path(db or db_path())
    for healed in (False, True):
        try:
            conn = open_file(path)
            try:
                ensure_journal_schema(conn, "main")
            except BaseException:
                conn.close()
                raise
            return conn
        except sqlite3.DatabaseError as exc:
            if healed or not health.is_corruption(exc) or not health.heal_journal(db or db_path(), str(exc)):
                raise
    raise AssertionError("unreachable")


def apply_migrations(conn: sqlite3.Connection) -> list[str]:
    """Bring the projections up to date (cold: memhooks.store.migrate runs them with
    sqlite-utils). The names applied."""
    if is_current(conn):
        return []
    # lazy: sqlite-utils, only when the store is behind (never on the hot paths)
    from memhooks.store.migrate import migrate

    return migrate(conn)
