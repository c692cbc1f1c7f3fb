"""Opening one SQLite file (standard library only; used on hot paths): read-only and alone
(`connect_reader`), or a private file in a private folder, WAL, the busy timeout; the
journal's schema; `transaction`. memhooks.store.connect (the store as a whole) and
memhooks.store.health (healing) build on it.

The lookups (lc-cache-lookup*) and the SessionStart fast path only read: they open the
projections with `connect_reader`, which writes nothing (so no WAL checkpoint or file
removal when it closes), and check `is_current` before trusting what they read. The
read-only open lives here, beside the read-write one, so the hooks that do both (capture,
SessionStart) load one module for them.
"""

import os
import sqlite3
import stat
import time

from memhooks.config import user_data_dir
from memhooks.files import make_private_dirs
from memhooks.store.bodies import add_functions
from memhooks.store.journal_migrations import JOURNAL_MIGRATIONS

BUSY_TIMEOUT_MS = 5_000  # >= 5 s; below the hooks.json timeout so a spool can still happen
# PRAGMA user_version of an up-to-date store: len(memhooks.store.migrations.MIGRATIONS), which
# refuses to load when the two differ. A constant here, so a reader that checks the schema
# does not load the migration list (~18 KB of bytecode) on every lookup.
SCHEMA_VERSION = 20
# The same for the journal: len(memhooks.store.journal_migrations.JOURNAL_MIGRATIONS) (a test
# holds them equal), so the capture hook loads those only for a journal that lacks some.
JOURNAL_SCHEMA_VERSION = 3


def connect_reader(path: str, timeout: float = BUSY_TIMEOUT_MS / 1000) -> sqlite3.Connection:
    """One SQLite file opened read-only: the one read-only open of memhooks (the store, the
    journal, a file moved aside). Raises sqlite3.Error when it cannot be read so (callers
    of the store fall back to memhooks.store.connect.connect, which heals)."""
    conn = sqlite3.connect(f"{file_uri(path)}?mode=ro", uri=True, timeout=timeout,
                           isolation_level=None)
    add_functions(conn)
    return conn


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


def _tighten(path: str, mode: int) -> None:
    """chmod an existing file or folder of ours to `mode` when it is looser. Never a
    shared folder (sticky, like /tmp), the home folder or the root."""
    try:
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


_OURS = ("memhooks", "journal.db", "reads.log", "tier1.answers", "spool", ".heal.lock", ".ingest.lock")


def _our_folder(path: str) -> bool:
    """A folder memhooks may tighten: the default data dir, `$CLAUDE_PLUGIN_DATA`, or one
    that holds nothing but memhooks files (never /var/lib, a home, a project...)."""
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


class NotRegularFile(sqlite3.DatabaseError):
    """The store or journal path names a directory (or a fifo, a socket...): damage like a
    file SQLite cannot read, healed the same way (memhooks.store.health moves it aside)."""

    sqlite_errorcode = 26  # SQLITE_NOTADB: what memhooks.store.health.is_corruption looks for
    sqlite_errorname = "SQLITE_NOTADB"


