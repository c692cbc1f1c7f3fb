"""A lookup never runs an ingest: on a miss in the projections it answers from the pending
journal rows of its one key (only when ingestion would certainly store that same answer)
and starts the detached ingester without waiting for it."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from contextlib import closing

import pytest

from conftest import BIN, ROOT, journal_file, load_payload, run, run_hook, wait_idle
from fences import unfence

ENTRY = ROOT / "src" / "memhooks" / "_entry.py"
LOOKUP, DOCS = BIN / "lc-cache-lookup", BIN / "lc-cache-lookup-docs"

def docs_out(argv) -> bytes:
    """What a docs lookup printed, its fence taken off (b"" for a miss, which prints nothing)."""
    out = run(argv).stdout
    return unfence(out.decode()).encode() if out else out



@pytest.fixture
def no_spawn(store, monkeypatch):
    monkeypatch.setenv("MEMHOOKS_NO_SPAWN", "1")
    return store


def states(db) -> list[str]:
    with closing(sqlite3.connect(journal_file(db))) as c:
        return [r[0] for r in c.execute("SELECT state FROM events ORDER BY id")]


def capture(name_or_payload):
    payload = load_payload(name_or_payload) if isinstance(name_or_payload, str) else name_or_payload
    assert run_hook("post-tool-use", payload).returncode == 0
    return payload


def ingest():
    assert run([sys.executable, ENTRY, "ingest"]).returncode == 0


def test_pending_captures_answer_without_an_ingest(no_spawn):
    capture("c7_resolve_react")
    docs = capture("c7_query_docs")
    body = docs["tool_response"][0]["text"].encode()
    # No projections yet at all (no memhooks.db): the journal answers.
    assert not no_spawn.exists()
    assert run([LOOKUP, "React"]).stdout == b"/facebook/react\n"
    assert docs_out([DOCS, "/Facebook/React/", " useEffect  CLEANUP function"]) == body
    assert run([LOOKUP, "vue"]).stdout == b""
    assert docs_out([DOCS, "/facebook/react", "another topic"]) == b""
    assert states(no_spawn) == ["pending", "pending"]  # nothing was ingested by the lookups
    # The same answers once ingested.
    ingest()
    assert states(no_spawn) == ["done", "done"]
    assert run([LOOKUP, "React"]).stdout == b"/facebook/react\n"
    assert docs_out([DOCS, "/facebook/react", "useEffect cleanup function"]) == body


def test_pending_answers_are_only_the_certain_ones(no_spawn):
    capture("c7_query_docs")
    ingest()  # a store exists, current
    # Errors, a first-result guess and a body that is not plainly documentation: misses.
    rate = load_payload("c7_error_rate_limited")
    rate["tool_input"] = {"libraryId": "/acme/limited", "query": "setup"}
    capture(rate)
    guess = load_payload("c7_resolve_react")
    guess["tool_input"]["libraryName"] = "preact-ish"
    capture(guess)
    prose = load_payload("c7_query_docs")
    prose["tool_input"] = {"libraryId": "/acme/prose", "query": "intro"}
    prose["tool_response"] = [{"type": "text", "text": "Acme is a library. It has no code here, only words."}]
    capture(prose)
    for argv in ([DOCS, "/acme/limited", "setup"], [LOOKUP, "preact-ish"], [DOCS, "/acme/prose", "intro"]):
        assert run(argv).stdout == b"", argv
    assert states(no_spawn).count("pending") == 3


def test_a_forgotten_text_pending_again_is_no_answer(no_spawn):
    docs = capture("c7_query_docs")
    ingest()
    r = run([sys.executable, "-m", "memhooks.cli.main", "forget", "--library", "/facebook/react"])
    assert r.returncode == 0, r.stderr
    capture(docs)
    assert states(no_spawn)[-1] == "pending"
    assert run([DOCS, "/facebook/react", docs["tool_input"]["query"]]).stdout == b""


def test_a_miss_starts_the_detached_ingester_and_does_not_wait(store):
    env = dict(os.environ, MEMHOOKS_NO_SPAWN="1")
    assert run_hook("post-tool-use", load_payload("c7_query_docs"), env=env).returncode == 0
    assert states(store) == ["pending"]
    assert run([LOOKUP, "vue"]).stdout == b""  # a miss, with spawning allowed
    for _ in range(600):  # the ingester was started (detached); wait for its work here
        wait_idle(store)
        if states(store) == ["done"]:
            break
        time.sleep(0.1)
    assert states(store) == ["done"]


def test_a_large_backlog_is_read_within_bounds(no_spawn):
    """3,000 pending events of other tools ahead of the one that answers: the lookup reads
    only the newest events of its tool (not timed here: see benchmarks/misses.py)."""
    docs = capture("c7_query_docs")
    web = load_payload("webfetch")
    with closing(sqlite3.connect(journal_file(no_spawn))) as c:
        payload = json.dumps(web)
        c.executemany("INSERT INTO events (received_at, hook_event_name, tool_name, payload, bytes)"
                      " VALUES (0, 'PostToolUse', 'WebFetch', ?, ?)", [(payload, len(payload))] * 3000)
        c.commit()
    assert docs_out([DOCS, "/facebook/react", docs["tool_input"]["query"]]).startswith(b"### useEffect")
    assert docs_out([DOCS, "/facebook/react", "nothing like it"]) == b""
