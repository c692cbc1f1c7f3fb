"""Schema migrations of the projections: append-only functions, each run once and recorded.

In simonw/llm's style: every function takes a `sqlite_utils.Database` and is applied
once, its name recorded in `_memhooks_migrations` (the runner is memhooks.store.migrate,
a cold module). Tables and plain indexes are written with sqlite-utils' table API;
what it does not express (CHECK and UNIQUE constraints, ON DELETE actions, partial
indexes, the FTS5 external-content table and its triggers) is SQL through `db.execute`.

This module imports nothing but the standard library. The hot paths tell whether a store
is up to date by `memhooks.store.sqlite_file.SCHEMA_VERSION` (checked here to be the number of
migrations) and never migrate.
Never edit the effect of, rename or reorder a function here; add a new one at the end.
"""

from memhooks.names import loose_key
from memhooks.store import sqlite_file as _sqlite_file
from memhooks.store.bodies import add_functions, document_body

MIGRATIONS: list = []  # of functions (sqlite_utils.Database) -> None; no typing import on hot paths
migration = MIGRATIONS.append


@migration
def m001_events(db):
    """Created `events` in this file until m006_journal_apart moved the journal to a file of
    its own; stores from then on have been migrated past it. The journal's schema has one
    definition, in memhooks.store.journal_migrations (j001_events): a new store has no
    `main.events`, which is the state m006 leaves."""


@migration
def m002_documents(db):
    # content_hash UNIQUE is a column constraint (its automatic index is part of the schema).
    db.execute("""CREATE TABLE documents (
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
    )""")
    db["documents"].create_index(["library_id"], index_name="documents_library")
    db["documents"].create_index(["source_tool"], index_name="documents_source_tool")
    # FTS5 over title and content, external content (no second copy of the text), kept in
    # sync by triggers in the shape sqlite-utils' enable_fts(create_triggers=True) makes,
    # except that the update trigger only fires for title/content (an access-count bump
    # does not re-index). SQL, not enable_fts: that one runs executescript, which would
    # commit the runner's transaction.
    db.execute("""CREATE VIRTUAL TABLE documents_fts USING fts5(
        title, content, content='documents', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2'
    )""")
    db.execute("""CREATE TRIGGER documents_ai AFTER INSERT ON documents BEGIN
        INSERT INTO documents_fts (rowid, title, content)
        VALUES (new.id, new.title, new.content);
    END""")
    db.execute("""CREATE TRIGGER documents_ad AFTER DELETE ON documents BEGIN
        INSERT INTO documents_fts (documents_fts, rowid, title, content)
        VALUES ('delete', old.id, old.title, old.content);
    END""")
    db.execute("""CREATE TRIGGER documents_au AFTER UPDATE OF title, content ON documents BEGIN
        INSERT INTO documents_fts (documents_fts, rowid, title, content)
        VALUES ('delete', old.id, old.title, old.content);
        INSERT INTO documents_fts (rowid, title, content)
        VALUES (new.id, new.title, new.content);
    END""")
    db.execute("""CREATE TABLE captures (
        id INTEGER PRIMARY KEY,
        event_id INTEGER NOT NULL,
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        project TEXT,
        session_id TEXT,
        tool_name TEXT,
        captured_at REAL NOT NULL,
        UNIQUE (event_id, document_id)
    )""")
    db["captures"].create_index(["document_id"], index_name="captures_document")


@migration
def m003_libraries_and_tiers(db):
    db["libraries"].create(
        {
            "library_id": str,
            "id_key": str,
            "tail_key": str,
            "title": str,
            "title_key": str,
            "description": str,
            "code_snippets": int,
            "reputation": str,
            "trust_score": float,
            "benchmark_score": float,
            "versions": str,
            "source": str,
            "origin": str,
            "last_seen": float,
        },
        pk="library_id",
        not_null={"id_key", "tail_key", "origin", "last_seen"},
    )
    for column in ("title_key", "tail_key", "id_key"):
        db["libraries"].create_index([column], index_name=f"libraries_{column}")
    db.execute("""CREATE TABLE tier1 (
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
    )""")
    db["tier1"].create_index(["name_key"], index_name="tier1_name_key")
    db.execute("""CREATE TABLE tier2 (
        library_key TEXT NOT NULL,
        topic_key TEXT NOT NULL,
        library_id TEXT NOT NULL,
        topic TEXT NOT NULL,
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        origin TEXT NOT NULL,
        fetched_at REAL NOT NULL,
        expires_at REAL NOT NULL,
        PRIMARY KEY (library_key, topic_key)
    )""")
    db["counters"].create(
        {"project": str, "tier": str, "outcome": str, "count": int, "last_at": float},
        pk=("project", "tier", "outcome"),
        not_null={"project", "tier", "outcome", "count"},
        defaults={"count": 0},
    )
    db["warm_state"].create(
        {"project": str, "fingerprint": str, "files": str, "dirs": str, "ranked": str,
         "warmed_at": float},
        pk="project",
        not_null={"fingerprint", "files", "dirs", "ranked", "warmed_at"},
    )
    db["api_state"].create({"key": str, "value": str, "until": float}, pk="key")


