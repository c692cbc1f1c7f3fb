"""Push: redacted documents, libraries and tier1 entries to the team database.

* Documents are keyed by content_hash (`INSERT … ON CONFLICT`); a team row under a hash we
  push whose text differs from ours (a copy written past memhooks: poisoned text under a
  real document's hash, or a `bytes` that lies) is replaced by ours. Who captured a document
  and how often each member read it live in `document_members` (one row per member,
  holding that member's absolute count, so a repeated push never counts twice).
* Never raw events (the journal is not read), never documents or tier1 entries from an
  excluded project, never a forgotten content_hash (locally, or forgotten by anyone in
  the team). Text is redacted again on the way out.
* One PostgreSQL transaction per batch; the local "pushed" marks are written after the
  batch commits, so an interrupted push leaves nothing half-written and the next one
  resumes where it stopped (re-pushing a committed batch is a no-op).
"""

from __future__ import annotations

import time

from memhooks.names import library_base
from memhooks.redact import redact_text
from memhooks.store import team_local as tl
from memhooks.store.connect import transaction
from memhooks.store.projections import content_hash, storable_text
from memhooks.store.team_local import mark_forgets_done, mark_pushed, pending_forgets
from memhooks.team.settings import exclusions, is_excluded
from memhooks.team.store import dict_rows, driver, team_id

BATCH_DOCS = 500
BATCH_BYTES = 8 * 1024 * 1024
BATCH_ROWS = 1000
DEFAULT_BUDGET_S = 60.0


def _clean(text):
    """Text PostgreSQL stores: no NULs; secrets redacted again (defence in depth)."""
    if text is None:
        return None
    return redact_text(storable_text(str(text)))


def _doc_row(doc: dict, member: str, now: float) -> tuple:
    content = _clean(doc["content"]) or ""
    digest = doc["content_hash"] if content == doc["content"] else content_hash(content)
    return (
        digest, _clean(doc["source"]), doc["source_tool"] or "", _clean(doc["title"]), content,
        doc["type"], _clean(doc["metadata"]), _clean(doc["url"]), _clean(doc["library_id"]),
        library_base(doc["library_id"]), _clean(doc["topic"]), _clean(doc["version"]),
        len(content.encode("utf-8")), bool(doc["truncated"]),
        float(doc["created_at_epoch"] or now), float(doc["captured_at"] or now), now,
        int(doc["access_count"] or 0), bool(doc["captured"]),
    )


_DOC_TMP = ("content_hash, source, source_tool, title, content, type, metadata, url, library_id,"
            " library_base, topic, version, bytes, truncated, created_at, last_seen, pushed_at,"
            " access_count, captured")
# A COPY row is a tuple in _DOC_TMP's column order; these name the fields read back from one.
_COPY_COLS = tuple(c.strip() for c in _DOC_TMP.split(","))
_HASH = _COPY_COLS.index("content_hash")
_BYTES = _COPY_COLS.index("bytes")


def _ensure_temp(pg) -> None:
    pg.execute(
        "CREATE TEMP TABLE IF NOT EXISTS push_docs (content_hash TEXT, source TEXT, source_tool TEXT,"
        " title TEXT, content TEXT, type TEXT, metadata TEXT, url TEXT, library_id TEXT,"
        " library_base TEXT, topic TEXT, version TEXT, bytes INTEGER, truncated BOOLEAN,"
        " created_at DOUBLE PRECISION, last_seen DOUBLE PRECISION, pushed_at DOUBLE PRECISION,"
        " access_count BIGINT, captured BOOLEAN) ON COMMIT DELETE ROWS")


