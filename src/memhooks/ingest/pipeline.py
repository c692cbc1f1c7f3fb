"""Ingestion: pending journal events -> adapters -> projections.

Idempotent and safe with several ingesters at once: events are parsed outside
any lock, then each is claimed (`state = 'pending'` re-checked) and projected
inside one BEGIN IMMEDIATE transaction per batch.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field

from memhooks import config
from memhooks.recall.lc_cache import CACHE_WRITE_EVENT, apply_write
from memhooks.store.projections import (
    add_capture,
    upsert_document,
    upsert_library,
    upsert_tier1,
    upsert_tier2,
)
from memhooks.redact import redact_text
from memhooks.store.connect import transaction

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
    reasons: dict = field(default_factory=dict)


@dataclass
class _Parsed:
    event_id: int
    state: str
    error: str | None = None
    event: dict | None = None
    result: object = None  # AdapterResult
    columns: dict = field(default_factory=dict)
    payload: str | None = None  # re-redacted payload to store back, when it changed


def _str(value) -> str | None:
    return value if isinstance(value, str) else None


def _canonical(path: str | None) -> str | None:
    if not path:
        return None
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


def parse_event(event_id: int, payload: str, project: str | None) -> _Parsed:
    """Pure: one journaled payload -> what to project. Never raises."""
    from memhooks.ingest.adapters import route

    try:
        event = json.loads(payload)
    except (ValueError, RecursionError) as exc:
        return _Parsed(event_id, "failed", f"invalid JSON: {str(exc)[:200]}")
    if not isinstance(event, dict):
        return _Parsed(event_id, "failed", f"payload is a JSON {type(event).__name__}, not an object")
    if event.get("memhooks_stub"):
        return _Parsed(event_id, "failed", "payload over the size cap (stub kept)")
    cols = {
        "hook_event_name": _str(event.get("hook_event_name")),
        "session_id": _str(event.get("session_id")),
        "tool_name": _str(event.get("tool_name")),
        "tool_use_id": _str(event.get("tool_use_id")),
        "cwd": _str(event.get("cwd")),
    }
    cols["project"] = project or _canonical(cols["cwd"]) or ""
    clean = redact_text(payload)
    parsed = _Parsed(event_id, "done", event=event, columns=cols,
                     payload=clean if clean != payload else None)
    name = cols["hook_event_name"]
    if name == CACHE_WRITE_EVENT:
        return parsed
    if name is None:
        parsed.state, parsed.error = "failed", "payload has no hook_event_name"
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


def _project(conn, p: _Parsed, now: float, report: IngestReport) -> None:
    cols, event = p.columns, p.event or {}
    project = cols.get("project") or ""
    session = cols.get("session_id")
    tool_name = cols.get("tool_name")
    if cols.get("hook_event_name") == CACHE_WRITE_EVENT:
        apply_write(conn, event, event_id=p.event_id, project=project, now=now)
        return
    result = p.result
    doc_ids: list[int] = []
    for doc in result.documents:
        doc_id, created = upsert_document(
            conn, project=project, source=doc.source, source_tool=doc.source_tool,
            content=doc.content, title=doc.title, type=doc.type, url=doc.url,
            library_id=doc.library_id, topic=doc.topic, version=doc.version,
            metadata=doc.metadata or None, session_id=session, tool=doc.tool, now=now,
        )
        doc_ids.append(doc_id)
        if doc_id is None:
            continue  # forgotten by the user
        report.documents_created += int(created)
        if add_capture(conn, event_id=p.event_id, document_id=doc_id, project=project,
                       session_id=session, tool_name=tool_name, captured_at=now):
            report.captures += 1
    for lib in result.libraries:
        upsert_library(conn, origin="capture", now=now, **lib.model_dump())
    for entry in result.tier1:
        if entry.library_id is None:
            upsert_tier1(conn, project=project, name=entry.name, library_id=None, origin="capture",
                         matched="none", ttl_s=config.tier1_negative_ttl_s(), now=now)
        else:
            upsert_tier1(conn, project=project, name=entry.name, library_id=entry.library_id,
                         origin="capture", matched=entry.matched, ttl_s=config.tier1_ttl_s(),
                         now=now)
    for entry in result.tier2:
        if 0 <= entry.document_index < len(doc_ids) and doc_ids[entry.document_index] is not None:
            upsert_tier2(conn, library_id=entry.library_id, topic=entry.topic,
                         document_id=doc_ids[entry.document_index], origin="capture",
                         ttl_s=config.tier2_ttl_s(), now=now)


def _commit_batch(conn, batch: list[_Parsed], report: IngestReport) -> None:
    now = time.time()
    with transaction(conn):
        for p in batch:
            cols = p.columns
            cur = conn.execute(
                "UPDATE events SET state = ?, error = ?, processed_at = ?,"
                " hook_event_name = coalesce(?, hook_event_name), session_id = ?, tool_name = ?,"
                " tool_use_id = ?, cwd = ?, project = coalesce(nullif(?, ''), project),"
                " payload = coalesce(?, payload)"
                " WHERE id = ? AND state = 'pending'",
                (p.state, p.error, now, cols.get("hook_event_name"), cols.get("session_id"),
                 cols.get("tool_name"), cols.get("tool_use_id"), cols.get("cwd"),
                 cols.get("project"), p.payload, p.event_id),
            )
            if cur.rowcount == 0:
                continue  # another ingester took it
            if p.state == "done":
                conn.execute("SAVEPOINT ev")
                try:
                    _project(conn, p, now, report)
                    conn.execute("RELEASE ev")
                except Exception as exc:  # noqa: BLE001 - fail this event, keep the batch
                    conn.execute("ROLLBACK TO ev")
                    conn.execute("RELEASE ev")
                    conn.execute(
                        "UPDATE events SET state = 'failed', error = ? WHERE id = ?",
                        (f"projection error: {type(exc).__name__}: {exc}"[:500], p.event_id),
                    )
                    p.state = "failed"
            key = p.state
            setattr(report, key, getattr(report, key) + 1)
            if p.error and p.state == "skipped":
                report.reasons[p.error] = report.reasons.get(p.error, 0) + 1


def ingest_pending(conn, db: str | None = None, *, max_events: int | None = None) -> IngestReport:
    """Project every pending event (and any spooled ones). Safe to run concurrently."""
    from memhooks.capture.journal import drain_spool

    report = IngestReport()
    if db is None:
        db = conn.execute("PRAGMA database_list").fetchone()[2]
    if db:
        report.spooled = drain_spool(conn, db)
    last_id = 0
    seen = 0
    while max_events is None or seen < max_events:
        rows = conn.execute(
            "SELECT id, payload, project FROM events WHERE state = 'pending' AND id > ?"
            " ORDER BY id LIMIT ?",
            (last_id, BATCH),
        ).fetchall()
        if not rows:
            break
        last_id = rows[-1][0]
        seen += len(rows)
        # Keep each write transaction short (hooks wait on it): split by payload size.
        chunk, size = [], 0
        for r in rows:
            chunk.append(parse_event(r[0], r[1], r[2]))
            size += len(r[1])
            if size >= BATCH_BYTES:
                _commit_batch(conn, chunk, report)
                chunk, size = [], 0
        if chunk:
            _commit_batch(conn, chunk, report)
    return report


PROJECTION_TABLES = ("tier2", "captures", "documents")


def reindex(conn, db: str | None = None) -> IngestReport:
    """Rebuild every projection from the journal.

    Documents, captures, tier2, captured libraries and tier1 entries that came
    from captures or writes are derived from events, so they are dropped and
    re-derived. Warm results (Context7 API answers) are a network cache, not
    journal-derived, and are kept. Failed events stay failed; events over the
    size cap were never complete.
    """
    with transaction(conn):
        # Access counts are reader history, not journal-derived: keep them by content.
        conn.execute("DROP TABLE IF EXISTS temp.kept_access")
        conn.execute(
            "CREATE TEMP TABLE kept_access AS SELECT content_hash, access_count,"
            " last_accessed_epoch FROM documents WHERE access_count > 0"
        )
        for table in PROJECTION_TABLES:
            conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
        conn.execute("DELETE FROM libraries WHERE origin = 'capture'")
        conn.execute("DELETE FROM tier1 WHERE origin IN ('capture', 'write')")
        conn.execute("INSERT INTO documents_fts (documents_fts) VALUES ('rebuild')")
        conn.execute(
            "UPDATE events SET state = 'pending', error = NULL, processed_at = NULL"
            " WHERE state IN ('done', 'skipped') OR (state = 'failed' AND payload NOT LIKE"
            " '{\"memhooks_stub\": true%')"
        )
    report = ingest_pending(conn, db)
    with transaction(conn):
        conn.execute(
            "UPDATE documents SET access_count = k.access_count,"
            " last_accessed_epoch = k.last_accessed_epoch"
            " FROM temp.kept_access AS k WHERE k.content_hash = documents.content_hash"
        )
        conn.execute("DROP TABLE temp.kept_access")
    return report


def open_reader(path: str | None = None):
    """Open the store for a reader, projecting pending events first so a document
    captured a moment ago is found. An ingest failure is logged, not raised: the
    reader still answers from what is there."""
    from memhooks.config import db_path
    from memhooks.store.connect import connect

    path = path or db_path()
    conn = connect(path)
    try:
        ingest_pending(conn, path)
    except Exception as exc:  # noqa: BLE001
        from memhooks.log import log_exception

        log_exception(f"ingest before read failed: {exc}")
    return conn
