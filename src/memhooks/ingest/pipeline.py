"""Ingestion: pending journal events -> adapters -> projections.

Idempotent and safe with several ingesters at once: events are parsed outside
any lock, then each is claimed (`state = 'pending'` re-checked) and projected
inside one BEGIN IMMEDIATE transaction per batch.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass, field

from memhooks import config
from memhooks.config import canonical_path, db_path
from memhooks.ingest.adapters import route
from memhooks.ingest.adapters.ctx7_cli import command_of as ctx7_command_of
from memhooks.ingest.calls import RATE_LIMITS, call_of
from memhooks.ingest.records import AdapterResult
from memhooks.log import log_exception
from memhooks.redact import redact_text
from memhooks.sqltext import storable, storable_path, storable_tree, str_or_none
from memhooks.store import compact, health, journal, packs, provider_calls
from memhooks.store.admission import Refused
from memhooks.store.connect import connect, transaction
from memhooks.store.forget import drop_payload
from memhooks.store.journal import CACHE_WRITE_EVENT, drain_spool
from memhooks.store.projections import (
    add_capture,
    apply_cache_write,
    clear_derived,
    restore_access,
    upsert_document,
    upsert_library,
    upsert_tier1,
    upsert_tier2,
)
from memhooks.store.queries import main_file, pending_events
from memhooks.store.reads import Taken
from memhooks.store.reads_fold import ReadTotals
from memhooks.tools import is_captured

BATCH = 50
BATCH_BYTES = 4 * 1024 * 1024  # payload text per write transaction


@dataclass
class IngestReport:
    done: int = 0
    skipped: int = 0
    failed: int = 0
    documents_created: int = 0
    captures: int = 0
    spooled: int = 0
    reads: int = 0  # lookup answers folded from the reads log
    reasons: dict = field(default_factory=dict)
    refused: dict = field(default_factory=dict)  # rows admission refused, by reason


@dataclass
class _Parsed:
    event_id: int
    state: str
    error: str | None = None
    event: dict | None = None
    result: AdapterResult | None = None
    columns: dict = field(default_factory=dict)
    payload: str | bytes | None = None  # payload to store back: re-redacted, or a reference
    at: float | None = None  # original time of an imported event (a transcript's)
    received_at: float | None = None  # when the hook journaled it
    blobs: dict = field(default_factory=dict)  # long strings of a reference payload, by SHA-256
    call: tuple[str, str | None] | None = None  # (provider, failure) for the per-provider tally


def _imported_at(event: dict) -> float | None:
    """When an event imported from a transcript happened (its `memhooks_import.at`)."""
    mark = event.get("memhooks_import")
    at = mark.get("at") if isinstance(mark, dict) else None
    if isinstance(at, bool) or not isinstance(at, (int, float)) or not 0 < at < 1e11:
        return None
    return float(at)


def parse_event(event_id: int, payload: str, project: str | None) -> _Parsed:
    """Pure: one journaled payload -> what to project. Never raises."""
    try:
        event = json.loads(payload)
    except (ValueError, RecursionError) as exc:
        return _Parsed(event_id, "failed", f"invalid JSON: {str(exc)[:200]}")
    if not isinstance(event, dict):
        return _Parsed(event_id, "failed", f"payload is a JSON {type(event).__name__}, not an object")
    if "\\u" in payload:  # only an escape can decode to a lone surrogate or a NUL
        event = storable_tree(event)
    if event.get("memhooks_stub"):
        return _Parsed(event_id, "failed", "payload over the size cap (stub kept)")
    cols = {
        "hook_event_name": str_or_none(event.get("hook_event_name")),
        "session_id": str_or_none(event.get("session_id")),
        "tool_name": str_or_none(event.get("tool_name")),
        "tool_use_id": str_or_none(event.get("tool_use_id")),
        "cwd": str_or_none(event.get("cwd")),
    }
    cols["project"] = storable_path(project or canonical_path(cols["cwd"]) or "")
    clean = redact_text(payload)
    parsed = _Parsed(event_id, "done", event=event, columns=cols,
                     payload=clean if clean != payload else None, at=_imported_at(event))
    name = cols["hook_event_name"]
    if name == CACHE_WRITE_EVENT:
        return parsed
    if name is None:
        parsed.state, parsed.error = "failed", "payload has no hook_event_name"
        return parsed
    try:
        parsed.call = call_of(event)
    except Exception as exc:  # noqa: BLE001 - the tally never fails an event
        log_exception(f"provider tally: {type(exc).__name__}")
    if name in ("PostToolUse", "PostToolUseFailure") and not event.get("memhooks_metadata_only"):
        bash_lookup = cols["tool_name"] == "Bash" and ctx7_command_of(event.get("tool_input")) is not None
        if not is_captured(cols["tool_name"]) and not bash_lookup:
            # The hook's own rule: a tool memhooks does not capture keeps metadata only,
            # even when it was journaled whole (an older hook, a replayed file).
            parsed.state, parsed.error = "skipped", "not a captured tool (metadata only)"
            parsed.payload = json.dumps({
                "hook_event_name": name, "tool_name": (cols["tool_name"] or "")[:200],
                "session_id": cols["session_id"], "tool_use_id": cols["tool_use_id"],
                "cwd": cols["cwd"], "memhooks_metadata_only": True,
                "bytes": len(payload.encode("utf-8", "surrogatepass")),
                "sha256": hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest(),
            })
            return parsed
    try:
        result = route(event)
    except Exception as exc:  # noqa: BLE001 - an adapter bug fails one event, not the batch
        parsed.state, parsed.error = "failed", f"adapter error: {type(exc).__name__}: {exc}"[:500]
        return parsed
    parsed.result = result
    if not (result.documents or result.libraries or result.tier1 or result.tier2):
        parsed.state = "skipped"
        parsed.error = result.skip_reason or "nothing to capture"
    return parsed


def _parse_row(conn, event_id: int, payload: str | bytes, project: str | None) -> _Parsed:
    """Parse one journaled row. A reference payload (a BLOB, memhooks.store.compact) gets its
    long strings back from the journal's blobs first; a settled payload with long strings is
    stored back as a reference (its first event keeps the text in the blobs; a repeat is a
    reference to the same ones)."""
    if isinstance(payload, bytes):
        text = compact.expand(conn, payload)
        if text is None:
            return _Parsed(event_id, "skipped", compact.PRUNED)
        payload = text
    p = parse_event(event_id, payload, project)
    if p.state in ("done", "skipped") and p.event is not None:
        split = compact.compact_text(p.payload if isinstance(p.payload, str) else payload)
        if split is not None:
            p.payload, p.blobs = split
    return p


def _project(conn, p: _Parsed, now: float, report: IngestReport) -> tuple[int, str | None]:
    """Write one parsed event's rows (provenance `capture`; a journaled cache write is
    `manual`). Each row passes admission: a refused row is counted in `report.refused` and
    the others go on. Returns how many rows were written, and the last refusal's reason."""
    cols, event = p.columns, p.event or {}
    project = cols.get("project") or ""
    session = cols.get("session_id")
    tool_name = cols.get("tool_name")
    written = 0
    last: list[str] = []

    def refused(exc: Refused) -> None:
        report.refused[exc.reason] = report.refused.get(exc.reason, 0) + 1
        last[:] = [exc.reason]

    if cols.get("hook_event_name") == CACHE_WRITE_EVENT:
        try:
            apply_cache_write(conn, event, event_id=p.event_id, project=project, now=now)
            return 1, None
        except Refused as exc:
            refused(exc)
            return 0, exc.reason
    result = p.result
    assert result is not None  # parse_event sets it on every event it leaves "done"
    # An event keeps its own time (an imported one its transcript's, any other when the hook
    # received it): its captures, new documents and tier2 entries are dated then, not when a
    # backlog was ingested. An imported event's tier1 entries are written only when they
    # would still be fresh.
    at = min(p.at if p.at is not None else p.received_at or now, now)
    doc_ids: list[int | None] = []  # None: refused by admission, or forgotten by the user
    forgot = 0
    for doc in result.documents:
        try:
            doc_id, created = upsert_document(
                conn, project=project, source=doc.source, source_tool=doc.source_tool,
                content=doc.content, title=doc.title, type=doc.type, url=doc.url,
                library_id=doc.library_id, topic=doc.topic, version=doc.version,
                metadata=doc.metadata or None, session_id=session, tool=doc.tool, now=at,
                provenance="capture",
            )
        except Refused as exc:
            refused(exc)
            doc_ids.append(None)
            continue
        doc_ids.append(doc_id)
        if doc_id is None:
            forgot += 1
            continue  # forgotten by the user
        written += 1
        report.documents_created += int(created)
        if add_capture(conn, event_id=p.event_id, document_id=doc_id, project=project,
                       session_id=session, tool_name=tool_name, captured_at=at):
            report.captures += 1
    if forgot and forgot == len(result.documents):
        drop_payload(conn, p.event_id, cols)  # the user forgot this text: no raw copy either
    for lib in result.libraries:
        try:
            upsert_library(conn, origin="capture", now=now, provenance="capture", **lib.model_dump())
            written += 1
        except Refused as exc:
            refused(exc)
    for entry in result.tier1:
        if p.at is not None and at + (config.tier1_negative_ttl_s() if entry.library_id is None
                                      else config.tier1_ttl_s()) <= now:
            continue  # imported, and expired long ago
        try:
            if entry.library_id is None:
                upsert_tier1(conn, project=project, name=entry.name, library_id=None,
                             origin="capture", matched="none",
                             ttl_s=config.tier1_negative_ttl_s(), now=now, provenance="capture")
            else:
                upsert_tier1(conn, project=project, name=entry.name, library_id=entry.library_id,
                             origin="capture", matched=entry.matched, ttl_s=config.tier1_ttl_s(),
                             now=now, provenance="capture")
            written += 1
        except Refused as exc:
            refused(exc)
    for t2 in result.tier2:
        doc_id = doc_ids[t2.document_index] if 0 <= t2.document_index < len(doc_ids) else None
        if doc_id is not None:
            try:
                upsert_tier2(conn, library_id=t2.library_id, topic=t2.topic,
                             document_id=doc_id, origin="capture",
                             ttl_s=config.tier2_ttl_s(), now=at, provenance="capture")
                written += 1
            except Refused as exc:
                refused(exc)
    return written, (last[0] if last else None)


