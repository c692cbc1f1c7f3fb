"""A lockfile version bump (react 18.3.1 -> 19.0.0): the next SessionStart re-resolves the
pinned ID within its budget and says it, the old version's pinned ID is never kept, and
serving never answers a versioned request with another version's docs, before or after.
Real loopback Context7 API (pytest-httpserver), hooks as subprocesses, a real store."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

import pytest
from werkzeug import Response

from conftest import db_rows, ingest, run_hook

LIB = "/facebook/react"
DOCS = {
    "/facebook/react/v18.3.1": "### useEffect cleanup (React 18)\n\nSource: https://18.react.dev/reference/react/useEffect\n\n"
                               "Return a cleanup function from your Effect.\n\n```js\nreturn () => conn.disconnect();\n```\n",
    "/facebook/react/v19.0.0": "### useEffect cleanup (React 19)\n\nSource: https://react.dev/reference/react/useEffect\n\n"
                               "Return a cleanup function from your Effect.\n\n```js\nreturn () => conn.close();\n```\n",
}


@pytest.fixture
def world(store, tmp_path, httpserver, monkeypatch):
    """A project whose lockfile pins react, a Context7 API whose react versions the test sets."""
    monkeypatch.setenv("CONTEXT7_API_URL", httpserver.url_for("/api"))
    monkeypatch.delenv("MEMHOOKS_OFFLINE", raising=False)
    project = tmp_path / "project"
    versions = {"react": ["v18.3.1"]}

    def search(request):
        name = request.args.get("libraryName", "")
        results = [] if name != "react" else [
            {"id": LIB, "title": "React", "description": "react docs", "trustScore": 10,
             "benchmarkScore": 90, "versions": list(versions["react"]), "totalSnippets": 1000}]
        return Response(json.dumps({"results": results}), content_type="application/json")

    httpserver.expect_request("/api/v2/libs/search").respond_with_handler(search)
    lock(project, "18.3.1")
    return project, store, versions, httpserver


def lock(project, react: str) -> None:
    deps = {"react": f"^{react}"}
    (project / "package.json").write_text(json.dumps({"name": "app", "dependencies": deps}))
    (project / "package-lock.json").write_text(json.dumps({
        "name": "app", "lockfileVersion": 3, "requires": True,
        "packages": {"": {"name": "app", "dependencies": deps},
                     "node_modules/react": {"version": react}}}))


def session_start(project) -> str:
    r = run_hook("session-start", {"session_id": "s", "transcript_path": "/tmp/t.jsonl",
                                   "cwd": str(project), "hook_event_name": "SessionStart",
                                   "source": "startup"})
    assert r.returncode == 0 and r.stderr == b""
    return json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]


def capture_docs(db, project, library_id: str) -> None:
    payload = {"session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": str(project),
               "hook_event_name": "PostToolUse", "tool_name": "mcp__context7__query-docs",
               "tool_input": {"libraryId": library_id, "query": "useEffect cleanup function"},
               "tool_response": [{"type": "text", "text": DOCS[library_id]}], "tool_use_id": "t"}
    assert run_hook("post-tool-use", payload).returncode == 0
    ingest(db)


def pre_tool_use(project, library_id: str, session: str) -> dict:
    r = run_hook("pre-tool-use", {"session_id": session, "cwd": str(project), "hook_event_name": "PreToolUse",
                                  "tool_name": "mcp__context7__query-docs",
                                  "tool_input": {"libraryId": library_id, "query": "useEffect cleanup function"}})
    assert r.returncode == 0 and r.stderr == b""
    return json.loads(r.stdout)["hookSpecificOutput"] if r.stdout.strip() else {}


def served(project, library_id: str, session: str) -> str | None:
    """What PreToolUse serves for a query-docs of `library_id` (None: the call runs live,
    perhaps with a pinned ID)."""
    out = pre_tool_use(project, library_id, session)
    return out["permissionDecisionReason"] if out.get("permissionDecision") == "deny" else None


def pin(db) -> list[tuple]:
    return db_rows(db, "SELECT version, versioned_id FROM tier1 WHERE name_key = 'react'")


def test_a_bump_re_resolves_the_pinned_id_and_tells_the_agent(world):
    project, db, versions, api = world
    first = session_start(project)
    assert f"react@18.3.1 → {LIB} (this version: {LIB}/v18.3.1)" in first, first
    assert pin(db) == [("18.3.1", f"{LIB}/v18.3.1")]
    asked = len(api.log)
    assert session_start(project) == first.replace(f"{LIB}/v18.3.1)", f"{LIB}/v18.3.1) (cached)")
    assert len(api.log) == asked  # unchanged lockfile: the fast path, no request

    # react 19 is out: Context7 lists it, the project's lockfile moves to it
    versions["react"] = ["v18.3.1", "v19.0.0"]
    lock(project, "19.0.0")
    second = session_start(project)
    line = next(x for x in second.splitlines() if x.startswith("- react@"))
    assert line == f"- react@19.0.0 → {LIB} (this version: {LIB}/v19.0.0) (was 18.3.1 until this session) (cached)", second
    assert "v18.3.1" not in second
    assert [r.args["libraryName"] for r, _ in api.log[asked:]] == ["react"]  # asked again, once
    assert pin(db) == [("19.0.0", f"{LIB}/v19.0.0")]
    # the next session: the fast path gives the new pin, the bump note is said once
    third = session_start(project)
    assert f"react@19.0.0 → {LIB} (this version: {LIB}/v19.0.0) (cached)" in third and "was 18.3.1" not in third
    # resolve-library-id served from tier1 names the new version and its pin
    r = run_hook("pre-tool-use", {"session_id": "r", "cwd": str(project), "hook_event_name": "PreToolUse",
                                  "tool_name": "mcp__context7__resolve-library-id",
                                  "tool_input": {"libraryName": "react", "query": "effects"}})
    text = json.loads(r.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert f"Installed version (project lockfile): 19.0.0 (versioned ID {LIB}/v19.0.0)" in text, text


def test_a_bump_to_a_version_nobody_lists_keeps_no_old_pin(world, monkeypatch):
    project, db, versions, api = world
    session_start(project)
    assert pin(db) == [("18.3.1", f"{LIB}/v18.3.1")]
    lock(project, "19.0.0")  # Context7 still lists only 18.3.1
    ctx = session_start(project)
    assert f"- react@19.0.0 → {LIB} (was 18.3.1 until this session) (cached)" in ctx, ctx
    assert "v18.3.1" not in ctx and pin(db) == [("19.0.0", None)]
    # offline, the same: the old pin is dropped, nothing is asked
    monkeypatch.setenv("MEMHOOKS_OFFLINE", "1")
    asked = len(api.log)
    lock(project, "20.1.0")
    ctx = session_start(project)
    assert f"- react@20.1.0 → {LIB} (was 19.0.0 until this session) (cached)" in ctx, ctx
    assert len(api.log) == asked and pin(db) == [("20.1.0", None)]


def test_no_cross_version_serving_across_the_bump(world):
    project, db, versions, _ = world
    session_start(project)
    capture_docs(db, project, f"{LIB}/v18.3.1")
    # before: an unversioned ID is served by the pinned version's docs, v18 by v18's
    assert "React 18" in (served(project, LIB, "a") or "")
    assert "React 18" in (served(project, f"{LIB}/v18.3.1", "b") or "")
    assert served(project, f"{LIB}/v19.0.0", "c") is None
    versions["react"] = ["v18.3.1", "v19.0.0"]
    lock(project, "19.0.0")
    session_start(project)
    # after: the unversioned ID means 19 now; 18's docs answer only a request for 18
    assert served(project, LIB, "d") is None
    # (the call runs, asking for 19: the lockfile's version, pinned)
    assert pre_tool_use(project, LIB, "d2")["updatedInput"]["libraryId"] == f"{LIB}/v19.0.0"
    assert served(project, f"{LIB}/v19.0.0", "e") is None
    assert "React 18" in (served(project, f"{LIB}/v18.3.1", "f") or "")
    capture_docs(db, project, f"{LIB}/v19.0.0")
    for lid, session in ((LIB, "g"), (f"{LIB}/v19.0.0", "h"), (f"{LIB}@19.0.0", "i")):
        text = served(project, lid, session) or ""
        assert "React 19" in text and "React 18" not in text, (lid, text[:300])
    assert "React 18" in (served(project, f"{LIB}/v18.3.1", "j") or "")
    with closing(sqlite3.connect(db)) as c:
        libs = [r[0] for r in c.execute("SELECT library_id FROM serve_log WHERE outcome = 'served' ORDER BY id")]
    # an unversioned call is answered as the pinned version's (its label says so)
    assert libs == [f"{LIB}/v18.3.1", f"{LIB}/v18.3.1", f"{LIB}/v18.3.1", f"{LIB}/v19.0.0", f"{LIB}/v19.0.0",
                    f"{LIB}@19.0.0", f"{LIB}/v18.3.1"]