def not_regular(path: str) -> str | None:
    """What `path` is when it exists and is no regular file (a symlink counts as what it
    points at), else None."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a fifo"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def prepare_file(path: str) -> None:
    """The file's folder made (0700) and the file created (0600) when missing, both tightened
    when looser. Raises NotRegularFile when `path` is a directory or another non-file."""
    kind = not_regular(path)
    if kind is not None:
        raise NotRegularFile(f"file is not a database: {path} is {kind}, not a regular file")
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
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


def open_file(path: str) -> sqlite3.Connection:
    prepare_file(path)
    fresh = os.path.getsize(path) == 0
    # The timeout is SQLite's busy timeout (sqlite3_busy_timeout): no `PRAGMA busy_timeout`.
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    add_functions(conn)
    try:
        if fresh:
            fresh_file(conn, "main", journal=os.path.basename(path).endswith("journal.db"))
        ensure_wal(conn)
        tune(conn)
    except BaseException:
        conn.close()
        raise
    return conn


JOURNAL_PAGE_SIZE = 16384
STORE_PAGE_SIZE = 8192


def fresh_file(conn: sqlite3.Connection, schema: str, *, journal: bool) -> None:
    """A new file gives the pages a prune empties back (`PRAGMA incremental_vacuum`), and its
    pages fit its records: the journal's compressed bodies are 1-16 KiB (16 KiB pages; 8 KiB
    ones hold three 2 KiB bodies where 16 KiB ones hold seven: that table 10% larger in
    benchmarks/growth.py, the file as large), the store's compressed document texts mostly
    1-4 KiB (8 KiB pages; 4 KiB ones would hold one such row each, half empty: 7% more).
    Both can only be chosen before the file's first page is written (WAL mode writes it): an existing file
    switches at `memhooks vacuum`."""
    conn.execute(f"PRAGMA {schema}.page_size = {JOURNAL_PAGE_SIZE if journal else STORE_PAGE_SIZE}")
    conn.execute(f"PRAGMA {schema}.auto_vacuum = INCREMENTAL")


# The WAL of either file stays bounded during ordinary ingest: SQLite's autocheckpoint
# (1000 pages, kept at its default) writes it back as it grows, each last close checkpoints
# and removes it, and a WAL left larger by a burst is cut back to this size when it is reset.
JOURNAL_SIZE_LIMIT = 4 * 1024 * 1024


def bound_wal(conn: sqlite3.Connection, cap: int) -> None:
    """Under a size cap (the cold paths' connection, memhooks.store.connect): the WAL is
    checkpointed once it holds about 1% of the cap (SQLite's autocheckpoint, after a commit;
    at least 16 pages) and cut back to 2% of it when it is reset (at most the size limit),
    so a run of transactions (an ingest's batches, a prune's steps) never piles up a WAL
    that takes a tenth of a small cap."""
    pages = max(16, cap // 100 // STORE_PAGE_SIZE)
    if pages < 1000:  # SQLite's default: a large cap keeps it
        conn.execute(f"PRAGMA wal_autocheckpoint = {pages}")
    limit = min(JOURNAL_SIZE_LIMIT, max(256 * 1024, cap // 50))
    for schema in ("main", "journal"):
        conn.execute(f"PRAGMA {schema}.journal_size_limit = {limit}")


def tune(conn: sqlite3.Connection, schema: str = "main") -> None:
    """The per-connection settings of a store file: synchronous NORMAL (WAL) and the
    WAL's size limit."""
    conn.execute(f"PRAGMA {schema}.synchronous = NORMAL")
    conn.execute(f"PRAGMA {schema}.journal_size_limit = {JOURNAL_SIZE_LIMIT}")


def checkpoint_truncate(conn: sqlite3.Connection, wait_ms: int) -> bool:
    """Write the WAL of every file of the connection back and truncate it (the spool drain,
    memhooks.store.journal.drain_spool), waiting at most
    `wait_ms` for readers and writers (TRUNCATE holds the write lock while it waits, so a
    hook appending meanwhile waits no longer). Whether it completed. Raises sqlite3.Error."""
    conn.execute(f"PRAGMA busy_timeout = {int(wait_ms)}")
    try:
        return not any(row[0] for row in conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def ensure_journal_schema(conn: sqlite3.Connection, schema: str = "journal") -> None:
    """Apply the journal's migrations (memhooks.store.journal_migrations) that the file in
    `schema` (`main` when opened alone) lacks; an up-to-date journal costs one pragma."""
    if conn.execute(f"PRAGMA {schema}.user_version").fetchone()[0] >= JOURNAL_SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute(f"PRAGMA {schema}.user_version").fetchone()[0]
        if version < JOURNAL_SCHEMA_VERSION:
            conn.execute(f"CREATE TABLE IF NOT EXISTS {schema}._journal_migrations"
                         " (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
            for fn in JOURNAL_MIGRATIONS[version:]:
                fn(conn, schema)
                conn.execute(f"INSERT OR REPLACE INTO {schema}._journal_migrations VALUES (?, ?)",
                             (fn.__name__, time.time()))
            conn.execute(f"PRAGMA {schema}.user_version = {JOURNAL_SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def ensure_wal(conn: sqlite3.Connection, schema: str = "main") -> None:
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
