"""Opening the SQLite store (standard library only; used on hot paths).

Two files: the projections (`memhooks.db`) and, beside it, the raw journal
(`journal.db`, table `events`), attached to every store connection as schema
`journal`, so `events` resolves to the journal for every query. The capture
hook opens the journal alone (`connect_journal`: one file, one insert).

WAL, a busy timeout, foreign keys, 0600 files in a 0700 folder (tightened when
an existing one is looser and ours), and the append-only migrations applied
once (guarded by PRAGMA user_version so an up-to-date store costs one pragma
read). A file SQLite reports as damaged is moved aside and replaced (see
memhooks.store.health): the projections are rebuilt from the journal.
"""

from __future__ import annotations

import os
import sqlite3
import time

BUSY_TIMEOUT_MS = 5_000  # >= 5 s; below the hooks.json timeout so a spool can still happen
JOURNAL_SCHEMA_VERSION = 2


def _tighten(path: str, mode: int) -> None:
    """chmod an existing file or folder of ours to `mode` when it is looser. Never a
    shared folder (sticky, like /tmp), the home folder or the root."""
    try:
        import stat

        st = os.lstat(path)
        if st.st_uid != os.geteuid() or not (st.st_mode & 0o077):
            return
        if stat.S_ISDIR(st.st_mode):
            if st.st_mode & stat.S_ISVTX:
                return
            if not _our_folder(path):
                return
        elif not stat.S_ISREG(st.st_mode):
            return
        os.chmod(path, mode)
    except (OSError, AttributeError):
        pass


_OURS = ("memhooks", "journal.db", "spool", ".heal.lock", ".ingest.lock")


def _our_folder(path: str) -> bool:
    """A folder memhooks may tighten: the default data dir, `$CLAUDE_PLUGIN_DATA`, or one
    that holds nothing but memhooks files (never /var/lib, a home, a project...)."""
    from memhooks.config import user_data_dir

    real = os.path.realpath(path)
    if real in ("/", os.path.realpath(os.path.expanduser("~"))):
        return False
    mine = [user_data_dir(), os.environ.get("CLAUDE_PLUGIN_DATA", "").strip()]
    if any(m and os.path.isabs(os.path.expanduser(m))
           and os.path.realpath(os.path.expanduser(m)) == real for m in mine):
        return True
    try:
        with os.scandir(path) as it:
            for n, entry in enumerate(it):
                if n > 200 or not any(tag in entry.name for tag in _OURS) and not (
                        entry.name.endswith((".db", "-wal", "-shm", ".jsonl", ".checked"))):
                    return False
    except OSError:
        return False
    return True


def _prepare_file(path: str) -> None:
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
        from memhooks.config import make_private_dirs

        make_private_dirs(folder)
    elif folder:
        _tighten(folder, 0o700)
    if not os.path.exists(path):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.close(fd)
        except FileExistsError:
            pass
    else:
        _tighten(path, 0o600)


def _open(path: str) -> sqlite3.Connection:
    _prepare_file(path)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _ensure_wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        conn.close()
        raise
    return conn


def connect(path: str | None = None, *, migrate: bool = True, heal: bool = True) -> sqlite3.Connection:
    """Open (and create) the store with its journal attached. Autocommit mode: use
    `transaction()` to write. A damaged file is moved aside and replaced, once."""
    if path is None:
        from memhooks.config import db_path

        path = db_path()
    before = _identity(path)
    try:
        return _connect(path, migrate)
    except sqlite3.DatabaseError as exc:
        from memhooks.store import health

        if not heal or not health.is_corruption(exc):
            raise
        # Healed here, or by another process meanwhile (the files are not the same ones).
        if not health.heal(path, str(exc)) and _identity(path) == before:
            raise
    return _connect(path, migrate)


def _identity(path: str) -> tuple:
    from memhooks.config import journal_path

    out = []
    for p in (path, journal_path(path)):
        try:
            st = os.stat(p)
            out.append((st.st_dev, st.st_ino))
        except OSError:
            out.append(None)
    return tuple(out)


def _connect(path: str, migrate: bool) -> sqlite3.Connection:
    from memhooks.config import journal_path

    conn = _open(path)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        jpath = journal_path(path)
        _prepare_file(jpath)
        conn.execute("ATTACH DATABASE ? AS journal", (jpath,))
        _ensure_wal(conn, "journal")
        conn.execute("PRAGMA journal.synchronous = NORMAL")
        # Ingestion rewrites payloads (re-redacted, or cut to metadata): the old bytes are
        # zeroed, not left in free pages.
        conn.execute("PRAGMA journal.secure_delete = ON")
        ensure_journal_schema(conn, "journal")
        if migrate:
            apply_migrations(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def connect_journal(db: str | None = None) -> sqlite3.Connection:
    """The journal alone (the capture hook's one insert). A damaged journal is moved
    aside and capture goes on in a fresh one."""
    from memhooks.config import db_path, journal_path

    path = journal_path(db or db_path())
    try:
        conn = _open(path)
        try:
            ensure_journal_schema(conn, "main")
        except BaseException:
            conn.close()
            raise
        return conn
    except sqlite3.DatabaseError as exc:
        from memhooks.store import health

        if not health.is_corruption(exc) or not health.heal_journal(db or db_path(), str(exc)):
            raise
    conn = _open(path)
    try:
        ensure_journal_schema(conn, "main")
    except BaseException:
        conn.close()
        raise
    return conn


def ensure_journal_schema(conn: sqlite3.Connection, schema: str = "journal") -> None:
    """The `events` table in the journal file (schema `main` when opened alone)."""
    if conn.execute(f"PRAGMA {schema}.user_version").fetchone()[0] >= JOURNAL_SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute(f"PRAGMA {schema}.user_version").fetchone()[0]
        if version < 1:
            conn.execute(f"""CREATE TABLE IF NOT EXISTS {schema}.events (
                id INTEGER PRIMARY KEY,
                received_at REAL NOT NULL,
                hook_event_name TEXT,
                session_id TEXT,
                tool_name TEXT,
                tool_use_id TEXT,
                cwd TEXT,
                project TEXT,
                payload TEXT NOT NULL,
                bytes INTEGER NOT NULL DEFAULT 0,
                state TEXT NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'done', 'failed', 'skipped')),
                error TEXT,
                processed_at REAL
            )""")
            conn.execute(f"CREATE INDEX IF NOT EXISTS {schema}.events_pending ON events(id)"
                         " WHERE state = 'pending'")
            conn.execute(f"CREATE INDEX IF NOT EXISTS {schema}.events_state ON events(state)")
        if version < 2:
            # A session's journaled tool calls (importing a transcript skips those).
            conn.execute(f"CREATE INDEX IF NOT EXISTS {schema}.events_session_tool"
                         " ON events(session_id, tool_use_id)")
        if version < JOURNAL_SCHEMA_VERSION:
            conn.execute(f"PRAGMA {schema}.user_version = {JOURNAL_SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _ensure_wal(conn: sqlite3.Connection, schema: str = "main") -> None:
    """Switch a new store to WAL. The switch needs the file to itself and SQLite
    answers "locked" at once, without the busy handler, while another process
    opens the same new file: retry within the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            if conn.execute(f"PRAGMA {schema}.journal_mode").fetchone()[0] == "wal":
                return
            conn.execute(f"PRAGMA {schema}.journal_mode = WAL")
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
