"""Writes to the projection tables (standard library only: lc-cache-write uses it too).

These functions are the only writers of documents, libraries, tier1 and tier2, and each
passes its row through memhooks.store.admission first (grammar, redaction of every text
column, the error classifier, the size cap, clamped timestamps, the recomputed hash and the
row's provenance): a refused row raises admission.Refused before any SQL runs. Every
write goes through SQL parameters. Callers own the transaction.
"""

import json
import time

from memhooks import config
from memhooks.names import library_key, loose_key, normalize, topic_key
from memhooks.store.admission import (  # noqa: F401 - the text helpers' old home
    TRUNCATION_NOTE,
    Refused,
    admit_document,
    admit_library,
    admit_tier1,
    admit_tier2,
    cap_text,
    content_hash,
    library_id_or_none,
    normalise_for_hash,
    storable_text,
    version_or_none,
)
from memhooks.store.bodies import document_body
from memhooks.timefmt import iso


def upsert_document(conn, *, project: str, source: str, source_tool: str, content: str,
                    provenance: str, title: str | None = None, type: str | None = None,
                    url: str | None = None, library_id: str | None = None,
                    topic: str | None = None, version: str | None = None,
                    metadata: dict | str | None = None, session_id: str | None = None,
                    tool: str | None = None, max_bytes: int | None = None,
                    now: float | None = None, claimed_hash: str | None = None) -> tuple[int | None, bool]:
    """Insert a document unless its content_hash exists. Returns (id, created); the id is
    None for a text the user forgot (`memhooks forget`). `claimed_hash`, when a door sends
    one, must be the content_hash of `content` as sent. Raises admission.Refused."""
    row = admit_document(
        project=project, source=source, source_tool=source_tool, content=content, title=title,
        type=type, url=url, library_id=library_id, topic=topic, version=version,
        metadata=metadata, session_id=session_id, tool=tool, max_bytes=max_bytes, now=now,
        provenance=provenance, claimed_hash=claimed_hash)
    digest = row["content_hash"]
    found = conn.execute("SELECT id FROM documents WHERE content_hash = ?", (digest,)).fetchone()
    if found:
        return found[0], False
    if conn.execute("SELECT 1 FROM forgotten WHERE content_hash = ?", (digest,)).fetchone():
        return None, False  # the user forgot this text: never stored again
    at = row["now"]
    cur = conn.execute(
        "INSERT INTO documents (project, source, source_tool, title, body, content_hash, type,"
        " metadata, memory_session_id, access_count, created_at, created_at_epoch, url,"
        " library_id, topic, version, bytes, tool, truncated, provenance, unused_content)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '')",
        (
            row["project"], row["source"], row["source_tool"], row["title"], document_body(row["content"]),
            digest, row["type"], row["metadata"], row["session_id"], iso(at), int(at),
            row["url"], row["library_id"], row["topic"], row["version"], row["bytes"],
            row["tool"], row["truncated"], row["provenance"],
        ),
    )
    return cur.lastrowid, True


def add_capture(conn, *, event_id: int, document_id: int, project: str | None,
                session_id: str | None, tool_name: str | None, captured_at: float) -> bool:
    """Record that an event captured a document (the `captures` view shows it): the
    (project, session, tool) context row is found or made, then the capture row is added
    unless the pair is there already. Returns whether it was added."""
    key = (project, session_id, tool_name)
    found = conn.execute(  # IS: a context may have no session (NULLs are never UNIQUE-equal)
        "SELECT id FROM capture_contexts WHERE project IS ? AND session_id IS ? AND tool_name IS ?",
        key).fetchone()
    context = found[0] if found else conn.execute(
        "INSERT INTO capture_contexts (project, session_id, tool_name) VALUES (?, ?, ?)",
        key).lastrowid
    cur = conn.execute(
        "INSERT OR IGNORE INTO capture_rows (event_id, document_id, context, captured_at)"
        " VALUES (?, ?, ?, ?)", (event_id, document_id, context, captured_at))
    return cur.rowcount > 0


