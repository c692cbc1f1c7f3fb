"""Size control: `memhooks prune` and the size cap the detached ingester holds the store to.

What goes, in this order:
1. raw bodies in the journal that gave no document still stored (an event that yielded
   none; a document pruned before its event was packed);
2. documents, coldest first: never read first, then the least recently read; ties by age
   (the last time the document was captured). A document read within the protection
   window (PROTECT_DAYS) goes only once every colder one is gone (of those, the ones read
   fewer times first); documents of a pinned
   version of a current project (a tier1 entry of a project warmed in the last
   CURRENT_DAYS days whose versioned ID, or library and version, the document has) and
   documents of a library a current project's tier1 names without a version go last of all.
A document goes with its full-text entries, captures and tier2 entries, and its raw body
in the journal when no stored document still needs it (memhooks.store.compact); its
references in the journal stay (a reindex marks them skipped).

`--older-than` takes the documents (never the protected ones) whose last access and last
capture are older, the bodies of step 1 and tier1 entries expired that long ago.

`--max-size` (and the cap) counts every file of the store's folder (memhooks.store.vacuum:
both databases, their WAL files, the logs, the spool). One pass: measure; when over the
cap, work out how many bytes must go (down to TARGET of the cap, the margin that keeps the
next captures from pruning at once); take that much, in the order above, by what each
document costs on disk (its bytes times what a content byte costs: the store's document
part over its content, then what the last round freed per byte deleted); delete it in
short transactions; give the pages back (the full-text index merged into one segment,
incremental_vacuum, the WALs checkpointed: memhooks.store.vacuum.release); measure again
and stop as soon as the folder is within the target. It never takes more than the bytes
that must go, by its estimate, in a round.

When eviction cannot bring the store within the cap (what no eviction removes, the
journal's events, the logs, already takes the cap; or the cap would need every document,
as with one document larger than the cap), the store is kept as it is and the reason is
written to `cap-unmet` beside it (`cap_unmet(db)`, which `memhooks stats` and `memhooks
doctor` show); the next pass within the cap removes it.

A store still in `auto_vacuum = NONE` mode (made before memhooks 0.2) keeps its free
pages until `memhooks vacuum`; they are counted as free and reused meanwhile.

The caller holds the ingest lock (`ingest_lock`): the ingester does, the CLI takes it.
Nothing here runs on a hook's path.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from memhooks.config import beside, journal_path, max_store_bytes
from memhooks.egress import one_line
from memhooks.files import open_regular
from memhooks.store import compact, packs
from memhooks.store.connect import closing, connect
from memhooks.store.projections import drop_unused_contexts
from memhooks.store.sqlite_file import transaction
from memhooks.store.vacuum import (
    checkpoint,
    free_bytes,
    incremental_mode,
    on_disk,
    release,
    step_pages,
    store_bytes,
)
from memhooks.termtext import human_bytes

TARGET = 0.9  # of the cap: a prune leaves room, so the next captures do not prune at once
# of the cap: the upkeep evicts from here, so what an ingest adds and what the eviction's own
# steps hold for a moment (WAL pages, pages not yet given back) stay within a tenth over it
START = 0.95
CURRENT_DAYS = 30
PROTECT_DAYS = 7  # a document read this recently goes only once every colder one is gone
MAX_ROUNDS = 12
UNMET_NAME = "cap-unmet"
DELETE_SHARE = 0.01  # of the cap: content deleted per transaction (a checkpoint after each)
MIN_DELETE_BYTES = 64 * 1024


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
    recent: int = 0  # of the documents, read within the protection window
    rounds: list = field(default_factory=list)  # (bytes before, bytes after, documents) a round
    unmet: str | None = None  # why the cap cannot be met by eviction (nothing was evicted for it)


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
    """SQL truth value: document `d` is of a pinned version of one of `projects`, or of a
    library one of their tier1 entries names without a version."""
    if not projects:
        return "0", []
    marks = ",".join("?" * len(projects))
    return (f"EXISTS (SELECT 1 FROM tier1 t WHERE t.project IN ({marks}) AND t.library_id IS NOT NULL"
            " AND (d.library_id = t.versioned_id OR (t.version IS NULL AND d.library_id = t.library_id)"
            " OR (d.version IS NOT NULL AND t.version IS NOT NULL"
            " AND ltrim(d.version, 'vV') = ltrim(t.version, 'vV')"
            " AND substr(d.library_id, 1, length(t.library_id)) = t.library_id)))", list(projects))


def candidates(conn, projects: list[str], *, older_than: float | None = None,
               now: float | None = None) -> list[tuple]:
    """Documents in eviction order: (id, content_hash, bytes, title, protected, last_used,
    recent): not protected before protected; of those, read before the protection window
    (or never) before read within it; then by last read, then by age. Within the window
    the documents read fewer times go first (one read 25 times outlasts one read once
    since)."""
    now = time.time() if now is None else now
    protected, args = _protected_sql(projects)
    sql = (f"SELECT id, content_hash, bytes, coalesce(title, source), prot, max(last_read, seen),"
           " last_read >= ? AS recent FROM"
           f" (SELECT d.id, d.content_hash, d.bytes, d.title, d.source, {protected} AS prot,"
           " coalesce(d.last_accessed_epoch, 0) AS last_read, coalesce(d.access_count, 0) AS reads,"
           " max(coalesce(d.created_at_epoch, 0), coalesce((SELECT max(c.captured_at) FROM captures c"
           " WHERE c.document_id = d.id), 0)) AS seen FROM documents d)")
    args = [now - PROTECT_DAYS * 86400, *args]
    if older_than is not None:
        sql += " WHERE prot = 0 AND max(last_read, seen) < ?"
        args = [*args, older_than]
    return conn.execute(sql + " ORDER BY prot, recent, CASE WHEN recent THEN reads ELSE 0 END,"
                        " last_read, seen, id", args).fetchall()


def _delete_documents(conn, rows, chunk_bytes: int | None = None) -> None:
    """Delete `rows` (candidates) with their index entries, captures and bodies: in
    transactions of at most 200 documents and `chunk_bytes` of content, each followed by a
    checkpoint when `chunk_bytes` is set (so the WAL holds one of them at most)."""
    i = 0
    while i < len(rows):
        part: list = []
        size = 0
        while i < len(rows) and len(part) < 200 and (not part or chunk_bytes is None
                                                       or size + (rows[i][2] or 0) <= chunk_bytes):
            part.append(rows[i])
            size += rows[i][2] or 0
            i += 1
        with transaction(conn):
            marks = ",".join("?" * len(part))
            conn.execute(f"DELETE FROM documents WHERE id IN ({marks})", [r[0] for r in part])  # captures too
            compact.drop_bodies(conn, [r[1] for r in part])
        if chunk_bytes is not None:
            checkpoint(conn)
    if rows:
        with transaction(conn):  # once: each call reads every capture row
            drop_unused_contexts(conn)  # the (project, session, tool) rows no capture uses


def _measure(conn, db: str) -> tuple[int, bool]:
    """(bytes the store takes, whether its files give free pages back); free pages of a
    file that cannot give them back count as free."""
    reclaimable = incremental_mode(conn, "main") and incremental_mode(conn, "journal")
    size = store_bytes(db)
    return (size if reclaimable else max(0, size - free_bytes(conn))), reclaimable


def _document_part(conn) -> int:
    """Bytes eviction can give back, as stored: the documents' bodies, their full-text indexes (whole and by section)
    (its leaves and tombstones) and the journal's raw bodies. The rest (the files' other
    tables and structure, the journal's events, the logs) stays whatever goes."""
    bodies = conn.execute("SELECT coalesce(sum(length(body)), 0) FROM documents").fetchone()[0]
    index = conn.execute("SELECT coalesce(sum(length(block)), 0) FROM documents_fts_data").fetchone()[0]
    index += conn.execute("SELECT coalesce(sum(length(block)), 0) FROM sections_fts_data").fetchone()[0]
    raw = conn.execute("SELECT coalesce(sum(length(data)), 0) FROM blobs").fetchone()[0]
    return bodies + index + raw


