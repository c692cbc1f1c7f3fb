"""The events journal: raw hook payloads, appended first (standard library only).

Nothing a hook receives is lost: a payload is redacted and journaled as raw
text; one over the size cap becomes a stub marked failed; a call of a tool
memhooks does not capture is journaled as metadata only (tool name, size,
hash). When the journal cannot be written (locked past the busy timeout,
read-only folder, disk full) the payload is spooled to a file beside the DB,
or, when that folder is unwritable too, to a per-user fallback folder
(`$XDG_STATE_HOME/memhooks/spool`, else a 0700 folder under the system temp
dir), and journaled by the next ingest. A spool file that cannot be journaled
is moved to `spool/failed/`, never retried forever.
"""

import os
import sqlite3
import stat
import time

from memhooks.files import fallback_dirs, make_private_dirs
from memhooks.log import log_error
from memhooks.sqltext import storable, storable_path
from memhooks.store.sqlite_file import checkpoint_truncate

SPOOL_DIR = "spool"
FAILED_DIR = "failed"
TOOL_HOOKS = ("PostToolUse", "PostToolUseFailure")
METADATA_ONLY = "not a captured tool (metadata only)"
CACHE_WRITE_EVENT = "CacheWrite"  # hook_event_name of an lc-cache-write, journaled like a hook


def append(conn, payload: str, *, size: int, project: str | None, error: str | None = None,
           hook_event_name: str | None = None, received_at: float | None = None,
           state: str | None = None, tool_name: str | None = None) -> int:
    """Insert one event (autocommit). A payload with an error is journaled as failed.
    `tool_name` (the capture hook's scan of it) lets a lookup find the pending events of
    one tool before they are ingested; ingestion sets it again from the parsed payload."""
    cur = conn.execute(
        "INSERT INTO events (received_at, hook_event_name, tool_name, project, payload, bytes,"
        " state, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            received_at if isinstance(received_at, (int, float)) else time.time(),
            storable(hook_event_name) if isinstance(hook_event_name, str) else None,
            storable(tool_name)[:200] if isinstance(tool_name, str) else None,
            storable_path(project) if isinstance(project, str) and project else None,
            storable(payload),
            size if isinstance(size, int) else len(payload),
            state or ("failed" if error else "pending"),
            storable(error) if isinstance(error, str) else None,
        ),
    )
    return cur.lastrowid


def mark_done(conn, event_id: int, now: float) -> None:
    """An event applied at once by its writer (an lc-cache-write)."""
    conn.execute("UPDATE events SET state = 'done', processed_at = ? WHERE id = ?", (now, event_id))


def claim(conn, event_id: int, *, state: str, error: str | None, now: float, columns: dict,
          payload: str | bytes | None) -> bool:
    """Settle a pending event (done, skipped or failed) with the columns its parsed payload
    fills and, when given, its rewritten payload. False when another ingester took it."""
    cur = conn.execute(
        "UPDATE events SET state = ?, error = ?, processed_at = ?,"
        " hook_event_name = coalesce(?, hook_event_name), session_id = ?, tool_name = ?,"
        " tool_use_id = ?, cwd = ?, project = coalesce(nullif(?, ''), project),"
        " payload = coalesce(?, payload)"
        " WHERE id = ? AND state = 'pending'",
        (state, storable(error), now, columns.get("hook_event_name"),
         columns.get("session_id"), columns.get("tool_name"), columns.get("tool_use_id"),
         storable_path(columns.get("cwd")), columns.get("project"), payload, event_id),
    )
    return cur.rowcount > 0


def fail_pending(conn, event_id: int, error: str, now: float) -> bool:
    """Mark a still-pending event failed with its reason; False when it was not pending."""
    cur = conn.execute("UPDATE events SET state = 'failed', error = ?, processed_at = ?"
                       " WHERE id = ? AND state = 'pending'", (error, now, event_id))
    return cur.rowcount > 0


def mark_failed(conn, event_id: int, error: str) -> None:
    """Mark an event just claimed failed after all (its projection raised)."""
    conn.execute("UPDATE events SET state = 'failed', error = ? WHERE id = ?", (error, event_id))


