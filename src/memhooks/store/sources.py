"""The `sources` table (m010_sources): the pages `memhooks add` fetched, their HTTP validators,
and the document each one is stored as. Every statement of `memhooks add`/`refresh`/`sources`
is here; memhooks.ingest.sources does the fetching and parsing and calls these.

A page is stored through the one writer of documents (memhooks.store.projections.
upsert_document, which runs admission: redaction, the error classifier, the size cap) with
provenance `added`, source_tool `web`, tool `memhooks-add`, project "" (global knowledge,
not one project's). When a page changed, its new text is a new document (documents are
keyed by content_hash); the source row points at it; the old document is deleted unless
something else holds it (a capture, another source), its tier2 entries and access count
moving to the new one first.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

from memhooks.store.admission import (
    MAX_TITLE,
    Refused,
    fence_like,
    library_id_or_none,
    line,
    version_or_none,
)
from memhooks.store.projections import retire_document, upsert_document
from memhooks.store.sqlite_file import transaction

SOURCE_TOOL = "web"
TOOL = "memhooks-add"
PROVENANCE = "added"
STATUSES = ("ok", "gone", "error", "not-text", "refused", "forgotten")

COLUMNS = ("url, root, site, kind, title, library_id, version, etag, last_modified, content_hash,"
           " document_id, bytes, wire_bytes, added_at, fetched_at, checked_at, status, error")


def _rows(conn, sql: str, params=()) -> list[sqlite3.Row]:
    cur = conn.execute(sql, params)
    cur.row_factory = sqlite3.Row
    return cur.fetchall()


def get(conn, url: str) -> sqlite3.Row | None:
    rows = _rows(conn, f"SELECT {COLUMNS} FROM sources WHERE url = ?", (url,))
    return rows[0] if rows else None


def of_root(conn, root: str) -> dict[str, sqlite3.Row]:
    """The rows added under `root`, by URL, in the order they were added."""
    return {r["url"]: r for r in _rows(
        conn, f"SELECT {COLUMNS} FROM sources WHERE root = ? ORDER BY added_at, rowid", (root,))}


def roots(conn) -> list[str]:
    return [r[0] for r in conn.execute("SELECT DISTINCT root FROM sources ORDER BY root")]


def due(conn, *, url: str | None = None, checked_before: float | None = None) -> list[sqlite3.Row]:
    """Rows to revalidate: every row, or those of one root or one page (`url`), and of those
    only the ones last checked before `checked_before` (never checked counts as before)."""
    where: list[str] = []
    params: list = []
    if url is not None:
        where.append("(root = ? OR url = ?)")
        params += [url, url]
    if checked_before is not None:
        where.append("coalesce(checked_at, 0) < ?")
        params.append(checked_before)
    sql = f"SELECT {COLUMNS} FROM sources"  # fixed columns, conditions built here
    if where:
        sql += " WHERE " + " AND ".join(where)
    return _rows(conn, sql + " ORDER BY root, kind = 'page', added_at, rowid", params)


def stored(conn, document_id: int | None) -> sqlite3.Row | None:
    """(content, content_hash) of a source's document, when it still exists."""
    if document_id is None:
        return None
    rows = _rows(conn, "SELECT document_text(body) AS content, content_hash FROM documents WHERE id = ?", (document_id,))
    return rows[0] if rows else None


def forgotten(conn, digest: str | None) -> bool:
    return bool(digest) and conn.execute(
        "SELECT 1 FROM forgotten WHERE content_hash = ?", (digest,)).fetchone() is not None


@dataclass
class Saved:
    document_id: int | None
    outcome: str  # new | updated | unchanged | refused | forgotten
    bytes: int = 0
    error: str | None = None


