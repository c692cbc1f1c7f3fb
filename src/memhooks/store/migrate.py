"""Applying the projection migrations (cold path: sqlite-utils).

simonw/llm's `migrate(db)`: every migration in memhooks.store.migrations not yet
recorded by name in `_memhooks_migrations` runs once and is recorded. PRAGMA
user_version holds the number applied, so an up-to-date store costs one pragma read
and the hot paths can tell a store that is behind without importing this module.

Safe with several processes opening a new store at once: the migrations run in one
BEGIN IMMEDIATE transaction that re-checks the version inside it (sqlite-utils'
writes nest in it as savepoints; nothing here commits on its own).
"""

from __future__ import annotations

import sqlite3
import time

import sqlite_utils

from memhooks.store.migrations import MIGRATIONS, SCHEMA_VERSION
from memhooks.store.sqlite_file import transaction

MIGRATIONS_TABLE = "_memhooks_migrations"


def user_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def ensure_migrations_table(db: sqlite_utils.Database) -> None:
    db.table(MIGRATIONS_TABLE).create({"name": str, "applied_at": float}, pk="name",
                                not_null={"applied_at"}, if_not_exists=True)


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply the migrations a store lacks; the names applied (none when up to date)."""
    if user_version(conn) >= SCHEMA_VERSION:
        return []
    db = sqlite_utils.Database(conn, execute_plugins=False)
    applied: list[str] = []
    with transaction(conn):
        version = user_version(conn)  # another process may have migrated meanwhile
        if version >= SCHEMA_VERSION:
            return applied
        ensure_migrations_table(db)
        done = {row["name"] for row in db.table(MIGRATIONS_TABLE).rows}
        # The versions already counted are never looked at again (a store from before the
        # names were recorded has them counted only).
        for fn in MIGRATIONS[version:]:
            if fn.__name__ in done:
                continue
            fn(db)
            db.table(MIGRATIONS_TABLE).insert({"name": fn.__name__, "applied_at": time.time()})
            applied.append(fn.__name__)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return applied
