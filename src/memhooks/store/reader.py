"""A store file opened to read: alone, read-only, nothing attached (standard library only).

The lookups (lc-cache-lookup*) and the SessionStart fast path only read: they open the
projections with `connect_reader`, which writes nothing (so no WAL checkpoint or file
removal when it closes), and check `is_current` before trusting what they read. A leaf:
memhooks.store.sqlite_file and memhooks.store.connect build on it.
"""

import os
import sqlite3

BUSY_TIMEOUT_MS = 5_000  # >= 5 s; below the hooks.json timeout so a spool can still happen
# PRAGMA user_version of an up-to-date store: len(memhooks.store.migrations.MIGRATIONS), which
# refuses to load when the two differ. A constant here, so a reader that checks the schema
# does not load the migration list (~18 KB of bytecode) on every lookup.
SCHEMA_VERSION = 11
# The same for the journal: len(memhooks.store.journal_migrations.JOURNAL_MIGRATIONS), so the
# capture hook loads the journal's migrations only for a journal that lacks some.
JOURNAL_SCHEMA_VERSION = 3


def connect_reader(path: str, timeout: float = BUSY_TIMEOUT_MS / 1000) -> sqlite3.Connection:
    """One SQLite file opened read-only: the one read-only open of memhooks (the store, the
    journal, a file moved aside). Raises sqlite3.Error when it cannot be read so (callers
    of the store fall back to memhooks.store.connect.connect, which heals)."""
    return sqlite3.connect(f"{file_uri(path)}?mode=ro", uri=True, timeout=timeout,
                           isolation_level=None)


def file_uri(path: str) -> str:
    """`file:` URI of a path, absolute, with the characters SQLite's URI parser reads
    (`%`, `?`, `#`) escaped, so a folder named `a#b` or `50%` opens the file it names."""
    quoted = os.path.abspath(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return f"file://{quoted}"


def is_current(conn: sqlite3.Connection) -> bool:
    """Whether the projections have every migration (one pragma read). A hot path treats a
    store that is not current as having nothing; the ingester migrates it."""
    return conn.execute("PRAGMA main.user_version").fetchone()[0] >= SCHEMA_VERSION


class closing:
    """`with closing(connect(db)) as conn:` closes the connection on the way out, whatever
    happens (contextlib.closing, without importing contextlib on the hot paths)."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> None:
        self.conn.close()