@migration
def m004_tier1_loose_key(db):
    """A spelling-insensitive key (PEP 503 folding of `-`, `_`, `.` and case) so a
    name written without its ecosystem is found under any spelling."""
    db["tier1"].add_column("loose_key", str)
    rows = db.execute("SELECT rowid, coalesce(name, name_key) FROM tier1").fetchall()
    db.conn.executemany("UPDATE tier1 SET loose_key = ? WHERE rowid = ?",
                        [(loose_key(name), rowid) for rowid, name in rows])
    db["tier1"].create_index(["loose_key"], index_name="tier1_loose_key")


@migration
def m005_serving(db):
    """Serving repeated tool calls from the store: an index to find a page by its URL,
    and a log of served calls (stats, and letting an identical repeat through)."""
    db["documents"].create_index(["url"], index_name="documents_url", if_not_exists=True)
    db.execute("""CREATE TABLE IF NOT EXISTS serve_log (
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
    )""")
    db["serve_log"].create_index(["call_key", "at"], index_name="serve_log_call",
                                 if_not_exists=True)
    db["serve_log"].create_index(["day"], index_name="serve_log_day", if_not_exists=True)


@migration
def m006_journal_apart(db):
    """The raw journal lives in its own file (attached as `journal`), so a damaged
    projections file can be rebuilt from it. A store built before keeps its events
    in `main.events`: move them out, ids and states kept, losing nothing. Events a
    hook wrote into the new journal before this ran (never projected: projecting
    needs this migration first) are renumbered after the moved ones."""
    has_main = db.execute(
        "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = 'events'").fetchone()
    if not has_main:
        return
    cols = ("id, received_at, hook_event_name, session_id, tool_name, tool_use_id, cwd,"
            " project, payload, bytes, state, error, processed_at")
    top = db.execute("SELECT coalesce(max(id), 0) FROM main.events").fetchone()[0]
    low = db.execute("SELECT min(id) FROM journal.events").fetchone()[0]
    if top and low is not None and low <= top:
        # Two steps, so no intermediate id collides.
        db.execute("UPDATE journal.events SET id = -id")
        db.execute("UPDATE journal.events SET id = -id + ?", (top,))
    db.execute(f"INSERT INTO journal.events ({cols}) SELECT {cols} FROM main.events")
    db.execute("DROP TABLE main.events")


@migration
def m007_document_reads(db):
    """Who read what, per UTC day: the agent (MCP tools, lc-cache-lookup-docs, serving) or the
    user's own `memhooks search`/`show`. Keyed by content_hash so a reindex keeps it."""
    db.execute("""CREATE TABLE IF NOT EXISTS document_reads (
        content_hash TEXT NOT NULL,
        origin TEXT NOT NULL CHECK (origin IN ('agent', 'user')),
        day TEXT NOT NULL,
        reads INTEGER NOT NULL DEFAULT 0,
        last_at REAL,
        PRIMARY KEY (content_hash, origin, day)
    )""")
    db["document_reads"].create_index(["day", "origin"], index_name="document_reads_day",
                                      if_not_exists=True)


@migration
def m008_team_sync(db):
    """Local side of the team store: small key/value state (member id, push watermarks,
    back-off after a failure), what has been pushed (by content, so a reindex that renumbers
    documents pushes nothing twice), and the content hashes the user forgot (never captured,
    pushed or pulled again)."""
    db["team_state"].create(
        {"key": str, "value": str, "until": float, "failures": int, "updated_at": float},
        pk="key", not_null={"failures"}, defaults={"failures": 0}, if_not_exists=True,
    )
    db["team_pushed"].create(
        {"content_hash": str, "access_count": int, "pushed_at": float},
        pk="content_hash", not_null={"access_count", "pushed_at"},
        defaults={"access_count": 0}, if_not_exists=True,
    )
    db["forgotten"].create(
        {"content_hash": str, "forgotten_at": float, "team_done": int},
        pk="content_hash", not_null={"forgotten_at", "team_done"},
        defaults={"team_done": 0}, if_not_exists=True,
    )


