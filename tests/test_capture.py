"""The journal-first PostToolUse hook, run as a subprocess against temp stores."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess

import pytest

from conftest import (
    BIN,
    HOOKS,
    ROOT,
    db_rows,
    ingest,
    journal_file,
    load_payload,
    run,
    run_hook,
    run_hot_path_probe,
    wait_idle,
)
from memhooks.store.bodies import add_functions


def capture(store, name: str) -> None:
    """Run the PostToolUse hook with a fixture payload, then let ingestion finish."""
    assert run_hook("post-tool-use", load_payload(name)).returncode == 0
    wait_idle(store)
    ingest(store)


CAPTURED = {
    # fixture -> (source_tool, type, source) of the document it must produce
    "c7_query_docs": ("context7", "library-docs", "/facebook/react"),
    "c7_query_docs_plugin_versioned": ("context7", "library-docs", None),
    "c7_get_library_docs_legacy": ("context7", "library-docs", None),
    "c7_query_docs_wrong_id_libraryID": ("context7", "library-docs", None),
    "c7_resolve_react": ("context7", "library-resolve", None),
    "c7_resolve_plugin_note_first": ("context7", "library-resolve", None),
    "c7_resolve_legacy_trust": ("context7", "library-resolve", None),
    "exa_web_search": ("exa", "search-results", None),
    "exa_code_context": ("exa", "code-context", None),
    "exa_web_fetch": ("exa", "web-page", None),
    "exa_crawling_alias": ("exa", "web-page", None),
    "exa_search_advanced": ("exa", None, None),
    "exa_web_search_legacy_context": ("exa", None, None),
    "webfetch": ("webfetch", "web-page", None),
    "websearch": ("websearch", "search-results", None),
}

NOT_DOCUMENTS = [
    "c7_failure", "exa_failure", "c7_error_rate_limited", "c7_error_not_exist",
    "c7_error_invalid_key", "c7_resolve_no_results", "bash_event", "other_mcp", "websearch_empty",
]


def test_hook_journals_then_ingests_every_source(store):
    for name in CAPTURED:
        r = run_hook("post-tool-use", load_payload(name))
        assert r.returncode == 0 and r.stdout == b"" and r.stderr == b"", name
    wait_idle(store)
    ingest(store)
    assert db_rows(store, "SELECT count(*) FROM events")[0][0] == len(CAPTURED)
    assert db_rows(store, "SELECT count(*) FROM events WHERE state != 'done'")[0][0] == 0
    for name, (tool, typ, source) in CAPTURED.items():
        rows = db_rows(
            store,
            "SELECT d.source_tool, d.type, d.source FROM documents d JOIN captures c"
            " ON c.document_id = d.id JOIN events e ON e.id = c.event_id WHERE e.tool_use_id = ?",
            (load_payload(name)["tool_use_id"],),
        )
        assert rows, f"no document for {name}"
        assert rows[0][0] == tool, name
        if typ:
            assert rows[0][1] == typ, name
        if source:
            assert rows[0][2] == source, name


def test_a_backlog_keeps_when_each_text_was_fetched(store):
    """An event ingested late (no ingester ran for an hour) dates its capture, document and
    tier2 entry by when the hook received it, not by when it was ingested: a backlog does not
    make old text look fresh."""
    import time

    from memhooks.config import tier2_ttl_s

    env = dict(os.environ, MEMHOOKS_NO_SPAWN="1")
    assert run_hook("post-tool-use", load_payload("c7_query_docs"), env=env).returncode == 0
    fetched = time.time() - 3600
    with sqlite3.connect(journal_file(store)) as conn:
        conn.execute("UPDATE events SET received_at = ?", (fetched,))
    conn.close()
    ingest(store)
    [(captured, created, fetched_at, expires)] = db_rows(
        store, "SELECT c.captured_at, d.created_at_epoch, t.fetched_at, t.expires_at FROM captures c"
               " JOIN documents d ON d.id = c.document_id JOIN tier2 t ON t.document_id = d.id")
    assert abs(captured - fetched) < 1 and abs(created - fetched) < 1 and abs(fetched_at - fetched) < 1
    assert abs(expires - (fetched + tier2_ttl_s())) < 1  # its lifetime counts from the fetch


def test_an_older_fetch_ingested_later_never_replaces_a_newer_tier2_answer(store):
    """Two fetches of one (library, topic): the later-journaled event was fetched an hour
    earlier (a backlog, an imported transcript). Tier2 keeps pointing at the newer text."""
    import time

    env = dict(os.environ, MEMHOOKS_NO_SPAWN="1")
    newer = load_payload("c7_query_docs")
    response = json.loads(json.dumps(newer["tool_response"]))
    response[0]["text"] += "\nAn older copy of this page, fetched before the newer one.\n"
    older = dict(newer, tool_use_id="t-older", tool_response=response)
    for p in (newer, older):
        assert run_hook("post-tool-use", p, env=env).returncode == 0
    now = time.time()
    with sqlite3.connect(journal_file(store)) as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM events ORDER BY id")]
        assert len(ids) == 2
        conn.execute("UPDATE events SET received_at = ? WHERE id = ?", (now - 3600, ids[1]))
    conn.close()
    ingest(store)
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 2
    [(newer_doc,)] = db_rows(store, f"SELECT document_id FROM captures WHERE event_id = {ids[0]}")
    [(doc, fetched_at)] = db_rows(store, "SELECT document_id, fetched_at FROM tier2")
    assert doc == newer_doc and abs(fetched_at - now) < 60


def test_plugin_and_plain_tool_names_route_the_same(store):
    payload = load_payload("c7_query_docs")
    plain = dict(payload, tool_use_id="t-plain")
    plugin = dict(payload, tool_use_id="t-plugin",
                  tool_name="mcp__plugin_context7_context7__query-docs")
    for p in (plain, plugin):
        assert run_hook("post-tool-use", p).returncode == 0
    wait_idle(store)
    ingest(store)
    # same text twice: one document, two captures
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 1
    assert db_rows(store, "SELECT count(*) FROM captures")[0][0] == 2
    lib = db_rows(store, "SELECT library_id, topic FROM documents")[0]
    assert lib == ("/facebook/react", payload["tool_input"]["query"])


def test_not_documents_are_journaled_and_counted(store):
    for name in NOT_DOCUMENTS:
        assert run_hook("post-tool-use", load_payload(name)).returncode == 0
    wait_idle(store)
    ingest(store)
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 0
    states = dict(db_rows(store, "SELECT state, count(*) FROM events GROUP BY state"))
    # every one is journaled but the Bash call (`ls -la`: not a ctx7 lookup, never journaled)
    assert states.get("skipped", 0) + states.get("done", 0) == len(NOT_DOCUMENTS) - 1
    assert db_rows(store, "SELECT count(*) FROM events WHERE tool_name = 'Bash'")[0][0] == 0
    reasons = [r[0] for r in db_rows(store, "SELECT error FROM events WHERE state = 'skipped'")]
    assert "tool failure" in reasons
    assert any("rate limited" in (r or "") for r in reasons)
    # "No libraries found" records a negative tier1 entry but no document
    neg = db_rows(store, "SELECT name_key FROM tier1 WHERE library_id IS NULL")
    assert neg


def test_resolve_fills_libraries_and_tier1(store):
    capture(store, "c7_resolve_react")
    libs = db_rows(store, "SELECT library_id, title FROM libraries ORDER BY library_id")
    assert ("/facebook/react", "React") in [(a, b) for a, b in libs]
    tier1 = db_rows(store, "SELECT name_key, library_id, origin, matched FROM tier1")
    assert tier1 == [("react", "/facebook/react", "capture", "exact")]


def test_hot_path_imports_only_the_standard_library(store):
    payload = json.dumps(load_payload("c7_query_docs"))
    lines, heavy = run_hot_path_probe(
        "import io\n"
        f"sys.stdin = io.TextIOWrapper(io.BytesIO({payload.encode()!r}))\n"
        "from memhooks.entry.post_tool_use import main as post_tool_use\n"
        "post_tool_use()\n"
        "from memhooks.entry import lc_cache as cache\n"
        "cache.COMMANDS['lc-cache-write'](['tier1', 'react', '/facebook/react'])\n"
        "cache.COMMANDS['lc-cache-lookup'](['react'])\n"
        "cache.COMMANDS['lc-cache-lookup-docs'](['/none', 'none'])\n"
    )
    assert lines == ["/facebook/react"]
    assert heavy == []
    assert db_rows(store, "SELECT count(*) FROM events WHERE hook_event_name = 'PostToolUse'")[0][0] == 1


HOSTILE = [
    b"",
    b"   \n",
    b"not json at all",
    b"{\"truncated\": ",
    b"[1, 2, 3]",
    b"null",
    b"42",
    b"\"a string\"",
    json.dumps({"hook_event_name": 5, "tool_name": ["x"], "tool_response": {"a": None}}).encode(),
    json.dumps({"hook_event_name": "PostToolUse", "tool_name": "mcp__context7__query-docs",
                "tool_input": "nope", "tool_response": 12}).encode(),
    json.dumps({"hook_event_name": "PostToolUse", "tool_name": "WebFetch",
                "tool_input": {"url": None}, "tool_response": [None, 1, {"type": 3}]}).encode(),
    b"\xff\xfe\x00\x00garbage\x00",
    b"{" * 100000,
]


@pytest.mark.parametrize("data", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_input_exits_zero_and_is_kept(store, data):
    r = run_hook("post-tool-use", data)
    assert r.returncode == 0
    assert r.stdout == b"" and r.stderr == b""
    wait_idle(store)
    ingest(store)
    states = db_rows(store, "SELECT state FROM events")
    assert len(states) == 1
    assert states[0][0] in ("failed", "skipped")


def test_ten_megabytes_of_junk(store):
    junk = os.urandom(10 * 1024 * 1024)
    r = run_hook("post-tool-use", junk)
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b""
    wait_idle(store)
    ingest(store)
    assert db_rows(store, "SELECT state FROM events") == [("failed",)]


def test_payload_over_16_mib_becomes_a_failed_stub(store):
    payload = load_payload("c7_query_docs")
    payload["tool_response"][0]["text"] = "x" * (17 * 1024 * 1024)
    r = run_hook("post-tool-use", payload)
    assert r.returncode == 0 and r.stdout == b""
    wait_idle(store)
    ingest(store)
    state, error, size, length = db_rows(
        store, "SELECT state, error, bytes, length(payload) FROM events")[0]
    assert state == "failed" and "cap" in error
    assert size > 17 * 1024 * 1024 and length < 200 * 1024
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 0


def test_document_over_the_cap_is_truncated_with_a_marker(store, monkeypatch):
    monkeypatch.setenv("MEMHOOKS_MAX_DOC_BYTES", "4096")
    payload = load_payload("c7_query_docs")
    payload["tool_response"][0]["text"] = "### Big\n\n" + ("word " * 5000)
    assert run_hook("post-tool-use", payload).returncode == 0
    wait_idle(store)
    ingest(store)
    content, truncated = db_rows(store, "SELECT document_text(body), truncated FROM documents")[0]
    assert truncated == 1
    assert "[memhooks: truncated" in content
    assert len(content.encode()) < 4096 + 200


def test_store_files_are_private(store):
    assert run_hook("post-tool-use", load_payload("c7_query_docs")).returncode == 0
    assert stat.S_IMODE(os.stat(journal_file(store)).st_mode) == 0o600
    wait_idle(store)
    ingest(store)
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(store.parent).st_mode) == 0o700
    mode = db_rows(store, "PRAGMA journal_mode")[0][0]
    assert mode == "wal"


def test_garbage_store_is_moved_aside_and_rebuilt(store):
    """A garbage header on the projections file: the hook journals as usual (the journal
    is its own file); the next ingest moves the store aside and rebuilds it."""
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_bytes(b"this is not a sqlite database" * 100)
    env = dict(os.environ, MEMHOOKS_NO_SPAWN="1")
    r = run_hook("post-tool-use", load_payload("c7_query_docs"), env=env)
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b""
    assert db_rows(journal_file(store), "SELECT count(*) FROM events")[0][0] == 1
    ingest(store)
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 1
    aside = list(store.parent.glob("memhooks.db.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not")


def test_corrupt_journal_spools_nothing_and_loses_nothing(store):
    """A garbage journal is moved aside by the hook itself; capture goes on in a fresh one."""
    store.parent.mkdir(parents=True, exist_ok=True)
    journal_file(store).write_bytes(b"this is not a sqlite database" * 100)
    env = dict(os.environ, MEMHOOKS_NO_SPAWN="1")
    r = run_hook("post-tool-use", load_payload("c7_query_docs"), env=env)
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b""
    assert list(store.parent.glob("journal.db.corrupt-*"))
    ingest(store)
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 1
    assert not list((store.parent / "spool").glob("*.json"))


@pytest.mark.slow
def test_locked_store_spools_after_the_busy_timeout(store):
    assert run_hook("post-tool-use", load_payload("c7_query_docs")).returncode == 0
    wait_idle(store)
    holder = sqlite3.connect(str(journal_file(store)), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        r = run_hook("post-tool-use", load_payload("exa_web_search"), timeout=30)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b""
    ingest(store)
    assert db_rows(store, "SELECT count(*) FROM events")[0][0] == 2


def test_unwritable_store_location_still_exits_zero(tmp_path, store, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    env = dict(os.environ, MEMHOOKS_DB=str(blocker / "sub" / "memhooks.db"))
    for hook in ("post-tool-use", "session-start"):
        r = run_hook(hook, load_payload("c7_query_docs"), env=env)
        assert r.returncode == 0 and r.stderr == b""
        if hook == "session-start":  # SessionStart prints one JSON object every time
            assert json.loads(r.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        else:
            assert r.stdout == b""


def test_full_disk_is_survived(store):
    """A file-size limit makes every write fail with EFBIG, like a full quota."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))

    payload = load_payload("c7_query_docs")
    payload["tool_response"][0]["text"] = "### Big\n\n" + "y" * 200_000
    r = subprocess.run([str(HOOKS / "post-tool-use")], input=json.dumps(payload).encode(),
                       capture_output=True, preexec_fn=limit, timeout=60)
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b""