def mark_skipped(conn, event_id: int, error: str, now: float | None = None) -> None:
    """Mark an event skipped after all: admission refused every row of it."""
    conn.execute("UPDATE events SET state = 'skipped', error = ?,"
                 " processed_at = coalesce(?, processed_at) WHERE id = ?", (error, now, event_id))


def requeue_derived(conn) -> int:
    """Put every event the projections derive from back to pending (a reindex, or a store
    rebuilt after damage): done and skipped ones, and failed ones that are not stubs of an
    oversized payload. Returns how many."""
    return conn.execute(
        "UPDATE events SET state = 'pending', error = NULL, processed_at = NULL"
        " WHERE state IN ('done', 'skipped') OR (state = 'failed' AND payload NOT LIKE"
        " '{\"memhooks_stub\": true%')"
    ).rowcount


def requeue_packs(conn) -> int:
    """Every pack to be projected again by the next ingest (a reindex, a heal). Returns how
    many events they hold."""
    events = conn.execute("SELECT coalesce(sum(events), 0) FROM event_packs WHERE pending = 0").fetchone()[0]
    conn.execute("UPDATE event_packs SET pending = 1 WHERE pending = 0")
    return events


def mark_restart(conn, now: float) -> int:
    """The first event of a journal restarted after damage, its id past any id the old one
    can have had (ms since the epoch), so captures that point at old events never meet a
    new one. Returns that id."""
    first = int(now * 1000)
    conn.execute(
        "INSERT INTO events (id, received_at, hook_event_name, payload, state, error)"
        " VALUES (?, ?, 'JournalRestart', ?, 'skipped', ?)",
        (first, now, '{"hook_event_name": "JournalRestart"}', "journal restarted after damage"))
    return first


def spool_dir(db: str) -> str:
    return os.path.join(os.path.dirname(db), SPOOL_DIR)


def _private_dir(path: str) -> str | None:
    """`path` created 0700 (parents too), ours and not a symlink; else None."""
    try:
        make_private_dirs(path)
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            return None
        if st.st_mode & 0o077:
            os.chmod(path, 0o700)
        return path if os.access(path, os.W_OK | os.X_OK) else None
    except OSError:
        return None


def _spool_dirs(db: str) -> list[str]:
    return [spool_dir(db)] + [os.path.join(d, SPOOL_DIR) for d in fallback_dirs()]


def spool_waiting(db: str) -> bool:
    """Whether a spool folder of this store holds an event file not yet journaled."""
    for folder in _spool_dirs(db):
        try:
            with os.scandir(folder) as it:
                if any(e.name.endswith(".json") for e in it):
                    return True
        except OSError:
            continue
    return False


def _json():
    import json  # hot path: only when an event is spooled (and for the ingester's drain)

    return json


def spool(db: str, payload: str, *, size: int, project: str | None, error: str | None,
          hook_event_name: str | None, state: str | None = None) -> str | None:
    """Write an event that could not be journaled to a spool file: beside the DB, else in
    a fallback folder. Never raises; None when no folder took it."""
    record = {
        "received_at": time.time(), "db": db, "project": project, "size": size,
        "error": error, "hook_event_name": hook_event_name, "payload": payload, "state": state,
    }
    try:
        data = _json().dumps(record)  # ensure_ascii: surrogates survive as escapes
    except (TypeError, ValueError):
        return None
    name = f"{time.time_ns():020d}-{os.getpid()}.json"
    for folder in _spool_dirs(db):
        if _private_dir(folder) is None:
            continue
        tmp = os.path.join(folder, "." + name)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                view = memoryview(data.encode("ascii"))
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            final = os.path.join(folder, name)
            os.replace(tmp, final)
            return final
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return None


def _move_failed(folder: str, name: str, reason: str) -> None:
    target = os.path.join(folder, FAILED_DIR)
    try:
        os.makedirs(target, mode=0o700, exist_ok=True)
        os.replace(os.path.join(folder, name), os.path.join(target, name))
        log_error(f"spool file {name} cannot be journaled, moved to {target}: {reason}")
    except OSError as exc:
        log_error(f"spool file {name} cannot be journaled nor moved ({exc}): {reason}")


CLAIM_PREFIX = ".claimed-"