@migration
def m009_provenance(db):
    """Where each row came in (memhooks.store.admission): `capture`, `import`, `manual`
    (lc-cache-write), `added`, `warm` (Context7 API answers) or `team:<member>`. Rows
    written before are labelled from what they already say about their origin; a team row
    of before names no member (`team:unknown`)."""
    for table in ("documents", "libraries", "tier1", "tier2"):
        if "provenance" not in db[table].columns_dict:
            db[table].add_column("provenance", str)
    db.execute("UPDATE documents SET provenance = CASE tool WHEN 'lc-cache-write' THEN 'manual'"
               " WHEN 'team-pull' THEN 'team:unknown' WHEN 'team-search' THEN 'team:unknown'"
               " ELSE 'capture' END WHERE provenance IS NULL")
    db.execute("UPDATE libraries SET provenance = CASE origin WHEN 'capture' THEN 'capture'"
               " WHEN 'api' THEN 'warm' WHEN 'team' THEN 'team:unknown' ELSE 'import' END"
               " WHERE provenance IS NULL")
    db.execute("UPDATE tier1 SET provenance = CASE origin WHEN 'capture' THEN 'capture'"
               " WHEN 'write' THEN 'manual' ELSE 'warm' END WHERE provenance IS NULL")
    db.execute("UPDATE tier2 SET provenance = CASE origin WHEN 'capture' THEN 'capture'"
               " WHEN 'write' THEN 'manual' WHEN 'team' THEN 'team:unknown' ELSE 'import' END"
               " WHERE provenance IS NULL")


@migration
def m010_sources(db):
    """Sources the user added (`memhooks add`/`refresh`): one row per fetched URL, with its
    HTTP validators (ETag, Last-Modified) for conditional revalidation, the document it is
    stored as (NULL once that document is forgotten or gone) and how its last check went.
    `root` is the URL given to `memhooks add` (an llms.txt, or the page itself)."""
    db.execute("""CREATE TABLE IF NOT EXISTS sources (
        url TEXT PRIMARY KEY,
        root TEXT NOT NULL,
        site TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('index', 'page')),
        title TEXT,
        library_id TEXT,
        version TEXT,
        etag TEXT,
        last_modified TEXT,
        content_hash TEXT,
        document_id INTEGER REFERENCES documents(id) ON DELETE SET NULL,
        bytes INTEGER NOT NULL DEFAULT 0,
        wire_bytes INTEGER NOT NULL DEFAULT 0,
        added_at REAL NOT NULL,
        fetched_at REAL,
        checked_at REAL,
        status TEXT NOT NULL,
        error TEXT
    )""")
    db["sources"].create_index(["root"], index_name="sources_root", if_not_exists=True)
    db["sources"].create_index(["document_id"], index_name="sources_document", if_not_exists=True)


@migration
def m011_fallback_log(db):
    """Fallbacks: a live tool call that failed (rate limit, quota, 5xx, network, empty) and
    was answered from the store by the PostToolUse hook (memhooks.recall.fallback), one row
    each: the tool kind, the library, why the live call failed, which output field carried
    the answer (updatedToolOutput, updatedMCPToolOutput or additionalContext), the CLI
    version it was chosen for, and when the oldest document used was captured."""
    db["fallback_log"].create(
        {"id": int, "at": float, "day": str, "project": str, "session_id": str, "tool": str,
         "tool_name": str, "library_id": str, "reason": str, "field": str, "cli_version": str,
         "document_ids": str, "bytes": int, "captured_at": float},
        pk="id", not_null={"at", "day", "tool", "field", "bytes"}, defaults={"bytes": 0},
        if_not_exists=True,
    )
    db["fallback_log"].create_index(["day"], index_name="fallback_log_day", if_not_exists=True)