def save_page(conn, *, url: str, root: str, site: str, kind: str, title: str | None, text: str,
              library_id: str | None, version: str | None, doc_type: str, etag: str | None,
              last_modified: str | None, wire_bytes: int, now: float | None = None) -> Saved:
    """Store a fetched page (one transaction): its document through admission, then its row."""
    now = time.time() if now is None else now
    with transaction(conn):
        row = get(conn, url)
        old = row["document_id"] if row else None
        try:
            doc_id, _created = upsert_document(
                conn, project="", source=url, source_tool=SOURCE_TOOL, tool=TOOL, content=text,
                title=title, type=doc_type, url=url, library_id=library_id, version=version,
                metadata={"root": root}, now=now, provenance=PROVENANCE)
        except Refused as exc:
            reason = exc.reason
            _put(conn, url=url, root=root, site=site, kind=kind, title=title, library_id=library_id,
                 version=version, status="refused", error=reason[:300], now=now, checked=True,
                 wire_bytes=wire_bytes)
            return Saved(old, "refused", 0, reason)
        if doc_id is None:
            _put(conn, url=url, root=root, site=site, kind=kind, title=title, library_id=library_id,
                 version=version, status="forgotten", error=None, now=now, checked=True,
                 wire_bytes=wire_bytes)
            return Saved(None, "forgotten")
        digest, size = conn.execute("SELECT content_hash, bytes FROM documents WHERE id = ?",
                                    (doc_id,)).fetchone()
        title, library_id, version = _title(title), library_id_or_none(library_id), version_or_none(version)
        conn.execute(
            f"INSERT INTO sources ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
            " 'ok', NULL) ON CONFLICT (url) DO UPDATE SET title = excluded.title,"
            " library_id = excluded.library_id, version = excluded.version, etag = excluded.etag,"
            " last_modified = excluded.last_modified, content_hash = excluded.content_hash,"
            " document_id = excluded.document_id, bytes = excluded.bytes,"
            " wire_bytes = excluded.wire_bytes, fetched_at = excluded.fetched_at,"
            " checked_at = excluded.checked_at, status = 'ok', error = NULL",
            (url, root, site, kind, title, library_id, version, etag, last_modified, digest, doc_id,
             size, wire_bytes, now, now, now))
        if row is None or row["content_hash"] is None:
            outcome = "new"
        elif old == doc_id or row["content_hash"] == digest:
            outcome = "unchanged"
        else:
            outcome = "updated"
        if old is not None and old != doc_id:
            retire_document(conn, old, doc_id)
        return Saved(doc_id, outcome, size)


def _title(value) -> str | None:
    """A title as admission keeps a document's: one redacted line, never a fence look-alike."""
    title = line(value, MAX_TITLE)
    return None if title is None or fence_like(title) else title


def _put(conn, *, url, root, site, kind, title, library_id, version, status, error, now,
         checked: bool, wire_bytes: int = 0, etag=None, last_modified=None) -> None:
    title, library_id, version = _title(title), library_id_or_none(library_id), version_or_none(version)
    conn.execute(
        f"INSERT INTO sources ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, 0, ?, ?,"
        " NULL, ?, ?, ?) ON CONFLICT (url) DO UPDATE SET"
        " etag = coalesce(excluded.etag, sources.etag),"
        " last_modified = coalesce(excluded.last_modified, sources.last_modified),"
        " wire_bytes = CASE WHEN excluded.wire_bytes > 0 THEN excluded.wire_bytes"
        " ELSE sources.wire_bytes END,"
        " checked_at = coalesce(excluded.checked_at, sources.checked_at),"
        " status = excluded.status, error = excluded.error",
        (url, root, site, kind, title, library_id, version, etag, last_modified, wire_bytes, now,
         now if checked else None, status, error))


def mark(conn, *, url: str, root: str, site: str, kind: str, status: str, error: str | None = None,
         title: str | None = None, library_id: str | None = None, version: str | None = None,
         etag: str | None = None, last_modified: str | None = None, now: float | None = None) -> None:
    """Record a check that stored nothing: a 304 (status ok: the validators a server sends
    with it replace the old ones), a page gone (404/410), an error, a body that is not text."""
    now = time.time() if now is None else now
    with transaction(conn):
        _put(conn, url=url, root=root, site=site, kind=kind, title=title, library_id=library_id,
             version=version, status=status, error=error[:300] if error else None, now=now,
             checked=True, etag=etag, last_modified=last_modified)


def drop_unstored(conn, url: str) -> None:
    """Delete the row of a URL that has no document (an `add` that failed at its root)."""
    with transaction(conn):
        conn.execute("DELETE FROM sources WHERE url = ? AND document_id IS NULL", (url,))


def summary(conn) -> list[dict]:
    """One entry per root: its library and version, pages, stored documents and bytes, when
    its pages were checked (last and oldest) and how many are in each status."""
    out: dict[str, dict] = {}
    for r in _rows(conn, "SELECT root, library_id, version, status, count(*) AS pages,"
                         " count(document_id) AS documents, sum(bytes) AS bytes,"
                         " max(checked_at) AS last_checked, min(coalesce(checked_at, 0)) AS oldest"
                         " FROM sources GROUP BY root, status ORDER BY root"):
        entry = out.setdefault(r["root"], {
            "url": r["root"], "library_id": None, "version": None, "pages": 0, "documents": 0,
            "bytes": 0, "last_checked": None, "oldest_checked": None, "statuses": {}})
        entry["pages"] += r["pages"]
        entry["documents"] += r["documents"]
        entry["bytes"] += r["bytes"] or 0
        entry["statuses"][r["status"]] = r["pages"]
        if r["last_checked"] is not None:
            entry["last_checked"] = max(entry["last_checked"] or 0, r["last_checked"])
        if r["oldest"]:
            entry["oldest_checked"] = min(entry["oldest_checked"] or r["oldest"], r["oldest"])
    for root, entry in out.items():
        top = conn.execute("SELECT library_id, version FROM sources WHERE url = ?", (root,)).fetchone()
        if top:
            entry["library_id"], entry["version"] = top
    return list(out.values())
