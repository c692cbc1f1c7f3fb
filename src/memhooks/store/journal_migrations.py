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


JOURNAL_SCHEMA_VERSION = len(JOURNAL_MIGRATIONS)
