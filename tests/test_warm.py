"""SessionStart warming against a real loopback HTTP server for the Context7 API."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest
from werkzeug import Response

from conftest import BIN, db_rows, ingest, load_payload, run, run_hook

LIBS: dict[str, dict[str, Any]] = {
    "react": {"id": "/facebook/react", "title": "React", "versions": ["v18.3.1", "v19.0.0"]},
    "zod": {"id": "/colinhacks/zod", "title": "Zod", "versions": []},
    "express": {"id": "/expressjs/express", "title": "Express", "versions": ["4.19.2"]},
    "lodash": {"id": "/lodash/lodash", "title": "Lodash", "versions": []},
    "fastapi": {"id": "/fastapi/fastapi", "title": "FastAPI", "versions": []},
}


def search_answer(name: str) -> dict:
    lib = LIBS.get(name)
    if lib is None:
        return {"results": []}
    return {"results": [
        {"id": lib["id"] + "-native", "title": lib["title"] + " Native", "description": "other",
         "trustScore": 9, "benchmarkScore": 50, "versions": [], "totalSnippets": 10},
        {"id": lib["id"], "title": lib["title"], "description": f"{name} docs", "trustScore": 10,
         "benchmarkScore": 90.5, "versions": lib["versions"], "totalSnippets": 1000},
    ]}


@pytest.fixture
def project(store, tmp_path):
    proj = tmp_path / "project"
    (proj / "package.json").write_text(json.dumps({
        "name": "app", "version": "1.0.0",
        "dependencies": {"react": "^18.3.1", "zod": "^3.23.0", "express": "^4.19.0"},
        "devDependencies": {"lodash": "^4.17.21", "@types/node": "^20.0.0"},
    }))
    (proj / "package-lock.json").write_text(json.dumps({
        "name": "app", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
        "packages": {
            "": {"name": "app", "dependencies": {"react": "^18.3.1", "zod": "^3.23.0",
                                                 "express": "^4.19.0"},
                 "devDependencies": {"lodash": "^4.17.21", "@types/node": "^20.0.0"}},
            "node_modules/react": {"version": "18.3.1"},
            "node_modules/zod": {"version": "3.23.8"},
            "node_modules/express": {"version": "4.19.2"},
            "node_modules/lodash": {"version": "4.17.21", "dev": True},
            "node_modules/@types/node": {"version": "20.11.0", "dev": True},
        },
    }))
    return proj


def serve_search(api, *, status=200, headers=None, body=None, delay=0.0, asked=None, answered=None):
    def handler(request):
        if asked is not None:
            asked.append(request.args.get("libraryName", ""))
        if delay:
            time.sleep(delay)
        if answered is not None:
            answered.append(request.args.get("libraryName", ""))
        name = request.args.get("libraryName", "")
        payload = body if body is not None else json.dumps(search_answer(name))
        return Response(payload, status=status, headers=headers or {},
                        content_type="application/json")
    api.expect_request("/api/v2/libs/search").respond_with_handler(handler)


def session_start(project, env=None):
    payload = {"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": str(project),
               "hook_event_name": "SessionStart", "source": "startup"}
    start = time.monotonic()
    r = run_hook("session-start", payload, env=env)
    elapsed = time.monotonic() - start
    assert r.returncode == 0 and r.stderr == b""
    out = r.stdout.decode()
    return (json.loads(out) if out.strip() else None), elapsed


def context_of(out) -> str:
    assert out is not None
    hso = out["hookSpecificOutput"]
    assert hso["hookEventName"] == "SessionStart"
    return hso["additionalContext"]


def searched(api) -> list[str]:
    return [req.args["libraryName"] for req, _ in api.log]


def test_warm_resolves_ranked_libraries_via_the_api(project, api):
    serve_search(api)
    out, _ = session_start(project)
    ctx = context_of(out)
    assert "react@18.3.1 → /facebook/react" in ctx
    assert "/facebook/react/v18.3.1" in ctx  # versioned ID offered when the version is known
    assert "zod@3.23.8 → /colinhacks/zod" in ctx
    assert "express@4.19.2 → /expressjs/express" in ctx
    assert "lc-cache-lookup-docs" in ctx and len(ctx) <= 1500
    assert "@types/node" not in searched(api)
    assert run(["bash", BIN / "lc-cache-lookup", "react"]).stdout == b"/facebook/react\n"
    origins = dict(db_rows(project.parent / "data" / "memhooks.db",
                           "SELECT name_key, origin FROM tier1"))
    assert origins["react"] == "warm-api"


def test_auth_header_sent_and_never_stored(project, api, monkeypatch):
    key = "ctx7sk-test-0123456789abcdef"
    monkeypatch.setenv("CONTEXT7_API_KEY", key)
    serve_search(api)
    session_start(project)
    assert api.log and all(req.headers.get("Authorization") == f"Bearer {key}" for req, _ in api.log)
    data = project.parent / "data"
    for f in data.iterdir():
        if f.is_file():
            assert key.encode() not in f.read_bytes(), f


def test_unchanged_lockfiles_answer_from_tier1_without_network(project, api):
    serve_search(api)
    first, _ = session_start(project)
    n = len(api.log)
    db = project.parent / "data" / "memhooks.db"
    warmed_at = db_rows(db, "SELECT warmed_at FROM warm_state")
    second, _ = session_start(project)
    assert len(api.log) == n
    # the same IDs, now marked as served from the cache of an earlier session
    assert "(cached)" not in context_of(first)
    assert context_of(second).replace(" (cached)", "") == context_of(first)
    assert context_of(second).count("(cached)") == 4
    assert db_rows(db, "SELECT warmed_at FROM warm_state") == warmed_at  # no re-scan
    # a changed lockfile is noticed
    lock = project / "package-lock.json"
    data = json.loads(lock.read_text())
    data["packages"]["node_modules/react"]["version"] = "19.0.0"
    lock.write_text(json.dumps(data))
    third, _ = session_start(project)
    assert "react@19.0.0 → /facebook/react" in context_of(third)


def test_rate_limit_stops_at_once_and_is_remembered(project, api):
    serve_search(api, status=429, headers={"Retry-After": "3600"},
                 body=json.dumps({"error": "rate_limited", "message": "Too many requests"}))
    out, _ = session_start(project)
    first = len(api.log)
    assert first == 1  # the first request goes alone: a 429 costs the pool one request
    out2, _ = session_start(project)
    assert len(api.log) == first  # Retry-After honoured across sessions
    db = project.parent / "data" / "memhooks.db"
    until = db_rows(db, "SELECT until FROM api_state WHERE key = 'context7.retry_after'")[0][0]
    assert until > time.time() + 3000
    assert db_rows(db, "SELECT count(*) FROM tier1 WHERE library_id IS NULL")[0][0] == 0


@pytest.mark.parametrize("status,body", [(500, "oops"), (200, "{not json"), (200, '{"results": 5}'),
                                         (200, '[1,2]'), (200, '{"results": [{"id": 7}]}')])
def test_server_errors_and_garbage_leave_no_false_negatives(project, api, status, body):
    serve_search(api, status=status, body=body)
    out, _ = session_start(project)
    assert out is None or "→" not in context_of(out)
    db = project.parent / "data" / "memhooks.db"
    # a failure is remembered briefly (matched = 'error', short TTL), never as "not found"
    rows = db_rows(db, "SELECT matched, expires_at - resolved_at FROM tier1 WHERE library_id IS NULL")
    assert rows and all(m == "error" and ttl <= 600 for m, ttl in rows)
    assert len(api.log) >= 1
    # ... so the next session does not spend its budget on the same failures
    n = len(api.log)
    session_start(project)
    assert len(api.log) == n


def test_slow_server_is_cut_off_by_the_budget(project, api, monkeypatch):
    monkeypatch.setenv("MEMHOOKS_WARM_BUDGET_S", "1")
    asked: list[str] = []
    answered: list[str] = []
    serve_search(api, delay=5, asked=asked, answered=answered)
    out, _ = session_start(project)
    # the warm asked, and the hook returned before the server had answered (each answer
    # takes 5 s): the budget cut the warm off, it did not wait for the answers
    assert asked and answered == []
    assert out is None or "→" not in context_of(out)


def test_offline_makes_no_request(project, api, monkeypatch):
    monkeypatch.setenv("MEMHOOKS_OFFLINE", "1")
    serve_search(api)
    out, _ = session_start(project)
    assert api.log == []
    assert "→" not in context_of(out)  # one JSON object all the same, saying what is cached
    assert "No documentation is cached yet." in context_of(out)


@pytest.mark.slow
def test_captured_knowledge_is_used_before_the_api(project, api):
    assert run_hook("post-tool-use", load_payload("c7_resolve_react")).returncode == 0
    ingest(project.parent / "data" / "memhooks.db")
    serve_search(api)
    out, _ = session_start(project)
    assert "react" not in searched(api)
    assert "react@18.3.1 → /facebook/react" in context_of(out)


@pytest.mark.slow
def test_writebacks_and_captures_are_never_wiped(project, api):
    run(["bash", BIN / "lc-cache-write", "tier1", "react", "/my/react-fork"])
    run(["bash", BIN / "lc-cache-write", "tier1", "left-pad", "/stevemao/left-pad"])
    serve_search(api)
    out, _ = session_start(project)
    ctx = context_of(out)
    assert "react@18.3.1 → /my/react-fork" in ctx
    assert run(["bash", BIN / "lc-cache-lookup", "react"]).stdout == b"/my/react-fork\n"
    assert run(["bash", BIN / "lc-cache-lookup", "left-pad"]).stdout == b"/stevemao/left-pad\n"


def test_not_found_is_negative_cached_and_backfilled(project, api, monkeypatch):
    monkeypatch.setenv("MEMHOOKS_TOP_N", "3")
    monkeypatch.setenv("MEMHOOKS_WARM_BUDGET_S", "8")  # a loaded machine must not look like a slow API
    serve_search(api)
    # zod is unknown to this server: its slot is backfilled by the next-ranked name
    zod = LIBS.pop("zod")
    try:
        out, _ = session_start(project)
    finally:
        LIBS["zod"] = zod  # the server knows zod again from here on
    ctx = context_of(out)
    assert "/facebook/react" in ctx and "/expressjs/express" in ctx and "/lodash/lodash" in ctx
    assert "zod" not in ctx
    db = project.parent / "data" / "memhooks.db"
    assert db_rows(db, "SELECT library_id FROM tier1 WHERE name_key = 'zod'") == [(None,)]
    n = len(api.log)
    # touching the lockfile forces a re-warm; the negative entry prevents a new request
    (project / "package-lock.json").write_text((project / "package-lock.json").read_text() + "\n")
    again, _ = session_start(project)
    assert "zod" not in searched(api)[n:]
    assert "/colinhacks/zod" not in context_of(again)  # answered by the negative entry


def test_exact_name_preferred_over_first_result(project, api):
    serve_search(api)
    session_start(project)
    db = project.parent / "data" / "memhooks.db"
    # the first search result is "React Native"; the exact title match wins
    assert db_rows(db, "SELECT library_id FROM tier1 WHERE name_key = 'react'") == [("/facebook/react",)]


def test_warm_and_scan_commands(project, api, monkeypatch):
    monkeypatch.setenv("MEMHOOKS_WARM_BUDGET_S", "8")  # a loaded machine must not look like a slow API
    serve_search(api)
    r = run(["memhooks", "scan", project, "--json"])
    assert r.returncode == 0
    names = [d["name"] for d in json.loads(r.stdout)["libraries"]]
    assert names[:3] == sorted(names[:3]) or "react" in names[:3]
    assert "@types/node" not in names
    r = run(["memhooks", "warm", project, "--json"])
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert {e["name"]: e["library_id"] for e in data["entries"]}["zod"] == "/colinhacks/zod"
    r = run(["memhooks", "warm", project])
    assert r.returncode == 0 and b"resolved" in r.stdout


def test_no_project_files_still_one_json_object(store, tmp_path, api):
    empty = tmp_path / "empty"
    empty.mkdir()
    serve_search(api)
    env = dict(os.environ, CLAUDE_PROJECT_DIR=str(empty))
    out, _ = session_start(empty, env=env)
    assert context_of(out).startswith("memhooks: no Context7 library IDs")
    assert api.log == []


def test_fast_path_imports_only_the_standard_library(project, api, monkeypatch):
    from conftest import run_hot_path_probe

    monkeypatch.setenv("MEMHOOKS_WARM_BUDGET_S", "8")  # a loaded machine must not look like a slow API

    serve_search(api)
    session_start(project)  # first warm (slow path) fills tier1 and the fingerprint
    requests = len(api.log)
    lines, heavy = run_hot_path_probe(
        "import io\n"
        "sys.stdin = io.TextIOWrapper(io.BytesIO(b'{\"hook_event_name\": \"SessionStart\"}'))\n"
        "from memhooks.entry.session_start import session_start\n"
        "session_start()\n"
        "print()\n"
    )
    assert "/facebook/react" in lines[0]
    assert heavy == []
    assert len(api.log) == requests  # answered from tier1: no request


def test_a_captured_resolve_keeps_the_version_pin(project, api):
    serve_search(api)
    first, _ = session_start(project)
    assert "/facebook/react/v18.3.1" in context_of(first)
    assert run_hook("post-tool-use", load_payload("c7_resolve_react")).returncode == 0
    ingest(project.parent / "data" / "memhooks.db")
    second, _ = session_start(project)
    assert "react@18.3.1 → /facebook/react (this version: /facebook/react/v18.3.1)" in context_of(second)


def test_unreachable_api_is_backed_off_across_sessions(project, store, monkeypatch):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    monkeypatch.setenv("CONTEXT7_API_URL", f"http://127.0.0.1:{port}/api")
    monkeypatch.delenv("MEMHOOKS_OFFLINE", raising=False)
    out, _ = session_start(project)
    assert out is None or "→" not in context_of(out)
    state = db_rows(store, "SELECT value, until - strftime('%s', 'now') FROM api_state")
    assert state and state[0][0] == "unreachable" and 0 < state[0][1] <= 601
    warmed = db_rows(store, "SELECT warmed_at FROM warm_state")
    session_start(project)  # answered by the fast path: no scan, no request
    assert db_rows(store, "SELECT warmed_at FROM warm_state") == warmed


def test_the_library_cap_bounds_the_requests_and_the_ids_cached(store, tmp_path, api, monkeypatch):
    """MEMHOOKS_TOP_N=5 and 30 dependencies the API knows: at most 5 search requests, at most 5
    IDs in tier1 (workers take a name only while answers plus requests in flight fall short)."""
    monkeypatch.setenv("MEMHOOKS_TOP_N", "5")
    monkeypatch.setenv("MEMHOOKS_WARM_BUDGET_S", "8")
    names = [f"lib{i:02d}" for i in range(30)]
    added = {n: {"id": f"/org{n}/{n}", "title": n, "versions": []} for n in names}
    LIBS.update(added)
    proj = tmp_path / "project"  # the store fixture's CLAUDE_PROJECT_DIR
    proj.mkdir(exist_ok=True)
    (proj / "package.json").write_text(json.dumps({
        "name": "app", "version": "1.0.0", "dependencies": {n: "^1.0.0" for n in names}}))
    serve_search(api)
    try:
        out, _ = session_start(proj)
    finally:
        for n in names:
            LIBS.pop(n, None)
    ctx = context_of(out)
    assert 1 <= len(searched(api)) <= 5, (searched(api), ctx)
    db = tmp_path / "data" / "memhooks.db"
    ids = [lid for (lid,) in db_rows(db, "SELECT library_id FROM tier1 WHERE library_id IS NOT NULL")]
    assert 1 <= len(ids) <= 5, ids
    assert sum(f"/org{n}/{n}" in ctx for n in names) == len(ids)