def test_secrets_never_reach_the_store(store):
    payload = load_payload("c7_query_docs")
    secret_text = (
        "### Auth\n\nUse `Authorization: Bearer abcDEF1234567890xyz` with ctx7sk-12345678-abcd-ef "
        "or sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA and ghp_" + "B" * 36 + " and AKIAIOSFODNN7EXAMPLE"
        "\nfetch('https://api.example.org/v1?api_key=hunter2secret&x=1')\n"
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n"
        "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904 sha256 "
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
    )
    payload["tool_response"][0]["text"] = secret_text
    assert run_hook("post-tool-use", payload).returncode == 0
    wait_idle(store)
    ingest(store)
    raw = b""
    for suffix in ("", "-wal"):
        for f in (store, journal_file(store)):
            p = str(f) + suffix
            if os.path.exists(p):
                raw += open(p, "rb").read()
    for secret in (b"abcDEF1234567890xyz", b"ctx7sk-12345678", b"AAAAAAAAAAAAAAAAAAAAAAAA",
                   b"B" * 36, b"AKIAIOSFODNN7EXAMPLE", b"hunter2secret", b"MIIEowIBAAKCAQEA"):
        assert secret not in raw, secret
    content = db_rows(store, "SELECT document_text(body) FROM documents")[0][0]
    assert "4b825dc642cb6eb9a060e54bf8d69288fbee4904" in content
    assert "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" in content
    assert "[REDACTED]" in content
    assert db_rows(store, "PRAGMA integrity_check") == [("ok",)]


