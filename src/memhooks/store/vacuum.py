"""The store's files on disk, and giving free pages back (standard library only).

- `store_files(db)` / `store_bytes(db)`: bytes on disk (allocated blocks) of every file of one
  store: memhooks.db and journal.db with their -wal and -shm, reads.log, the spool beside it,
  tier1.answers, the health and lock files, the log, and every other file in the store's
  folder (a folder of its own: the store named memhooks.db; else the files named after the
  store). The size cap (MEMHOOKS_MAX_SIZE) is on their sum.
- `release(conn)`: after rows were deleted, merge the full-text index into one segment (a
  deleted document leaves its entries and a tombstone until the segments holding them are
  merged together), in steps with a checkpoint after each, so the WAL holds one step's
  pages at most; `PRAGMA incremental_vacuum` both files (a file in `auto_vacuum =
  INCREMENTAL` mode gives its free pages back to the file system; new stores are created
  in that mode) and truncate the WAL files.
- `vacuum(db)`: `memhooks vacuum`, see its docstring.
"""

from __future__ import annotations

import os
import sqlite3
import time

from memhooks.config import DB_NAME, beside, journal_path, log_path
from memhooks.store.connect import closing, connect
from memhooks.store.sqlite_file import BUSY_TIMEOUT_MS, fresh_file

SCHEMAS = ("main", "journal")


def on_disk(path: str) -> int:
    """Bytes a file takes on disk (its allocated blocks; its size where blocks are unknown)."""
    try:
        st = os.lstat(path)
    except OSError:
        return 0
    blocks = getattr(st, "st_blocks", None)
    return blocks * 512 if blocks is not None else st.st_size


def store_files(db: str) -> list[tuple[str, str, int]]:
    """(label, path, bytes on disk) of each file of the store, missing ones as 0; then the
    other files of its folder (labelled by name)."""
    journal = journal_path(db)
    named = [("db", db), ("db-wal", db + "-wal"), ("db-shm", db + "-shm"),
             ("journal", journal), ("journal-wal", journal + "-wal"),
             ("journal-shm", journal + "-shm"), ("reads.log", beside(db, "reads.log")),
             ("reads.log.folding", beside(db, "reads.log.folding")),
             ("tier1.answers", beside(db, "tier1.answers")),
             ("health", db + ".health.jsonl"), ("log", log_path(db)), ("log.1", log_path(db) + ".1")]
    out = [(label, path, on_disk(path)) for label, path in named]
    out.append(("spool", _spool(db), _tree_bytes(_spool(db))))
    return out + _other_files(db, {os.path.abspath(p) for _label, p, _n in out})


def _other_files(db: str, known: set) -> list[tuple[str, str, int]]:
    """The folder's other files: all of them in a folder of the store's own (its file is
    memhooks.db), else those whose name starts with the store's (x.db: `x.`)."""
    folder = os.path.dirname(os.path.abspath(db))
    name = os.path.basename(db)
    prefix = None if name == DB_NAME else name.removesuffix(".db") + "."
    out = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                path = os.path.join(folder, entry.name)
                if path in known or (prefix is not None and not entry.name.startswith(prefix)):
                    continue
                if entry.is_file(follow_symlinks=False):
                    out.append((entry.name, path, on_disk(path)))
                elif prefix is None and entry.is_dir(follow_symlinks=False):
                    out.append((entry.name + "/", path, _tree_bytes(path)))
    except OSError:
        pass
    return sorted(out)


def _spool(db: str) -> str:
    return os.path.join(os.path.dirname(db), "spool")