@migration
def m012_compressed_text(db):
    """A document's text is kept compressed: `body` (zlib of its UTF-8 bytes, written by
    memhooks.store.bodies.document_body) replaces `content` (left empty as `unused_content`), which was most of a store's
    size. The FTS5 index reads the text through the view `document_texts`, whose
    `document_text(body)` every connection of memhooks defines (memhooks.store.bodies.
    add_functions); the triggers keep the index in step as before. The table keeps its rowids,
    so captures, tier2 and sources still point at the same documents."""
    conn = db.conn
    add_functions(conn)
    conn.create_function("memhooks_document_body", 1,
                         lambda text: document_body(text if isinstance(text, str) else ""))
    for trigger in ("documents_ai", "documents_ad", "documents_au"):
        db.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    db.execute("DROP TABLE IF EXISTS documents_fts")
    db.execute("ALTER TABLE documents ADD COLUMN body BLOB")
    db.execute("UPDATE documents SET body = memhooks_document_body(content), content = ''")
    # Renamed, not dropped: DROP COLUMN needs SQLite 3.35, which Pythons built on Debian 11,
    # Ubuntu 20.04 or RHEL 8/9 lack. The old column stays, always '', under a name that makes
    # a reader that still asks for `content` fail loudly.
    db.execute("ALTER TABLE documents RENAME COLUMN content TO unused_content")
    db.execute("CREATE VIEW document_texts AS SELECT id, title, document_text(body) AS content FROM documents")
    db.execute("""CREATE VIRTUAL TABLE documents_fts USING fts5(
        title, content, content='document_texts', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2'
    )""")
    db.execute("""CREATE TRIGGER documents_ai AFTER INSERT ON documents BEGIN
        INSERT INTO documents_fts (rowid, title, content)
        VALUES (new.id, new.title, document_text(new.body));
    END""")
    db.execute("""CREATE TRIGGER documents_ad AFTER DELETE ON documents BEGIN
        INSERT INTO documents_fts (documents_fts, rowid, title, content)
        VALUES ('delete', old.id, old.title, document_text(old.body));
    END""")
    db.execute("""CREATE TRIGGER documents_au AFTER UPDATE OF title, body ON documents BEGIN
        INSERT INTO documents_fts (documents_fts, rowid, title, content)
        VALUES ('delete', old.id, old.title, document_text(old.body));
        INSERT INTO documents_fts (rowid, title, content)
        VALUES (new.id, new.title, document_text(new.body));
    END""")
    db.execute("INSERT INTO documents_fts (documents_fts) VALUES ('rebuild')")


@migration
def m013_compact_captures(db):
    """`captures` kept the project path, the 36-character session id and the tool name as
    text on every row (one per captured event and document): about 97 bytes a row, a
    quarter of the store. They move to `capture_contexts`, one row per (project, session,
    tool), and `capture_rows` keeps integer keys and the time (WITHOUT ROWID, keyed by
    event and document as `captures` was unique on them). `captures` becomes a view with
    the old columns but `id` (nothing read it), so its readers are unchanged; its writers
    (memhooks.store.projections) write the two tables."""
    db.execute("""CREATE TABLE capture_contexts (
        id INTEGER PRIMARY KEY,
        project TEXT,
        session_id TEXT,
        tool_name TEXT,
        UNIQUE (project, session_id, tool_name)
    )""")
    db.execute("""CREATE TABLE capture_rows (
        event_id INTEGER NOT NULL,
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        context INTEGER NOT NULL,
        captured_at REAL NOT NULL,
        PRIMARY KEY (event_id, document_id)
    ) WITHOUT ROWID""")
    db.execute("CREATE INDEX capture_rows_document ON capture_rows(document_id)")
    # DISTINCT and IS treat NULLs as equal (a lc-cache-write capture has no session).
    db.execute("INSERT INTO capture_contexts (project, session_id, tool_name)"
               " SELECT DISTINCT project, session_id, tool_name FROM captures")
    db.execute("INSERT INTO capture_rows (event_id, document_id, context, captured_at)"
               " SELECT c.event_id, c.document_id, x.id, c.captured_at FROM captures c"
               " JOIN capture_contexts x ON x.project IS c.project AND x.session_id IS c.session_id"
               " AND x.tool_name IS c.tool_name")
    db.execute("DROP TABLE captures")
    db.execute("""CREATE VIEW captures AS SELECT r.event_id AS event_id,
        r.document_id AS document_id, x.project AS project, x.session_id AS session_id,
        x.tool_name AS tool_name, r.captured_at AS captured_at
        FROM capture_rows r JOIN capture_contexts x ON x.id = r.context""")


