"""`captures` after m013_compact_captures: a view over `capture_contexts` (project, session,
tool once) and WITHOUT ROWID `capture_rows`. A store made by the old schema migrates with
the same rows visible; the write helper reuses contexts; forget leaves no context behind."""

from __future__ import annotations

import sqlite3
import uuid
from contextlib import closing
from pathlib import Path

from memhooks.store import connect as store_mod
from memhooks.store.bodies import add_functions, document_body
from memhooks.store.connect import connect
from memhooks.store.forget import Criteria, choose, forget
from memhooks.store.projections import add_capture, drop_unused_contexts, upsert_document
from memhooks.store.sqlite_file import transaction
from test_migrations import _build_with_previous_sql

VIEW = ("SELECT event_id, document_id, project, session_id, tool_name, captured_at FROM captures"
        " ORDER BY event_id, document_id")
SESSIONS = [str(uuid.UUID(int=i + 1)) for i in range(3)]


def _old_store(db: Path) -> list[tuple]:
    """A store as the migrations before m013 made it (plain SQL, the runner they had), with
    documents and `captures` rows written as the old writer wrote them; the rows."""
    _build_with_previous_sql(db, below="m013")
    rows = []
    with closing(sqlite3.connect(str(db), isolation_level=None)) as conn:
        add_functions(conn)  # the FTS triggers of m012 read the text through document_text()
        conn.execute("BEGIN IMMEDIATE")
        for d in range(1, 5):
            conn.execute("INSERT INTO documents (id, project, source, source_tool, body, content_hash,"
                         " unused_content) VALUES (?, '/p', 's', 'context7', ?, ?, '')", (d, document_body(f"text {d}"), f"h{d}"))
        for e in range(1, 41):
            # three sessions of two projects, two tools; lc-cache-write rows have no session
            session = None if e % 7 == 0 else SESSIONS[e % 3]
            tool = "lc-cache-write" if session is None else ("WebFetch" if e % 2 else "mcp__context7__query-docs")
            project = "/home/dev/a" if e % 5 else "/home/dev/b"
            for d in {1 + e % 4, 1 + (e * 3) % 4}:
                row = (e * 1000, d, project, session, tool, 1.7e9 + e + d / 10)
                conn.execute("INSERT INTO captures (event_id, document_id, project, session_id,"
                             " tool_name, captured_at) VALUES (?, ?, ?, ?, ?, ?)", row)
                rows.append(row)
        conn.execute("COMMIT")
    assert len(rows) > 40
    return sorted(rows)


def test_an_old_store_s_captures_migrate_with_the_same_rows_visible(store):
    rows = _old_store(store)
    with closing(sqlite3.connect(str(store))) as conn:  # what it was: a table, as many rows
        assert conn.execute("SELECT type FROM sqlite_master WHERE name = 'captures'").fetchone() == ("table",)
        assert conn.execute(VIEW).fetchall() == rows
    with closing(store_mod.connect(str(store))) as conn:
        assert conn.execute("SELECT name FROM _memhooks_migrations WHERE name = 'm013_compact_captures'"
                            ).fetchone() == ("m013_compact_captures",)
        assert conn.execute("SELECT type FROM sqlite_master WHERE name = 'captures'").fetchone() == ("view",)
        assert conn.execute(VIEW).fetchall() == rows
        contexts = {r[2:5] for r in rows}
        assert len(contexts) < len(rows) / 4  # what the migration is for
        assert sorted(conn.execute("SELECT project, session_id, tool_name FROM capture_contexts").fetchall(),
                      key=repr) == sorted(contexts, key=repr)
        assert conn.execute("SELECT count(*) FROM capture_rows").fetchone() == (len(rows),)
        # the readers' shapes: by project, by document, the newest capture of a document
        assert conn.execute("SELECT count(*) FROM captures WHERE project = '/home/dev/b'").fetchone() == (
            sum(r[2] == "/home/dev/b" for r in rows),)
        assert conn.execute("SELECT max(captured_at) FROM captures WHERE document_id = 2").fetchone() == (
            max(r[5] for r in rows if r[1] == 2),)
        # a document's captures still go with it
        with transaction(conn):
            conn.execute("DELETE FROM documents WHERE id = 3")
        assert conn.execute(VIEW).fetchall() == [r for r in rows if r[1] != 3]
        # and a new capture lands in the migrated context of its (project, session, tool)
        r = rows[0]
        with transaction(conn):
            assert add_capture(conn, event_id=99_000, document_id=1, project=r[2], session_id=r[3],
                               tool_name=r[4], captured_at=1.8e9)
        assert conn.execute("SELECT count(*) FROM capture_contexts").fetchone() == (len(contexts),)


def _doc(conn, n: int, project: str) -> int:
    doc_id, created = upsert_document(
        conn, provenance="capture", project=project, source="/facebook/react", source_tool="context7",
        content=f"### useState {n}\n\nKeeps state between renders; call it at the top level {n}.")
    assert created and doc_id is not None
    return doc_id