def drop_unused_contexts(conn, ids: list[int] | None = None) -> int:
    """Delete the capture contexts (project, session, tool) no capture points at any more,
    among `ids` or all of them; how many went. Forget needs it (a forgotten project's path
    and session ids leave the store); prune does it to stay tidy."""
    unused = "id NOT IN (SELECT context FROM capture_rows)"
    if ids is None:
        return conn.execute(f"DELETE FROM capture_contexts WHERE {unused}").rowcount
    gone = 0
    for i in range(0, len(ids), 500):
        part = ids[i:i + 500]
        gone += conn.execute(f"DELETE FROM capture_contexts WHERE id IN ({','.join('?' * len(part))})"
                             f" AND {unused}", part).rowcount
    return gone


def upsert_library(conn, *, library_id: str, title: str | None, origin: str, provenance: str,
                   description: str | None = None, code_snippets: int | None = None,
                   reputation: str | None = None, trust_score: float | None = None,
                   benchmark_score: float | None = None, versions: list | None = None,
                   source: str | None = None, now: float | None = None) -> None:
    """Insert or refresh a library. Raises admission.Refused."""
    row = admit_library(library_id=library_id, title=title, origin=origin, description=description,
                        code_snippets=code_snippets, reputation=reputation,
                        trust_score=trust_score, benchmark_score=benchmark_score,
                        versions=versions, source=source, now=now, provenance=provenance)
    lid, title = row["library_id"], row["title"]
    tail = lid.rstrip("/").rsplit("/", 1)[-1].lower()
    conn.execute(
        "INSERT INTO libraries (library_id, id_key, tail_key, title, title_key, description,"
        " code_snippets, reputation, trust_score, benchmark_score, versions, source, origin,"
        " last_seen, provenance)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (library_id) DO UPDATE SET title = excluded.title,"
        " title_key = excluded.title_key, description = coalesce(excluded.description, description),"
        " code_snippets = coalesce(excluded.code_snippets, code_snippets),"
        " reputation = coalesce(excluded.reputation, reputation),"
        " trust_score = coalesce(excluded.trust_score, trust_score),"
        " benchmark_score = coalesce(excluded.benchmark_score, benchmark_score),"
        " versions = CASE WHEN excluded.versions = '[]' THEN versions ELSE excluded.versions END,"
        " source = coalesce(excluded.source, source), last_seen = excluded.last_seen,"
        " provenance = excluded.provenance",
        (
            lid, library_key(lid), tail, title, (title or "").strip().lower() or None,
            row["description"], row["code_snippets"], row["reputation"], row["trust_score"],
            row["benchmark_score"], json.dumps(row["versions"]), row["source"], row["origin"],
            row["now"], row["provenance"],
        ),
    )


PROTECTED_ORIGINS = ("capture", "write")


def upsert_tier1(conn, *, project: str, name: str, library_id: str | None, origin: str,
                 ttl_s: float, provenance: str, ecosystem: str | None = None,
                 version: str | None = None, versioned_id: str | None = None,
                 matched: str | None = None, now: float | None = None) -> bool:
    """Write a tier1 entry. A warm (origin warm-*) never replaces a fresh entry that
    came from a capture or an explicit write. Returns whether a row was written (False:
    a fresher local entry was kept). Raises admission.Refused."""
    row = admit_tier1(project=project, name=name, library_id=library_id, origin=origin,
                      ttl_s=ttl_s, ecosystem=ecosystem, version=version,
                      versioned_id=versioned_id, matched=matched, now=now, provenance=provenance)
    name, ecosystem, now = row["name"], row["ecosystem"], row["now"]
    key = normalize(name, ecosystem)
    if not key:
        raise Refused("empty name")
    guard = ""
    if origin.startswith("warm"):
        guard = (" WHERE tier1.origin NOT IN ('capture', 'write') OR tier1.expires_at <= excluded.resolved_at"
                 " OR (tier1.library_id IS NULL AND excluded.library_id IS NOT NULL)")
    cur = conn.execute(
        "INSERT INTO tier1 (project, name_key, loose_key, name, ecosystem, library_id, version,"
        " versioned_id, matched, origin, resolved_at, expires_at, provenance)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (project, name_key) DO UPDATE SET name = excluded.name,"
        " ecosystem = coalesce(excluded.ecosystem, tier1.ecosystem), library_id = excluded.library_id,"
        " version = coalesce(excluded.version, tier1.version),"
        " versioned_id = CASE WHEN excluded.library_id IS tier1.library_id AND (excluded.version"
        " IS NULL OR excluded.version IS tier1.version)"  # a new version: never the old one's pin
        " THEN coalesce(nullif(excluded.versioned_id, ''), tier1.versioned_id)"
        " ELSE nullif(excluded.versioned_id, '') END,"
        " matched = excluded.matched, origin = excluded.origin, resolved_at = excluded.resolved_at,"
        " expires_at = excluded.expires_at, provenance = excluded.provenance" + guard,
        (row["project"], key, loose_key(name), name, ecosystem, row["library_id"], row["version"],
         row["versioned_id"], row["matched"], row["origin"], now, now + row["ttl_s"],
         row["provenance"]),
    )
    return cur.rowcount > 0


