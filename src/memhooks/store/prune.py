"""Size control: `memhooks prune` and the size cap the detached ingester holds the store to.

What goes, in this order:
1. raw bodies in the journal that gave no document still stored (an event that yielded
   none; a document pruned before its event was packed);
2. documents, by last access: never read first, then the least recently read; ties by
   age (the last time the document was captured). Documents of a pinned version of a
   current project (a tier1 entry of a project warmed in the last CURRENT_DAYS days whose
   versioned ID, or library and version, the document has) go last;
3. tier1 entries, last of all, the ones that expired first.
A document goes with its full-text entries, captures and tier2 entries, and its raw body
in the journal when no stored document still needs it (memhooks.store.compact); its
references in the journal stay (a reindex marks them skipped).

`--older-than` takes the documents (never the protected ones) whose last access and last
capture are older, the bodies of step 1 and tier1 entries expired that long ago;
`--max-size` (and the cap) evicts in the order above until the store's files take at most
TARGET of the size, measured after the free pages were given back (memhooks.store.vacuum).
A store still in `auto_vacuum = NONE` mode (made before memhooks 0.2) keeps its free
pages until `memhooks vacuum`; they are counted as free and reused meanwhile.

The caller holds the ingest lock (`ingest_lock`): the ingester does, the CLI takes it.
Nothing here runs on a hook's path.
"""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from memhooks.store import compact, packs
from memhooks.store.projections import drop_unused_contexts
from memhooks.store.sqlite_file import transaction
from memhooks.store.vacuum import free_bytes, incremental_mode, release, store_bytes

TARGET = 0.9  # of the cap: a prune leaves room, so the next captures do not prune at once
CURRENT_DAYS = 30
MAX_ROUNDS = 12


@dataclass
class PruneReport:
    dry_run: bool = False
    documents: int = 0
    document_bytes: int = 0
    bodies: int = 0  # raw bodies (blobs) dropped from the journal
    tier1: int = 0
    before: int = 0
    after: int = 0
    cap: int | None = None
    reclaimable: bool = True  # False: auto_vacuum is off, the files keep their free pages
    sample: list = field(default_factory=list)  # (id, title) of some documents that went


