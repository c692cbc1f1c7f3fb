"""Schema migrations of the journal file (`journal.db`): append-only functions, each run once.

The journal's own migration set, as simonw/llm keeps one for its embeddings database beside
the main one (memhooks.store.migrations holds the projections'). Standard library only: the
capture hook opens the journal on every tool call, so an up-to-date journal costs one
`PRAGMA user_version` read, and the runner (memhooks.store.sqlite_file.ensure_journal_schema)
applies what is missing inside one BEGIN IMMEDIATE transaction, recording each name in
`_journal_migrations`. Every function takes (connection, schema name) — the journal is
`main` when opened alone and `journal` when attached to the projections — and writes its
SQL against that schema. Never edit the effect of, rename or reorder a function here; add
a new one at the end.
"""

JOURNAL_MIGRATIONS: list = []  # of functions (sqlite3.Connection, schema: str) -> None
migration = JOURNAL_MIGRATIONS.append


@migration
def j001_events(conn, schema):
    """The raw hook journal: one row per event, its payload as received (redacted, capped)."""
    conn.execute(f"""CREATE TABLE IF NOT EXISTS {schema}.events (
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
    )""")
    conn.execute(f"CREATE INDEX IF NOT EXISTS {schema}.events_pending ON events(id)"
                 " WHERE state = 'pending'")
    conn.execute(f"CREATE INDEX IF NOT EXISTS {schema}.events_state ON events(state)")


@migration
def j002_session_tool_index(conn, schema):
    """A session's journaled tool calls (importing a transcript skips those)."""
    conn.execute(f"CREATE INDEX IF NOT EXISTS {schema}.events_session_tool"
                 " ON events(session_id, tool_use_id)")


@migration
def j003_compaction(conn, schema):
    """Compaction (memhooks.store.compact). `blobs` holds each distinct long
    text of the payloads once, compressed (a settled event's payload keeps a reference);
    `blob_docs` which documents each one gave; `event_packs` settled events moved out of
    `events` into compressed blocks (`pending` = to be projected again: a reindex, a heal);
    `pack_sessions` and `pack_tally` what the blocks hold, for the transcript import and
    the stats."""
    conn.execute(f"""CREATE TABLE IF NOT EXISTS {schema}.blobs (
        id INTEGER PRIMARY KEY,
        sha256 TEXT NOT NULL UNIQUE,
        data BLOB NOT NULL,
        bytes INTEGER NOT NULL,
        created_at REAL NOT NULL
    )""")
    conn.execute(f"""CREATE TABLE IF NOT EXISTS {schema}.blob_docs (
        content_hash TEXT NOT NULL,
        blob INTEGER NOT NULL,
        PRIMARY KEY (content_hash, blob)
    ) WITHOUT ROWID""")
    conn.execute(f"CREATE INDEX IF NOT EXISTS {schema}.blob_docs_blob ON blob_docs(blob)")
    conn.execute(f"""CREATE TABLE IF NOT EXISTS {schema}.event_packs (
        id INTEGER PRIMARY KEY,
        first_id INTEGER NOT NULL,
        last_id INTEGER NOT NULL,
        events INTEGER NOT NULL,
        pending INTEGER NOT NULL DEFAULT 0,
        data BLOB NOT NULL,
        packed_at REAL NOT NULL
    )""")
    conn.execute(f"CREATE INDEX IF NOT EXISTS {schema}.event_packs_first ON event_packs(first_id)")
    conn.execute(f"""CREATE TABLE IF NOT EXISTS {schema}.pack_sessions (
        session_id TEXT NOT NULL,
        pack INTEGER NOT NULL,
        PRIMARY KEY (session_id, pack)
    ) WITHOUT ROWID""")
    conn.execute(f"""CREATE TABLE IF NOT EXISTS {schema}.pack_tally (
        pack INTEGER NOT NULL,
        project TEXT,
        state TEXT NOT NULL,
        error TEXT,
        n INTEGER NOT NULL,
        oldest REAL
    )""")
    conn.execute(f"CREATE INDEX IF NOT EXISTS {schema}.pack_tally_pack ON pack_tally(pack)")


JOURNAL_SCHEMA_VERSION = len(JOURNAL_MIGRATIONS)  # = memhooks.store.sqlite_file.JOURNAL_SCHEMA_VERSION (tested)
