"""A damaged store heals itself (standard library only).

SQLite says a file is damaged with SQLITE_CORRUPT ("database disk image is
malformed": corrupted pages, a truncated file) or SQLITE_NOTADB ("file is not a
database": a garbage header); memhooks says so too when a directory (or a fifo, a
socket) stands where a file should (memhooks.store.sqlite_file.NotRegularFile). Then:

* the projections file (`memhooks.db`) is moved aside as
  `memhooks.db.corrupt-<UTC time>` (with its -wal/-shm) and a fresh one is
  made; every journaled event is set back to pending, so the next ingest
  rebuilds every projection from the journal;
* a damaged journal is moved aside the same way and capture goes on in a fresh
  one, whose ids start past any old one (captures keep pointing at the right
  events).

`PRAGMA quick_check` decides which file is damaged. It runs when SQLite reports
damage, and in the ingester at most once per CHECK_INTERVAL_S (recorded by the
mtime of a small state file), never on a hook's path. Every incident is one
JSON line in `<db>.health.jsonl`, which `memhooks doctor` reports.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import time
import zlib

from memhooks.config import db_path, journal_path
from memhooks.log import log_error, log_exception
from memhooks.store.journal import mark_restart, requeue_derived, requeue_packs
from memhooks.store.sqlite_file import closing, connect_reader, ensure_journal_schema, not_regular, open_file

SQLITE_CORRUPT = 11
SQLITE_NOTADB = 26
CHECK_INTERVAL_S = 3600.0
INCIDENTS = ".health.jsonl"
CHECKED = ".checked"


def is_corruption(exc) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in (SQLITE_CORRUPT, SQLITE_NOTADB)
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def quick_check(path: str) -> str | None:
    """None when `path` (missing or empty counts as fine) passes PRAGMA quick_check,
    else what is wrong (a directory or another non-file in its place, too). Read-only;
    never raises."""


    kind = not_regular(path)
    if kind is not None:
        return f"{kind} in place of the file"
    try:
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            return None
    except OSError:
        return None
    try:

        conn = connect_reader(path, timeout=5)
    except sqlite3.Error as exc:
        return None if not is_corruption(exc) else str(exc)
    try:
        rows = conn.execute("PRAGMA quick_check(5)").fetchall()
        if rows and rows[0][0] == "ok":
            return None
        return "; ".join(str(r[0]) for r in rows)[:500] or "quick_check failed"
    except sqlite3.DatabaseError as exc:
        if not is_corruption(exc):
            return None  # locked, unreadable: not evidence of damage
        return str(exc)[:500]
    finally:
        conn.close()


def _stamp() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


def move_aside(path: str) -> str | None:
    """Rename `path` (and its -wal, -shm) to `<path>.corrupt-<time>`; the new name."""
    target = f"{path}.corrupt-{_stamp()}"
    n = 1
    while os.path.exists(target):
        n += 1
        target = f"{path}.corrupt-{_stamp()}-{n}"
    try:
        os.replace(path, target)
    except FileNotFoundError:
        return None
    except OSError:
        return None
    for suffix in ("-wal", "-shm"):
        try:
            os.replace(path + suffix, target + suffix)
        except OSError:
            pass
    return target


def _json():
    import json  # hot path: only when the store was damaged, or doctor reads the incidents

    return json


def record(db: str, **incident) -> None:
    incident.setdefault("at", time.time())
    try:
        fd = os.open(db + INCIDENTS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (_json().dumps(incident, ensure_ascii=False) + "\n").encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass


def incidents(db: str) -> list[dict]:
    out = []
    try:
        with open(db + INCIDENTS, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    item = _json().loads(line)
                except ValueError:
                    continue
                if isinstance(item, dict):
                    out.append(item)
    except OSError:
        pass
    return out


def _locked(db: str):
    """An exclusive lock for healing, so two processes never move the same file twice."""

    fd = os.open(db + ".heal.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def heal(db: str, seen: str = "") -> bool:
    """Check both files; move a damaged one aside. True when something was moved (the
    caller may retry). Never raises."""

    try:
        fd = _locked(db)
    except OSError:
        return False
    try:
        moved = False

        jpath = journal_path(db)
        jbad = quick_check(jpath)
        if jbad:
            moved |= _heal_journal_locked(db, jbad)
        bad = quick_check(db)
        if bad:
            target = move_aside(db)
            if target:
                moved = True
                t0 = time.time()
                reset = _reset_journal(db)
                log_error(f"store {db} is damaged ({bad}); moved aside to {target}; "
                          f"{reset} journaled events will be projected again")
                record(db, kind="store", file=db, moved_to=target, reason=bad, seen=seen[:300],
                       events_reset=reset, reset_s=round(time.time() - t0, 3))
        return moved
    except Exception:  # noqa: BLE001 - healing never breaks the hook that asked; logged

        log_exception("heal")
        return False
    finally:
        os.close(fd)


def heal_journal(db: str, seen: str = "") -> bool:
    try:
        fd = _locked(db)
    except OSError:
        return False
    try:

        bad = quick_check(journal_path(db))
        return _heal_journal_locked(db, bad) if bad else False
    finally:
        os.close(fd)


def _heal_journal_locked(db: str, bad: str) -> bool:

    jpath = journal_path(db)
    target = move_aside(jpath)
    if not target:
        return False
    first = _restart_ids(jpath)
    log_error(f"journal {jpath} is damaged ({bad}); moved aside to {target}; "
              f"capture goes on in a fresh journal")
    record(db, kind="journal", file=jpath, moved_to=target, reason=bad, first_id=first)
    return True


def _restart_ids(jpath: str) -> int | None:
    """A fresh journal whose ids start past any id the old one can have had (ms since
    the epoch), so captures that point at old events never meet a new one."""
    try:

        with closing(open_file(jpath)) as conn:
            ensure_journal_schema(conn, "main")
            return mark_restart(conn, time.time())
    except Exception:  # noqa: BLE001 - best effort: without it the fresh journal counts from 1
        return None


def _reset_journal(db: str) -> int:
    """Set every journaled event back to pending (the projections are gone): what
    `memhooks reindex` does, without the projections to clear."""
    with closing(open_file(journal_path(db))) as conn:
        ensure_journal_schema(conn, "main")
        return requeue_derived(conn) + requeue_packs(conn)


def due(db: str, interval: float = CHECK_INTERVAL_S) -> bool:
    """True (and the clock restarted) when the periodic quick_check is due."""
    path = db + CHECKED
    try:
        if time.time() - os.stat(path).st_mtime < interval:
            return False
    except OSError:
        pass
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        os.close(fd)
        os.utime(path)
    except OSError:
        return False
    return True


def check_now(db: str) -> bool:
    """The periodic check (ingester): heal when a file fails quick_check."""

    if quick_check(db) or quick_check(journal_path(db)):
        return heal(db, "periodic quick_check")
    return False


def error_line(exc, db: str | None = None) -> str:
    """One line for a reader facing a store SQLite cannot read. A damaged file is moved
    aside first (the projections are rebuilt from the journal), so a retry answers."""

    path = db or db_path()
    if is_corruption(exc):
        healed = heal(path, str(exc))
        tail = ("it was moved aside and is rebuilt from the journal: run the command again"
                if healed else "see `memhooks doctor`")
        return f"memhooks: the store at {path} is damaged ({exc}); {tail}"
    return f"memhooks: cannot read the store at {path}: {exc} (see `memhooks doctor`)"


def salvage_journals(db: str, budget_s: float = 5.0) -> int:
    """Copy what can still be read from journals moved aside into the live journal
    (ids, states and reasons kept; rows already there are left alone), once per moved
    file. Run by the ingester, never by a hook. Returns the rows copied."""
    done = {i.get("of") for i in incidents(db) if i.get("kind") == "salvage"}
    todo = [moved for i in incidents(db)
            if i.get("kind") == "journal" and isinstance(moved := i.get("moved_to"), str)
            and moved and moved not in done]
    total = 0
    for moved in todo:
        if not os.path.isfile(moved):
            continue  # gone, or a directory that stood where the journal should be
        rows, readable = _salvage_one(db, moved, time.monotonic() + budget_s)
        total += rows
        record(db, kind="salvage", of=moved, rows=rows, complete=readable)
    return total


_COLS = ("id, received_at, hook_event_name, session_id, tool_name, tool_use_id, cwd, project,"
         " payload, bytes, state, error, processed_at")


def _readable_ids(src) -> list[int] | None:
    """The event ids: from the table, else from an index (which holds them too)."""

    for sql in ("SELECT id FROM events ORDER BY id",
                "SELECT id FROM events INDEXED BY events_state WHERE state IS NOT NULL",
                "SELECT id FROM events INDEXED BY events_pending WHERE state = 'pending'"):
        try:
            return sorted(r[0] for r in src.execute(sql))
        except sqlite3.DatabaseError:
            continue
    return None


def _salvage_one(db: str, moved: str, deadline: float) -> tuple[int, bool]:


    try:
        src = connect_reader(moved, timeout=5)
    except sqlite3.Error:
        return 0, False
    dst = open_file(journal_path(db))
    copied, complete = 0, True
    try:
        ensure_journal_schema(dst, "main")
        ids = _readable_ids(src)
        if ids is None:
            return 0, False
        for start in range(0, len(ids), 200):
            if time.monotonic() > deadline:
                complete = False
                break
            rows = []
            for event_id in ids[start:start + 200]:
                try:  # one row at a time: a damaged leaf page loses only its own rows
                    row = src.execute(f"SELECT {_COLS} FROM events WHERE id = ?",
                                      (event_id,)).fetchone()
                except sqlite3.DatabaseError:
                    complete = False
                    continue
                if row is not None:
                    rows.append(row)
            dst.execute("BEGIN IMMEDIATE")
            for row in rows:
                cur = dst.execute(f"INSERT OR IGNORE INTO events ({_COLS}) VALUES"
                                  " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
                copied += cur.rowcount
            dst.execute("COMMIT")
        if time.monotonic() <= deadline:
            dst.execute("BEGIN IMMEDIATE")
            copied += _salvage_packs(src, dst)  # the packed events and the bodies they refer to
            dst.execute("COMMIT")
    except sqlite3.Error:
        complete = False
    finally:
        src.close()
        dst.close()
    return copied, complete


def _salvage_packs(src, dst) -> int:
    """Copy the packs and blobs still readable in a journal moved aside (`src`, read-only)
    into the live one (`dst`, no transaction open). Returns the packed events and blobs
    copied. A pack or blob that cannot be read is skipped alone."""

    # hot path: the packs (hashlib, lzma, json) only when a damaged journal is salvaged
    from memhooks.store.packs import pack_lines

    copied = 0
    try:
        blob_ids = [r[0] for r in src.execute("SELECT id FROM blobs ORDER BY id")]
        packs = [r[0] for r in src.execute("SELECT id FROM event_packs ORDER BY first_id")]
    except sqlite3.DatabaseError:
        return 0
    new_blob: dict = {}
    for blob in blob_ids:
        try:
            row = src.execute("SELECT sha256, data, bytes, created_at FROM blobs WHERE id = ?",
                              (blob,)).fetchone()
            zlib.decompress(row[1])  # readable as a whole, or not copied
        except (sqlite3.DatabaseError, zlib.error, TypeError):
            continue
        dst.execute("INSERT OR IGNORE INTO blobs (sha256, data, bytes, created_at) VALUES (?, ?, ?, ?)", row)
        new_blob[blob] = dst.execute("SELECT id FROM blobs WHERE sha256 = ?", (row[0],)).fetchone()[0]
        copied += 1
    try:
        for content_hash, blob in src.execute("SELECT content_hash, blob FROM blob_docs"):
            if blob in new_blob:
                dst.execute("INSERT OR IGNORE INTO blob_docs (content_hash, blob) VALUES (?, ?)",
                            (content_hash, new_blob[blob]))
    except sqlite3.DatabaseError:
        pass
    for pack in packs:
        try:
            row = src.execute("SELECT first_id, last_id, events, pending, data, packed_at"
                              " FROM event_packs WHERE id = ?", (pack,)).fetchone()
            lines = list(pack_lines(row[4]))
            sessions = [r[0] for r in src.execute("SELECT session_id FROM pack_sessions WHERE pack = ?", (pack,))]
            tally = src.execute("SELECT project, state, error, n, oldest FROM pack_tally WHERE pack = ?",
                                (pack,)).fetchall()
        except Exception:  # noqa: BLE001 - a damaged pack (SQLite, zlib, xz, JSON) is skipped alone
            continue
        if dst.execute("SELECT 1 FROM event_packs WHERE first_id = ? AND last_id = ? AND events = ?",
                       row[:3]).fetchone():
            continue  # copied before
        new = dst.execute("INSERT INTO event_packs (first_id, last_id, events, pending, data, packed_at)"
                          " VALUES (?, ?, ?, ?, ?, ?)", row).lastrowid
        dst.executemany("INSERT OR IGNORE INTO pack_sessions (session_id, pack) VALUES (?, ?)",
                        [(s, new) for s in sessions])
        dst.executemany("INSERT INTO pack_tally (pack, project, state, error, n, oldest)"
                        " VALUES (?, ?, ?, ?, ?, ?)", [(new, *t) for t in tally])
        copied += len(lines)
    return copied