def test_cli_hook_command_does_the_same(store):
    r = run(["memhooks", "hook", "post-tool-use"], stdin=json.dumps(load_payload("c7_query_docs")))
    assert r.returncode == 0 and r.stdout == b""
    wait_idle(store)
    ingest(store)
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 1


def test_replay_example_session_and_reindex(store):
    example = ROOT / "examples" / "session.jsonl"
    r = run(["memhooks", "replay", example])
    assert r.returncode == 0, r.stderr
    docs = db_rows(store, "SELECT content_hash, source, type FROM documents ORDER BY content_hash")
    assert len(docs) >= 4
    events = db_rows(store, "SELECT count(*) FROM events")[0][0]
    r = run(["memhooks", "reindex"])
    assert r.returncode == 0, r.stderr
    assert db_rows(store, "SELECT content_hash, source, type FROM documents"
                          " ORDER BY content_hash") == docs
    assert db_rows(store, "SELECT count(*) FROM events")[0][0] == events
    r = run(["memhooks", "replay", ROOT / "no-such-file.jsonl"])
    assert r.returncode != 0
    assert len(r.stderr.decode().strip().splitlines()) == 1


def test_reindex_repairs_projections_from_the_journal(store):
    capture(store, "c7_query_docs")
    conn = sqlite3.connect(str(store))
    add_functions(conn)  # the FTS triggers read a document's text through document_text()
    conn.execute("DELETE FROM documents")
    conn.execute("DELETE FROM tier2")
    conn.commit()
    conn.close()
    assert run(["memhooks", "reindex"]).returncode == 0
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 1
    assert db_rows(store, "SELECT count(*) FROM tier2")[0][0] == 1
    hits = db_rows(store, "SELECT DISTINCT s.document_id FROM sections_fts JOIN sections s"
                          " ON s.id = sections_fts.rowid WHERE sections_fts MATCH 'cleanup'")
    assert len(hits) == 1