def _commit_isolated(conn, batch: list[_Parsed], report: IngestReport) -> None:
    """Commit a batch; when its transaction fails, commit one event per transaction,
    and mark an event that still fails `failed` with its reason, alone."""
    try:
        _commit_batch(conn, batch, report)
        return
    except sqlite3.DatabaseError as exc:
        if not _is_event_error(exc):
            raise
    except Exception:  # noqa: BLE001 - an event the driver cannot bind, a projection bug
        pass
    for p in batch:
        try:
            _commit_batch(conn, [p], report)
        except Exception as exc:
            if isinstance(exc, sqlite3.DatabaseError) and not _is_event_error(exc):
                raise
            reason = storable(f"write error: {type(exc).__name__}: {exc}"[:500])
            with transaction(conn):
                failed = journal.fail_pending(conn, p.event_id, reason, time.time())
            if failed:
                report.failed += 1


def _is_event_error(exc) -> bool:
    """A DatabaseError one event can cause (a constraint, a value too big), as opposed to
    the store being locked, read-only, full or damaged, which every event would hit."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return isinstance(exc, (sqlite3.IntegrityError, sqlite3.DataError,
                                sqlite3.InterfaceError, sqlite3.ProgrammingError))
    primary = code & 0xFF
    # SQLITE_TOOBIG 18, SQLITE_CONSTRAINT 19, SQLITE_MISMATCH 20, SQLITE_RANGE 25
    return primary in (18, 19, 20, 25)


def _commit_batch(conn, batch: list[_Parsed], report: IngestReport) -> None:
    now = time.time()
    counts: dict = {}
    reasons: dict = {}
    shadow = IngestReport()
    with transaction(conn):
        for p in batch:
            if not journal.claim(conn, p.event_id, state=p.state, error=p.error, now=now,
                                 columns=p.columns, payload=p.payload):
                continue  # another ingester took it
            if p.state == "done":
                conn.execute("SAVEPOINT ev")
                written, reason = 0, None
                try:
                    written, reason = _project(conn, p, now, shadow)
                    conn.execute("RELEASE ev")
                except Exception as exc:  # noqa: BLE001 - fail this event, keep the batch
                    conn.execute("ROLLBACK TO ev")
                    conn.execute("RELEASE ev")
                    journal.mark_failed(
                        conn, p.event_id,
                        storable(f"projection error: {type(exc).__name__}: {exc}"[:500]))
                    p.state = "failed"
                if p.state == "done" and not written and reason:
                    # admission refused every row of the event: an error, not a capture
                    p.state, p.error = "skipped", storable(f"refused: {reason}"[:500])
                    journal.mark_skipped(conn, p.event_id, p.error)
            if p.call is not None:
                provider, failure = p.call
                provider_calls.count(conn, provider=provider, project=p.columns.get("project"),
                                     at=p.at if p.at is not None else p.received_at or now,
                                     failure=failure, rate_limited=failure in RATE_LIMITS, now=now)
            if p.blobs and _kept_as_reference(conn, p.event_id):
                # (not when the user forgot every document of it: its payload was dropped)
                compact.store_blobs(conn, p.blobs, now)
                compact.link_documents(conn, p.blobs.keys(), p.event_id)
            counts[p.state] = counts.get(p.state, 0) + 1
            if p.error and p.state == "skipped":
                reasons[p.error] = reasons.get(p.error, 0) + 1
    # Counted once the transaction committed (a retried batch is not counted twice).
    for key, n in counts.items():
        setattr(report, key, getattr(report, key) + n)
    for key, n in reasons.items():
        report.reasons[key] = report.reasons.get(key, 0) + n
    report.documents_created += shadow.documents_created
    report.captures += shadow.captures
    for key, n in shadow.refused.items():
        report.refused[key] = report.refused.get(key, 0) + n


def _kept_as_reference(conn, event_id: int) -> bool:
    row = conn.execute("SELECT typeof(payload) FROM events WHERE id = ?", (event_id,)).fetchone()
    return row is not None and row[0] == "blob"


def fold_reads_log(conn, db: str) -> int:
    """Fold the lookup commands' reads log into the counters (memhooks.store.reads): the
    log is renamed aside under its lock (lookups go on appending to a new one), streamed in
    bounded memory, committed, and deleted. Returns the lines counted."""
    taken = Taken(db)
    if not taken.pending():
        return 0
    folded = 0
    try:
        if not taken.take():
            return 0
        totals = ReadTotals()
        for record in taken.records():
            totals.add(record)
            if totals.full():
                with transaction(conn):
                    folded += totals.apply(conn)
        with transaction(conn):
            folded += totals.apply(conn)
        taken.done()
        return folded
    except OSError as exc:
        log_exception(f"folding the reads log failed: {exc}")
        return folded


def ingest_pending(conn, db: str | None = None, *, max_events: int | None = None) -> IngestReport:
    """Project every pending event (and any spooled ones). Safe to run concurrently."""
    report = IngestReport()
    if db is None:
        db = main_file(conn)
    if db:
        report.spooled = drain_spool(conn, db)
        report.reads = fold_reads_log(conn, db)
    # Packed events a reindex (or a heal) asked for again: one pack at a time back into the
    # journal, projected in id order with the rows around them, and packed again.
    while max_events is None and (upto := packs.take_pending_pack(conn)) is not None:
        _ingest_rows(conn, report, None, upto)
        packs.pack_settled(conn, upto=upto, min_events=1)
    _ingest_rows(conn, report, max_events, None)
    return report


def _ingest_rows(conn, report: IngestReport, max_events: int | None, upto: int | None) -> None:
    """Project the pending rows of `events` (those up to id `upto` when given), oldest first."""
    last_id = 0
    seen = 0
    while max_events is None or seen < max_events:
        rows = pending_events(conn, last_id, BATCH)
        if upto is not None:
            rows = [r for r in rows if r["id"] <= upto]
        if not rows:
            break
        last_id = rows[-1]["id"]
        seen += len(rows)
        # Keep each write transaction short (hooks wait on it): split by payload size.
        chunk, size = [], 0
        for r in rows:
            p = _parse_row(conn, r["id"], r["payload"], r["project"])
            if isinstance(r["received_at"], (int, float)) and r["received_at"] > 0:
                # when the text was fetched, as a pack keeps it: a reindex dates alike, and
                # a later fetch never reads as an earlier one
                p.received_at = packs.ms_time(float(r["received_at"]))
            chunk.append(p)
            size += len(r["payload"])
            if size >= BATCH_BYTES:
                _commit_isolated(conn, chunk, report)
                chunk, size = [], 0
        if chunk:
            _commit_isolated(conn, chunk, report)


def reindex(conn, db: str | None = None) -> IngestReport:
    """Rebuild every projection from the journal.

    Documents, captures, tier2, captured libraries and tier1 entries that came
    from captures or writes are derived from events, so they are dropped and
    re-derived. Warm results (Context7 API answers) are a network cache, not
    journal-derived, and are kept. Failed events stay failed; events over the
    size cap were never complete. Access counts (reader history) are kept by content.
    Packed events are projected again too (memhooks.store.packs), in id order.
    """
    with transaction(conn):
        clear_derived(conn)
        journal.requeue_derived(conn)
        packs.requeue_packs(conn)
    report = ingest_pending(conn, db)
    with transaction(conn):
        restore_access(conn)
    return report


def open_reader(path: str | None = None):
    """Open the store for a reader, projecting pending events first so a document
    captured a moment ago is found. An ingest failure is logged, not raised: the
    reader still answers from what is there."""
    path = path or db_path()
    conn = connect(path)
    try:
        ingest_pending(conn, path)
    except sqlite3.DatabaseError as exc:
        if health.is_corruption(exc) and health.heal(path, str(exc)):
            conn.close()
            conn = connect(path)  # a fresh store: rebuild it from the journal now
            try:
                ingest_pending(conn, path)
            except Exception as exc2:  # noqa: BLE001
                log_exception(f"ingest after heal failed: {exc2}")
        else:
            log_exception(f"ingest before read failed: {exc}")
    except Exception as exc:  # noqa: BLE001
        log_exception(f"ingest before read failed: {exc}")
    return conn