# ----------------------------------------------------------------------------- the cap's word


def unmet_path(db: str) -> str:
    return beside(db, UNMET_NAME)


def cap_unmet(db: str) -> dict | None:
    """Why the last upkeep could not bring the store within its cap by eviction: {"reason",
    "size", "cap", "at"}; None when it could (or never had to)."""
    fd = open_regular(unmet_path(db), os.O_RDONLY)
    if fd is None:
        return None
    try:
        data = json.loads(os.read(fd, 4096).decode("utf-8", "replace"))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    if not isinstance(data, dict) or not isinstance(data.get("reason"), str):
        return None
    return data


def _say_unmet(db: str, reason: str | None, size: int, cap: int, now: float) -> None:
    path = unmet_path(db)
    if reason is None:
        try:
            os.unlink(path)
        except OSError:
            pass
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, json.dumps({"reason": reason, "size": size, "cap": cap, "at": round(now, 3)}).encode())
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        pass


# ----------------------------------------------------------------------------- prune


def prune(conn, db: str, *, older_than_s: float | None = None, max_bytes: int | None = None,
          dry_run: bool = False, project: str | None = None, now: float | None = None,
          start_at: int | None = None) -> PruneReport:
    """Evict what `--older-than` and `--max-size` ask for (module docstring): down to TARGET
    of `max_bytes` once the store is over `start_at` (default: `max_bytes`). The caller holds
    the ingest lock. A dry run changes nothing and estimates what would go."""
    now = time.time() if now is None else now
    report = PruneReport(dry_run=dry_run, cap=max_bytes)
    if packs.pending_packs(conn):
        # A reindex is under way: its documents are not all back yet, and their bodies
        # would look unneeded.
        report.before, report.reclaimable = _measure(conn, db)
        report.after = report.before
        return report
    pages = step_pages(max_bytes, _page_size(conn))
    if not dry_run:
        packs.pack_settled(conn, min_events=1, now=now)  # every body linked to its documents
        release(conn, pages=pages)
    report.before, report.reclaimable = _measure(conn, db)
    projects = current_projects(conn, now, project)
    if older_than_s is not None:
        cutoff = now - older_than_s
        rows = candidates(conn, projects, older_than=cutoff, now=now)
        orphans = compact.orphan_blobs(conn, cutoff)
        _count(report, rows)
        report.bodies += len(orphans)
        if not dry_run:
            with transaction(conn):
                compact.drop_blobs(conn, [b for b, _ in orphans])
            _delete_documents(conn, rows, _chunk(max_bytes))
            with transaction(conn):
                report.tier1 += conn.execute("DELETE FROM tier1 WHERE expires_at < ?",
                                             (cutoff,)).rowcount
            release(conn, pages=pages)
    if max_bytes is not None:
        _to_size(conn, db, max_bytes, projects, report, dry_run, now,
                 max_bytes if start_at is None else start_at)
    report.after = report.before if dry_run else _measure(conn, db)[0]
    if max_bytes is not None and not dry_run:
        _say_unmet(db, report.unmet if report.after > max_bytes else None, report.after, max_bytes, now)
    return report


