"""The projection migrations: llm's style in sqlite-utils' table API, the same schema as the
plain SQL they replaced, recorded by name, safe when several processes open a new store at
once; and the hot paths never migrate (a store behind the migrations is a miss there, and
the next ingest migrates it and applies what was journaled meanwhile)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from conftest import BIN, db_rows, ingest, journal_file, run, run_hook
from memhooks.store import connect as store_mod
from memhooks.store.migrations import MIGRATIONS, SCHEMA_VERSION
from memhooks.store.sqlite_file import ensure_journal_schema

BEFORE = Path(__file__).resolve().parent / "fixtures" / "schema_migrations_before.py"


def _before_module():
    spec = importlib.util.spec_from_file_location("schema_migrations_before", BEFORE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build_with_previous_sql(db: Path, below: str | None = None) -> None:
    """A store made by the migrations as they were written before (plain SQL on sqlite3),
    with the runner they had: names recorded, user_version set. `below`: only the ones whose
    names sort before it (a store from before that migration)."""
    migrations = [fn for fn in _before_module().MIGRATIONS if below is None or fn.__name__ < below]
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(db), isolation_level=None)
    try:
        conn.execute("ATTACH DATABASE ? AS journal", (str(journal_file(db)),))
        ensure_journal_schema(conn, "journal")
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("CREATE TABLE IF NOT EXISTS _memhooks_migrations ("
                     "name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
        for fn in migrations:
            fn(conn)
            conn.execute("INSERT INTO _memhooks_migrations (name, applied_at) VALUES (?, ?)",
                         (fn.__name__, time.time()))
        conn.execute(f"PRAGMA user_version = {len(migrations)}")
        conn.execute("COMMIT")
    finally:
        conn.close()


def _norm(sql: str) -> str:
    return re.sub(r"\s+", " ", sql).strip()


def _checks(sql: str) -> list[str]:
    """The CHECK constraints of a CREATE TABLE (balanced parentheses, whitespace folded)."""
    out, i = [], 0
    text = _norm(sql)
    while (i := text.upper().find("CHECK (", i)) != -1:
        depth, j = 0, i + len("CHECK ")
        for j in range(i + len("CHECK "), len(text)):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            if depth == 0:
                break
        out.append(text[i:j + 1])
        i = j
    return out


def schema(db: Path) -> dict:
    """What a store's schema is, apart from how its CREATE statements are spelled."""
    conn = sqlite3.connect(str(db))
    try:
        master = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"
                              " WHERE name NOT LIKE 'sqlite_stat%' ORDER BY name").fetchall()
        out: dict = {"objects": sorted((t, n, tbl) for t, n, tbl, _ in master)}
        for kind, name, _tbl, sql in master:
            if kind == "table":
                out[f"columns {name}"] = conn.execute(
                    "SELECT name, upper(type), \"notnull\", dflt_value, pk, hidden"
                    " FROM pragma_table_xinfo(?) ORDER BY cid", (name,)).fetchall()
                out[f"fks {name}"] = sorted(conn.execute(
                    "SELECT \"table\", \"from\", \"to\", on_update, on_delete, \"match\""
                    " FROM pragma_foreign_key_list(?)", (name,)).fetchall())
                out[f"checks {name}"] = sorted(_checks(sql or ""))
                if sql and sql.upper().startswith("CREATE VIRTUAL TABLE"):
                    out[f"virtual {name}"] = _norm(sql)
                indexes = conn.execute("SELECT name, \"unique\", origin, partial"
                                       " FROM pragma_index_list(?)", (name,)).fetchall()
                out[f"indexes {name}"] = sorted(
                    (*ix, tuple(r[0] for r in conn.execute(
                        "SELECT name FROM pragma_index_info(?) ORDER BY seqno", (ix[0],))))
                    for ix in indexes)
            elif kind == "index" and sql and " WHERE " in sql.upper():
                out[f"partial {name}"] = _norm(sql.upper().split(" WHERE ", 1)[1])
            elif kind == "trigger":
                head, body = _norm(sql).split(" BEGIN ", 1)
                fires = re.search(r"(BEFORE|AFTER|INSTEAD OF) (INSERT|DELETE|UPDATE)"
                                  r"(?: OF (.+?))? ON (\S+)", head, re.IGNORECASE)
                assert fires, head
                cols = tuple(c.strip() for c in fires.group(3).split(",")) if fires.group(3) else ()
                out[f"trigger {name}"] = (fires.group(1).upper(), fires.group(2).upper(), cols,
                                          fires.group(4), body)
        return out
    finally:
        conn.close()


