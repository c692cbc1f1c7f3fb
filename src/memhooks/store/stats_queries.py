"""The read queries behind `memhooks stats` (standard library only; see memhooks.store.queries
for the conventions: parameters bound, rows as sqlite3.Row)."""

import json
import sqlite3

from memhooks.store.queries import _rows
from memhooks.store.warm_state import BUDGET_KEY, clean_budget

MAX_BUDGET_VALUE = 2000  # the stored figures are a few hundred characters

# ----------------------------------------------------------------------------- stats
# With a project, documents count when captured in it (or first stored for it); captures,
# counters, tier1 entries and events by their project column. Without one, everything.

def _doc_scope(project: str | None, alias: str = "") -> tuple[str, tuple]:
    if project is None:
        return "1", ()
    a = f"{alias}." if alias else ""
    return (f"({a}project = ? OR {a}id IN (SELECT document_id FROM captures WHERE project = ?))",
            (project, project))


def _project_scope(project: str | None, alias: str = "") -> tuple[str, tuple]:
    if project is None:
        return "1", ()
    return f"{alias + '.' if alias else ''}project = ?", (project,)


def stats_documents_by_tool(conn, project: str | None) -> list[sqlite3.Row]:
    """Rows (source_tool, type, count, bytes), most documents first."""
    where, args = _doc_scope(project)
    return _rows(conn, "SELECT source_tool, type, count(*) AS count, coalesce(sum(bytes), 0) AS bytes"
                       f" FROM documents WHERE {where} GROUP BY source_tool, type"
                       " ORDER BY count(*) DESC, source_tool, type", args).fetchall()


def stats_captures(conn, project: str | None) -> sqlite3.Row:
    """Row (count, unique_documents, captured_bytes, unique_bytes, oldest, newest)."""
    where, args = _project_scope(project, "c")
    inner, inner_args = _project_scope(project)
    return _rows(conn,
                 "SELECT count(*) AS count, count(DISTINCT c.document_id) AS unique_documents,"
                 " coalesce(sum(d.bytes), 0) AS captured_bytes, min(c.captured_at) AS oldest,"
                 " max(c.captured_at) AS newest, (SELECT coalesce(sum(bytes), 0) FROM documents"
                 f" WHERE id IN (SELECT document_id FROM captures WHERE {inner})) AS unique_bytes"
                 f" FROM captures c JOIN documents d ON d.id = c.document_id WHERE {where}",
                 (*inner_args, *args)).fetchone()


def stats_most_read(conn, project: str | None, limit: int) -> list[sqlite3.Row]:
    """The documents the agent read most (document_reads by origin), most agent reads first:
    Rows (id, title, source_tool, type, source, access_count, last_accessed_epoch,
    agent_reads, user_reads)."""
    where, args = _doc_scope(project, "d")
    return _rows(conn,
                 "SELECT d.id, coalesce(d.title, d.source) AS title, d.source_tool, d.type, d.source,"
                 " d.access_count, d.last_accessed_epoch, r.agent AS agent_reads, r.user AS user_reads"
                 " FROM documents d JOIN"
                 " (SELECT content_hash, sum(CASE WHEN origin = 'agent' THEN reads ELSE 0 END) AS agent,"
                 "  sum(CASE WHEN origin = 'user' THEN reads ELSE 0 END) AS user"
                 "  FROM document_reads GROUP BY content_hash) r ON r.content_hash = d.content_hash"
                 f" WHERE {where} AND r.agent > 0 ORDER BY r.agent DESC, d.last_accessed_epoch DESC"
                 " LIMIT ?", (*args, limit)).fetchall()


def stats_accesses(conn, project: str | None) -> sqlite3.Row:
    """Row (total, documents): the sum of access_count and how many documents were read."""
    where, args = _doc_scope(project)
    return _rows(conn, "SELECT coalesce(sum(access_count), 0) AS total, count(*) AS documents"
                       f" FROM documents WHERE {where} AND access_count > 0", args).fetchone()


def stats_reads_by_origin(conn, project: str | None) -> list[sqlite3.Row]:
    """Rows (origin, reads, documents) from document_reads ('agent' / 'user')."""
    where, args = _doc_scope(project, "d")
    return _rows(conn, "SELECT r.origin, sum(r.reads) AS reads, count(DISTINCT r.content_hash) AS documents"
                       " FROM document_reads r JOIN documents d ON d.content_hash = r.content_hash"
                       f" WHERE {where} GROUP BY r.origin", args).fetchall()


