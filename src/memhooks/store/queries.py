"""Every read query of the store, in one place (standard library only: the hot paths import
it, so nothing here imports json or re at import time).

Writers live in memhooks.store (projections) and memhooks.store.journal (events); this module
only reads. Readers (lc-cache-*, the serve decision, the SessionStart fast path, search, library
lookup, stats, the MCP tools, the warm, the ingester, doctor) call these functions and do no SQL
of their own. Rows come back as `sqlite3.Row` (read by column name, whatever the connection's
row factory) or as plain values. Every value is bound as a parameter; the only text joined into
a statement is built here from constants (placeholders, column lists, scope conditions).
"""

import sqlite3
import time

from memhooks.config import tier1_ttl_s
from memhooks.names import library_key, lookup_keys, loose_key, topic_key


def _rows(conn, sql: str, params=()):
    """A cursor whose rows are sqlite3.Row, whatever the connection's row factory (the serve
    decision opens its own read-only connection)."""
    cur = conn.execute(sql, params)
    cur.row_factory = sqlite3.Row
    return cur


# ----------------------------------------------------------------------------- tier1, tier2, warm state, journal


def find_tier1(conn, name: str, project: str, now: float | None = None) -> dict | None:
    """The freshest positive answer for `name`: this project's tier1 first, then
    global knowledge (other projects' tier1, then captured/API library results)."""
    now = time.time() if now is None else now
    keys = lookup_keys(name)
    if not keys:
        return None
    marks = ",".join("?" * len(keys))
    cols = "library_id, version, versioned_id, origin, matched"
    fresh = (" AND expires_at > ? AND library_id IS NOT NULL"  # a team suggestion is never an answer
             " AND coalesce(matched, '') != 'team-suggestion' ORDER BY resolved_at DESC LIMIT 1")
    loose = loose_key(name)
    attempts = (
        ("project", f"project = ? AND name_key IN ({marks})", (project or "", *keys)),
        ("project", "project = ? AND loose_key = ?", (project or "", loose)),
        ("global", f"name_key IN ({marks})", tuple(keys)),
        ("global", "loose_key = ?", (loose,)),
    )
    for scope, where, params in attempts:
        row = _rows(conn, f"SELECT {cols} FROM tier1 WHERE {where}{fresh}", (*params, now)).fetchone()
        if row is not None:
            return {"name": name, "library_id": row["library_id"], "version": row["version"],
                    "versioned_id": row["versioned_id"], "origin": row["origin"],
                    "matched": row["matched"], "scope": scope}
    lib = find_library(conn, name)
    if lib is not None and _seen_since(conn, lib, now - tier1_ttl_s()):  # fresh hits only
        return {"name": name, "library_id": lib, "version": None, "versioned_id": None,
                "origin": "libraries", "matched": "exact", "scope": "global"}
    return None


# How libraries rank wherever several could answer a name: an exact title match first,
# then an exact ID-tail match, then benchmark score, trust and code snippets (unknown = 0).
# find_library (the tier1 fallback) and the alternatives of a library lookup both use it.
LIBRARY_RANK = ("coalesce(benchmark_score, 0) DESC, coalesce(trust_score, 0) DESC,"
                " coalesce(code_snippets, 0) DESC")
LIBRARY_COLUMNS = ("library_id, title, description, code_snippets, reputation, trust_score,"
                   " benchmark_score, versions")


def rank_libraries(conn, name: str, *, pattern: str | None = None, exclude: str = "",
                   limit: int = 1) -> list:
    """Known Context7 libraries for `name`, best first: the one library ranking.

    A match is exact when the name (any lookup key, or its last path part) is a library's
    title or the last part of its ID; `pattern` (a LIKE pattern with `\\` escapes) adds
    libraries whose ID or title merely contains the name. Order: a title match, then any
    exact match, then benchmark score, trust score and code snippets (a missing score
    counts as 0). `exclude` is a lower-case library ID left out."""
    keys = lookup_keys(name)
    bare = list(dict.fromkeys(keys + [k.rsplit("/", 1)[-1] for k in keys]))
    if not bare:
        return []
    marks = ",".join("?" * len(bare))
    title, tail = f"title_key IN ({marks})", f"tail_key IN ({marks})"
    where, params = f"origin != 'team' AND ({title} OR {tail}", [*bare, *bare]  # team-only: never
    if pattern is not None:
        where += " OR lower(library_id) LIKE ? ESCAPE '\\' OR title_key LIKE ? ESCAPE '\\'"
        params += [pattern, pattern]
    where += ")"
    if exclude:
        where += " AND lower(library_id) != ?"
        params.append(exclude)
    return _rows(
        conn,
        f"SELECT {LIBRARY_COLUMNS} FROM libraries WHERE {where}"
        f" ORDER BY ({title}) DESC, ({title} OR {tail}) DESC, {LIBRARY_RANK} LIMIT ?",
        (*params, *bare, *bare, *bare, limit),
    ).fetchall()