@contextmanager
def ingest_lock(db: str, wait_s: float = 60.0):
    """The ingester's lock (`<db>.ingest.lock`): no ingester runs while it is held. Raises
    TimeoutError when it is not free within `wait_s`."""
    fd = os.open(db + ".ingest.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError("an ingester holds the store") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)


def current_projects(conn, now: float, extra: str | None = None) -> list[str]:
    rows = [r[0] for r in conn.execute("SELECT project FROM warm_state WHERE warmed_at >= ?",
                                       (now - CURRENT_DAYS * 86400,))]
    return rows + ([extra] if extra else [])


def _protected_sql(projects: list[str]) -> tuple[str, list]:
    """SQL truth value: document `d` is of a pinned version of one of `projects`."""
    if not projects:
        return "0", []
    marks = ",".join("?" * len(projects))
    return (f"EXISTS (SELECT 1 FROM tier1 t WHERE t.project IN ({marks}) AND t.library_id IS NOT NULL"
            " AND (d.library_id = t.versioned_id OR (d.version IS NOT NULL AND t.version IS NOT NULL"
            " AND ltrim(d.version, 'vV') = ltrim(t.version, 'vV')"
            " AND substr(d.library_id, 1, length(t.library_id)) = t.library_id)))", list(projects))


def candidates(conn, projects: list[str], *, older_than: float | None = None) -> list[tuple]:
    """Documents in eviction order: (id, content_hash, bytes, title, protected, last_used)."""
    protected, args = _protected_sql(projects)
    sql = (f"SELECT id, content_hash, bytes, coalesce(title, source), prot, max(last_read, seen) FROM"
           f" (SELECT d.id, d.content_hash, d.bytes, d.title, d.source, {protected} AS prot,"
           " coalesce(d.last_accessed_epoch, 0) AS last_read,"
           " max(coalesce(d.created_at_epoch, 0), coalesce((SELECT max(c.captured_at) FROM captures c"
           " WHERE c.document_id = d.id), 0)) AS seen FROM documents d)")
    if older_than is not None:
        sql += " WHERE prot = 0 AND max(last_read, seen) < ?"
        args = [*args, older_than]
    return conn.execute(sql + " ORDER BY prot, last_read, seen, id", args).fetchall()


def _delete_documents(conn, rows) -> None:
    ids = [r[0] for r in rows]
    for i in range(0, len(ids), 200):
        part = ids[i:i + 200]
        with transaction(conn):
            marks = ",".join("?" * len(part))
            hashes = [r[1] for r in rows[i:i + 200]]
            conn.execute(f"DELETE FROM documents WHERE id IN ({marks})", part)  # captures too
            compact.drop_bodies(conn, hashes)
    if ids:
        with transaction(conn):  # once: each call reads every capture row
            drop_unused_contexts(conn)  # the (project, session, tool) rows no capture uses


def _measure(conn, db: str) -> tuple[int, bool]:
    """(bytes the store takes, whether its files give free pages back); free pages of a
    file that cannot give them back count as free."""
    reclaimable = incremental_mode(conn, "main") and incremental_mode(conn, "journal")
    size = store_bytes(db)
    return (size if reclaimable else max(0, size - free_bytes(conn))), reclaimable


def prune(conn, db: str, *, older_than_s: float | None = None, max_bytes: int | None = None,
          dry_run: bool = False, project: str | None = None, now: float | None = None) -> PruneReport:
    """Evict what `--older-than` and `--max-size` ask for (module docstring). The caller holds
    the ingest lock. A dry run changes nothing and estimates what would go."""
    now = time.time() if now is None else now
    report = PruneReport(dry_run=dry_run, cap=max_bytes)
    if packs.pending_packs(conn):
        # A reindex is under way: its documents are not all back yet, and their bodies
        # would look unneeded.
        report.before, report.reclaimable = _measure(conn, db)
        report.after = report.before
        return report
    if not dry_run:
        packs.pack_settled(conn, min_events=1, now=now)  # every body linked to its documents
        release(conn, fts=False)
    report.before, report.reclaimable = _measure(conn, db)
    projects = current_projects(conn, now, project)
    if older_than_s is not None:
        cutoff = now - older_than_s
        rows = candidates(conn, projects, older_than=cutoff)
        orphans = compact.orphan_blobs(conn, cutoff)
        report.documents += len(rows)
        report.document_bytes += sum(r[2] or 0 for r in rows)
        report.bodies += len(orphans)
        report.sample += [(r[0], r[3]) for r in rows[:20]]
        if not dry_run:
            with transaction(conn):
                compact.drop_blobs(conn, [b for b, _ in orphans])
            _delete_documents(conn, rows)
            with transaction(conn):
                report.tier1 += conn.execute("DELETE FROM tier1 WHERE expires_at < ?",
                                             (cutoff,)).rowcount
            release(conn)
    if max_bytes is not None:
        _to_size(conn, db, max_bytes, projects, report, dry_run)
    report.after = report.before if dry_run else _measure(conn, db)[0]
    return report


def _to_size(conn, db: str, max_bytes: int, projects: list[str], report: PruneReport,
             dry_run: bool) -> None:
    target = int(max_bytes * TARGET)
    size = report.before if dry_run else _measure(conn, db)[0]
    if size <= max_bytes:
        return
    for _ in range(MAX_ROUNDS):
        excess = size - target
        if excess <= 0:
            return
        content = conn.execute("SELECT coalesce(sum(bytes), 0) FROM documents").fetchone()[0]
        # What one content byte costs on disk now (documents, index, captures, journal).
        ratio = max(1.0, size / content) if content else 1.0
        orphans = compact.orphan_blobs(conn)
        rows = candidates(conn, projects)
        if not orphans and not rows:
            break
        take_blobs, take_rows, freed = [], [], 0
        for blob, size_b in orphans:
            if freed >= excess:
                break
            take_blobs.append(blob)
            freed += size_b
        for r in rows:
            if freed >= excess:
                break
            take_rows.append(r)
            freed += int((r[2] or 0) * ratio) + 200
        report.bodies += len(take_blobs)
        report.documents += len(take_rows)
        report.document_bytes += sum(r[2] or 0 for r in take_rows)
        report.sample += [(r[0], r[3]) for r in take_rows[:20 - len(report.sample)]]
        if dry_run:
            return
        with transaction(conn):
            compact.drop_blobs(conn, take_blobs)
        _delete_documents(conn, take_rows)
        release(conn)
        size = _measure(conn, db)[0]
    if size > max_bytes and not dry_run:
        # Everything else is gone: tier1 last, the entries that expired first.
        with transaction(conn):
            report.tier1 += conn.execute(
                "DELETE FROM tier1 WHERE rowid IN (SELECT rowid FROM tier1 ORDER BY expires_at"
                " LIMIT (SELECT count(*) / 2 + 1 FROM tier1))").rowcount
        release(conn, fts=False)


def enforce_cap(conn, db: str, cap: int | None = None) -> PruneReport | None:
    """The ingester, after it ingested (holding the ingest lock): pack what settled, and
    prune to the cap when the store is over it. None when it is under."""
    # lazy: config's size rule only when the cap is enforced
    from memhooks.config import max_store_bytes

    cap = max_store_bytes() if cap is None else cap
    packs.pack_settled(conn)
    release(conn, fts=False)  # the rows packed or compacted left free pages
    size, _ = _measure(conn, db)
    if size <= cap:
        return None
    return prune(conn, db, max_bytes=cap)