@migration
def m014_tier2_without_rowid(db):
    """`tier2` is looked up and replaced by its key (library, topic) only: kept in the key's
    order (WITHOUT ROWID) it no longer needs the second copy of every key that its unique
    index was (about a third of the table's bytes)."""
    db.execute("""CREATE TABLE tier2_by_key (
        library_key TEXT NOT NULL,
        topic_key TEXT NOT NULL,
        library_id TEXT NOT NULL,
        topic TEXT NOT NULL,
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        origin TEXT NOT NULL,
        fetched_at REAL NOT NULL,
        expires_at REAL NOT NULL,
        provenance TEXT,
        PRIMARY KEY (library_key, topic_key)
    ) WITHOUT ROWID""")
    db.execute("INSERT INTO tier2_by_key (library_key, topic_key, library_id, topic, document_id,"
               " origin, fetched_at, expires_at, provenance) SELECT library_key, topic_key,"
               " library_id, topic, document_id, origin, fetched_at, expires_at, provenance"
               " FROM tier2")
    db.execute("DROP TABLE tier2")
    db.execute("ALTER TABLE tier2_by_key RENAME TO tier2")


@migration
def m015_fts_merge_sooner(db):
    """FTS5 writes each ingest's documents as a new segment and merges a level once it holds
    `automerge` segments (4 by default); a term's entry is repeated in every segment it is
    in. Merging at 2 keeps at most one segment per level: a smaller index for a little more
    of the detached ingester's time."""
    db.execute("INSERT INTO documents_fts (documents_fts, rank) VALUES ('automerge', 2)")


# The statements of m016_sections, kept as data: reindex (memhooks.store.projections) rebuilds
# the same index, and the schema test's plain-SQL reference repeats them.
SECTIONS_SQL = (
    """CREATE TABLE sections (
        id INTEGER PRIMARY KEY,
        document_id INTEGER NOT NULL,
        ord INTEGER NOT NULL,
        start INTEGER NOT NULL,
        length INTEGER NOT NULL,
        headings TEXT NOT NULL,
        anchor TEXT,
        UNIQUE (document_id, ord)
    )""",
    """CREATE VIEW section_texts AS SELECT s.id AS id, d.title AS title, s.headings AS headings,
        substr(document_text(d.body), s.start + 1, s.length) AS body
        FROM sections s JOIN documents d ON d.id = s.document_id""",
    """CREATE VIRTUAL TABLE sections_fts USING fts5(
        title, headings, body, content='section_texts', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
    )""",
    """CREATE TRIGGER sections_ai AFTER INSERT ON documents BEGIN
        INSERT INTO sections (document_id, ord, start, length, headings, anchor)
        SELECT new.id, j.key, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'),
               json_extract(j.value, '$[2]'), json_extract(j.value, '$[3]')
        FROM json_each(memhooks_sections(document_text(new.body))) j;
        INSERT INTO sections_fts (rowid, title, headings, body)
        SELECT s.id, new.title, s.headings, substr(document_text(new.body), s.start + 1, s.length)
        FROM sections s WHERE s.document_id = new.id;
    END""",
    """CREATE TRIGGER sections_bd BEFORE DELETE ON documents BEGIN
        INSERT INTO sections_fts (sections_fts, rowid, title, headings, body)
        SELECT 'delete', s.id, old.title, s.headings, substr(document_text(old.body), s.start + 1, s.length)
        FROM sections s WHERE s.document_id = old.id;
        DELETE FROM sections WHERE document_id = old.id;
    END""",
    """CREATE TRIGGER sections_bu BEFORE UPDATE OF title, body ON documents BEGIN
        INSERT INTO sections_fts (sections_fts, rowid, title, headings, body)
        SELECT 'delete', s.id, old.title, s.headings, substr(document_text(old.body), s.start + 1, s.length)
        FROM sections s WHERE s.document_id = old.id;
        DELETE FROM sections WHERE document_id = old.id;
    END""",
    """CREATE TRIGGER sections_au AFTER UPDATE OF title, body ON documents BEGIN
        INSERT INTO sections (document_id, ord, start, length, headings, anchor)
        SELECT new.id, j.key, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'),
               json_extract(j.value, '$[2]'), json_extract(j.value, '$[3]')
        FROM json_each(memhooks_sections(document_text(new.body))) j;
        INSERT INTO sections_fts (rowid, title, headings, body)
        SELECT s.id, new.title, s.headings, substr(document_text(new.body), s.start + 1, s.length)
        FROM sections s WHERE s.document_id = new.id;
    END""",
    "INSERT INTO sections_fts (sections_fts, rank) VALUES ('automerge', 2)",
)
# Every document's sections, from its text (the migration, and a reindex's rebuild).
SECTIONS_FILL = (
    "INSERT INTO sections (document_id, ord, start, length, headings, anchor)"
    " SELECT d.id, j.key, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'),"
    " json_extract(j.value, '$[2]'), json_extract(j.value, '$[3]')"
    " FROM documents d, json_each(memhooks_sections(document_text(d.body))) j ORDER BY d.id, j.key",
    "INSERT INTO sections_fts (sections_fts) VALUES ('rebuild')",
)