def _seen_since(conn, library_id: str, since: float) -> bool:
    """Whether a known library was seen (captured or searched) since `since`: the tier1 TTL
    holds for an answer from the table of known libraries too."""
    row = _rows(conn, "SELECT max(last_seen) FROM libraries WHERE library_id = ?",
                (library_id,)).fetchone()
    return row is not None and row[0] is not None and row[0] > since


def find_library(conn, name: str) -> str | None:
    """The best exact match among known Context7 libraries (see `rank_libraries`)."""
    rows = rank_libraries(conn, name, limit=1)
    return rows[0]["library_id"] if rows else None


def find_tier2(conn, library_id: str, topic: str,
               now: float | None = None) -> tuple[int, str, str] | None:
    """The fresh tier2 body for (library, topic): (document id, content, content_hash)."""
    now = time.time() if now is None else now
    row = _rows(
        conn,
        "SELECT d.id, document_text(d.body) AS content, d.content_hash FROM tier2 t JOIN documents d ON d.id = t.document_id"
        " WHERE t.library_key = ? AND t.topic_key = ? AND t.expires_at > ?",
        (library_key(library_id), topic_key(topic), now),
    ).fetchone()
    return (row["id"], row["content"], row["content_hash"]) if row else None


def warm_state_rows(conn) -> list:
    """Every project's last warm (project, fingerprint, files, dirs, ranked as JSON text)."""
    return conn.execute("SELECT project, fingerprint, files, dirs, ranked FROM warm_state").fetchall()


def project_tier1(conn, project: str, name_keys) -> dict:
    """This project's tier1 rows (fresh or not) by name key, for the keys that have one: one
    statement per 500 keys (a SessionStart asks for every ranked dependency at once)."""
    keys, out = list(dict.fromkeys(name_keys)), dict[str, sqlite3.Row]()
    for i in range(0, len(keys), 500):
        chunk = keys[i:i + 500]
        out.update((r["name_key"], r) for r in _rows(
            conn, "SELECT name_key, library_id, version, versioned_id, matched, expires_at FROM tier1"
            f" WHERE project = ? AND name_key IN ({','.join('?' * len(chunk))})", (project, *chunk)))
    return out


def library_versions(conn, library_id: str) -> str | None:
    """The JSON list of a library's known versions, as stored (case-insensitive ID), or None."""
    row = _rows(conn, "SELECT versions FROM libraries WHERE lower(library_id) = ?",
                (library_id.lower().rstrip("/"),)).fetchone()
    return row["versions"] if row else None


def api_state(conn, key: str):
    """The api_state row (value, until) for `key`, or None."""
    return _rows(conn, "SELECT value, until FROM api_state WHERE key = ?", (key,)).fetchone()


RETRY_KEY = "context7.retry_after"  # api_state key of the Context7 API backoff


def api_retry_row(conn):
    """The Context7 API's backoff row (value, until), or None (none, or a store without the
    table)."""
    try:
        return api_state(conn, RETRY_KEY)
    except sqlite3.Error:  # a store without the table: no backoff
        return None


def warm_state(conn, project: str):
    """The last warm of `project` (fingerprint, files, dirs, ranked as JSON text), or None."""
    return _rows(
        conn,
        "SELECT fingerprint, files, dirs, ranked FROM warm_state WHERE project = ?", (project,)
    ).fetchone()


def document_count(conn) -> int:
    return conn.execute("SELECT count(*) FROM documents").fetchone()[0]


def has_pending(conn, *, besides: int | None = None, answers_only: bool = False) -> bool:
    """Whether any journaled event waits to be ingested: any but the event `besides`, and,
    with `answers_only`, only events that can add an answer (a SessionStart never does)."""
    sql = "SELECT 1 FROM events WHERE state = 'pending'"
    params: tuple = ()
    if besides is not None:
        sql, params = sql + " AND id <> ?", (besides,)
    if answers_only:
        sql += " AND coalesce(hook_event_name, '') <> 'SessionStart'"
    return conn.execute(sql + " LIMIT 1", params).fetchone() is not None


