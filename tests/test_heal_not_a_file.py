"""A directory (with a file inside) where the store or the journal should be heals like any
other damage: it is moved aside, the projections are rebuilt from the journal (or capture
goes on in a fresh journal), and every reader answers. Hooks, the lookup shims, the
ingester and the MCP tools run as subprocesses against real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import BIN, db_rows, ingest, journal_file, load_payload, run, run_hook, wait_idle

CAPTURED = ("c7_resolve_react", "c7_query_docs")


def capture_all(db, names=CAPTURED) -> None:
    for name in names:
        r = run_hook("post-tool-use", load_payload(name), env=dict(os.environ, MEMHOOKS_NO_SPAWN="1"))
        assert r.returncode == 0 and r.stdout == b"" and r.stderr == b""
    ingest(db)


def replace_with_directory(path) -> None:
    for suffix in ("", "-wal", "-shm"):
        try:
            os.remove(f"{path}{suffix}")
        except FileNotFoundError:
            pass
    os.mkdir(path)
    (path / "inside.txt").write_text("someone's file")


def moved_aside(path) -> list:
    """The directories moved aside for `path`, each still holding its file."""
    aside = sorted(path.parent.glob(path.name + ".corrupt-*"))
    assert all(p.is_dir() and (p / "inside.txt").read_text() == "someone's file" for p in aside)
    return aside


def lookup(*args: str) -> subprocess.CompletedProcess:
    name = "lc-cache-lookup-docs" if len(args) == 2 else "lc-cache-lookup"
    return run([BIN / name, *args])


def pre_tool_use(name: str, session: str) -> subprocess.CompletedProcess:
    p = load_payload(name)
    call = {k: v for k, v in p.items() if k not in ("tool_response", "duration_ms")}
    call.update(hook_event_name="PreToolUse", session_id=session)
    return run_hook("pre-tool-use", call)


def incidents(db) -> list[dict]:
    path = f"{db}.health.jsonl"
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


@pytest.fixture
def damaged(store):
    """A store with two captures, then a directory where memhooks.db was."""
    capture_all(store)
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 2  # the resolve answer, the docs
    replace_with_directory(store)
    return store


def test_the_lookup_heals_and_answers(damaged):
    r = lookup("react")
    assert r.returncode == 0 and r.stdout.decode().strip() == "/facebook/react" and r.stderr == b""
    assert len(moved_aside(damaged)) == 1 and damaged.is_file()
    [incident] = incidents(damaged)
    assert incident["kind"] == "store" and "directory" in incident["reason"]
    assert incident["events_reset"] == 2  # the journal's events, projected again
    r = lookup("/facebook/react", "useEffect cleanup function")
    assert r.returncode == 0 and b"useEffect cleanup" in r.stdout


def test_the_ingester_heals_and_rebuilds(damaged):
    r = run([sys.executable, "-m", "memhooks._entry", "ingest"])
    assert r.returncode == 0 and r.stderr == b""
    assert len(moved_aside(damaged)) == 1
    assert db_rows(damaged, "SELECT library_id, topic FROM documents WHERE library_id IS NOT NULL") == [
        ("/facebook/react", "useEffect cleanup function")]
    assert db_rows(damaged, "SELECT count(*) FROM documents")[0][0] == 2


def test_the_hooks_exit_zero_and_serving_answers_after_the_next_ingest(damaged):
    r = pre_tool_use("c7_query_docs", "s-1")
    assert r.returncode == 0 and r.stderr == b"" and r.stdout == b""  # nothing to serve from yet
    r = run_hook("session-start", {"session_id": "s-1", "hook_event_name": "SessionStart",
                                   "source": "startup", "cwd": os.environ["CLAUDE_PROJECT_DIR"]})
    assert r.returncode == 0 and r.stderr == b""
    assert json.loads(r.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    r = run_hook("post-tool-use", load_payload("webfetch"))  # starts the detached ingester
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b""
    wait_idle(damaged)
    ingest(damaged)
    assert damaged.is_file() and len(moved_aside(damaged)) == 1
    assert db_rows(damaged, "SELECT count(*) FROM documents")[0][0] == 3
    r = pre_tool_use("c7_query_docs", "s-2")
    assert r.returncode == 0 and r.stderr == b""
    reason = json.loads(r.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "useEffect" in reason


def test_the_mcp_tools_heal_and_answer(damaged):
    code = ("from memhooks.entry.mcp import tool_lookup, tool_search\n"
            "text, err = tool_search('useEffect cleanup')\n"
            "assert not err and 'useEffect' in text, text\n"
            "text, err = tool_lookup('react')\n"
            "assert not err and '/facebook/react' in text, text\n"
            "print('ok')\n")
    r = run([sys.executable, "-c", code])
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode().strip() == "ok"
    assert len(moved_aside(damaged)) == 1 and damaged.is_file()


def test_a_journal_replaced_by_a_directory_is_moved_aside_and_capture_goes_on(store):
    capture_all(store)
    journal = journal_file(store)
    replace_with_directory(journal)
    env = dict(os.environ, MEMHOOKS_NO_SPAWN="1")
    r = run_hook("post-tool-use", load_payload("webfetch"), env=env)
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b""
    assert journal.is_file() and len(moved_aside(journal)) == 1
    assert [i["kind"] for i in incidents(store)] == ["journal"]
    # (a fresh journal: its first row marks where its ids restart)
    rows = db_rows(journal, "SELECT hook_event_name, state, payload FROM events")
    assert [(r[0], r[1]) for r in rows] == [("JournalRestart", "skipped"), ("PostToolUse", "pending")]
    assert '"WebFetch"' in rows[1][2]
    assert not list((store.parent / "spool").glob("*"))  # journaled, not spooled
    ingest(store)
    # the projections kept what they had; the new capture joins them
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 3
    r = lookup("react")
    assert r.returncode == 0 and r.stdout.decode().strip() == "/facebook/react"


def test_both_replaced_by_directories(store):
    capture_all(store)
    replace_with_directory(store)
    replace_with_directory(journal_file(store))
    r = run_hook("post-tool-use", load_payload("webfetch"), env=dict(os.environ, MEMHOOKS_NO_SPAWN="1"))
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b""
    r = lookup("react")  # what was journaled is gone with the journal: a miss, exit 0
    assert r.returncode == 0 and r.stderr == b""
    assert store.is_file() and journal_file(store).is_file()
    assert len(moved_aside(store)) == 1 and len(moved_aside(journal_file(store))) == 1
    ingest(store)
    assert db_rows(store, "SELECT url FROM documents") == [("http://example.org/docs/guide/",)]
