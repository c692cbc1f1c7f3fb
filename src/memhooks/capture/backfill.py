"""Import past Claude Code sessions: transcripts -> the journal -> the same adapters as live
hooks (`memhooks import-transcripts`).

Each captured tool call becomes the PostToolUse (or PostToolUseFailure) payload its hook
would have received, marked ``memhooks_import`` with its original time, and is journaled
with the journal's own functions (redacted, size-capped), then ingested. A call already in
the journal (same session and tool_use id: imported before, or captured live) is not
journaled again. Permission denials are counted, not journaled (no hook fires for them).
Files are streamed; memory stays flat whatever their size.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from memhooks.capture.payload import prepare
from memhooks.capture.transcripts import ReadStats, ToolCall, find_transcripts, read_transcript
from memhooks.config import MAX_EVENT_BYTES, canonical_path, db_path, journal_path
from memhooks.ingest.pipeline import ingest_pending, open_reader
from memhooks.store.connect import transaction
from memhooks.store.journal import append
from memhooks.store.packs import tool_use_digest, tool_use_ids
from memhooks.store.queries import journal_readable
from memhooks.store.sqlite_file import connect_reader

BATCH_CALLS = 200
BATCH_BYTES = 4 * 1024 * 1024
KNOWN_SESSIONS = 16  # sessions whose journaled tool_use ids are kept in memory


@dataclass
class ImportReport:
    files: int = 0
    missing: list = field(default_factory=list)
    unreadable: list = field(default_factory=list)
    bytes_total: int = 0
    read: ReadStats = field(default_factory=ReadStats)
    out_of_scope: int = 0  # before --since, or outside --project
    journaled: int = 0  # new events
    already: int = 0  # in the journal before (imported, or captured live)
    too_large: int = 0
    documents_new: int = 0
    documents_duplicate: int = 0  # results whose document was stored already
    skipped_events: int = 0  # journaled, but nothing to store (errors, tiny results)
    failed_events: int = 0
    dry_run: bool = False
    seconds: float = 0.0

    @property
    def errors_skipped(self) -> int:
        r = self.read
        return r.bad_lines + r.long_lines + r.unknown_shapes + self.too_large + len(self.unreadable)

    def as_dict(self) -> dict:
        r = self.read
        return {
            "files": self.files, "bytes": self.bytes_total, "seconds": round(self.seconds, 3),
            "dry_run": self.dry_run, "sessions": len(r.sessions),
            "tool_calls": {"found": r.tool_uses, "with_result": r.results, "failures": r.failures,
                           "denied": r.denials, "without_result": r.unanswered,
                           "out_of_scope": self.out_of_scope},
            "events": {"new": self.journaled, "already_journaled": self.already,
                       "skipped": self.skipped_events, "failed": self.failed_events},
            "documents": {"new": self.documents_new, "duplicate": self.documents_duplicate},
            "errors_skipped": {"total": self.errors_skipped, "bad_lines": r.bad_lines,
                               "long_lines": r.long_lines, "unknown_shapes": r.unknown_shapes,
                               "too_large": self.too_large, "evicted_pending": r.evicted,
                               "unreadable_files": list(self.unreadable)},
            "missing_paths": list(self.missing),
        }


def _inside(path: str | None, root: str) -> bool:
    if not path:
        return False
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class _Known:
    """Journaled tool_use ids per session, for a few sessions at a time."""

    def __init__(self, conn, pending: dict | None = None):
        self.conn = conn
        self.pending = pending or {}  # a dry run's: ids of events not ingested yet
        self.sessions: OrderedDict = OrderedDict()

    def ids(self, session: str) -> set:
        got = self.sessions.get(session)
        if got is None:
            if self.conn is None:
                got = set()
            else:
                got = tool_use_ids(self.conn, session) | self.pending.get(session, set())
            self.sessions[session] = got
            while len(self.sessions) > KNOWN_SESSIONS:
                self.sessions.popitem(last=False)
        self.sessions.move_to_end(session)
        return got


def import_transcripts(paths: list[str] | None = None, *, since: float | None = None,
                       project: str | None = None, dry_run: bool = False, db: str | None = None,
                       progress=None, env: dict | None = None) -> ImportReport:
    """Import the transcripts under `paths` (default: Claude Code's transcript folders).

    `progress(done_bytes, total_bytes, path)` is called as files are read."""
    t0 = time.monotonic()
    report = ImportReport(dry_run=dry_run)
    files, report.missing = find_transcripts(paths, env)
    sizes = {}
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            continue
        if since is not None and st.st_mtime < since:
            continue  # last written before --since: every line in it is older
        sizes[f] = st.st_size
    report.files = len(sizes)
    report.bytes_total = sum(sizes.values())
    root = canonical_path(project) if project else None
    db = db or db_path()

    conn = None
    if not sizes:
        report.seconds = time.monotonic() - t0
        return report  # nothing to import: no store is created for it
    if dry_run:
        conn = _journal_reader(db)
    else:
        conn = open_reader(db)  # projects pending events, so their ids are known
    known = _Known(conn, _pending_ids(conn) if dry_run and conn is not None else None)
    done_before = 0
    try:
        for path in sizes:
            stats = ReadStats()
            batch: list[tuple[ToolCall, str, int, str | None]] = []
            batch_bytes = 0
            try:
                fh = open(path, "rb")
            except OSError as exc:
                report.unreadable.append(f"{path}: {exc.strerror or exc}")
                continue
            try:
                tick = None
                if progress is not None:
                    def tick(n, _base=done_before, _path=path):
                        progress(_base + n, report.bytes_total, _path)
                for call in read_transcript(fh, path, stats, tick=tick):
                    if (since is not None and call.at is not None and call.at < since) or (
                            root is not None and not _inside(canonical_path(call.cwd), root)):
                        report.out_of_scope += 1
                        continue
                    if call.denied:
                        continue
                    ids = known.ids(call.session_id)
                    digest = tool_use_digest(call.tool_use_id)
                    if digest in ids:
                        report.already += 1
                        continue
                    ids.add(digest)
                    item = _prepared(call)
                    if item is None:
                        report.too_large += 1
                        continue
                    if dry_run:
                        report.journaled += 1
                        continue
                    batch.append(item)
                    batch_bytes += item[2]
                    if len(batch) >= BATCH_CALLS or batch_bytes >= BATCH_BYTES:
                        _flush(conn, db, batch, report)
                        batch, batch_bytes = [], 0
                if batch:
                    _flush(conn, db, batch, report)
            except OSError as exc:
                report.unreadable.append(f"{path}: {exc.strerror or exc}")
            finally:
                fh.close()
            done_before += sizes[path]
            report.read.add(stats)
            if progress is not None:
                progress(done_before, report.bytes_total, path)
    finally:
        if conn is not None:
            conn.close()
    report.seconds = time.monotonic() - t0
    return report


def _journal_reader(db: str):
    """The journal opened read-only for a dry run (the file beside the store, else an older
    store that still holds its events), or None when there is none to read."""
    for path in (journal_path(db), db):
        if not os.path.exists(path):
            continue
        try:
            conn = connect_reader(path, timeout=5)
        except sqlite3.Error:
            continue
        try:
            journal_readable(conn)
            return conn
        except sqlite3.Error:
            conn.close()
    return None


def _pending_ids(conn) -> dict:
    """Session -> tool_use id digests of the events journaled but not ingested yet: the
    import ingests them before it compares, which sets these columns from the payload; a
    dry run, which writes nothing, reads them from the payload the same way."""
    out: dict = {}
    for (payload,) in conn.execute(
            "SELECT payload FROM events WHERE state = 'pending' AND tool_use_id IS NULL"):
        try:
            event = json.loads(payload) if isinstance(payload, str) else None
        except (ValueError, RecursionError):
            continue
        if not isinstance(event, dict):
            continue
        session, tid = event.get("session_id"), event.get("tool_use_id")
        if isinstance(session, str) and session and isinstance(tid, str) and tid:
            out.setdefault(session, set()).add(tool_use_digest(tid))
    return out


def _prepared(call: ToolCall):
    """(call, payload text, size, error) as the journal stores it; None when over the cap."""
    raw = json.dumps(call.payload(imported_at=time.time()), ensure_ascii=False).encode(
        "utf-8", "surrogatepass")
    if len(raw) > MAX_EVENT_BYTES:
        return None
    payload, error = prepare(raw, len(raw))
    return call, payload, len(raw), error


def _flush(conn, db: str, batch: list, report: ImportReport) -> None:
    """Journal a batch in one transaction, then ingest it."""
    with transaction(conn):
        for call, payload, size, error in batch:
            append(conn, payload, size=size, project=canonical_path(call.cwd), error=error,
                   hook_event_name="PostToolUseFailure" if call.failed else "PostToolUse",
                   received_at=call.at if call.at is not None else time.time())
    report.journaled += len(batch)
    ing = ingest_pending(conn, db)
    report.documents_new += ing.documents_created
    report.documents_duplicate += max(0, ing.captures - ing.documents_created)
    report.skipped_events += ing.skipped
    report.failed_events += ing.failed