def _tree_bytes(folder: str) -> int:
    total = 0
    try:
        with os.scandir(folder) as it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False):
                    total += _tree_bytes(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    total += on_disk(entry.path)
    except OSError:
        pass
    return total


def store_bytes(db: str) -> int:
    return sum(n for _label, _path, n in store_files(db))


def free_bytes(conn) -> int:
    """Bytes of free pages inside both files (reused by new rows; given back to the file
    system only in auto_vacuum mode, or by `memhooks vacuum`)."""
    total = 0
    for schema in SCHEMAS:
        try:
            free = conn.execute(f"PRAGMA {schema}.freelist_count").fetchone()[0]
            size = conn.execute(f"PRAGMA {schema}.page_size").fetchone()[0]
        except sqlite3.Error:
            continue
        total += free * size
    return total


def incremental_mode(conn, schema: str = "main") -> bool:
    return conn.execute(f"PRAGMA {schema}.auto_vacuum").fetchone()[0] == 2


STEP_PAGES = 500  # pages a merge step writes at most (before the checkpoint after it)
MIN_STEP_PAGES = 16


def step_pages(cap: int | None, page_size: int = 8192) -> int:
    """Pages a merge step may write under a size cap: a WAL of one step stays within about
    2% of the cap."""
    if not cap:
        return STEP_PAGES
    return max(MIN_STEP_PAGES, min(STEP_PAGES, int(cap * 0.02) // max(512, page_size)))


FTS_TABLES = ("documents_fts", "sections_fts")  # the documents' full-text indexes


def fts_segments(conn) -> int:
    """Rows of the full-text indexes' data tables (their leaves and structure): what a merge
    leaves fewer of."""
    return sum(conn.execute(f"SELECT count(*) FROM {table}_data").fetchone()[0] for table in FTS_TABLES)


def merge_fts(conn, pages: int = STEP_PAGES, max_steps: int = 100_000, *, whole: bool = True) -> None:
    """Merge the segments of the documents' and the sections' full-text indexes, `pages` pages a step (each its
    own short transaction, a checkpoint after it), so the WAL holds one step at most.

    `whole`: every segment into one, so the entries of deleted documents and their
    tombstones are dropped and their pages freed (FTS5's 'merge' with a negative count
    takes all segments as one level and merges as few as two, until one is left: what
    'optimize' does in one transaction, with a WAL as large as the index). Else the levels
    that hold two segments or more (the 'usermerge' setting), as FTS5's automerge would have
    merged them while writing (the store writes with automerge off: see the migrations)."""
    count = -pages if whole else pages
    for table in FTS_TABLES:  # fixed names
        for _ in range(max_steps):
            before = conn.total_changes
            conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('merge', ?)", (count,))
            if conn.total_changes - before < 2:
                break
            checkpoint(conn)


CHECKPOINT_WAIT_MS = 200


def checkpoint(conn, wait_ms: int = CHECKPOINT_WAIT_MS) -> None:
    """Write both WALs back and truncate them. A TRUNCATE checkpoint holds the write lock
    while it waits for readers to leave old snapshots, so it waits `wait_ms` at most (a hook
    appending meanwhile waits no longer); a reader still in a snapshot makes it a no-op."""
    conn.execute(f"PRAGMA busy_timeout = {int(wait_ms)}")
    try:
        for schema in SCHEMAS:
            try:
                conn.execute(f"PRAGMA {schema}.wal_checkpoint(TRUNCATE)").fetchall()
            except sqlite3.OperationalError:
                pass
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def release(conn, *, fts: bool = True, pages: int = STEP_PAGES) -> None:
    """Give the pages rows left free back: the FTS merge (`pages` a step; `fts` False: only
    the levels due, as automerge would), incremental_vacuum (`pages` a step too: each page
    it moves is written to the WAL), the WALs truncated after each step."""
    merge_fts(conn, pages, whole=fts)
    for schema in SCHEMAS:
        if incremental_mode(conn, schema):
            vacuum_pages(conn, schema, pages)
    checkpoint(conn)


def vacuum_pages(conn, schema: str, pages: int = STEP_PAGES, max_steps: int = 100_000) -> None:
    """`PRAGMA incremental_vacuum` `pages` free pages at a time, a checkpoint after each step
    (all at once, the pages it moves to the file's free slots make a WAL as large as them)."""
    for _ in range(max_steps):
        if conn.execute(f"PRAGMA {schema}.freelist_count").fetchone()[0] == 0:
            return
        # executescript: Python's execute() steps this pragma once (one page freed)
        conn.executescript(f"PRAGMA {schema}.incremental_vacuum({int(pages)});")
        checkpoint(conn)


# ----------------------------------------------------------------------------- memhooks vacuum

TMP_SUFFIX = ".vacuum-tmp"
EXCLUSIVE_WAIT_S = 10.0


class StoreInUse(Exception):
    """Another process holds the store open: it cannot be swapped."""


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _fsync_path(path: str, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def vacuum(db: str, *, wait_s: float = EXCLUSIVE_WAIT_S, in_place_fallback: bool = True) -> dict:
    """Rewrite both files compactly, in `auto_vacuum = INCREMENTAL` mode (the one VACUUM an
    older store needs to switch), and swap them in atomically.

    With the store to itself (SQLite's exclusive locking mode: no other process has it
    open, and none can open it meanwhile): both files leave WAL mode (checkpointed, the
    -wal and -shm removed), `VACUUM INTO` writes each one to `<file>.vacuum-tmp` beside it,
    the copy is put in WAL mode, fsynced and renamed over the file (journal first), then the
    folder is fsynced. A crash before a rename leaves the old file whole (a stale tmp file
    is removed by the next vacuum); after it, the new one is whole. A process that opened
    the store while it was held reads the old file and cannot write it any more
    (SQLite: "attempt to write a readonly database", SQLITE_READONLY_DBMOVED): a hook
    spools its event then, an ingester tries again later.

    When another process holds the store open past `wait_s` (an MCP server, a running
    ingester), the files are vacuumed in place instead (`VACUUM`, which SQLite makes safe
    with other connections, and which needs up to twice the file's size in free space
    while it runs), unless `in_place_fallback` is false (StoreInUse is raised).
    Returns {"before": bytes, "after": bytes, "how": "swapped" | "in place"}."""
    with closing(connect(db)):
        pass  # create / migrate / heal first: the files are sound and current
    before = store_bytes(db)
    jpath = journal_path(db)
    for path in (db, jpath):
        _remove(path + TMP_SUFFIX)
    try:
        _swap(db, jpath, wait_s)
        how = "swapped"
    except StoreInUse:
        if not in_place_fallback:
            raise
        _in_place(db)
        how = "in place"
    with closing(connect(db)) as conn:
        checkpoint(conn)
    return {"before": before, "after": store_bytes(db), "how": how}


def _swap(db: str, jpath: str, wait_s: float) -> None:
    conn = sqlite3.connect(db, timeout=0.1, isolation_level=None)
    try:
        conn.execute("ATTACH DATABASE ? AS journal", (jpath,))
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        deadline = time.monotonic() + wait_s
        while True:
            try:
                conn.execute("BEGIN EXCLUSIVE")
                conn.execute("COMMIT")
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if time.monotonic() > deadline:
                    raise StoreInUse(str(exc)) from None
                time.sleep(0.1)
        # Held: no other process has either file open. Leave WAL so no -wal or -shm stays
        # behind for the new files to meet.
        for schema in SCHEMAS:
            conn.execute(f"PRAGMA {schema}.journal_mode = DELETE").fetchall()
        for schema, path in (("journal", jpath), ("main", db)):
            tmp = path + TMP_SUFFIX
            try:
                # The copy's page size and auto_vacuum (VACUUM INTO takes the page size last
                # set on the connection, whatever the schema).
                fresh_file(conn, schema, journal=schema == "journal")
                conn.execute(f"VACUUM {schema} INTO ?", (tmp,))
                _prepare_copy(tmp)
            except BaseException:
                _remove(tmp)
                raise
        for path in (jpath, db):
            os.replace(path + TMP_SUFFIX, path)
        _fsync_path(os.path.dirname(os.path.abspath(db)) or ".", directory=True)
    finally:
        conn.close()
    for path in (db, jpath):
        _remove(path + "-journal")  # the old files' (emptied) rollback journal: the new ones use WAL


def _prepare_copy(tmp: str) -> None:
    """The copy: private, in WAL mode (so nothing of the old files' rollback journal applies
    to it), on disk before it is renamed."""
    os.chmod(tmp, 0o600)
    c = sqlite3.connect(tmp, isolation_level=None)
    try:
        c.execute("PRAGMA journal_mode = WAL").fetchall()
    finally:
        c.close()
    _fsync_path(tmp)


def _in_place(db: str) -> None:
    with closing(connect(db)) as conn:
        for schema in SCHEMAS:
            # (VACUUM cannot change the page size of a file in WAL mode: only auto_vacuum here)
            conn.execute(f"PRAGMA {schema}.auto_vacuum = INCREMENTAL")
            conn.execute(f"VACUUM {schema}")