def pending_events(conn, after_id: int, limit: int) -> list:
    """Pending events (id, received_at, payload, project) after `after_id`, oldest first."""
    return _rows(
        conn,
        "SELECT id, received_at, payload, project FROM events WHERE state = 'pending' AND id > ?"
        " ORDER BY id LIMIT ?", (after_id, limit),
    ).fetchall()


def journal_counts(conn, older_than: float) -> dict:
    """Events in the journal, packed ones too: total, pending, pending since before `older_than`, failed."""
    row = _rows(
        conn,
        "SELECT count(*) AS total, coalesce(sum(state = 'pending'), 0) AS pending,"
        " coalesce(sum(state = 'pending' AND received_at < ?), 0) AS old_pending,"
        " coalesce(sum(state = 'failed'), 0) AS failed FROM events", (older_than,),
    ).fetchone()
    packed = packed_states(conn)
    return {"total": row["total"] + sum(packed.values()), "pending": row["pending"],
            "old_pending": row["old_pending"], "failed": row["failed"] + packed.get("failed", 0)}


def packed_states(conn) -> dict:
    """{state: packed events} (pack_tally); {} for a journal not migrated yet (read-only)."""
    try:
        return dict(conn.execute("SELECT state, sum(n) FROM pack_tally GROUP BY state").fetchall())
    except sqlite3.OperationalError:
        return {}


def journal_readable(conn) -> None:
    """Raises sqlite3.Error when the journal cannot be read."""
    conn.execute("SELECT 1 FROM events LIMIT 1").fetchone()


def integrity(conn) -> list[str]:
    """PRAGMA integrity_check's lines (["ok"] for a sound file)."""
    return [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]


def main_file(conn) -> str:
    """The path of the connection's main database file ('' for an in-memory one)."""
    return conn.execute("PRAGMA database_list").fetchone()[2]


# ----------------------------------------------------------------------------- documents: search, serve, stats


def _value(conn, sql: str, params=()):
    """The one value a one-column, one-row query returns (None for no row)."""
    return None if (row := conn.execute(sql, params).fetchone()) is None else row[0]


def _column(conn, sql: str, params=()) -> list:
    """The values of a one-column query."""
    return [r[0] for r in conn.execute(sql, params)]


def _marks(values) -> str:
    return ",".join("?" * len(values))


def like_pattern(needle: str) -> str:
    """A LIKE pattern (ESCAPE '\\') matching `needle` anywhere, its wildcards taken literally."""
    escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


# ----------------------------------------------------------------------------- FTS5 queries

PREFIX_MIN_CHARS = 4     # shorter tokens are never prefix-matched (they expand to too many terms)


def fts_term(token: str, prefix: bool = False) -> str:
    """One token as a safe FTS5 string (`"` doubled), optionally prefix-matched."""
    quoted = '"' + token.replace('"', '""') + '"'
    return quoted + "*" if prefix else quoted


def fts_query(tokens: list[str], op: str = "AND", prefix: bool = False) -> str | None:
    """Tokens joined with AND/OR, each a safe FTS5 string (no user text is ever FTS5
    syntax); with `prefix`, tokens of PREFIX_MIN_CHARS or more characters are
    prefix-matched. None for no tokens."""
    if not tokens:
        return None
    if op not in ("AND", "OR"):
        raise ValueError(op)
    return f" {op} ".join(fts_term(t, prefix and len(t) >= PREFIX_MIN_CHARS) for t in tokens)


# ----------------------------------------------------------------------------- documents

DOC_COLUMNS = (
    "id, title, source, source_tool, type, url, library_id, topic, version, created_at,"
    " created_at_epoch, access_count, last_accessed_epoch, bytes, project, metadata, truncated, provenance"
)


def documents_by_id(conn, ids: list[int]) -> dict[int, dict]:
    """id -> the document's columns (DOC_COLUMNS, no content) for the ids that exist."""
    if not ids:
        return {}
    rows = _rows(conn, f"SELECT {DOC_COLUMNS} FROM documents WHERE id IN ({_marks(ids)})", ids)
    return {r["id"]: dict(r) for r in rows}