@migration
def m016_sections(db):
    """Search ranks sections, not whole pages: `sections` holds each document's sections (split
    at its headings by memhooks.sections: offsets into the text, the heading path, the URL
    anchor), `sections_fts` indexes them (page title, heading path, section text; porter
    stemming over unicode61) through the view `section_texts`, and triggers on `documents`
    keep both in step (the SQL function `memhooks_sections` that every connection of memhooks
    defines gives a text's sections). The text stays stored once: a section is its offsets."""
    add_functions(db.conn)
    for sql in SECTIONS_SQL + SECTIONS_FILL:
        db.execute(sql)


VECTORS_SQL = (
    """CREATE TABLE section_vectors (
        section_id INTEGER PRIMARY KEY,
        model TEXT NOT NULL,
        vector BLOB NOT NULL
    )""",
    """CREATE TRIGGER section_vectors_ad AFTER DELETE ON sections BEGIN
        DELETE FROM section_vectors WHERE section_id = old.id;
    END""",
)


@migration
def m017_section_vectors(db):
    """The optional hybrid ranking (`memhooks[semantic]`, memhooks.recall.semantic) keeps each
    section's embedding here, by the model that made it (float32 bytes); a section's vector
    goes with it. Empty unless the extra is installed and turned on."""
    for sql in VECTORS_SQL:
        db.execute(sql)


@migration
def m018_fts_merge_in_upkeep(db):
    """An automerge rewrites a whole level inside the ingest's transaction (64 pages times
    the levels, every 64 pages written): under a small size cap its WAL alone passed a
    tenth of the cap. Writes merge nothing now; the detached ingester's upkeep merges the
    levels that hold two segments (`usermerge` 2, what automerge 2 did) in short steps, a
    checkpoint after each (memhooks.store.vacuum.merge_fts)."""
    for table in ("documents_fts", "sections_fts"):  # fixed names
        db.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('automerge', 0)")
        db.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('usermerge', 2)")


