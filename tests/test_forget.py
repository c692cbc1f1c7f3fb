"""`memhooks forget`: a text captured through the real hook and ingester leaves no byte behind
in any file of the store folder (projections, journal, their -wal/-shm, spool, logs, the
reads log), nor in any team table; and it is never stored again."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import uuid
from contextlib import closing
from pathlib import Path

import pytest

from conftest import ROOT, db_rows, journal_file, load_payload, run, run_hook, wait_idle

ENTRY = ROOT / "src" / "memhooks" / "_entry.py"
MARKER = "zqxforgetmarker" + uuid.uuid4().hex[:8]  # lower case: FTS keeps tokens lower-cased
KEEP = "keepmeplease" + uuid.uuid4().hex[:8]


def cli(*args, env=None, check=True, stdin=None):
    r = run([sys.executable, "-m", "memhooks.cli.main", *args], env=env, stdin=stdin)
    if check:
        assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r


def capture(payload, env=None):
    """The real capture hook (no detached child), then the real ingester."""
    env = dict(env or os.environ, MEMHOOKS_NO_SPAWN="1")
    assert run_hook("post-tool-use", payload, env=env).returncode == 0
    r = run([sys.executable, ENTRY, "ingest", "--background"], env=env)
    assert r.returncode == 0, r.stderr


def webfetch(marker: str) -> dict:
    p = load_payload("webfetch")
    url = f"https://docs.{marker}.example.org/guide/{marker}-setup"
    p["tool_input"] = {"url": url, "prompt": f"Summarise the {marker} installation steps"}
    p["tool_response"].update(url=url, result=(
        f"The {marker} package installs with pip. Create a {marker}.toml config file, then run "
        f"the init command; the guide explains each of the three steps of {marker} in turn."))
    return p


def c7_docs(marker: str) -> dict:
    p = load_payload("c7_query_docs")
    p["tool_input"] = {"libraryId": f"/acme/{marker}", "query": f"{marker} cleanup hooks"}
    p["tool_response"] = [{"type": "text", "text": (
        f"### {marker} cleanup\n\nSource: https://{marker}.example.org/docs\n\n"
        f"Call {marker}.close() when done.\n\n```js\nconst c = {marker}.open();\nc.close();\n```\n")}]
    return p


def store_bytes(folder: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[str(path.relative_to(folder))] = path.read_bytes()
    return out


def holders(folder: Path, needle: str) -> list[str]:
    forms = {needle.encode(), needle.lower().encode(), needle.upper().encode()}
    return [name for name, data in store_bytes(folder).items() if any(f in data for f in forms)]


def test_forget_leaves_no_byte_of_a_captured_text_in_the_store_folder(store):
    folder = store.parent
    capture(webfetch(MARKER))
    capture(c7_docs(MARKER))
    capture(c7_docs(KEEP))  # another document, which stays
    # A lookup hit (a reads-log line naming the document), a served repeat (serve_log), and
    # an event still in the spool when forget starts.
    docs = c7_docs(MARKER)
    hit = run([ROOT / "bin" / "lc-cache-lookup-docs", f"/acme/{MARKER}", docs["tool_input"]["query"]])
    assert MARKER.encode() in hit.stdout
    pre = {k: v for k, v in webfetch(MARKER).items() if k != "tool_response"}
    pre["hook_event_name"] = "PreToolUse"
    served = run_hook("pre-tool-use", pre)
    assert b"permissionDecision" in served.stdout
    from memhooks.store.journal import spool

    again = json.dumps(c7_docs(MARKER) | {"tool_use_id": "toolu_spooled"})
    assert spool(str(store), again, size=len(again), project=os.environ["CLAUDE_PROJECT_DIR"],
                 error=None, hook_event_name="PostToolUse")
    assert holders(folder, MARKER)  # the text is there, in several files
    # Writers without secure_delete (SQLite's default in most builds) leave old copies of
    # a rewritten row in the pages' free space and in free pages: forget must clear those too.
    with closing(sqlite3.connect(store)) as c:
        c.execute("PRAGMA secure_delete = OFF")
        c.execute("UPDATE documents SET access_count = access_count + 100000, metadata = metadata || ' '")
        c.commit()
    with closing(sqlite3.connect(journal_file(store))) as c:
        c.execute("PRAGMA secure_delete = OFF")
        c.execute("UPDATE events SET error = coalesce(error, '') || 'x', payload = payload || ' '")
        c.commit()

    dry = cli("forget", "--url", f"https://docs.{MARKER}.example.org/", "--dry-run")
    assert "would forget 1 document" in dry.stdout.decode()
    assert len(db_rows(store, "SELECT id FROM documents WHERE document_text(body) LIKE ?", (f"%{MARKER}%",))) == 2

    out = cli("forget", "--url", f"https://docs.{MARKER}.example.org/").stdout.decode()
    assert "forgot 1 document" in out
    out = cli("forget", "--library", f"/acme/{MARKER}", "--source", "context7", "--since", "1h").stdout.decode()
    assert "forgot 1 document" in out

    wait_idle(store)
    assert holders(folder, MARKER) == []
    assert db_rows(store, "SELECT count(*) FROM forgotten")[0][0] == 2
    kept = db_rows(store, "SELECT library_id FROM documents WHERE type = 'library-docs'")
    assert kept == [(f"/acme/{KEEP}",)]
    assert any(KEEP.encode() in data for data in store_bytes(folder).values())

    # Never stored again: captured once more, it becomes no document, no tier2 entry, no answer.
    capture(c7_docs(MARKER))
    assert db_rows(store, "SELECT count(*) FROM documents WHERE document_text(body) LIKE ?", (f"%{MARKER}%",)) == [(0,)]
    lookup = run([ROOT / "bin" / "lc-cache-lookup-docs", f"/acme/{MARKER}", docs["tool_input"]["query"]])
    assert lookup.stdout == b""


def test_forget_criteria_combine_and_refuse_to_guess(store):
    capture(webfetch(MARKER))
    capture(c7_docs(KEEP))
    # Each criterion must hold: a webfetch page is no Context7 docs.
    out = cli("forget", "--url", f"https://docs.{MARKER}.example.org/", "--source", "context7")
    assert "nothing to forget" in out.stdout.decode()
    assert cli("forget", check=False).returncode == 2  # no criterion: a usage error
    assert cli("forget", "--id", "99999", check=False).returncode == 1
    project = os.environ["CLAUDE_PROJECT_DIR"]
    dry = json.loads(cli("forget", "--project", project, "--dry-run", "--json").stdout)
    assert sorted(d["source_tool"] for d in dry["documents"]) == ["context7", "webfetch"]
    assert cli("forget", "--until", "2000-01-01").stdout.decode().startswith("nothing to forget")
    doc_id = db_rows(store, "SELECT id FROM documents WHERE source_tool = 'webfetch'")[0][0]
    done = json.loads(cli("forget", "--id", str(doc_id), "--json").stdout)
    assert len(done["documents"]) == 1 and done["events"] == 1 and done["wal_truncated"] is True
    assert db_rows(store, "SELECT count(*) FROM documents") == [(1,)]
    assert db_rows(store, "SELECT count(*) FROM events WHERE payload LIKE ?", (f"%{MARKER}%",)) == [(0,)]


# ----------------------------------------------------------------------------- the team store

@pytest.fixture(scope="module")
def pg_server():
    pgserver = pytest.importorskip("pgserver", reason="pgserver (PostgreSQL in a wheel) is in the test extra")
    pytest.importorskip("psycopg", reason="psycopg is in the team extra")
    import shutil
    import tempfile

    data = Path(tempfile.mkdtemp(prefix="memhooks-pg-")) / "data"
    srv = pgserver.get_server(data, cleanup_mode="delete")
    yield srv
    srv.cleanup()
    shutil.rmtree(data.parent, ignore_errors=True)


def test_forget_reaches_every_team_table(store, pg_server, monkeypatch):
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    url = pg_server.get_uri(name)
    try:
        monkeypatch.setenv("MEMHOOKS_TEAM_URL", url)
        monkeypatch.setenv("MEMHOOKS_TEAM_CONNECT_TIMEOUT_S", "5")
        cli("team", "init")
        capture(webfetch(MARKER))
        capture(c7_docs(MARKER))
        cli("team", "push")
        from memhooks.team.store import TEAM_TABLES

        def team_hits():
            hits = []
            with psycopg.connect(url, autocommit=True) as c:
                for table in TEAM_TABLES:
                    row = c.execute(f"SELECT count(*) FROM {table} t WHERE lower(t::text) LIKE %s",
                                    (f"%{MARKER}%",)).fetchone()
                    assert row is not None
                    if row[0]:
                        hits.append(table)
            return hits

        assert "documents" in team_hits()
        out = cli("forget", "--project", os.environ["CLAUDE_PROJECT_DIR"], "--yes").stdout.decode()
        assert "removed from the team store" in out
        assert team_hits() == []
        wait_idle(store)
        assert holders(store.parent, MARKER) == []
    finally:
        with psycopg.connect(pg_server.get_uri(), autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_forgotten_text_captured_again_keeps_no_raw_copy(store):
    """The ingester refuses to store a forgotten text again, and drops the raw payload of
    the event that carried it (its metadata stays)."""
    capture(c7_docs(MARKER))
    cli("forget", "--library", f"/acme/{MARKER}")
    capture(c7_docs(MARKER))
    rows = db_rows(store, "SELECT state, error, payload FROM events ORDER BY id DESC LIMIT 1")
    state, error, payload = rows[0]
    assert (state, error) == ("done", "forgotten text: payload dropped")
    assert MARKER not in payload and json.loads(payload)["memhooks_forgotten"] is True
    assert db_rows(store, "SELECT count(*) FROM documents") == [(0,)]
    cli("reindex")
    assert db_rows(store, "SELECT count(*) FROM documents") == [(0,)]


def test_forget_runs_as_a_library_call_the_command_only_renders(store):
    """store.forget.run: review sees the preview before anything goes (a dry run stops
    there), the team callback gets the connection after the local forget, and the result
    carries the command's keys."""
    from memhooks.cli._common import open_store
    from memhooks.store.forget import Criteria
    from memhooks.store.forget import run as forget_run

    capture(c7_docs(MARKER))
    capture(c7_docs(KEEP))
    seen: list = []
    told: list = []

    def tell_team(c) -> str:
        told.append(c)
        return "done"

    conn = open_store(ingest=True)
    try:
        crit = Criteria(library=f"/acme/{MARKER}")
        dry = forget_run(conn, crit, dry_run=True, review=lambda docs, prev: seen.append(len(docs)),
                         tell_team=tell_team)
        assert seen == [1] and told == [] and dry["forgotten"] == 0 and dry["captures"] == 1
        assert [d["library_id"] for d in dry["documents"]] == [f"/acme/{MARKER}"]
        done = forget_run(conn, crit, review=lambda docs, prev: seen.append(len(docs)),
                          tell_team=tell_team)
        assert seen == [1, 1] and told == [conn] and done["team"] == "done"
        assert done["forgotten"] == 1 and len(done["hashes"]) == 1 and done["events"] >= 1
        assert forget_run(conn, crit)["docs"] == []  # gone: nothing matches any more
    finally:
        conn.close()
    libs = [r[0] for r in db_rows(store, "SELECT library_id FROM documents")]
    assert libs == [f"/acme/{KEEP}"]