def content_hashes(conn, ids: list[int]) -> list[str]:
    """The content hashes of the documents with these ids (the ones that exist)."""
    if not ids:
        return []
    return _column(conn, f"SELECT content_hash FROM documents WHERE id IN ({_marks(ids)})", list(ids))


def document_with_content(conn, doc_id: int) -> dict | None:
    """One document's columns and its `content`; None when there is no such id."""
    row = _rows(conn, f"SELECT {DOC_COLUMNS}, document_text(body) AS content FROM documents WHERE id = ?",
                (doc_id,)).fetchone()
    return dict(row) if row is not None else None


def document_content(conn, doc_id: int) -> str:
    return _value(conn, "SELECT document_text(body) FROM documents WHERE id = ?", (doc_id,)) or ""


def document_head(conn, doc_id: int, chars: int) -> str:
    """The first `chars` characters of a document's text ('' when there is none)."""
    return _value(conn, "SELECT substr(document_text(body), 1, ?) FROM documents WHERE id = ?",
                  (chars, doc_id)) or ""


# ----------------------------------------------------------------------------- sections

# BM25 weights of the page title, the heading path and the section text, chosen on the
# labelled questions of benchmarks/search.py (sections_fts holds the text first: body, title,
# headings).
SECTION_WEIGHTS = (20.0, 5.0, 1.0)


def library_clause(bases: list[str]) -> tuple[str, list]:
    """SQL (on `documents d`) for documents of these unversioned library IDs (lower-case),
    any version of them, and its parameters."""
    if not bases:
        return "0", []
    parts, args = [], []
    for base in bases:
        pat = base.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        parts.append("lower(d.library_id) = ? OR lower(d.library_id) LIKE ? ESCAPE '\\'"
                     " OR lower(d.library_id) LIKE ? ESCAPE '\\'")
        args += [base, pat + "/%", pat + "@%"]
    return "(" + " OR ".join(parts) + ")", args


def section_ranked(conn, match: str, limit: int, *, window: int,
                   weights: tuple[float, float, float] | None = None,
                   libraries: list[str] | None = None,
                   among: list[int] | None = None) -> list[tuple[int, int, float]]:
    """(section id, document id, bm25 score) of the best sections for an FTS5 query, best
    first. `libraries`: only documents of these library IDs (see library_clause); `among`:
    only these documents. Unscoped, a query matching more than `window` sections is ranked
    over its newest `window` (bounded time for common words). Raises
    sqlite3.OperationalError for a query FTS5 refuses."""
    sql = ("SELECT sections_fts.rowid AS id, s.document_id AS doc, bm25(sections_fts, ?, ?, ?) AS score"
           " FROM sections_fts JOIN sections s ON s.id = sections_fts.rowid")
    title, headings, body = weights or SECTION_WEIGHTS
    args: list = [body, title, headings]  # in sections_fts' column order
    where = " WHERE sections_fts MATCH ?"
    wargs: list = [match]
    if libraries is not None:
        clause, largs = library_clause(libraries)
        sql += " JOIN documents d ON d.id = s.document_id"
        where += " AND " + clause
        wargs += largs
    elif among is not None:
        where += f" AND +s.document_id IN ({_marks(among)})"
        wargs += list(among)
    else:
        floor = _value(conn, "SELECT rowid FROM sections_fts WHERE sections_fts MATCH ?"
                             " ORDER BY rowid DESC LIMIT 1 OFFSET ?", (match, window - 1))
        if floor is not None:
            where += " AND sections_fts.rowid >= ?"
            wargs.append(floor)
    rows = _rows(conn, sql + where + " ORDER BY score LIMIT ?", [*args, *wargs, limit])
    return [(r["id"], r["doc"], r["score"]) for r in rows]


def library_document_ids(conn, bases: list[str]) -> set[int]:
    """Ids of the documents of these library IDs (library_clause)."""
    clause, args = library_clause(bases)
    return set(_column(conn, f"SELECT d.id FROM documents d WHERE {clause}", args))


def section_snippet(conn, match: str, section_id: int, tokens: int) -> str | None:
    """FTS5's snippet of one matching section's text (None when it does not match)."""
    return _value(conn, "SELECT snippet(sections_fts, 0, '', '', ' … ', ?) FROM sections_fts"
                        " WHERE sections_fts MATCH ? AND rowid = ?", (tokens, match, section_id)) or None