# The statements of m019_leaner_indexes, kept as data: the schema test's plain-SQL reference
# repeats them. 262144 is memhooks.store.doc_slices.INDEXED_BYTES (tested).
LEANER_FTS_SQL = (
    "DROP TRIGGER IF EXISTS documents_ai",
    "DROP TRIGGER IF EXISTS documents_ad",
    "DROP TRIGGER IF EXISTS documents_au",
    "DROP TABLE IF EXISTS documents_fts",
    """CREATE VIEW large_document_texts AS SELECT id, title, document_text(body) AS content
        FROM documents WHERE bytes > 262144""",
    """CREATE VIRTUAL TABLE documents_fts USING fts5(
        title, content, content='large_document_texts', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2', detail=none
    )""",
    """CREATE TRIGGER documents_ai AFTER INSERT ON documents WHEN new.bytes > 262144 BEGIN
        INSERT INTO documents_fts (rowid, title, content)
        VALUES (new.id, new.title, document_text(new.body));
    END""",
    """CREATE TRIGGER documents_ad AFTER DELETE ON documents WHEN old.bytes > 262144 BEGIN
        INSERT INTO documents_fts (documents_fts, rowid, title, content)
        VALUES ('delete', old.id, old.title, document_text(old.body));
    END""",
    """CREATE TRIGGER documents_bu BEFORE UPDATE OF title, body, bytes ON documents
        WHEN old.bytes > 262144 BEGIN
        INSERT INTO documents_fts (documents_fts, rowid, title, content)
        VALUES ('delete', old.id, old.title, document_text(old.body));
    END""",
    """CREATE TRIGGER documents_au AFTER UPDATE OF title, body, bytes ON documents
        WHEN new.bytes > 262144 BEGIN
        INSERT INTO documents_fts (rowid, title, content)
        VALUES (new.id, new.title, document_text(new.body));
    END""",
    # A section's text is sliced from its document's text in Python (`document_slice`):
    # SQLite's substr() over the whole text, once per section, took a minute for 16 MiB.
    "DROP TRIGGER IF EXISTS sections_ai",
    "DROP TRIGGER IF EXISTS sections_bd",
    "DROP TRIGGER IF EXISTS sections_bu",
    "DROP TRIGGER IF EXISTS sections_au",
    "DROP VIEW IF EXISTS section_texts",
    *(sql.replace("substr(document_text(d.body), s.start + 1, s.length)", "document_slice(d.body, s.start, s.length)")
         .replace("substr(document_text(new.body), s.start + 1, s.length)", "document_slice(new.body, s.start, s.length)")
         .replace("substr(document_text(old.body), s.start + 1, s.length)", "document_slice(old.body, s.start, s.length)")
      for sql in (SECTIONS_SQL[1], *SECTIONS_SQL[3:7])),  # the view and the four triggers
    "DROP TABLE IF EXISTS sections_fts",
    """CREATE VIRTUAL TABLE sections_fts USING fts5(
        body, title, headings, content='section_texts', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
    )""",
    "INSERT INTO documents_fts (documents_fts, rank) VALUES ('automerge', 0)",
    "INSERT INTO documents_fts (documents_fts, rank) VALUES ('usermerge', 2)",
    "INSERT INTO sections_fts (sections_fts, rank) VALUES ('automerge', 0)",
    "INSERT INTO sections_fts (sections_fts, rank) VALUES ('usermerge', 2)",
    "INSERT INTO documents_fts (documents_fts) VALUES ('rebuild')",
    "INSERT INTO sections_fts (sections_fts) VALUES ('rebuild')",
)


@migration
def m019_leaner_indexes(db):
    """The two full-text indexes took more disk than the texts they index. Ranking, phrases,
    snippets and exact-first order are `sections_fts`' work and the hit sections' text;
    `documents_fts` only tells the serve decision which large documents (over 256 KiB, the
    ones it does not read whole) hold a word, so it indexes those alone and keeps no
    positions (`detail=none`). `sections_fts` puts the section text first: FTS5 marks every
    entry of a column other than the first, and the text holds nearly all of them (a third
    of its size). A section's text is sliced from its document's in Python
    (`document_slice`), no longer by SQLite's substr() over the whole text once per section.
    Same merge settings; both rebuilt."""
    add_functions(db.conn)
    for sql in LEANER_FTS_SQL:
        db.execute(sql)


@migration
def m020_provider_calls(db):
    """Calls per documentation provider (context7, with the ctx7 CLI's; exa; web; ref; docfork;
    deepwiki; gitmcp; a declared source by its name) and project, as the ingester projects
    each journaled PostToolUse / PostToolUseFailure event: how many, how many failed, how
    many of those were rate-limit or quota answers, and when the last of each was. Derived
    from the journal (a reindex rebuilds it)."""
    db.execute("""CREATE TABLE IF NOT EXISTS provider_calls (
        provider TEXT NOT NULL,
        project TEXT NOT NULL DEFAULT '',
        calls INTEGER NOT NULL DEFAULT 0,
        failed INTEGER NOT NULL DEFAULT 0,
        rate_limited INTEGER NOT NULL DEFAULT 0,
        first_at REAL,
        last_at REAL,
        last_failed_at REAL,
        last_failure TEXT,
        last_rate_limited_at REAL,
        PRIMARY KEY (provider, project)
    ) WITHOUT ROWID""")


SCHEMA_VERSION = len(MIGRATIONS)  # PRAGMA user_version of an up-to-date store
if SCHEMA_VERSION != _sqlite_file.SCHEMA_VERSION:  # the hot paths' copy of the number: one truth
    raise ImportError(f"memhooks.store.sqlite_file.SCHEMA_VERSION is {_sqlite_file.SCHEMA_VERSION}, "
                      f"but there are {SCHEMA_VERSION} migrations: make them agree")