def _claim(folder: str, name: str) -> str | None:
    """Take one spool file for this process (an atomic rename), so two drainers at once
    never journal it twice. None when another drainer took it first."""
    claimed = os.path.join(folder, f"{CLAIM_PREFIX}{os.getpid()}-{name}")
    try:
        os.rename(os.path.join(folder, name), claimed)
    except OSError:
        return None
    return claimed


def _release_stale_claims(folder: str, names: list[str]) -> None:
    """Give back the files a drainer claimed and never finished (it died): their pid is gone."""
    for entry in names:
        pid, _, name = entry[len(CLAIM_PREFIX):].partition("-")
        if not pid.isdigit() or not name or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # still at work
        except ProcessLookupError:
            pass
        except OSError:
            continue
        try:
            os.rename(os.path.join(folder, entry), os.path.join(folder, name))
        except OSError:
            pass


def _unclaim(path: str, folder: str, name: str) -> None:
    try:
        os.rename(path, os.path.join(folder, name))
    except OSError:
        pass


def drain_spool(conn, db: str) -> int:
    """Journal spooled events (oldest first) and delete their files: the spool beside the
    DB, and this store's files in the fallback folders. Each file is claimed first, so
    drainers running at once journal it once. A file that cannot be journaled is moved to
    `failed/` beside it, with a log line."""
    json = _json()
    moved = 0
    since = 0  # bytes journaled since the last checkpoint
    for folder in _spool_dirs(db):
        try:
            listing = os.listdir(folder)
        except OSError:
            continue
        _release_stale_claims(folder, [n for n in listing if n.startswith(CLAIM_PREFIX)])
        try:
            names = sorted(n for n in os.listdir(folder)
                           if n.endswith(".json") and not n.startswith("."))
        except OSError:
            continue
        beside = folder == spool_dir(db)
        for name in names:
            path = _claim(folder, name)
            if path is None:
                continue  # another drainer has it
            try:
                with open(path, encoding="utf-8") as fh:
                    rec = json.load(fh)
                if not isinstance(rec, dict):
                    raise ValueError("spool file is not an object")
                if not beside and rec.get("db") not in (None, db):
                    os.rename(path, os.path.join(folder, name))  # another store's event
                    continue
                payload = rec.get("payload")
                if not isinstance(payload, str):
                    raise ValueError("spool file without payload")
                size = rec.get("size")
                conn.execute("BEGIN IMMEDIATE")
                try:
                    append(conn, payload, size=size if isinstance(size, int) else len(payload),
                           project=rec.get("project") if isinstance(rec.get("project"), str) else None,
                           error=rec.get("error") if isinstance(rec.get("error"), str) else None,
                           hook_event_name=rec.get("hook_event_name"),
                           received_at=rec.get("received_at"),
                           state=rec.get("state") if rec.get("state") in ("skipped", "failed") else None)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError:
                _unclaim(path, folder, name)
                return moved  # the journal is locked/unwritable: every file would fail; later
            except Exception as exc:  # noqa: BLE001 - this file is the problem: set it aside
                _unclaim(path, folder, name)
                _move_failed(folder, name, f"{type(exc).__name__}: {exc}"[:300])
                continue
            try:
                os.unlink(path)
            except OSError:
                pass
            moved += 1
            since += len(payload)
            if since >= DRAIN_CHECKPOINT_BYTES or moved % DRAIN_CHECKPOINT_FILES == 0:
                _checkpoint(conn)
                since = 0
    if moved:
        _checkpoint(conn)
    return moved


# After a full disk clears, the spool is journaled as it drains; the WAL is written back and
# truncated this often, so draining needs about the spooled bytes again, not the WAL's too
# (SQLite's own autocheckpoint, 1000 pages, lets the journal's WAL reach 16 MB first, and
# leaves the file at that size: the one place memhooks checkpoints by hand).
DRAIN_CHECKPOINT_BYTES = 4 * 1024 * 1024
DRAIN_CHECKPOINT_FILES = 64


def _checkpoint(conn) -> None:
    """Every attached file's WAL written back and truncated, waiting 200 ms at most (a hook
    appending meanwhile waits no longer); a busy checkpoint is tried again at the next step."""
    try:
        checkpoint_truncate(conn, wait_ms=200)
    except Exception:  # noqa: BLE001 - tried again at the next step
        pass