def test_a_new_store_has_the_schema_the_plain_sql_made(tmp_path):
    old, new = tmp_path / "old" / "memhooks.db", tmp_path / "new" / "memhooks.db"
    _build_with_previous_sql(old)
    store_mod.connect(str(new)).close()
    before, after = schema(old), schema(new)
    assert before.keys() == after.keys()
    for key in before:
        assert after[key] == before[key], key
    # What the comparison covers, so it cannot pass by looking at nothing.
    assert "trigger documents_au" in before and before["trigger documents_au"][2] == ("title", "body", "bytes")
    assert "partial events_pending" not in before  # moved to the journal with its table
    assert ("documents_url", 0, "c", 0, ("url",)) in before["indexes documents"]
    assert before["checks tier1"] and before["fks tier2"]
    assert schema(journal_file(old)) == schema(journal_file(new))
    assert "partial events_pending" in schema(journal_file(new))


def test_a_store_the_plain_sql_made_keeps_working(store):
    _build_with_previous_sql(store)
    before = schema(store)
    conn = store_mod.connect(str(store))
    try:
        assert store_mod.apply_migrations(conn) == []
        names = [r[0] for r in conn.execute("SELECT name FROM _memhooks_migrations ORDER BY name")]
        assert names == sorted(fn.__name__ for fn in MIGRATIONS)
    finally:
        conn.close()
    assert schema(store) == before


def test_migrations_are_recorded_by_name_and_never_rerun(store):
    """A store one migration behind gets that one only (the others are not run again)."""
    conn = store_mod.connect(str(store))
    try:
        conn.execute("DROP TABLE forgotten")
        conn.execute("DROP TABLE team_state")
        conn.execute("DROP TABLE team_pushed")
        conn.execute("DELETE FROM _memhooks_migrations WHERE name = 'm008_team_sync'")
        # counted up to m008; the ones after it are recorded by name and not run again
        behind = [fn.__name__ for fn in MIGRATIONS].index("m008_team_sync")
        conn.execute(f"PRAGMA user_version = {behind}")
        assert not store_mod.is_current(conn)
        assert store_mod.apply_migrations(conn) == ["m008_team_sync"]
        assert store_mod.is_current(conn)
        assert store_mod.apply_migrations(conn) == []
    finally:
        conn.close()


def test_many_processes_opening_a_new_store_at_once(store):
    code = ("import sys; from memhooks.store.connect import connect\n"
            "c = connect(sys.argv[1]); print(c.execute('PRAGMA user_version').fetchone()[0])")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(store)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(6)]
    results = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, [e for _, e in results]
    assert [int(o) for o, _ in results] == [SCHEMA_VERSION] * 6
    names = db_rows(store, "SELECT name FROM _memhooks_migrations")
    assert sorted(n for (n,) in names) == sorted(fn.__name__ for fn in MIGRATIONS)


def _behind(db: Path) -> None:
    """A store from before the last migration (the team tables)."""
    conn = store_mod.connect(str(db))
    try:
        for table in ("forgotten", "team_state", "team_pushed"):
            conn.execute(f"DROP TABLE {table}")
        conn.execute("DELETE FROM _memhooks_migrations WHERE name = 'm008_team_sync'")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")
    finally:
        conn.close()


def _version(db: Path) -> int:
    return db_rows(db, "PRAGMA user_version")[0][0]


