"""The PostgreSQL side: connecting (with timeouts) and the append-only schema migrations.

Every SQL statement that runs on the team database lives in this package. psycopg is
imported inside the functions, never at module import.
"""

from __future__ import annotations

import os
import time

from memhooks.team.settings import scrub

CONNECT_TIMEOUT_S = 3
STATEMENT_TIMEOUT_MS = 5_000
LOCK_TIMEOUT_MS = 3_000
MIGRATION_LOCK = 0x6D656D68  # pg_advisory_xact_lock key ("memh")


class TeamError(Exception):
    """A team store failure, already scrubbed of credentials. `kind`: unreachable | slow |
    read-only | not-initialised | not-installed | not-configured | error."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind

    @property
    def blocks_pull(self) -> bool:
        return self.kind in ("unreachable", "slow", "not-initialised", "not-installed", "error")


def _env_int(name: str, default: int) -> int:
    try:
        value = int(os.environ.get(name, "") or default)
    except ValueError:
        return default
    return value if value > 0 else default


def connect_timeout_s() -> int:
    return _env_int("MEMHOOKS_TEAM_CONNECT_TIMEOUT_S", CONNECT_TIMEOUT_S)


def statement_timeout_ms() -> int:
    return _env_int("MEMHOOKS_TEAM_STATEMENT_TIMEOUT_MS", STATEMENT_TIMEOUT_MS)


def classify(exc: BaseException, url: str | None) -> TeamError:
    """Turn a driver exception into a TeamError whose message holds no password."""
    if isinstance(exc, TeamError):
        return exc
    try:
        # lazy: heavy optional dependency (psycopg)
        import psycopg.errors
    except ImportError:
        return TeamError("not-installed", "psycopg is not installed (pip install 'memhooks[team]')")
    errors = psycopg.errors
    text = scrub(f"{exc}".strip().splitlines()[0] if str(exc).strip() else type(exc).__name__, url)
    if isinstance(exc, (errors.ReadOnlySqlTransaction, errors.InsufficientPrivilege)):
        return TeamError("read-only", f"the team database refuses writes: {text}")
    if isinstance(exc, (errors.QueryCanceled, errors.LockNotAvailable)):
        return TeamError("slow", f"the team database is too slow: {text}")
    if isinstance(exc, (errors.UndefinedTable, errors.UndefinedColumn)):
        return TeamError("not-initialised", f"the team database has no memhooks schema (run `memhooks team init`): {text}")
    if isinstance(exc, (psycopg.OperationalError, OSError, TimeoutError)):
        return TeamError("unreachable", f"cannot reach the team database: {text}")
    return TeamError("error", f"{type(exc).__name__}: {text}")


def connect(url: str, *, autocommit: bool = True):
    """A psycopg connection with connect_timeout and statement/lock timeouts. The conninfo
    goes to libpq as given (sslmode, service, passfile are honoured)."""
    try:
        # lazy: heavy optional dependency (psycopg): absent without memhooks[team]
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        raise TeamError("not-installed", "psycopg is not installed (pip install 'memhooks[team]')") from None
    try:
        params = conninfo_to_dict(url)
    except Exception as exc:  # psycopg.ProgrammingError for bad syntax, re-raised as TeamError
        raise TeamError("error", "the team URL is not a valid PostgreSQL connection string") from exc
    extra: dict = {"application_name": params.get("application_name") or "memhooks"}
    if "connect_timeout" not in params and not os.environ.get("PGCONNECT_TIMEOUT"):
        extra["connect_timeout"] = connect_timeout_s()
    opts = params.get("options") or os.environ.get("PGOPTIONS") or ""
    opts = f"{opts} -c statement_timeout={statement_timeout_ms()} -c lock_timeout={LOCK_TIMEOUT_MS}".strip()
    extra["options"] = opts
    try:
        return psycopg.connect(url, autocommit=autocommit, **extra)
    except Exception as exc:  # noqa: BLE001 - every connect failure becomes a classified TeamError
        raise classify(exc, url) from None


# ----------------------------------------------------------------------------- migrations

# Words split at punctuation (as the local FTS5 unicode61 tokenizer does), so code like
# `connection.disconnect()` or `react-query` is found by its words.
TSV = ("setweight(to_tsvector('english'::regconfig,"
       " regexp_replace(coalesce(left(title, 1000), ''), '[^[:alnum:]]+', ' ', 'g')), 'A')"
       " || setweight(to_tsvector('english'::regconfig,"
       " regexp_replace(left(content, 100000), '[^[:alnum:]]+', ' ', 'g')), 'B')")

MIGRATIONS: list[tuple[str, tuple[str, ...]]] = [
    ("m001_schema", (
        """CREATE TABLE IF NOT EXISTS team_info (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        )""",
        "INSERT INTO team_info (key, value) VALUES ('team_id', md5(random()::text || clock_timestamp()::text))"
        " ON CONFLICT (key) DO NOTHING",
        """CREATE TABLE IF NOT EXISTS members (
            member_id TEXT PRIMARY KEY,
            first_seen DOUBLE PRECISION NOT NULL,
            last_push DOUBLE PRECISION
        )""",
        f"""CREATE TABLE IF NOT EXISTS documents (
            id BIGSERIAL PRIMARY KEY,
            content_hash TEXT NOT NULL UNIQUE,
            source TEXT,
            source_tool TEXT NOT NULL,
            title TEXT,
            content TEXT NOT NULL,
            type TEXT,
            metadata TEXT,
            url TEXT,
            library_id TEXT,
            library_base TEXT,
            topic TEXT,
            version TEXT,
            bytes INTEGER NOT NULL DEFAULT 0,
            truncated BOOLEAN NOT NULL DEFAULT FALSE,
            created_at DOUBLE PRECISION NOT NULL,
            last_seen DOUBLE PRECISION NOT NULL,
            pushed_at DOUBLE PRECISION NOT NULL,
            search TSVECTOR GENERATED ALWAYS AS ({TSV}) STORED
        )""",
        "CREATE INDEX IF NOT EXISTS documents_search ON documents USING GIN (search)",
        "CREATE INDEX IF NOT EXISTS documents_library_base ON documents (library_base, last_seen DESC)",
        "CREATE INDEX IF NOT EXISTS documents_library_tail ON documents ((lower(split_part(library_base, '/', 3))))",
        """CREATE TABLE IF NOT EXISTS document_members (
            content_hash TEXT NOT NULL REFERENCES documents (content_hash) ON DELETE CASCADE,
            member_id TEXT NOT NULL,
            captured BOOLEAN NOT NULL DEFAULT TRUE,
            access_count BIGINT NOT NULL DEFAULT 0,
            captured_at DOUBLE PRECISION,
            pushed_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (content_hash, member_id)
        )""",
        """CREATE TABLE IF NOT EXISTS libraries (
            library_id TEXT PRIMARY KEY,
            library_base TEXT NOT NULL,
            title TEXT,
            description TEXT,
            code_snippets INTEGER,
            reputation TEXT,
            trust_score DOUBLE PRECISION,
            benchmark_score DOUBLE PRECISION,
            versions TEXT,
            source TEXT,
            last_seen DOUBLE PRECISION NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS libraries_base ON libraries (library_base)",
        "CREATE INDEX IF NOT EXISTS libraries_tail ON libraries ((lower(split_part(library_base, '/', 3))))",
        """CREATE TABLE IF NOT EXISTS tier1 (
            name_key TEXT NOT NULL,
            library_id TEXT NOT NULL DEFAULT '',
            member_id TEXT NOT NULL,
            loose_key TEXT,
            name TEXT,
            ecosystem TEXT,
            version TEXT,
            versioned_id TEXT,
            matched TEXT,
            resolved_at DOUBLE PRECISION NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (name_key, library_id, member_id)
        )""",
        "CREATE INDEX IF NOT EXISTS tier1_loose_key ON tier1 (loose_key)",
        """CREATE TABLE IF NOT EXISTS forgotten (
            content_hash TEXT PRIMARY KEY,
            forgotten_at DOUBLE PRECISION NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS forgotten_at ON forgotten (forgotten_at)",
    )),
]


def dict_rows(pg):
    """A cursor on a team connection whose rows are dicts (read by name)."""
    # lazy: heavy optional dependency (psycopg)
    from psycopg.rows import dict_row

    return pg.cursor(row_factory=dict_row)


def applied_migrations(pg) -> list[str]:
    from psycopg import errors  # lazy: optional dependency (memhooks[team])

    try:
        with pg.transaction():
            return [r["name"] for r in dict_rows(pg).execute("SELECT name FROM memhooks_migrations ORDER BY name")]
    except errors.UndefinedTable:
        return []


def migrate(pg) -> list[str]:
    """Apply the migrations not yet recorded, under a transaction-scoped advisory lock, so
    any number of clients can run this at once. Returns the names applied."""
    if len(applied_migrations(pg)) >= len(MIGRATIONS):
        return []
    applied: list[str] = []
    with pg.transaction():
        pg.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        pg.execute("CREATE TABLE IF NOT EXISTS memhooks_migrations ("
                   "name TEXT PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)")
        done = {r["name"] for r in dict_rows(pg).execute("SELECT name FROM memhooks_migrations")}
        for name, statements in MIGRATIONS:
            if name in done:
                continue
            for sql in statements:
                pg.execute(sql)
            pg.execute("INSERT INTO memhooks_migrations (name, applied_at) VALUES (%s, %s)",
                       (name, time.time()))
            applied.append(name)
    return applied


def ensure_schema(pg) -> None:
    """Raise TeamError('not-initialised') unless every migration is applied; tries to apply
    them first (a member without CREATE rights gets the same error)."""
    if len(applied_migrations(pg)) >= len(MIGRATIONS):
        return
    try:
        migrate(pg)
    except Exception as exc:
        raise TeamError("not-initialised", "the team database schema is missing or old and this "
                        "member cannot create it: ask its owner to run `memhooks team init`") from exc


def team_id(pg) -> str:
    with pg.transaction():
        row = dict_rows(pg).execute("SELECT value FROM team_info WHERE key = 'team_id'").fetchone()
    if not row:
        raise TeamError("not-initialised", "the team database has no team id (run `memhooks team init`)")
    return row["value"]


TEAM_TABLES = ("team_info", "members", "documents", "document_members", "libraries", "tier1", "forgotten")