def _push_documents(pg, member: str, rows: list[tuple]) -> int:
    """One batch of documents (inside the caller's transaction). Returns rows inserted."""
    _ensure_temp(pg)
    with dict_rows(pg) as cur:
        with cur.copy(f"COPY push_docs ({_DOC_TMP}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        # A team row under one of these hashes whose text is not ours was not written by
        # memhooks (our text hashes to its key; a row that does not is a poisoned copy, or
        # one whose `bytes` lies): ours replaces it. New documents match nothing here.
        cur.execute(
            "UPDATE documents d SET source = t.source, source_tool = t.source_tool, title = t.title,"
            " content = t.content, type = t.type, metadata = t.metadata, url = t.url,"
            " library_id = t.library_id, library_base = t.library_base, topic = t.topic,"
            " version = t.version, bytes = t.bytes, truncated = t.truncated"
            " FROM push_docs t WHERE d.content_hash = t.content_hash"
            " AND (d.content IS DISTINCT FROM t.content OR d.bytes IS DISTINCT FROM octet_length(d.content))")
        # One row per hash (a batch may repeat one after re-redaction), in hash order so
        # concurrent pushers take row locks in the same order (no deadlocks).
        cur.execute(
            "INSERT INTO documents (content_hash, source, source_tool, title, content, type, metadata,"
            " url, library_id, library_base, topic, version, bytes, truncated, created_at, last_seen,"
            " pushed_at)"
            " SELECT DISTINCT ON (content_hash) content_hash, source, source_tool, title, content, type,"
            " metadata, url, library_id, library_base, topic, version, bytes, truncated, created_at,"
            " CASE WHEN captured THEN last_seen ELSE 0 END, pushed_at FROM push_docs t"
            " WHERE NOT EXISTS (SELECT 1 FROM forgotten f WHERE f.content_hash = t.content_hash)"
            " ORDER BY content_hash"
            " ON CONFLICT (content_hash) DO UPDATE SET last_seen = excluded.last_seen"
            " WHERE documents.last_seen < excluded.last_seen RETURNING (xmax = 0) AS inserted")
        inserted = sum(1 for row in cur.fetchall() if row["inserted"])
        # A `forget` that committed while the insert ran (a new snapshot sees it).
        cur.execute("DELETE FROM documents d USING forgotten f WHERE f.content_hash = d.content_hash"
                    " AND d.content_hash IN (SELECT content_hash FROM push_docs)")
        cur.execute(
            "INSERT INTO document_members (content_hash, member_id, captured, access_count, captured_at,"
            " pushed_at)"
            " SELECT DISTINCT ON (t.content_hash) t.content_hash, %s, t.captured, t.access_count,"
            " t.last_seen, t.pushed_at FROM push_docs t JOIN documents d ON d.content_hash = t.content_hash"
            " ORDER BY t.content_hash, t.access_count DESC"
            " ON CONFLICT (content_hash, member_id) DO UPDATE SET access_count = excluded.access_count,"
            " captured = document_members.captured OR excluded.captured,"
            " captured_at = greatest(document_members.captured_at, excluded.captured_at),"
            " pushed_at = excluded.pushed_at", (member,))
    return inserted


def _push_libraries(pg, libs: list[dict]) -> None:
    rows = []
    for lib in sorted(libs, key=lambda r: r["library_id"]):
        base = library_base(lib["library_id"])
        if not base:
            continue
        rows.append((_clean(lib["library_id"]), base, _clean(lib["title"]), _clean(lib["description"]),
                     lib["code_snippets"], _clean(lib["reputation"]), lib["trust_score"],
                     lib["benchmark_score"], _clean(lib["versions"]), _clean(lib["source"]),
                     float(lib["last_seen"])))
    if not rows:
        return
    with pg.cursor() as cur:
        cur.executemany(
            "INSERT INTO libraries (library_id, library_base, title, description, code_snippets,"
            " reputation, trust_score, benchmark_score, versions, source, last_seen)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (library_id) DO UPDATE SET"
            " title = coalesce(excluded.title, libraries.title),"
            " description = coalesce(excluded.description, libraries.description),"
            " code_snippets = coalesce(excluded.code_snippets, libraries.code_snippets),"
            " reputation = coalesce(excluded.reputation, libraries.reputation),"
            " trust_score = coalesce(excluded.trust_score, libraries.trust_score),"
            " benchmark_score = coalesce(excluded.benchmark_score, libraries.benchmark_score),"
            " versions = CASE WHEN excluded.versions IS NULL OR excluded.versions = '[]'"
            " THEN libraries.versions ELSE excluded.versions END,"
            " source = coalesce(excluded.source, libraries.source),"
            " last_seen = greatest(libraries.last_seen, excluded.last_seen)", rows)


def _push_tier1(pg, member: str, entries: list[dict]) -> None:
    rows = [(e["name_key"], _clean(e["library_id"]) or "", member, e["loose_key"], _clean(e["name"]),
             e["ecosystem"], _clean(e["version"]), _clean(e["versioned_id"]), e["matched"],
             float(e["resolved_at"]), float(e["expires_at"]))
            for e in sorted(entries, key=lambda r: (r["name_key"], r["library_id"] or ""))]
    if not rows:
        return
    with pg.cursor() as cur:
        cur.executemany(
            "INSERT INTO tier1 (name_key, library_id, member_id, loose_key, name, ecosystem, version,"
            " versioned_id, matched, resolved_at, expires_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (name_key, library_id, member_id) DO UPDATE SET"
            " loose_key = excluded.loose_key, name = excluded.name,"
            " ecosystem = coalesce(excluded.ecosystem, tier1.ecosystem),"
            " version = coalesce(excluded.version, tier1.version),"
            " versioned_id = coalesce(excluded.versioned_id, tier1.versioned_id),"
            " matched = excluded.matched, resolved_at = greatest(tier1.resolved_at, excluded.resolved_at),"
            " expires_at = greatest(tier1.expires_at, excluded.expires_at)", rows)


def _touch_member(pg, member: str, now: float) -> None:
    pg.execute("INSERT INTO members (member_id, first_seen, last_push) VALUES (%s, %s, %s)"
               " ON CONFLICT (member_id) DO UPDATE SET last_push = excluded.last_push",
               (member, now, now))


def push_forgets(conn, pg) -> int:
    """Send the user's forgotten hashes: the team deletes those documents and remembers them."""
    hashes = pending_forgets(conn)
    if not hashes:
        return 0
    now = time.time()
    with pg.transaction():
        with pg.cursor() as cur:
            cur.executemany("INSERT INTO forgotten (content_hash, forgotten_at) VALUES (%s, %s)"
                            " ON CONFLICT (content_hash) DO NOTHING", [(h, now) for h in sorted(hashes)])
            cur.execute("DELETE FROM documents WHERE content_hash = ANY(%s)", (hashes,))
    with transaction(conn):
        mark_forgets_done(conn, hashes)
    return len(hashes)


def push(conn, pg, *, budget_s: float | None = None, batch_docs: int = BATCH_DOCS) -> dict:
    """Push everything not yet pushed, in committed batches, within `budget_s`.
    Returns counts. Raises driver errors (the runner classifies them)."""
    started = time.monotonic()
    budget_s = DEFAULT_BUDGET_S if budget_s is None else budget_s
    with transaction(conn):
        member = tl.member_id(conn)
        tl.bind_team(conn, team_id(pg))
    globs = exclusions()
    summary = {"documents": 0, "documents_new": 0, "excluded": 0, "libraries": 0, "tier1": 0,
               "forgotten": 0, "batches": 0, "bytes": 0, "complete": False}
    summary["forgotten"] = push_forgets(conn, pg)
    with pg.transaction():
        _touch_member(pg, member, time.time())

    # Documents, in committed batches.
    after = 0
    while time.monotonic() - started < budget_s:
        docs = tl.unpushed_documents(conn, after, batch_docs)
        if not docs:
            break
        after = docs[-1]["id"]
        projects = tl.document_projects(conn, [d["id"] for d in docs])
        now = time.time()
        rows, marks, size = [], [], 0
        for doc in docs:
            if is_excluded(doc["project"], globs) or any(is_excluded(p, globs) for p in projects.get(doc["id"], ())):
                summary["excluded"] += 1
                continue
            row = _doc_row(doc, member, now)
            rows.append(row)
            marks.append((doc["content_hash"], int(doc["access_count"] or 0)))
            size += row[_BYTES]
            if size >= BATCH_BYTES:
                summary["documents_new"] += _commit_docs(conn, pg, member, rows, marks)
                summary["batches"] += 1
                summary["documents"] += len(rows)
                summary["bytes"] += size
                rows, marks, size = [], [], 0
        if rows:
            summary["documents_new"] += _commit_docs(conn, pg, member, rows, marks)
            summary["batches"] += 1
            summary["documents"] += len(rows)
            summary["bytes"] += size

    # Libraries and tier1, by watermark.
    for kind in ("libraries", "tier1"):
        key = f"push.{kind}"
        while time.monotonic() - started < budget_s:
            mark = tl.get_mark(conn, key)
            batch = (tl.libraries_after if kind == "libraries" else tl.tier1_after)(conn, mark, BATCH_ROWS)
            if not batch:
                break
            last = batch[-1]
            if kind == "libraries":
                new_mark = [last["last_seen"], last["library_id"]]
                with pg.transaction():
                    _push_libraries(pg, batch)
            else:
                new_mark = [last["resolved_at"], last["project"], last["name_key"]]
                keep = [r for r in batch if not is_excluded(r["project"], globs)]
                summary["excluded"] += len(batch) - len(keep)
                batch = keep
                with pg.transaction():
                    _push_tier1(pg, member, batch)
            with transaction(conn):
                tl.set_mark(conn, key, new_mark)
            summary[kind] += len(batch)
    summary["complete"] = time.monotonic() - started < budget_s
    return summary


def _commit_docs(conn, pg, member: str, rows: list[tuple], marks: list[tuple[str, int]]) -> int:
    errors = driver().errors
    for attempt in range(3):
        try:
            with pg.transaction():
                inserted = _push_documents(pg, member, sorted(rows, key=lambda r: r[_HASH]))
            break
        except (errors.DeadlockDetected, errors.SerializationFailure):
            if attempt < 2:
                time.sleep(0.05 * (attempt + 1))
                continue
            raise
    with transaction(conn):
        mark_pushed(conn, marks)
    return inserted