def sections_by_id(conn, ids: list[int]) -> dict[int, dict]:
    """id -> (id, document_id, ord, start, length, headings, anchor) of these sections."""
    if not ids:
        return {}
    rows = _rows(conn, "SELECT id, document_id, ord, start, length, headings, anchor FROM sections"
                       f" WHERE id IN ({_marks(ids)})", list(ids))
    return {r["id"]: dict(r) for r in rows}


def document_sections(conn, doc_id: int) -> list[dict]:
    """A document's sections in order: (id, ord, start, length, headings, anchor)."""
    return [dict(r) for r in _rows(conn, "SELECT id, ord, start, length, headings, anchor FROM sections"
                                         " WHERE document_id = ? ORDER BY ord", (doc_id,))]


def section_text(conn, section_id: int) -> str:
    return _value(conn, "SELECT body FROM section_texts WHERE id = ?", (section_id,)) or ""


def section_fields(conn, section_id: int) -> str:
    """A section's page title, heading path and text, one per line (what sections_fts indexes)."""
    return _value(conn, "SELECT coalesce(title, '') || char(10) || headings || char(10) || body"
                        " FROM section_texts WHERE id = ?", (section_id,)) or ""


def substring_ids(conn, needle: str, limit: int, cap: int, libraries: list[str] | None = None) -> list[int]:
    """The newest documents (among the newest `cap`) whose title or text contains `needle`,
    title matches first. SQLite's LIKE folds ASCII case only, so the lower-cased needle is
    tried as well. `libraries`: only documents of these library IDs (library_clause)."""
    if libraries is not None:
        clause, largs = library_clause(libraries)
        ids = _column(conn, f"SELECT d.id FROM documents d WHERE {clause} ORDER BY d.id DESC LIMIT ?",
                      [*largs, cap])
        if not ids:
            return []
        inner = {f"i{n}": v for n, v in enumerate(ids)}
        scope = "WHERE id IN (" + ", ".join(f":i{n}" for n in range(len(ids))) + ")"
    else:
        scope, inner = "", {}
    p, q = like_pattern(needle), like_pattern(needle.lower())
    cond = "(title LIKE :p ESCAPE '\\' OR content LIKE :p ESCAPE '\\')"
    title_first = "(title LIKE :p ESCAPE '\\')"
    if q != p:
        cond = f"({cond} OR title LIKE :q ESCAPE '\\' OR content LIKE :q ESCAPE '\\')"
        title_first = "(title LIKE :p ESCAPE '\\' OR title LIKE :q ESCAPE '\\')"
    return _column(conn,
                   "SELECT id FROM (SELECT id, title, document_text(body) AS content FROM documents"
                   f" {scope} ORDER BY id DESC LIMIT :cap) WHERE {cond} ORDER BY {title_first} DESC, id DESC"
                   " LIMIT :limit", {"cap": cap, "p": p, "q": q, "limit": limit, **inner})


def first_matched_library_ids(conn) -> list[str]:
    """Library IDs that a tier1 entry reached by the disambiguation fallback ("first"
    result, not an exact name match)."""
    return _column(conn, "SELECT DISTINCT library_id FROM tier1"
                         " WHERE matched = 'first' AND library_id IS NOT NULL")


# ----------------------------------------------------------------------------- libraries


def negative_tier1(conn, keys: list[str], project: str, now: float):
    """The newest fresh "not in Context7" tier1 entry for these name keys, this project's
    first: a Row (project, expires_at) or None."""
    if not keys:
        return None
    return _rows(conn,
                 f"SELECT project, expires_at FROM tier1 WHERE name_key IN ({_marks(keys)})"
                 " AND library_id IS NULL AND expires_at > ?"
                 " ORDER BY (project = ?) DESC, resolved_at DESC LIMIT 1",
                 (*keys, now, project or "")).fetchone()


def cached_topics(conn, library_key: str, now: float, limit: int = 20) -> list[sqlite3.Row]:
    """tier2 entries of a library, newest first: Rows (topic, document_id, fresh)."""
    return _rows(conn,
                 "SELECT topic, document_id, expires_at > ? AS fresh FROM tier2 WHERE library_key = ?"
                 " ORDER BY fetched_at DESC LIMIT ?", (now, library_key, limit)).fetchall()


def library_card(conn, library_id: str):
    """What is known about one library (exact ID): a Row or None."""
    return _rows(conn, "SELECT title, description, code_snippets, reputation, benchmark_score,"
                       " versions, last_seen FROM libraries WHERE library_id = ?",
                 (library_id,)).fetchone()


