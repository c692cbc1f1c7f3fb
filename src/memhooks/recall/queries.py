"""Every read query of the store, in one place (standard library only: the hot paths import
it, so nothing here imports json or re at import time).

Writers live in memhooks.store (projections) and memhooks.capture.journal (events); this
module only reads. Rows are sqlite3.Row (read by column name).
"""

from __future__ import annotations

import sqlite3
import time

from memhooks.names import library_key, lookup_keys, loose_key, topic_key



def _rows(conn, sql: str, params=()):
    """A cursor whose rows are sqlite3.Row, whatever the connection's row factory (the serve
    decision opens its own read-only connection)."""
    cur = conn.execute(sql, params)
    cur.row_factory = sqlite3.Row
    return cur


# ---- tier1/tier2, warm state, journal


def find_tier1(conn, name: str, project: str, now: float | None = None) -> dict | None:
    """The freshest positive answer for `name`: this project's tier1 first, then
    global knowledge (other projects' tier1, then captured/API library results)."""
    now = time.time() if now is None else now
    keys = lookup_keys(name)
    if not keys:
        return None
    marks = ",".join("?" * len(keys))
    cols = "library_id, version, versioned_id, origin, matched"
    fresh = " AND expires_at > ? AND library_id IS NOT NULL ORDER BY resolved_at DESC LIMIT 1"
    loose = loose_key(name)
    attempts = (
        ("project", f"project = ? AND name_key IN ({marks})", (project or "", *keys)),
        ("project", "project = ? AND loose_key = ?", (project or "", loose)),
        ("global", f"name_key IN ({marks})", tuple(keys)),
        ("global", "loose_key = ?", (loose,)),
    )
    for scope, where, params in attempts:
        row = _rows(conn, f"SELECT {cols} FROM tier1 WHERE {where}{fresh}",  # noqa: S608
                           (*params, now)).fetchone()
        if row is not None:
            return {"name": name, "library_id": row["library_id"], "version": row["version"],
                    "versioned_id": row["versioned_id"], "origin": row["origin"],
                    "matched": row["matched"], "scope": scope}
    lib = find_library(conn, name)
    if lib is not None:
        return {"name": name, "library_id": lib, "version": None, "versioned_id": None,
                "origin": "libraries", "matched": "exact", "scope": "global"}
    return None


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
    where, params = f"({title} OR {tail}", [*bare, *bare]
    if pattern is not None:
        where += " OR lower(library_id) LIKE ? ESCAPE '\\' OR title_key LIKE ? ESCAPE '\\'"
        params += [pattern, pattern]
    where += ")"
    if exclude:
        where += " AND lower(library_id) != ?"
        params.append(exclude)
    return _rows(
        conn,
        f"SELECT {LIBRARY_COLUMNS} FROM libraries WHERE {where}"  # noqa: S608
        f" ORDER BY ({title}) DESC, ({title} OR {tail}) DESC, coalesce(benchmark_score, 0) DESC,"
        " coalesce(trust_score, 0) DESC, coalesce(code_snippets, 0) DESC LIMIT ?",
        (*params, *bare, *bare, *bare, limit),
    ).fetchall()


def find_library(conn, name: str) -> str | None:
    """The best exact match among known Context7 libraries (see `rank_libraries`)."""
    rows = rank_libraries(conn, name, limit=1)
    return rows[0]["library_id"] if rows else None


def find_tier2(conn, library_id: str, topic: str, now: float | None = None) -> tuple[int, str] | None:
    now = time.time() if now is None else now
    row = _rows(
        conn,
        "SELECT d.id, d.content FROM tier2 t JOIN documents d ON d.id = t.document_id"
        " WHERE t.library_key = ? AND t.topic_key = ? AND t.expires_at > ?",
        (library_key(library_id), topic_key(topic), now),
    ).fetchone()
    return (row["id"], row["content"]) if row else None


def project_tier1(conn, project: str, name_key: str):
    """This project's tier1 row for a name key (fresh or not), or None."""
    return _rows(
        conn,
        "SELECT library_id, versioned_id, matched, expires_at FROM tier1"
        " WHERE project = ? AND name_key = ?", (project, name_key),
    ).fetchone()


def library_versions(conn, library_id: str) -> str | None:
    """The JSON list of a library's known versions, as stored (or None)."""
    row = _rows(conn, "SELECT versions FROM libraries WHERE library_id = ?", (library_id,)).fetchone()
    return row["versions"] if row else None


def api_state(conn, key: str):
    """The api_state row (value, until) for `key`, or None."""
    return _rows(conn, "SELECT value, until FROM api_state WHERE key = ?", (key,)).fetchone()


def warm_state(conn, project: str):
    """The last warm of `project` (fingerprint, files, dirs, ranked as JSON text), or None."""
    return _rows(
        conn,
        "SELECT fingerprint, files, dirs, ranked FROM warm_state WHERE project = ?", (project,)
    ).fetchone()


def document_count(conn) -> int:
    return conn.execute("SELECT count(*) FROM documents").fetchone()[0]


def has_pending(conn) -> bool:
    """Whether any journaled event waits to be ingested."""
    return conn.execute("SELECT 1 FROM events WHERE state = 'pending' LIMIT 1").fetchone() is not None


def pending_events(conn, after_id: int, limit: int) -> list:
    """Pending events (id, payload, project) after `after_id`, oldest first."""
    return _rows(
        conn,
        "SELECT id, payload, project FROM events WHERE state = 'pending' AND id > ?"
        " ORDER BY id LIMIT ?", (after_id, limit),
    ).fetchall()


def journal_counts(conn, older_than: float) -> dict:
    """Events in the journal: total, pending, pending since before `older_than`, failed."""
    row = _rows(
        conn,
        "SELECT count(*) AS total, coalesce(sum(state = 'pending'), 0) AS pending,"
        " coalesce(sum(state = 'pending' AND received_at < ?), 0) AS old_pending,"
        " coalesce(sum(state = 'failed'), 0) AS failed FROM events", (older_than,),
    ).fetchone()
    return {k: row[k] for k in ("total", "pending", "old_pending", "failed")}


def journal_readable(conn) -> None:
    """Raises sqlite3.Error when the journal cannot be read."""
    conn.execute("SELECT 1 FROM events LIMIT 1").fetchone()


def tool_use_ids(conn, session_id: str) -> set:
    """The tool_use ids journaled for one session, whatever their state (ingestion fills
    the session and tool_use columns from the payload). Used to import a transcript's
    tool calls once, and not the ones a live hook already journaled."""
    return {r[0] for r in conn.execute(
        "SELECT tool_use_id FROM events WHERE session_id = ? AND tool_use_id IS NOT NULL",
        (session_id,))}


def integrity(conn) -> list[str]:
    """PRAGMA integrity_check's lines (["ok"] for a sound file)."""
    return [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]


def main_file(conn) -> str:
    """The path of the connection's main database file ('' for an in-memory one)."""
    return conn.execute("PRAGMA database_list").fetchone()[2]


# ---- documents: search, serve, stats
