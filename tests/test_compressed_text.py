"""Documents keep their text compressed (`documents.body`, migration m012): a store from
before keeps every document, id and search hit; the readers, the FTS index and the hot-path
lookups see the same text; a body that does not decompress reads as empty text."""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from pathlib import Path

from conftest import BIN, db_rows, run
from memhooks.names import library_key, topic_key
from memhooks.recall.search import search_documents
from memhooks.store import connect as store_mod
from memhooks.store.bodies import document_body, document_head, document_text
from memhooks.store.doc_slices import document_head_bytes
from memhooks.store.migrations import SCHEMA_VERSION
from memhooks.store.projections import upsert_document, upsert_tier2
from memhooks.store.sqlite_file import transaction
from test_migrations import _build_with_previous_sql

LONG = "\n".join(f"## Step {i}\nCall `useEffect(setup, deps)` to synchronise with system {i}."
                 for i in range(200))
SHORT = "Pydantic's field_validator runs after the field's own validation. café ünïcode ✓"


def _store_before_m012(db: Path) -> None:
    """A store as m001..m011 made it (plain SQL of the time), with two documents, a capture
    and a tier2 entry pointing at them."""
    _build_with_previous_sql(db, below="m012")
    with closing(sqlite3.connect(str(db), isolation_level=None)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        for i, (text, lib) in enumerate(((LONG, "/facebook/react"), (SHORT, "/pydantic/pydantic")), 1):
            conn.execute(
                "INSERT INTO documents (id, project, source, source_tool, title, content, content_hash,"
                " library_id, topic, bytes, created_at_epoch) VALUES (?, '', ?, 'context7', ?, ?, ?, ?, 'effects',"
                " ?, ?)", (i * 10, f"context7:{lib}", f"{lib} — effects", text, f"{i:064x}", lib,
                           len(text.encode()), int(time.time())))
        conn.execute("INSERT INTO captures (event_id, document_id, project, session_id, tool_name, captured_at)"
                     " VALUES (1, 10, '', 's', 'mcp__context7__query-docs', ?)", (time.time(),))
        conn.execute("INSERT INTO tier2 (library_key, topic_key, library_id, topic, document_id, origin,"
                     " fetched_at, expires_at) VALUES (?, ?, '/facebook/react', 'effects', 10, 'capture', ?, ?)",
                     (library_key("/facebook/react"), topic_key("effects"), time.time(), time.time() + 9e5))
        conn.execute("COMMIT")


def test_a_store_from_before_keeps_every_text_id_and_search_hit(store):
    _store_before_m012(store)
    with closing(store_mod.connect(str(store))) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        rows = conn.execute("SELECT id, document_text(body), length(body), bytes FROM documents ORDER BY id").fetchall()
        assert [(r[0], r[1]) for r in rows] == [(10, LONG), (20, SHORT)]
        assert rows[0][2] < len(LONG.encode()) / 3  # the long text is kept compressed
        columns = [r[1] for r in conn.execute("PRAGMA table_info(documents)")]
        assert "content" not in columns and "body" in columns
        # the old column is kept empty (SQLite before 3.35 cannot drop it), under a new name
        assert conn.execute("SELECT DISTINCT unused_content FROM documents").fetchall() == [("",)]
        # The index was rebuilt from the text, and the triggers keep it in step.
        def docs_with(word):
            return sorted({r[0] for r in conn.execute(
                "SELECT s.document_id FROM sections_fts JOIN sections s ON s.id = sections_fts.rowid"
                " WHERE sections_fts MATCH ?", (word,))})
        assert docs_with("synchronise") == [10]
        assert docs_with("cafe") == [20]
        snippet = conn.execute("SELECT snippet(sections_fts, 0, '[', ']', '…', 8) FROM sections_fts"
                               " WHERE sections_fts MATCH 'validator'").fetchone()[0]
        assert "field_[validator] runs" in snippet
        with transaction(conn):
            conn.execute("DELETE FROM documents WHERE id = 20")
        assert docs_with("cafe") == []
        # What pointed at the documents still does.
        assert conn.execute("SELECT document_id FROM captures").fetchall() == [(10,)]
        assert conn.execute("SELECT document_id FROM tier2").fetchall() == [(10,)]
        hits = search_documents(conn, "synchronise with system", limit=3, touch=False)
        assert hits and hits[0]["id"] == 10
    # The hot-path lookup (python -I -S) reads the same text from the migrated store.
    got = run([str(BIN / "lc-cache-lookup-docs"), "/facebook/react", "effects"])
    assert got.returncode == 0
    assert "Call `useEffect(setup, deps)` to synchronise with system 199." in got.stdout.decode()


def test_the_writer_stores_compressed_text_and_every_reader_sees_the_text(store):
    with closing(store_mod.connect(str(store))) as conn, transaction(conn):
        doc_id, created = upsert_document(conn, project="", source="/facebook/react",
                                          source_tool="context7", content=LONG, title="react — effects",
                                          library_id="/facebook/react", topic="effects",
                                          provenance="capture")
        assert created and doc_id is not None
        upsert_tier2(conn, library_id="/facebook/react", topic="effects", document_id=doc_id,
                     origin="capture", ttl_s=86400, provenance="capture")
    [(body, size)] = db_rows(store, "SELECT body, bytes FROM documents")
    assert isinstance(body, bytes) and len(body) < size / 3 and size == len(LONG.encode())
    assert document_text(body) == LONG and document_body(LONG) == body
    assert LONG[:40].encode() not in store.read_bytes()  # not a plain second copy
    got = run([str(BIN / "lc-cache-lookup-docs"), "/facebook/react", "effects"])
    assert got.returncode == 0 and "synchronise with system 0." in got.stdout.decode()


def test_a_body_that_does_not_decompress_reads_as_empty_text(store):
    with closing(store_mod.connect(str(store))) as conn, transaction(conn):
        upsert_document(conn, project="", source="web:https://docs.example.org/a", source_tool="web",
                        content=SHORT, title="a", provenance="capture")
        conn.execute("UPDATE documents SET body = x'00010203'")
    assert db_rows(store, "SELECT document_text(body) FROM documents") == [("",)]
    assert document_text(None) is None and document_text(b"not zlib") == ""


def test_a_bounded_read_decompresses_only_the_head(store):
    big = "".join(f"line {i} of a large page\n" for i in range(200_000))  # ~5 MB
    with closing(store_mod.connect(str(store))) as conn:
        with transaction(conn):
            doc_id, _ = upsert_document(conn, project="", source="web:https://docs.example.org/big",
                                        source_tool="web", content=big, title="big", provenance="capture",
                                        max_bytes=16 * 1024 * 1024)
        assert doc_id is not None
        head = document_head_bytes(conn, doc_id, 1000)
        assert head == big.encode()[:1000]
        assert document_head_bytes(conn, doc_id, 0) == b"" and document_head_bytes(conn, doc_id + 1, 10) is None
    assert document_head(document_body("naïve"), 3) == "naïve".encode()[:3]  # a cut may split a character
    assert document_head(b"not zlib", 10) == b"" and document_head(None, 10) == b""