def last_resolved_at(conn, library_id: str, now: float) -> float | None:
    """When a fresh tier1 entry last resolved to this ID."""
    return _value(conn, "SELECT max(resolved_at) FROM tier1 WHERE library_id = ? AND expires_at > ?",
                  (library_id, now))


def pinned_versions(conn, project: str, base: str) -> list:
    """Versions this project's tier1 (its lockfile, via the warm) records for a library ID
    (lower-case, unversioned; a trailing slash also matches)."""
    return _column(conn, "SELECT version FROM tier1 WHERE project = ? AND version IS NOT NULL"
                         " AND library_id IS NOT NULL AND lower(library_id) IN (?, ?)",
                   (project, base, base + "/"))


def pin_rows(conn, project: str, base: str) -> list:
    """This project's tier1 entries with a version for a library ID (lower-case, unversioned;
    a trailing slash also matches), for version pinning: Rows (name, name_key, ecosystem,
    library_id, version, versioned_id). An expired entry counts: the lockfile still pins."""
    return _rows(conn, "SELECT name, name_key, ecosystem, library_id, version, versioned_id FROM tier1"
                       " WHERE project = ? AND version IS NOT NULL AND library_id IS NOT NULL"
                       " AND coalesce(matched, '') != 'team-suggestion' AND lower(library_id) IN (?, ?)"
                       " ORDER BY name_key", (project, base, base + "/")).fetchall()


# ----------------------------------------------------------------------------- serving

def tier2_documents(conn, library_keys, limit: int) -> list[sqlite3.Row]:
    """tier2 entries of these library keys, newest first: Rows (document_id, topic,
    fetched_at, library_key)."""
    keys = list(library_keys)
    return _rows(conn, "SELECT document_id, topic, fetched_at, library_key FROM tier2"
                       f" WHERE library_key IN ({_marks(keys)}) ORDER BY fetched_at DESC LIMIT ?",
                 (*keys, limit)).fetchall()


def contents_by_id(conn, ids: list[int]) -> dict[int, sqlite3.Row]:
    """id -> Row (content, bytes) for the ids that exist."""
    if not ids:
        return {}
    return {r["id"]: r for r in _rows(conn, f"SELECT id, document_text(body) AS content, bytes FROM documents"
                                            f" WHERE id IN ({_marks(ids)})", ids)}


def captured_pages(conn, urls: list[str], source_tool: str, tools: tuple = ()) -> list[sqlite3.Row]:
    """Documents of one source tool (and, given `tools`, one of those capturing tools) stored
    under any of `urls`, the most recently captured first: Rows (id, content, metadata, url,
    title, bytes, at). `+column` terms make SQLite look the URL up in its index instead of
    walking every page of one tool."""
    tool_filter = "+d.source_tool = ?" + (f" AND +d.tool IN ({_marks(tools)})" if tools else "")
    return _rows(conn,
                 "SELECT d.id, document_text(d.body) AS content, d.metadata, d.url, d.title, d.bytes, coalesce((SELECT"
                 " max(c.captured_at) FROM captures c WHERE c.document_id = d.id), d.created_at_epoch)"
                 f" AS at FROM documents d WHERE d.url IN ({_marks(urls)}) AND {tool_filter}"
                 " ORDER BY at DESC", (*urls, source_tool, *tools)).fetchall()


def declared_captures(conn, source_tool: str, source: str, since: float, limit: int = 400) -> list[sqlite3.Row]:
    """The captures since `since` of the documents a declared docs source stored under one
    call's key (memhooks.doc_sources.call_source), newest first: Rows (id, content, metadata,
    title, url, bytes, event_id, at)."""
    return _rows(conn,
                 "SELECT d.id, document_text(d.body) AS content, d.metadata, d.title, d.url, d.bytes,"
                 " c.event_id, c.captured_at AS at FROM documents d JOIN capture_rows c"
                 " ON c.document_id = d.id WHERE d.source_tool = ? AND +d.source = ? AND c.captured_at >= ?"
                 " ORDER BY c.captured_at DESC, c.event_id DESC LIMIT ?",
                 (source_tool, source, since, limit)).fetchall()


def is_forgotten(conn, digest: str) -> bool:
    """Whether the user forgot the text with this content hash (memhooks.store.forget)."""
    return conn.execute("SELECT 1 FROM forgotten WHERE content_hash = ?", (digest,)).fetchone() is not None
