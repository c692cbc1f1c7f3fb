"""The detached ingester's work: ingest until nothing is pending, under the ingest lock, then
upkeep. The process (`_entry.py ingest`) is memhooks.entry.ingester."""

from __future__ import annotations

import fcntl
import os
import sqlite3

from memhooks.config import db_path
from memhooks.ingest.pipeline import ingest_pending
from memhooks.log import log_error, log_exception
from memhooks.store import health
from memhooks.store.connect import closing, connect
from memhooks.store.prune import enforce_cap
from memhooks.store.queries import has_pending


def _has_pending(db: str) -> bool:
    with closing(connect(db)) as conn:
        return has_pending(conn)


def _ingest_once(db: str, ingest_pending, connect) -> None:
    """One pass; when SQLite reports a damaged file, heal (move it aside, rebuild from the
    journal) and pass again."""
    for attempt in (1, 2):
        try:
            with closing(connect(db)) as conn:
                ingest_pending(conn, db)
            return
        except sqlite3.DatabaseError as exc:
            if attempt == 2 or not health.is_corruption(exc) or not health.heal(db, str(exc)):
                raise


def _upkeep(db: str) -> None:
    """After ingesting, still under the lock: pack the settled events and hold the store to
    its size cap (memhooks.store.prune)."""
    try:
        with closing(connect(db)) as conn:
            report = enforce_cap(conn, db)
        if report is not None and report.documents + report.bodies:
            log_error(f"size cap {report.cap} bytes: pruned {report.documents} documents and "
                      f"{report.bodies} raw bodies; the store went from {report.before} to "
                      f"{report.after} bytes")
    except Exception:  # noqa: BLE001 - the next ingest tries again
        log_exception("size cap")


def _handed_lock(args: list[str], lock: str) -> int | None:
    """The lock a hook took and handed over (memhooks.detach: `--lock-fd=N`, an inherited
    descriptor of the lock file, already locked), or None when there is none (an ingester
    started another way, or N is not that file: then the lock is taken as usual)."""
    for arg in args:
        if arg.startswith("--lock-fd="):
            try:
                fd = int(arg.split("=", 1)[1])
                held, path = os.fstat(fd), os.stat(lock)
                if fd < 3 or (held.st_dev, held.st_ino) != (path.st_dev, path.st_ino):
                    return None
                os.set_inheritable(fd, False)  # not passed on to this process's own children
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held already: confirms it
                return fd
            except (ValueError, OSError):
                return None
    return None


def main(args: list[str], after_ingest=None) -> int:
    """Ingest until nothing is pending, then run `after_ingest(db, background)`, the work
    the caller hands over (memhooks.entry.ingester: the team push). Needs the dependencies
    (pydantic): the caller checks that they are there."""
    db = db_path()
    background = "--background" in args
    fd = _handed_lock(args, db + ".ingest.lock") if background else None
    if fd is None:
        fd = os.open(db + ".ingest.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            # In the background, a running ingester is enough; in the foreground
            # (a reader that needs fresh answers) wait for it, then look again.
            fcntl.flock(fd, fcntl.LOCK_EX | (fcntl.LOCK_NB if background else 0))
        except OSError:
            os.close(fd)
            return 0
    try:
        if health.due(db):
            health.check_now(db)  # at most once an interval, never on a hook's path
        health.salvage_journals(db)  # rows still readable in a journal moved aside
        while True:
            _ingest_once(db, ingest_pending, connect)
            if background:
                _upkeep(db)  # never for a reader waiting on fresh answers
            # The lock is released once, when the work is done; then look again: a
            # hook that journaled meanwhile saw the lock held and relies on this.
            fcntl.flock(fd, fcntl.LOCK_UN)
            if not _has_pending(db):
                break
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                break
    finally:
        os.close(fd)
    if after_ingest is not None:
        after_ingest(db, background)
    return 0