def _count(report: PruneReport, rows) -> None:
    report.documents += len(rows)
    report.document_bytes += sum(r[2] or 0 for r in rows)
    report.recent += sum(1 for r in rows if r[6])
    report.sample += [(r[0], r[3]) for r in rows[:20 - len(report.sample)]]


def _page_size(conn) -> int:
    return conn.execute("PRAGMA main.page_size").fetchone()[0]


def _chunk(cap: int | None) -> int | None:
    return None if cap is None else max(MIN_DELETE_BYTES, int(cap * DELETE_SHARE))


def _to_size(conn, db: str, cap: int, projects: list[str], report: PruneReport,
             dry_run: bool, now: float, start_at: int) -> None:
    """Evict down to TARGET of `cap`, round by round (module docstring), when the store is
    over `start_at`."""
    target = int(cap * TARGET)
    size = report.before if dry_run else _measure(conn, db)[0]
    if size <= start_at:
        return
    pages = step_pages(cap, _page_size(conn))
    ratio = None  # bytes on disk freed per content byte deleted, once a round measured it
    for _ in range(MAX_ROUNDS):
        excess = size - target
        if excess <= 0:
            return
        rows = candidates(conn, projects, now=now)
        orphans = compact.orphan_blobs(conn)
        content = sum(r[2] or 0 for r in rows)
        part = _document_part(conn)
        if ratio is None:
            # What one content byte costs now: what eviction can give back over the content
            # (pages are not full: a little more goes; a round after measures it).
            ratio = max(1.0, part / content) if content else 1.0
        floor = size - part
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
            freed += int((r[2] or 0) * ratio)
        if freed < excess or (take_rows and len(take_rows) == len(rows)):
            report.unmet = _why_unmet(db, rows, ratio, floor, size, target)
            take_rows = []  # the store is kept: evicting it all would not do, or would empty it
            if not take_blobs:
                return
        report.bodies += len(take_blobs)
        _count(report, take_rows)
        if dry_run:
            return
        with transaction(conn):
            compact.drop_blobs(conn, take_blobs)
        _delete_documents(conn, take_rows, _chunk(cap))
        release(conn, pages=pages)
        after = _measure(conn, db)[0]
        report.rounds.append((size, after, len(take_rows)))
        deleted = sum(r[2] or 0 for r in take_rows)
        if deleted and size > after:
            ratio = max(0.05, (size - after - sum(b for _, b in orphans[:len(take_blobs)])) / deleted)
        if report.unmet or after >= size:
            return  # nothing more to take, or taking frees nothing
        size = after