def upsert_tier2(conn, *, library_id: str, topic: str, document_id: int, origin: str,
                 ttl_s: float, provenance: str, now: float | None = None) -> None:
    """Point (library ID, topic) at a document, unless the entry there was fetched later (an
    older fetch ingested after it, from a backlog or an imported transcript, never replaces
    it). Raises admission.Refused."""
    row = admit_tier2(library_id=library_id, topic=topic, document_id=document_id, origin=origin,
                      ttl_s=ttl_s, now=now, provenance=provenance)
    lid, topic, now = row["library_id"], row["topic"], row["now"]
    conn.execute(
        "INSERT INTO tier2 (library_key, topic_key, library_id, topic, document_id, origin,"
        " fetched_at, expires_at, provenance) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (library_key, topic_key) DO UPDATE SET library_id = excluded.library_id,"
        " topic = excluded.topic, document_id = excluded.document_id, origin = excluded.origin,"
        " fetched_at = excluded.fetched_at, expires_at = excluded.expires_at,"
        " provenance = excluded.provenance WHERE excluded.fetched_at >= tier2.fetched_at",
        (library_key(lid), topic_key(topic), lid, topic, document_id, row["origin"],
         now, now + row["ttl_s"], row["provenance"]),
    )


def count(conn, *, project: str, tier: str, outcome: str, now: float | None = None) -> None:
    conn.execute(
        "INSERT INTO counters (project, tier, outcome, count, last_at) VALUES (?, ?, ?, 1, ?)"
        " ON CONFLICT (project, tier, outcome) DO UPDATE SET count = count + 1,"
        " last_at = max(coalesce(last_at, 0), excluded.last_at)",
        (project or "", tier, outcome, time.time() if now is None else now),
    )


def fold_read_totals(conn, counters: list, reads: list) -> None:
    """Count what the reads log held (memhooks.store.reads_fold sums it by key): `counters`
    rows (project, tier, outcome, n, last_at) of lookups' hits and misses; `reads` rows
    (content_hash, origin, day, n, last_at) of documents read, their access counts and who
    read them that day."""
    conn.executemany(
        "INSERT INTO counters (project, tier, outcome, count, last_at) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (project, tier, outcome) DO UPDATE SET count = count + excluded.count,"
        " last_at = max(coalesce(last_at, 0), excluded.last_at)", counters)
    conn.executemany(
        "UPDATE documents SET access_count = access_count + ?,"
        " last_accessed_epoch = max(coalesce(last_accessed_epoch, 0), ?) WHERE content_hash = ?",
        [(n, int(at), h) for h, _o, _day, n, at in reads])
    conn.executemany(
        "INSERT INTO document_reads (content_hash, origin, day, reads, last_at)"
        " SELECT content_hash, ?, ?, ?, ? FROM documents WHERE content_hash = ?"
        " ON CONFLICT (content_hash, origin, day) DO UPDATE SET reads = reads + excluded.reads,"
        " last_at = max(coalesce(last_at, 0), excluded.last_at)",
        [(o, day, n, at, h) for h, o, day, n, at in reads])


READ_ORIGINS = ("agent", "user")