def test_bin_shim_is_runnable_with_bash(store):
    assert run(["bash", BIN / "lc-cache-write", "tier1", "zod", "/colinhacks/zod"]).returncode == 0
    r = run(["bash", BIN / "lc-cache-lookup", "zod"])
    assert r.stdout == b"/colinhacks/zod\n"


def test_reindex_keeps_access_counts(store):
    capture(store, "c7_query_docs")
    conn = sqlite3.connect(str(store))
    conn.execute("UPDATE documents SET access_count = 7, last_accessed_epoch = 1234")
    conn.commit()
    conn.close()
    assert run(["memhooks", "reindex"]).returncode == 0
    assert db_rows(store, "SELECT access_count, last_accessed_epoch FROM documents") == [(7, 1234)]


def test_replay_keeps_the_recorded_project(store):
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    assert run(["memhooks", "replay", ROOT / "examples" / "session.jsonl"], env=env).returncode == 0
    assert db_rows(store, "SELECT DISTINCT project FROM documents") == [("/home/dev/example-project",)]


def test_lone_surrogates_and_nuls_are_stored_not_failed(store):
    payload = load_payload("c7_query_docs")
    raw = json.dumps(payload).replace("Return a cleanup", "Return a \\ud800 \\u0000 cleanup", 1)
    assert "\\ud800" in raw
    assert run_hook("post-tool-use", raw).returncode == 0
    wait_idle(store)
    ingest(store)
    assert db_rows(store, "SELECT state FROM events") == [("done",)]
    content = db_rows(store, "SELECT document_text(body) FROM documents")[0][0]
    assert "Return a \ufffd   cleanup" in content


def test_read_only_store_spools_and_loses_nothing(store):
    """An immutable DB file (chattr +i; root ignores mode bits) cannot be written."""
    import shutil

    capture(store, "c7_query_docs")
    journal = journal_file(store)
    if shutil.which("chattr") is None or run(["chattr", "+i", journal]).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        r = run_hook("post-tool-use", load_payload("exa_web_search"))
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
        r = run_hook("session-start", {"hook_event_name": "SessionStart", "source": "startup"})
        assert r.returncode == 0 and r.stderr == b""
        assert r.stdout.strip() == b"" or json.loads(r.stdout)
    finally:
        run(["chattr", "-i", journal])
    assert len(list((store.parent / "spool").glob("*.json"))) >= 1
    ingest(store)
    assert db_rows(store, "SELECT count(*) FROM documents WHERE source_tool = 'exa'")[0][0] >= 1
