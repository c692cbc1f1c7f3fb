"""Schema migrations: append-only functions, each run once and recorded.

Modelled on simonw/llm's migrations.py, but with the standard library's sqlite3
only, because the hooks and lc-cache-* commands open the store on their hot
path. Never edit or reorder a function here; add a new one at the end.
"""

from __future__ import annotations

import sqlite3

MIGRATIONS: list = []  # of functions (sqlite3.Connection) -> None; no typing import on hot paths


def migration(fn):
    MIGRATIONS.append(fn)
    return fn


def _run(conn: sqlite3.Connection, *statements: str) -> None:
    for sql in statements:
        conn.execute(sql)


@migration
def m001_events(conn):
    _run(
        conn,
        """CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            received_at REAL NOT NULL,
            hook_event_name TEXT,
            session_id TEXT,
            tool_name TEXT,
            tool_use_id TEXT,
            cwd TEXT,
            project TEXT,
            payload TEXT NOT NULL,
            bytes INTEGER NOT NULL DEFAULT 0,
            state TEXT NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'done', 'failed', 'skipped')),
            error TEXT,
            processed_at REAL
        )""",
        "CREATE INDEX events_pending ON events(id) WHERE state = 'pending'",
        "CREATE INDEX events_state ON events(state)",
    )


@migration
def m002_documents(conn):
    _run(
        conn,
        """CREATE TABLE documents (
            id INTEGER PRIMARY KEY,
            project TEXT NOT NULL,
            source TEXT NOT NULL,
            source_tool TEXT NOT NULL,
            title TEXT,
            content TEXT NOT NULL,
            content_hash TEXT NOT NULL UNIQUE,
            type TEXT DEFAULT 'library-docs',
            metadata TEXT,
            memory_session_id TEXT,
            observation_id INTEGER,
            access_count INTEGER NOT NULL DEFAULT 0,
            last_accessed_epoch INTEGER,
            created_at TEXT,
            created_at_epoch INTEGER,
            url TEXT,
            library_id TEXT,
            topic TEXT,
            version TEXT,
            bytes INTEGER NOT NULL DEFAULT 0,
            tool TEXT,
            truncated INTEGER NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX documents_library ON documents(library_id)",
        "CREATE INDEX documents_source_tool ON documents(source_tool)",
        # FTS5 over title and content, external content (no second copy of the
        # text), kept in sync by triggers in the shape sqlite-utils'
        # enable_fts(create_triggers=True) makes; the update trigger only fires
        # for title/content so access-count bumps do not re-index.
        """CREATE VIRTUAL TABLE documents_fts USING fts5(
            title, content, content='documents', content_rowid='id',
            tokenize='unicode61 remove_diacritics 2'
        )""",
        """CREATE TRIGGER documents_ai AFTER INSERT ON documents BEGIN
            INSERT INTO documents_fts (rowid, title, content)
            VALUES (new.id, new.title, new.content);
        END""",
        """CREATE TRIGGER documents_ad AFTER DELETE ON documents BEGIN
            INSERT INTO documents_fts (documents_fts, rowid, title, content)
            VALUES ('delete', old.id, old.title, old.content);
        END""",
        """CREATE TRIGGER documents_au AFTER UPDATE OF title, content ON documents BEGIN
            INSERT INTO documents_fts (documents_fts, rowid, title, content)
            VALUES ('delete', old.id, old.title, old.content);
            INSERT INTO documents_fts (rowid, title, content)
            VALUES (new.id, new.title, new.content);
        END""",
        """CREATE TABLE captures (
            id INTEGER PRIMARY KEY,
            event_id INTEGER NOT NULL,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            project TEXT,
            session_id TEXT,
            tool_name TEXT,
            captured_at REAL NOT NULL,
            UNIQUE (event_id, document_id)
        )""",
        "CREATE INDEX captures_document ON captures(document_id)",
    )


@migration
def m003_libraries_and_tiers(conn):
    _run(
        conn,
        """CREATE TABLE libraries (
            library_id TEXT PRIMARY KEY,
            id_key TEXT NOT NULL,
            tail_key TEXT NOT NULL,
            title TEXT,
            title_key TEXT,
            description TEXT,
            code_snippets INTEGER,
            reputation TEXT,
            trust_score REAL,
            benchmark_score REAL,
            versions TEXT,
            source TEXT,
            origin TEXT NOT NULL,
            last_seen REAL NOT NULL
        )""",
        "CREATE INDEX libraries_title_key ON libraries(title_key)",
        "CREATE INDEX libraries_tail_key ON libraries(tail_key)",
        "CREATE INDEX libraries_id_key ON libraries(id_key)",
        """CREATE TABLE tier1 (
            project TEXT NOT NULL,
            name_key TEXT NOT NULL,
            name TEXT,
            ecosystem TEXT,
            library_id TEXT,
            version TEXT,
            versioned_id TEXT,
            matched TEXT,
            origin TEXT NOT NULL
                CHECK (origin IN ('capture', 'write', 'warm-local', 'warm-api')),
            resolved_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            PRIMARY KEY (project, name_key)
        )""",
        "CREATE INDEX tier1_name_key ON tier1(name_key)",
        """CREATE TABLE tier2 (
            library_key TEXT NOT NULL,
            topic_key TEXT NOT NULL,
            library_id TEXT NOT NULL,
            topic TEXT NOT NULL,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            origin TEXT NOT NULL,
            fetched_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            PRIMARY KEY (library_key, topic_key)
        )""",
        """CREATE TABLE counters (
            project TEXT NOT NULL,
            tier TEXT NOT NULL,
            outcome TEXT NOT NULL,
            count INTEGER NOT NULL DEFAULT 0,
            last_at REAL,
            PRIMARY KEY (project, tier, outcome)
        )""",
        """CREATE TABLE warm_state (
            project TEXT PRIMARY KEY,
            fingerprint TEXT NOT NULL,
            files TEXT NOT NULL,
            dirs TEXT NOT NULL,
            ranked TEXT NOT NULL,
            warmed_at REAL NOT NULL
        )""",
        """CREATE TABLE api_state (
            key TEXT PRIMARY KEY,
            value TEXT,
            until REAL
        )""",
    )


@migration
def m004_tier1_loose_key(conn):
    """A spelling-insensitive key (PEP 503 folding of `-`, `_`, `.` and case) so a
    name written without its ecosystem is found under any spelling."""
    from memhooks.names import loose_key

    conn.execute("ALTER TABLE tier1 ADD COLUMN loose_key TEXT")
    rows = conn.execute("SELECT rowid, coalesce(name, name_key) FROM tier1").fetchall()
    conn.executemany("UPDATE tier1 SET loose_key = ? WHERE rowid = ?",
                     [(loose_key(name), rowid) for rowid, name in rows])
    conn.execute("CREATE INDEX tier1_loose_key ON tier1(loose_key)")


@migration
def m005_serving(conn):
    """Serving repeated tool calls from the store: an index to find a page by its URL,
    and a log of served calls (stats, and letting an identical repeat through)."""
    _run(
        conn,
        "CREATE INDEX IF NOT EXISTS documents_url ON documents(url)",
        """CREATE TABLE IF NOT EXISTS serve_log (
            id INTEGER PRIMARY KEY,
            at REAL NOT NULL,
            day TEXT NOT NULL,
            outcome TEXT NOT NULL CHECK (outcome IN ('served', 'insisted')),
            project TEXT,
            session_id TEXT,
            tool TEXT NOT NULL,
            tool_name TEXT,
            library_id TEXT,
            call_key TEXT NOT NULL,
            document_ids TEXT,
            bytes INTEGER NOT NULL DEFAULT 0,
            tokens_saved INTEGER NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX IF NOT EXISTS serve_log_call ON serve_log(call_key, at)",
        "CREATE INDEX IF NOT EXISTS serve_log_day ON serve_log(day)",
    )


@migration
def m006_journal_apart(conn):
    """The raw journal lives in its own file (attached as `journal`), so a damaged
    projections file can be rebuilt from it. A store built before keeps its events
    in `main.events`: move them out, ids and states kept, losing nothing. Events a
    hook wrote into the new journal before this ran (never projected: projecting
    needs this migration first) are renumbered after the moved ones."""
    has_main = conn.execute(
        "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = 'events'").fetchone()
    if not has_main:
        return
    cols = ("id, received_at, hook_event_name, session_id, tool_name, tool_use_id, cwd,"
            " project, payload, bytes, state, error, processed_at")
    top = conn.execute("SELECT coalesce(max(id), 0) FROM main.events").fetchone()[0]
    low = conn.execute("SELECT min(id) FROM journal.events").fetchone()[0]
    if top and low is not None and low <= top:
        # Two steps, so no intermediate id collides.
        conn.execute("UPDATE journal.events SET id = -id")
        conn.execute("UPDATE journal.events SET id = -id + ?", (top,))
    conn.execute(f"INSERT INTO journal.events ({cols}) SELECT {cols} FROM main.events")  # noqa: S608
    conn.execute("DROP TABLE main.events")


@migration
def m007_document_reads(conn):
    """Who read what, per UTC day: the agent (MCP tools, lc-cache-lookup-docs, serving) or the
    user's own `memhooks search`/`show`. Keyed by content_hash so a reindex keeps it."""
    _run(
        conn,
        """CREATE TABLE IF NOT EXISTS document_reads (
            content_hash TEXT NOT NULL,
            origin TEXT NOT NULL CHECK (origin IN ('agent', 'user')),
            day TEXT NOT NULL,
            reads INTEGER NOT NULL DEFAULT 0,
            last_at REAL,
            PRIMARY KEY (content_hash, origin, day)
        )""",
        "CREATE INDEX IF NOT EXISTS document_reads_day ON document_reads(day, origin)",
    )


@migration
def m008_team_sync(conn):
    """Local side of the team store: small key/value state (member id, push watermarks,
    back-off after a failure), what has been pushed (by content, so a reindex that renumbers
    documents pushes nothing twice), and the content hashes the user forgot (never captured,
    pushed or pulled again)."""
    _run(
        conn,
        """CREATE TABLE IF NOT EXISTS team_state (
            key TEXT PRIMARY KEY,
            value TEXT,
            until REAL,
            failures INTEGER NOT NULL DEFAULT 0,
            updated_at REAL
        )""",
        """CREATE TABLE IF NOT EXISTS team_pushed (
            content_hash TEXT PRIMARY KEY,
            access_count INTEGER NOT NULL DEFAULT 0,
            pushed_at REAL NOT NULL
        )""",
        """CREATE TABLE IF NOT EXISTS forgotten (
            content_hash TEXT PRIMARY KEY,
            forgotten_at REAL NOT NULL,
            team_done INTEGER NOT NULL DEFAULT 0
        )""",
    )
