"""The serve decision inside its budget: large documents, a tiny budget, the hook process.

No test here times anything: a budget is checked by what the decision answers (None
when it ran out), and the large store by the hook's exit code and output. The figures
are in benchmarks/serve.py.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

import bigdocs
from conftest import run_hook
from memhooks.recall import coverage as cv
from memhooks.recall import docwindows, serve
from memhooks.recall.budget import Deadline, OverBudget, within
from memhooks.recall.render import BEGIN_HEAD
from memhooks.store.bodies import add_functions
from memhooks.store.connect import connect, transaction
from memhooks.store.projections import upsert_document, upsert_tier2

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "serve" / "relevance.json"
C7 = "mcp__context7__query-docs"
MiB = 1024 * 1024


def add_doc(conn, library_id: str, topic: str, content: str, max_bytes: int | None = None) -> int:
    with transaction(conn):
        did, _ = upsert_document(conn, provenance="capture", project="/p", source=library_id, source_tool="context7",
                                 content=content, library_id=library_id, topic=topic, tool="query-docs",
                                 max_bytes=max_bytes)
        assert did is not None
        upsert_tier2(conn, provenance="capture", library_id=library_id, topic=topic, document_id=did, origin="capture",
                     ttl_s=4 * 3600)
    return did


def ask(conn, library_id: str, query: str, deadline: float | None = None):
    return serve.decide(conn, C7, {"libraryId": library_id, "query": query}, "/p", deadline=deadline)


def roomy() -> float:
    """A deadline no decision here comes near (so a None is the rules', not the clock's)."""
    return time.monotonic() + 600


# ----------------------------------------------------------------------------- the budget

def test_within_turns_running_late_into_no_answer(tmp_path):
    with closing(sqlite3.connect(str(tmp_path / "x.db"))) as conn:
        assert within(conn, roomy(), lambda budget: "answer") == "answer"

        def late_python(budget):
            budget.check(reserve=3600)  # the next step would not fit: stop before it
            return "late"

        assert within(conn, roomy(), late_python) is None

        def late_sql(budget):  # a statement the progress handler stops at the deadline
            return conn.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)"
                                " SELECT count(*) FROM n").fetchone()

        assert within(conn, time.monotonic() + 0.05, late_sql) is None
        assert within(conn, time.monotonic() - 1, lambda budget: "found after the deadline") is None
        # the handler is taken off again: the connection runs long statements afterwards
        assert conn.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
                            " WHERE i < 300000) SELECT count(*) FROM n").fetchone()[0] == 300000

        def broken(budget):
            raise sqlite3.OperationalError("no such table: x")

        with pytest.raises(sqlite3.OperationalError):
            within(conn, roomy(), broken)  # an error in time is not hidden as "late"
    with pytest.raises(OverBudget):
        Deadline(time.monotonic() - 1).check()


# ----------------------------------------------------------------------------- large documents

def planted_doc(seed: int, size: int, sep: str = bigdocs.SEP) -> str:
    return bigdocs.document(seed, target_bytes=size, pool_size=300, sep=sep)


@pytest.mark.parametrize("sep", [bigdocs.SEP, "\n\n"], ids=["separators", "headings"])
def test_large_document_snippets_are_the_whole_cut_snippets(sep):
    """Around each hit, the part between separators (or headings) is cut exactly as the
    whole document would be."""
    text = planted_doc(7, 600 * 1024, sep)
    raw = text.encode()
    assert len(raw) > docwindows.WHOLE_DOC_BYTES
    whole = set(cv.snippets(text))
    checked = 0
    for query in bigdocs.HITS + bigdocs.NEAR_MISSES:
        q = cv.query_stems(query)
        got, _ = docwindows.large_pieces(raw, docwindows.anchors(q), q, Deadline(roomy()))
        assert got, query
        for _key, piece in got:
            assert piece in whole, piece[:200]
            checked += 1
    assert checked >= 20


def test_a_large_document_is_answered_from_deep_inside_and_only_when_covered(tmp_path):
    with closing(connect(str(tmp_path / "m.db"))) as conn:
        add_doc(conn, "/acme/big", "everything", planted_doc(3, 2 * MiB), max_bytes=4 * MiB)
        served = {q: ask(conn, "/acme/big", q, roomy()) for q in bigdocs.HITS}
        assert sum(v is not None for v in served.values()) >= 6, served
        got = served["retry failed requests with jitter"]
        assert got is not None and "Retry with exponential backoff and jitter" in got.text
        assert "Verifying webhook payloads" not in got.text  # only the covering snippet
        for q in bigdocs.MISSES + bigdocs.NEAR_MISSES:
            assert ask(conn, "/acme/big", q, roomy()) is None, q


@pytest.mark.slow
def test_large_documents_never_serve_what_the_whole_cut_would_not(tmp_path, capsys):
    """The relevance set's answers, each buried in 300 KiB of other snippets: every query
    the large-document path serves is one the whole-document cut serves too (so precision
    cannot drop), and most of those the whole cut serves are still served."""
    libs = json.loads(FIXTURE.read_text())["libraries"]
    big = whole_served = large_served = 0
    with closing(connect(str(tmp_path / "m.db"))) as conn:
        for n, lib in enumerate(libs):
            filler = bigdocs.filler(1000 + n, 270 * 1024, pool_size=300)
            at = len(filler) * 2 // 3
            text = bigdocs.SEP.join([*filler[:at], lib["content"], *filler[at:]])
            big += len(text.encode()) > docwindows.WHOLE_DOC_BYTES
            add_doc(conn, lib["library_id"], lib["topic"], text)
            pieces = list(enumerate(cv.snippets(text)))
            split = serve.split_id(lib["library_id"])
            assert split is not None, lib["library_id"]
            ignore = set(cv.words(split[0]))
            for q in lib["queries"]:  # what answer_docs decides, on the whole cut
                stems_ = cv.query_stems(q["query"], ignore)
                probes = cv.probes(stems_)  # (a snippet without any cannot count: same answer, faster)
                some = [(i, t) for i, t in pieces if any(cv.starts_a_word(t.lower(), p) for p in probes)]
                whole = bool(stems_) and cv.choose(stems_, some) is not None and (
                    len(stems_) > 1 or cv.covers(stems_[0], cv.stems(lib["topic"])))
                large = ask(conn, lib["library_id"], q["query"], roomy()) is not None
                assert not large or whole, (lib["library_id"], q["query"])
                whole_served += whole
                large_served += large
    with capsys.disabled():
        print(f"\n[serve, relevance answers inside 270 KiB of other snippets] whole cut serves "
              f"{whole_served}, the large-document path {large_served}")
    assert big == len(libs)
    assert whole_served >= 50 and large_served >= 0.95 * whole_served, (large_served, whole_served)


# ----------------------------------------------------------------------------- 4 x 16 MiB

@pytest.fixture(scope="module")
def big_store(tmp_path_factory):
    """A store whose library holds four generated documents of 16 MiB each (the byte cap
    raised to what lc-cache-write accepts)."""
    path = tmp_path_factory.mktemp("big") / "memhooks.db"
    bigdocs.build(str(path))
    with closing(sqlite3.connect(str(path))) as conn:
        sizes = [r[0] for r in conn.execute("SELECT bytes FROM documents WHERE library_id = ?",
                                            (bigdocs.LIBRARY,))]
    assert len(sizes) == 4 and min(sizes) > 16 * MiB - 16 * 1024, sizes
    return path


def hook_env(db: Path, tmp: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMHOOKS_", "CLAUDE_"))}
    env.update(MEMHOOKS_DB=str(db), MEMHOOKS_PYTHON=sys.executable, MEMHOOKS_OFFLINE="1",
               XDG_STATE_HOME=str(tmp / "state"), **extra)
    return env


@pytest.mark.slow
def test_the_hook_on_four_16_mib_documents_answers_or_lets_the_call_run(big_store, tmp_path):
    """Exit 0, and stdout one valid served JSON object or nothing, for hits, misses and
    near-misses, with the default budget."""
    answers = 0
    for n, query in enumerate(bigdocs.HITS[:3] + bigdocs.MISSES[:2] + bigdocs.NEAR_MISSES[:2]):
        payload = {"session_id": f"big-{n}", "cwd": "/p", "hook_event_name": "PreToolUse",
                   "tool_name": C7, "tool_input": {"libraryId": bigdocs.LIBRARY, "query": query}}
        proc = run_hook("pre-tool-use", payload, env=hook_env(big_store, tmp_path), timeout=120)
        assert proc.returncode == 0 and proc.stderr == b"", (query, proc.stderr[-500:])
        if not proc.stdout.strip():
            continue
        out = json.loads(proc.stdout)
        assert set(out) == {"hookSpecificOutput"}
        hso = out["hookSpecificOutput"]
        assert hso["hookEventName"] == "PreToolUse" and hso["permissionDecision"] == "deny"
        text = hso["permissionDecisionReason"]
        assert text.startswith("[memhooks cache]") and BEGIN_HEAD in text
        assert query in bigdocs.HITS, query  # a miss or a near-miss is never answered
        answers += 1
    assert answers <= 3


@pytest.mark.slow
def test_a_budget_of_a_millisecond_falls_through_instead_of_answering_late(big_store, tmp_path, monkeypatch):
    query = "retry failed requests with jitter"
    with closing(sqlite3.connect(str(big_store), isolation_level=None)) as conn:
        add_functions(conn)  # a document's text and head, as every connection of memhooks has
        assert ask(conn, bigdocs.LIBRARY, query, roomy()) is not None  # answered, given the time
        assert ask(conn, bigdocs.LIBRARY, query, time.monotonic() + 0.001) is None
        monkeypatch.setenv("MEMHOOKS_SERVE_BUDGET_MS", "1")
        assert ask(conn, bigdocs.LIBRARY, query) is None
    payload = {"session_id": "tiny", "cwd": "/p", "hook_event_name": "PreToolUse", "tool_name": C7,
               "tool_input": {"libraryId": bigdocs.LIBRARY, "query": query}}
    proc = run_hook("pre-tool-use", payload, timeout=120,
                    env=hook_env(big_store, tmp_path, MEMHOOKS_SERVE_BUDGET_MS="1"))
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
