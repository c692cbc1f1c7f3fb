"""Opening the SQLite store (standard library only; used on hot paths).

WAL, a busy timeout, foreign keys, 0600 files in a 0700 folder, and the
append-only migrations applied once (guarded by PRAGMA user_version so an
up-to-date store costs one pragma read).
"""

from __future__ import annotations

import os
import sqlite3
import time

BUSY_TIMEOUT_MS = 5_000  # >= 5 s; below the hooks.json timeout so a spool can still happen


def _prepare_file(path: str) -> None:
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
        os.makedirs(folder, mode=0o700, exist_ok=True)
        try:
            os.chmod(folder, 0o700)
        except OSError:
            pass
    if not os.path.exists(path):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.close(fd)
        except FileExistsError:
            pass


def connect(path: str | None = None, *, migrate: bool = True) -> sqlite3.Connection:
    """Open (and create) the store. Autocommit mode: use `transaction()` to write."""
    if path is None:
        from memhooks.config import db_path

        path = db_path()
    _prepare_file(path)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _ensure_wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        if migrate:
            apply_migrations(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _ensure_wal(conn: sqlite3.Connection) -> None:
    """Switch a new store to WAL. The switch needs the file to itself and SQLite
    answers "locked" at once, without the busy handler, while another process
    opens the same new file: retry within the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                return
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.1)


class transaction:
    """`with transaction(conn):` = BEGIN IMMEDIATE … COMMIT, ROLLBACK on error."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self):
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.conn.execute("COMMIT")
        else:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
        return False


def apply_migrations(conn: sqlite3.Connection) -> list[str]:
    from memhooks.store.migrations import MIGRATIONS

    if conn.execute("PRAGMA user_version").fetchone()[0] >= len(MIGRATIONS):
        return []
    applied: list[str] = []
    with transaction(conn):
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        conn.execute(
            "CREATE TABLE IF NOT EXISTS _memhooks_migrations ("
            "name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
        )
        done = {r[0] for r in conn.execute("SELECT name FROM _memhooks_migrations")}
        for fn in MIGRATIONS[version:]:
            if fn.__name__ in done:
                continue
            fn(conn)
            conn.execute(
                "INSERT INTO _memhooks_migrations (name, applied_at) VALUES (?, ?)",
                (fn.__name__, time.time()),
            )
            applied.append(fn.__name__)
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
    return applied