def test_hot_paths_on_a_store_behind_neither_migrate_nor_fail(store, tmp_path):
    _behind(store)
    # A python that runs the hot paths but whose ingester only notes that it was asked for
    # (so whatever happens to the store is the hot path's own doing).
    asked = tmp_path / "ingest-asked"
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nfor a in "$@"; do [ "$a" = ingest ] && echo >>"{asked}" && exit 0; done\n'
                      f'exec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    trace = tmp_path / "trace"
    env = dict(os.environ, MEMHOOKS_PYTHON=str(python), MEMHOOKS_NO_SPAWN="1",
               MEMHOOKS_TRACE_IMPORTS=str(trace))
    shim = lambda name: ["bash", str(BIN / name)]  # noqa: E731

    r = run(shim("lc-cache-write") + ["tier1", "react", "/facebook/react"], env=env)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    r = run(shim("lc-cache-lookup") + ["react"], env=env)
    # the write, judged by admission and pending, answers at once (the seed's contract)
    assert (r.returncode, r.stdout) == (0, b"/facebook/react\n")
    r = run(shim("lc-cache-lookup-docs") + ["/facebook/react", "hooks"], env=env)
    assert (r.returncode, r.stdout) == (0, b"")
    r = run_hook("pre-tool-use", {"session_id": "s", "hook_event_name": "PreToolUse",
                                  "cwd": str(tmp_path / "project"),
                                  "tool_name": "mcp__context7__query-docs",
                                  "tool_input": {"libraryId": "/facebook/react", "query": "hooks"}},
                 env=env)
    assert (r.returncode, r.stdout) == (0, b"")
    from memhooks.warm.fastpath import fast_output, status_output

    assert fast_output(str(store), str(tmp_path / "project")) is None  # handed to the full warm
    assert json.loads(status_output(str(store), str(tmp_path / "project")))

    assert _version(store) == SCHEMA_VERSION - 1  # nothing migrated it
    # the write asked the ingester; the lookups never run one in the foreground (they start a
    # detached one, which MEMHOOKS_NO_SPAWN holds back here)
    assert asked.read_text().count("\n") == 1
    runs = [line.split(" ") for line in trace.read_text().splitlines()]
    assert {r[0] for r in runs} >= {"lc-cache-write", "lc-cache-lookup", "pre-tool-use"}
    assert not [r[0] for r in runs if "sqlite_utils" in r[1:]]  # no migrating runner loaded
    assert not db_rows(store, "SELECT name FROM sqlite_master WHERE name = 'team_state'")
    assert not db_rows(store, "SELECT 1 FROM tier1")
    pending = db_rows(journal_file(store), "SELECT hook_event_name, state, payload FROM events"
                      " WHERE hook_event_name = 'CacheWrite'")
    assert [(n, s) for n, s, _ in pending] == [("CacheWrite", "pending")]
    assert json.loads(pending[0][2])["library_id"] == "/facebook/react"

    ingest(store)  # the next ingest migrates, then applies the journaled write
    assert _version(store) == SCHEMA_VERSION
    assert db_rows(store, "SELECT library_id, origin FROM tier1") == [("/facebook/react", "write")]
    assert db_rows(journal_file(store), "SELECT state FROM events WHERE hook_event_name ="
                   " 'CacheWrite'") == [("done",)]
    r = run(shim("lc-cache-lookup") + ["react"], env=env)
    assert r.stdout.decode().strip() == "/facebook/react"


def test_a_write_on_a_new_store_is_applied_by_the_ingester_it_runs(store):
    r = run(["bash", str(BIN / "lc-cache-write"), "tier1", "vue", "/vuejs/core"])
    assert r.returncode == 0
    assert _version(store) == SCHEMA_VERSION
    assert db_rows(store, "SELECT library_id FROM tier1") == [("/vuejs/core",)]


def test_the_journal_has_its_own_migration_set_and_one_events_schema(tmp_path):
    """journal.db is migrated by memhooks.store.journal_migrations, recorded by name; the
    projections file has no `events` table of its own (one definition of the schema)."""
    from memhooks.store.connect import closing, connect
    from memhooks.store.journal_migrations import JOURNAL_MIGRATIONS, JOURNAL_SCHEMA_VERSION

    db = tmp_path / "memhooks.db"
    with closing(connect(str(db))) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM journal._journal_migrations ORDER BY name")]
        assert names == [fn.__name__ for fn in JOURNAL_MIGRATIONS]
        assert conn.execute("PRAGMA journal.user_version").fetchone()[0] == JOURNAL_SCHEMA_VERSION
        assert conn.execute("SELECT count(*) FROM main.sqlite_master WHERE name = 'events'").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM journal.sqlite_master WHERE name = 'events'").fetchone()[0] == 1


def test_the_hot_paths_schema_versions_are_the_migration_counts():
    """The readers' constants (memhooks.store.sqlite_file, kept there so a lookup or a capture does
    not load the migration lists) name the versions the migrations produce."""
    from memhooks.store import sqlite_file as reader
    from memhooks.store.journal_migrations import JOURNAL_MIGRATIONS

    assert reader.SCHEMA_VERSION == len(MIGRATIONS) == SCHEMA_VERSION
    assert reader.JOURNAL_SCHEMA_VERSION == len(JOURNAL_MIGRATIONS)