def test_add_capture_makes_one_context_per_project_session_and_tool(store):
    with closing(connect(str(store))) as conn, transaction(conn):
        a, b = _doc(conn, 1, "/p"), _doc(conn, 2, "/p")
        fields = {"project": "/p", "session_id": SESSIONS[0], "tool_name": "WebFetch"}
        assert add_capture(conn, event_id=1, document_id=a, captured_at=10.0, **fields)
        assert add_capture(conn, event_id=1, document_id=b, captured_at=10.0, **fields)
        assert add_capture(conn, event_id=2, document_id=a, captured_at=11.0, **fields)
        assert not add_capture(conn, event_id=2, document_id=a, captured_at=12.0, **fields)  # a repeat
        # no session (lc-cache-write): NULLs are one context too, not one per capture
        for event in (3, 4):
            assert add_capture(conn, event_id=event, document_id=a, project="/p", session_id=None,
                               tool_name="lc-cache-write", captured_at=13.0)
        assert add_capture(conn, event_id=5, document_id=a, project="/q", session_id=SESSIONS[0],
                           tool_name="WebFetch", captured_at=14.0)
        assert conn.execute(VIEW).fetchall() == [
            (1, a, "/p", SESSIONS[0], "WebFetch", 10.0), (1, b, "/p", SESSIONS[0], "WebFetch", 10.0),
            (2, a, "/p", SESSIONS[0], "WebFetch", 11.0), (3, a, "/p", None, "lc-cache-write", 13.0),
            (4, a, "/p", None, "lc-cache-write", 13.0), (5, a, "/q", SESSIONS[0], "WebFetch", 14.0)]
        assert conn.execute("SELECT count(*) FROM capture_contexts").fetchone() == (3,)
        # contexts go once no capture uses them
        conn.execute("DELETE FROM documents WHERE id = ?", (a,))
        assert drop_unused_contexts(conn) == 2
        assert conn.execute("SELECT project, session_id, tool_name FROM capture_contexts").fetchall() == [
            ("/p", SESSIONS[0], "WebFetch")]


def test_forget_leaves_no_context_of_a_forgotten_project(store):
    """Forgetting a project takes its path and session ids out of capture_contexts, an
    unused context (one a prune left, say) included, down to the file's bytes."""
    marker = "/home/dev/zqxcontextmarker" + uuid.uuid4().hex[:8]
    session = "zqxsession" + uuid.uuid4().hex[:8]
    with closing(connect(str(store))) as conn:
        with transaction(conn):
            gone, kept = _doc(conn, 1, marker), _doc(conn, 2, "/home/dev/other")
            add_capture(conn, event_id=1, document_id=gone, project=marker, session_id=session,
                        tool_name="WebFetch", captured_at=10.0)
            add_capture(conn, event_id=2, document_id=kept, project="/home/dev/other",
                        session_id=SESSIONS[1], tool_name="WebFetch", captured_at=11.0)
            conn.execute("INSERT INTO capture_contexts (project, session_id, tool_name)"
                         " VALUES (?, ?, 'mcp__context7__query-docs')", (marker + "/sub", session))
        docs = choose(conn, Criteria(project=marker))
        assert [d["id"] for d in docs] == [gone]
        done = forget(conn, docs)
        assert done["captures"] == 1 and done["scrubbed"]
        assert conn.execute("SELECT project, session_id FROM capture_contexts").fetchall() == [
            ("/home/dev/other", SESSIONS[1])]
        assert conn.execute(VIEW).fetchall() == [(2, kept, "/home/dev/other", SESSIONS[1], "WebFetch", 11.0)]
    for path in store.parent.iterdir():
        data = path.read_bytes()
        assert marker.encode() not in data and session.encode() not in data, path.name


def test_tier2_rows_survive_m014_and_the_table_is_kept_by_its_key(store):
    """m014 rebuilds `tier2` WITHOUT ROWID: the rows of a store made before it stay, an
    upsert by (library, topic) replaces one, and a deleted document takes its rows along."""
    _build_with_previous_sql(store, below="m014")
    rows = []
    with closing(sqlite3.connect(str(store), isolation_level=None)) as conn:
        add_functions(conn)
        conn.execute("BEGIN IMMEDIATE")
        for d in (1, 2):
            conn.execute("INSERT INTO documents (id, project, source, source_tool, body, content_hash,"
                         " unused_content) VALUES (?, '/p', 's', 'context7', ?, ?, '')",
                         (d, document_body(f"text {d}"), f"h{d}"))
        for i in range(6):
            row = (f"/org/lib{i % 2}", f"topic {i}", f"/org/Lib{i % 2}", f"Topic {i}", 1 + i % 2,
                   "capture", 1.7e9 + i, 1.8e9 + i, "capture")
            conn.execute("INSERT INTO tier2 (library_key, topic_key, library_id, topic, document_id,"
                         " origin, fetched_at, expires_at, provenance) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
            rows.append(row)
        conn.execute("COMMIT")
    cols = ("library_key, topic_key, library_id, topic, document_id, origin, fetched_at, expires_at,"
            " provenance")
    with closing(store_mod.connect(str(store))) as conn:
        assert conn.execute(f"SELECT {cols} FROM tier2 ORDER BY topic_key").fetchall() == sorted(
            rows, key=lambda r: r[1])
        assert "WITHOUT ROWID" in conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'tier2'").fetchone()[0]
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE tbl_name = 'tier2'"
                            " AND type = 'index'").fetchone()[0] == 0  # no second copy of the keys
        with transaction(conn):
            conn.execute(f"INSERT OR REPLACE INTO tier2 ({cols}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         ("/org/lib0", "topic 0", "/org/Lib0", "Topic 0", 2, "write", 1.9e9, 2.0e9, "manual"))
        assert conn.execute("SELECT count(*), max(document_id) FROM tier2 WHERE topic_key = 'topic 0'"
                            ).fetchone() == (1, 2)
        with transaction(conn):
            conn.execute("DELETE FROM documents WHERE id = 1")
        assert conn.execute("SELECT count(*) FROM tier2 WHERE document_id = 1").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM tier2").fetchone() == (4,)
