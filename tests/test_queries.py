"""The readers' module: one library ranking for lookups and alternatives, rows by name on any
connection, the journal reads."""

from __future__ import annotations

import sqlite3
import time

from memhooks.store import queries
from memhooks.store.connect import closing, connect, transaction
from memhooks.store.journal import append
from memhooks.store.projections import upsert_library


def _libraries(conn, rows):
    with transaction(conn):
        for lid, title, bench, trust, snippets in rows:
            upsert_library(conn, provenance="capture", library_id=lid, title=title, origin="api", benchmark_score=bench,
                           trust_score=trust, code_snippets=snippets, now=1000.0)


def test_one_ranking_title_match_first_then_scores_with_missing_as_zero(store):
    with closing(connect(str(store))) as conn:
        _libraries(conn, [
            ("/someone/zod", "zod-fork", 90.0, None, None),   # ID tail only, best score
            ("/colinhacks/zod", "Zod", 50.0, 7.0, 100),      # title match
            ("/other/zod-docs", "Zod", 50.0, 7.0, None),      # title match, snippets unknown
            ("/x/zodiac", "Zodiac", 99.0, 10.0, 1000),        # no exact match at all
        ])
        assert queries.find_library(conn, "zod") == "/colinhacks/zod"
        ranked = [r["library_id"] for r in queries.rank_libraries(conn, "zod", limit=10)]
        assert ranked == ["/colinhacks/zod", "/other/zod-docs", "/someone/zod"]
        # alternatives: the same order, the loose matches after the exact ones
        alts = [r["library_id"] for r in queries.rank_libraries(
            conn, "zod", pattern="%zod%", exclude="/colinhacks/zod", limit=10)]
        assert alts == ["/other/zod-docs", "/someone/zod", "/x/zodiac"]
        assert queries.find_library(conn, "   ") is None


def test_rows_by_name_on_a_plain_connection(store):
    connect(str(store)).close()
    plain = sqlite3.connect(str(store))  # no row factory, as the serve decision opens it
    with closing(plain):
        _libraries(plain, [("/colinhacks/zod", "Zod", 1.0, 1.0, 1)])
        assert queries.find_library(plain, "zod") == "/colinhacks/zod"
        assert queries.library_versions(plain, "/colinhacks/zod") == "[]"


def test_journal_reads(store):
    with closing(connect(str(store))) as conn:
        assert not queries.has_pending(conn)
        now = time.time()
        append(conn, '{"hook_event_name": "PostToolUse"}', size=10, project="/p", received_at=now - 120)
        append(conn, "x", size=1, project="/p", error="too big")
        assert queries.has_pending(conn)
        assert queries.journal_counts(conn, now - 60) == {
            "total": 2, "pending": 1, "old_pending": 1, "failed": 1}
        rows = queries.pending_events(conn, 0, 10)
        assert [(r["payload"], r["project"]) for r in rows] == [('{"hook_event_name": "PostToolUse"}', "/p")]
        assert queries.integrity(conn) == ["ok"]


def test_project_tier1_answers_many_keys_at_once(store):
    """SessionStart asks for every ranked dependency in one call: more keys than one statement
    binds (500 a statement), repeated keys, keys without a row, another project's rows."""
    from memhooks.names import normalize
    from memhooks.store.projections import upsert_tier1

    names = [f"lib-{i}" for i in range(1200)]
    with closing(connect(str(store))) as conn:
        with transaction(conn):
            for i, name in enumerate(names[:1100]):
                upsert_tier1(conn, project="/p", name=name, library_id=f"/org/lib-{i}", origin="write", ttl_s=3600,
                             provenance="capture", ecosystem="npm")
            upsert_tier1(conn, project="/other", name="lib-1150", library_id="/org/x", origin="write", ttl_s=3600,
                         provenance="capture", ecosystem="npm")
        keys = [normalize(n, "npm") for n in names] + [normalize("lib-3", "npm")]
        rows = queries.project_tier1(conn, "/p", keys)
        assert len(rows) == 1100
        assert rows[normalize("lib-999", "npm")]["library_id"] == "/org/lib-999"
        assert normalize("lib-1150", "npm") not in rows  # another project's row
        assert queries.project_tier1(conn, "/p", []) == {}