def stats_counters(conn, project: str | None) -> list[sqlite3.Row]:
    """Rows (tier, outcome, count): lookup hits and misses."""
    where, args = _project_scope(project)
    return _rows(conn, "SELECT tier, outcome, sum(count) AS count FROM counters"
                       f" WHERE {where} GROUP BY tier, outcome", args).fetchall()


def stats_tier1(conn, project: str | None, now: float) -> sqlite3.Row:
    """Row (total, fresh, negative, negative_fresh)."""
    where, args = _project_scope(project)
    return _rows(conn, "SELECT count(*) AS total, coalesce(sum(expires_at > ?), 0) AS fresh,"
                       " coalesce(sum(library_id IS NULL), 0) AS negative,"
                       " coalesce(sum(library_id IS NULL AND expires_at > ?), 0) AS negative_fresh"
                       f" FROM tier1 WHERE {where}", (now, now, *args)).fetchone()


def stats_tier2(conn, now: float) -> sqlite3.Row:
    """Row (total, fresh); tier2 is global."""
    return _rows(conn, "SELECT count(*) AS total, coalesce(sum(expires_at > ?), 0) AS fresh FROM tier2",
                 (now,)).fetchone()


def stats_events_by_state(conn, project: str | None) -> list[sqlite3.Row]:
    """Rows (state, count) of the journal."""
    where, args = _project_scope(project)
    # packed events (memhooks.store.compact) are counted by pack_tally
    return _rows(conn, "SELECT state, sum(n) AS count FROM (SELECT state, 1 AS n, project FROM events"
                       f" UNION ALL SELECT state, n, project FROM pack_tally) WHERE {where} GROUP BY state",
                 args).fetchall()


def stats_event_reasons(conn, project: str | None, state: str, limit: int) -> list[sqlite3.Row]:
    """Rows (reason, count): why events ended in `state`, most frequent first."""
    where, args = _project_scope(project)
    return _rows(conn, "SELECT error AS reason, sum(n) AS count FROM (SELECT state, error, project,"
                       " 1 AS n FROM events UNION ALL SELECT state, error, project, n FROM pack_tally)"
                       f" WHERE state = ? AND {where} GROUP BY error ORDER BY sum(n) DESC, error LIMIT ?",
                 (state, *args, limit)).fetchall()


def stats_daily_captures(conn, project: str | None, since: float) -> list[sqlite3.Row]:
    """Rows (day 'YYYY-MM-DD' UTC, count) of captures since an epoch."""
    where, args = _project_scope(project, "c")
    return _rows(conn, "SELECT strftime('%Y-%m-%d', c.captured_at, 'unixepoch') AS day, count(*) AS count"
                       f" FROM captures c WHERE c.captured_at >= ? AND {where} GROUP BY day",
                 (since, *args)).fetchall()


def stats_daily_reads(conn, project: str | None, first_day: str) -> list[sqlite3.Row]:
    """Rows (origin, day, reads) of document reads from `first_day` ('YYYY-MM-DD') on."""
    where, args = _doc_scope(project, "d")
    return _rows(conn, "SELECT r.origin, r.day, sum(r.reads) AS reads FROM document_reads r"
                       " JOIN documents d ON d.content_hash = r.content_hash"
                       f" WHERE r.day >= ? AND {where} GROUP BY r.origin, r.day",
                 (first_day, *args)).fetchall()


def reads_by_document(conn, ids: list[int]) -> dict[int, tuple[int, int]]:
    """{document id: (agent reads, user reads)} from document_reads, for the documents given
    (those never read are left out)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = _rows(conn,
                 "SELECT d.id, sum(CASE WHEN r.origin = 'agent' THEN r.reads ELSE 0 END) AS agent,"
                 " sum(CASE WHEN r.origin = 'user' THEN r.reads ELSE 0 END) AS user"
                 " FROM documents d JOIN document_reads r ON r.content_hash = d.content_hash"
                 f" WHERE d.id IN ({marks}) GROUP BY d.id", tuple(ids)).fetchall()
    return {r["id"]: (r["agent"] or 0, r["user"] or 0) for r in rows}


def context7_budget(conn, now: float) -> dict | None:
    """Context7's last known budget (memhooks.store.warm_state.save_budget), checked again as
    it is read; None when none was seen (or the store has no api_state table)."""
    try:
        row = conn.execute("SELECT value FROM api_state WHERE key = ?", (BUDGET_KEY,)).fetchone()
    except sqlite3.Error:
        return None
    if row is None or not isinstance(row[0], str) or len(row[0]) > MAX_BUDGET_VALUE:
        return None
    try:
        return clean_budget(json.loads(row[0]), now)
    except (ValueError, RecursionError):
        return None