def _why_unmet(db: str, rows, ratio: float, floor: int, size: int, target: int) -> str:
    """A sentence for stats and doctor: why eviction cannot bring the store within its cap."""
    if rows:
        big = max(rows, key=lambda r: r[2] or 0)
        if (big[2] or 0) * ratio > target:
            return (f"document #{big[0]} alone takes about {int((big[2] or 0) * ratio):,} bytes, more "
                    "than the cap allows; raise the cap (MEMHOOKS_MAX_SIZE) or `memhooks forget` it")
    if floor > target:
        journal = sum(on_disk(journal_path(db) + s) for s in ("", "-wal"))
        return (f"what eviction cannot remove (the journal's events, {journal:,} bytes with its WAL; "
                f"the logs and the spool) takes {floor:,} bytes, more than the cap allows; "
                "raise the cap (MEMHOOKS_MAX_SIZE)")
    return ("meeting the cap would evict every document; raise the cap (MEMHOOKS_MAX_SIZE) "
            f"or `memhooks forget` what you no longer need (the store takes {size:,} bytes)")


def enforce_cap(conn, db: str, cap: int | None = None) -> PruneReport | None:
    """The ingester, after it ingested (holding the ingest lock): pack what settled, and
    prune to the cap when the store is over it. None when it is under."""
    cap = max_store_bytes() if cap is None else cap
    packs.pack_settled(conn)
    # The index levels due for a merge (the store writes with FTS5's automerge off, so an
    # ingest's transaction never rewrites a level), and the free pages the rows packed or
    # compacted left: in steps, the WAL truncated after each.
    release(conn, fts=False, pages=step_pages(cap, _page_size(conn)))
    size, _ = _measure(conn, db)
    if size <= cap * START:
        if cap_unmet(db) is not None:
            _say_unmet(db, None, size, cap, time.time())
        return None
    return prune(conn, db, max_bytes=cap, start_at=int(cap * START))


# ----------------------------------------------------------------------------- memhooks prune


def prune_store(db: str, *, older_than_s: float | None = None, max_bytes: int | None = None,
                dry_run: bool = False, project: str | None = None) -> PruneReport:
    """`memhooks prune`: wait for a running ingester (TimeoutError past a minute), then
    prune. `max_bytes` None with no `older_than_s` is the cap (MEMHOOKS_MAX_SIZE)."""
    if max_bytes is None and older_than_s is None:
        max_bytes = max_store_bytes()
    with ingest_lock(db), closing(connect(db)) as conn:
        return prune(conn, db, older_than_s=older_than_s, max_bytes=max_bytes, dry_run=dry_run,
                     project=project)


def report_lines(report: PruneReport) -> list[str]:
    """What `memhooks prune` prints for a report."""
    verb = "would evict" if report.dry_run else "evicted"
    lines = [f"{verb} {report.documents:,} documents ({human_bytes(report.document_bytes)} of content), "
             f"{report.bodies:,} raw bodies without a document"
             + (f", {report.tier1:,} tier1 entries" if report.tier1 else "")
             + (f"; {report.recent:,} of them read in the last {PROTECT_DAYS} days" if report.recent else "")]
    lines += [f"  #{doc_id} {one_line(title, 100)}" for doc_id, title in report.sample[:10]]
    cap = f" (cap {human_bytes(report.cap)})" if report.cap else ""
    if report.dry_run:
        lines.append(f"store: {human_bytes(report.before)}{cap}")
    else:
        lines.append(f"store: {human_bytes(report.before)} -> {human_bytes(report.after)}{cap}")
    if report.unmet:
        lines.append(f"the cap cannot be met by eviction: {report.unmet}")
    if not report.reclaimable:
        lines.append("note: this store was made before incremental vacuum: its free pages are reused "
                     "but not given back until you run `memhooks vacuum` once")
    return lines