def touch_documents(conn, ids, now: float | None = None, origin: str = "agent") -> None:
    """Count a retrieval of each document, and who made it: the agent (MCP tools,
    lc-cache-lookup-docs, serving) or the user (`memhooks search`/`show`)."""
    if origin not in READ_ORIGINS:
        origin = "agent"
    at = time.time() if now is None else now
    stamp = int(at)
    ids = list(ids)
    conn.executemany(
        "UPDATE documents SET access_count = access_count + 1, last_accessed_epoch = ? WHERE id = ?",
        [(stamp, i) for i in ids],
    )
    day = time.strftime("%Y-%m-%d", time.gmtime(at))
    conn.executemany(
        "INSERT INTO document_reads (content_hash, origin, day, reads, last_at)"
        " SELECT content_hash, ?, ?, 1, ? FROM documents WHERE id = ?"
        " ON CONFLICT (content_hash, origin, day) DO UPDATE SET reads = reads + 1,"
        " last_at = excluded.last_at",
        [(origin, day, at, i) for i in ids],
    )


def forget_document(conn, doc_id: int, now: float | None = None) -> str | None:
    """Delete a document (its FTS row, captures and tier2 entries go with it) and remember
    its content_hash so it is never stored, pushed or pulled again. Returns the hash, or
    None when there is no such document."""
    row = conn.execute("SELECT content_hash FROM documents WHERE id = ?", (doc_id,)).fetchone()
    if row is None:
        return None
    forget_hash(conn, row[0], now=now)
    return row[0]


def forget_hash(conn, digest: str, *, team_done: bool = False, now: float | None = None) -> int:
    """Remember a forgotten content_hash and delete any local document with it. Returns how
    many local documents were deleted."""
    now = time.time() if now is None else now
    conn.execute(
        "INSERT INTO forgotten (content_hash, forgotten_at, team_done) VALUES (?, ?, ?)"
        " ON CONFLICT (content_hash) DO UPDATE SET team_done = max(team_done, excluded.team_done)",
        (digest, now, 1 if team_done else 0),
    )
    conn.execute("DELETE FROM tier2 WHERE document_id IN (SELECT id FROM documents WHERE content_hash = ?)",
                 (digest,))
    of = "document_id IN (SELECT id FROM documents WHERE content_hash = ?)"
    contexts = [r[0] for r in conn.execute(f"SELECT DISTINCT context FROM capture_rows WHERE {of}",
                                           (digest,))]
    conn.execute(f"DELETE FROM capture_rows WHERE {of}", (digest,))
    drop_unused_contexts(conn, contexts)
    # a page `memhooks add` fetched: its URL stays (so it is never fetched again), its title goes
    conn.execute("UPDATE sources SET title = NULL, status = 'forgotten', error = NULL WHERE content_hash = ?",
                 (digest,))
    return conn.execute("DELETE FROM documents WHERE content_hash = ?", (digest,)).rowcount


def retire_document(conn, old: int, new: int) -> bool:
    """A page `memhooks refresh` stored anew (memhooks.store.sources): its old document is
    deleted unless something else holds it (a capture, another source), its tier2 entries
    and its read count moving to the new document first. Returns whether it was deleted."""
    held = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM capture_rows WHERE document_id = ?)"
        " OR EXISTS (SELECT 1 FROM sources WHERE document_id = ?)", (old, old)).fetchone()[0]
    if held:
        return False
    conn.execute("UPDATE tier2 SET document_id = ? WHERE document_id = ?", (new, old))
    row = conn.execute("SELECT access_count, last_accessed_epoch FROM documents WHERE id = ?",
                       (old,)).fetchone()
    if row and row[0]:
        conn.execute("UPDATE documents SET access_count = access_count + ?, last_accessed_epoch ="
                     " max(coalesce(last_accessed_epoch, 0), ?) WHERE id = ?", (row[0], row[1] or 0, new))
    return conn.execute("DELETE FROM documents WHERE id = ?", (old,)).rowcount > 0


def apply_cache_write(conn, record: dict, *, event_id: int | None, project: str, now: float) -> None:
    """Apply one journaled cache write to the projections (inside the caller's transaction),
    with provenance `manual`. Raises admission.Refused for a write admission refuses (an ID
    that is not a Context7 ID, an error text for a body ...): nothing is written then."""
    tier = record.get("tier")
    if tier == "tier1":
        upsert_tier1(conn, project=project, name=_text(record, "name", "name is not a library name"),
                     library_id=record.get("library_id"),
                     origin="write", matched="write", ttl_s=config.tier1_ttl_s(), now=now,
                     provenance="manual")
    elif tier == "tier2":
        # checked before the document is stored: a refused tier2 leaves no document behind
        checked = admit_tier2(library_id=record.get("library_id"), topic=record.get("topic"),
                              document_id=0, origin="write", ttl_s=0, provenance="manual")
        lid, topic = checked["library_id"], checked["topic"]
        doc_id, _ = upsert_document(
            conn, project=project, source=lid, source_tool="context7", tool="lc-cache-write",
            content=_text(record, "body", "content is not text"), title=f"{lid} — {topic}",
            type="library-docs",
            library_id=lid, topic=topic, max_bytes=config.max_write_bytes(), now=now,
            provenance="manual",
        )
        if doc_id is None:
            return  # the user forgot this text
        if event_id is not None:
            add_capture(conn, event_id=event_id, document_id=doc_id, project=project,
                        session_id=None, tool_name="lc-cache-write", captured_at=now)
        upsert_tier2(conn, library_id=lid, topic=topic, document_id=doc_id, origin="write",
                     ttl_s=config.tier2_ttl_s(), now=now, provenance="manual")
    else:
        raise Refused(f"unknown cache tier {str(tier)[:20]!r}")


def _text(record: dict, key: str, refusal: str) -> str:
    """A journaled cache write's text field (the journal holds whatever the command was
    sent), or Refused with admission's words for it."""
    value = record.get(key)
    if not isinstance(value, str):
        raise Refused(refusal)
    return value


DERIVED_TABLES = ("tier2", "capture_rows", "capture_contexts", "documents", "provider_calls")  # derived from the journal, but:
# the pages `memhooks add` stored come from no event: a reindex keeps them (store.sources)
NOT_DERIVED = {"documents": " WHERE id NOT IN (SELECT document_id FROM sources WHERE document_id IS NOT NULL)"}


def clear_derived(conn) -> None:
    """Drop what the journal derives (for a reindex), keeping the documents' access counts
    aside by content (temp.kept_access, see `restore_access`); the FTS index is rebuilt."""
    conn.execute("DROP TABLE IF EXISTS temp.kept_access")
    conn.execute(
        "CREATE TEMP TABLE kept_access AS SELECT content_hash, access_count,"
        " last_accessed_epoch FROM documents WHERE access_count > 0"
    )
    for table in DERIVED_TABLES:
        conn.execute(f"DELETE FROM {table}" + NOT_DERIVED.get(table, ""))  # fixed table names
    conn.execute("DELETE FROM libraries WHERE origin = 'capture'")
    conn.execute("DELETE FROM tier1 WHERE origin IN ('capture', 'write')")
    rebuild_fts(conn)


def rebuild_fts(conn) -> None:
    """Rebuild the documents' full-text index from the documents table (FTS5's `rebuild`
    command, as sqlite-utils' rebuild_fts sends it). Inside the caller's transaction."""
    conn.execute("INSERT INTO documents_fts (documents_fts) VALUES ('rebuild')")
    conn.execute("INSERT INTO sections_fts (sections_fts) VALUES ('rebuild')")


def restore_access(conn) -> None:
    """Give re-derived documents back the access counts `clear_derived` kept."""
    conn.execute(
        "UPDATE documents SET access_count = k.access_count,"
        " last_accessed_epoch = k.last_accessed_epoch"
        " FROM temp.kept_access AS k WHERE k.content_hash = documents.content_hash"
    )
    conn.execute("DROP TABLE temp.kept_access")


def refresh_tier1_version(conn, *, project: str, name_key: str, library_id: str,
                          version: str | None, versioned_id: str | None) -> None:
    """A fresh tier1 entry learns the project's current version (and its versioned ID),
    both checked by admission's grammar (NULL when they fail it). A new version never keeps
    the old version's pinned ID: it gets its own or none."""
    version, versioned_id = version_or_none(version), library_id_or_none(versioned_id)
    conn.execute(
        "UPDATE tier1 SET versioned_id = CASE WHEN ?1 IS NOT NULL AND ?1 IS NOT version THEN ?2"
        " ELSE coalesce(?2, versioned_id) END, version = coalesce(?1, version)"
        " WHERE project = ?3 AND name_key = ?4 AND library_id = ?5",
        (version, versioned_id, project, name_key, library_id),
    )
