"""Warm checks what it is told: a Context7 search result is kept only when it is the library
the name asked for (memhooks.warm.agree). Against a loopback fake Context7 API that answers
`fastapi` with `/facebook/react`: left out, counted, never in tier1 nor in the session context."""

from __future__ import annotations

import json
import os
import sys
import time

import pytest
from werkzeug import Response

from conftest import BIN, db_rows, run, run_hook
from memhooks.warm.agree import agrees, repo_of_url

MEMHOOKS = [sys.executable, "-m", "memhooks.cli.main"]

# What the fake API answers per libraryName: a list of (id, title), in its order.
ANSWERS = {
    "fastapi": [("/facebook/react", "React")],                         # unrelated: rejected
    "react": [("/facebook/react", "React")],                           # right
    "lodash": [("/facebook/react", "React"), ("/lodash/lodash", "Lodash")],  # right one second
}


@pytest.mark.parametrize("name,eco,lid,title,ok", [
    ("fastapi", "pypi", "/tiangolo/fastapi", None, True),
    ("fastapi", "pypi", "/websites/fastapi_tiangolo", "FastAPI", True),
    ("fastapi", "pypi", "/facebook/react", "React", False),
    ("FastAPI", "pypi", "/fastapi/fastapi", None, True),
    ("@types/node", "npm", "/nodejs/node", "Node.js", False),
    ("@types/react", "npm", "/facebook/react", "React", False),
    ("next", "npm", "/vercel/next.js", "Next.js", True),
    ("react-dom", "npm", "/facebook/react", "React", False),
    ("@angular/core", "npm", "/angular/angular", "Angular", True),
    ("@tanstack/react-query", "npm", "/tanstack/query", "TanStack Query", True),
    ("@tanstack/react-query", "npm", "/tanstack/router", "TanStack Router", False),
    ("@vercel/analytics", "npm", "/vercel/next.js", "Next.js", False),
    ("@scope/left-pad", "npm", "/someone/left-pad", None, True),   # the part after the scope
    ("python-dateutil", "pypi", "/dateutil/dateutil", None, True),
    ("beautifulsoup4", "pypi", "/wention/beautifulsoup4", "Beautiful Soup", True),
    ("github.com/gin-gonic/gin", "go", "/gin-gonic/gin", "Gin", True),
    ("github.com/gin-gonic/gin", "go", "/facebook/react", "React", False),
    ("gopkg.in/yaml.v3", "go", "/go-yaml/yaml", None, True),
    ("laravel/framework", "composer", "/laravel/framework", None, True),
    ("serde", "crates", "/serde-rs/serde", "Serde", True),
    ("left-pad", "npm", "/facebook/react", "React", False),
])
def test_a_result_agrees_only_with_its_own_name(name, eco, lid, title, ok):
    assert agrees(name, eco, lid, title) is ok


def test_a_repository_url_from_the_lockfile_names_the_repo():
    assert agrees("some-alias", "npm", "/acme/widget", None, "git+ssh://git@github.com/Acme/widget.git")
    assert not agrees("some-alias", "npm", "/acme/widget", None, "https://github.com/other/widget")
    assert repo_of_url("github:a/b") == ("a", "b") and repo_of_url("https://example.invalid/a/b") is None


@pytest.fixture
def api(store, httpserver, monkeypatch):
    monkeypatch.setenv("CONTEXT7_API_URL", httpserver.url_for("/api"))
    monkeypatch.delenv("MEMHOOKS_OFFLINE", raising=False)

    def handler(request):
        name = request.args.get("libraryName", "")
        results = [{"id": lid, "title": title, "description": "docs", "trustScore": 9,
                    "benchmarkScore": 80, "versions": [], "totalSnippets": 100}
                   for lid, title in ANSWERS.get(name, [])]
        return Response(json.dumps({"results": results}), content_type="application/json")

    httpserver.expect_request("/api/v2/libs/search").respond_with_handler(handler)
    return httpserver


@pytest.fixture
def project(store, tmp_path):
    proj = tmp_path / "project"
    (proj / "requirements.txt").write_text("fastapi==0.110.0\n")
    (proj / "package.json").write_text(json.dumps(
        {"name": "app", "dependencies": {"react": "18.3.1", "lodash": "4.17.21"}}))
    return proj


def session_context(project) -> str:
    payload = {"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": str(project),
               "hook_event_name": "SessionStart", "source": "startup"}
    r = run_hook("session-start", payload)
    assert r.returncode == 0 and r.stderr == b""
    return json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]


def test_fastapi_answered_with_react_is_rejected_everywhere(project, api, store):
    ctx = session_context(project)
    assert "react@18.3.1 → /facebook/react" in ctx
    assert "lodash@4.17.21 → /lodash/lodash" in ctx  # the agreeing result, not the first one
    assert "fastapi" not in ctx
    assert sorted(r.args["libraryName"] for r, _ in api.log) == ["fastapi", "lodash", "react"]
    rows = db_rows(store, "SELECT name_key, library_id FROM tier1")
    assert ("react", "/facebook/react") in rows and ("lodash", "/lodash/lodash") in rows
    assert not [r for r in rows if r[0] == "fastapi"]  # neither the wrong ID nor anything else
    assert run(["bash", BIN / "lc-cache-lookup", "fastapi"]).stdout == b""

    data = json.loads(run([*MEMHOOKS, "warm", "--json", project]).stdout)
    assert data["rejected"] == 1
    entry = next(e for e in data["entries"] if e["name"] == "fastapi")
    assert entry["library_id"] is None and entry["how"] == "rejected"
    assert entry["status"] == "rejected" and "result did not match the name" in entry["cause"]
    assert not [r for r in db_rows(store, "SELECT name_key FROM tier1") if r[0] == "fastapi"]
    for cols in (80, 120):
        p = run([*MEMHOOKS, "warm", project], env=dict(os.environ, COLUMNS=str(cols)))
        assert p.returncode == 0, p.stderr.decode()
        out = p.stdout.decode()
        row = next(ln for ln in out.splitlines() if ln.startswith("fastapi@0.110.0"))
        assert "rejected — result did not match the name (Context7 answered /facebook/react)" in row
        assert "1 Context7 answer rejected: the result did not match the name asked" in out


def test_a_first_result_guess_from_elsewhere_is_not_reused(project, api, store):
    """Global knowledge that was a first-result guess (another project's capture) is checked too."""
    from memhooks.store.connect import connect, transaction
    from memhooks.store.projections import upsert_tier1

    conn = connect(str(store))
    with transaction(conn):
        upsert_tier1(conn, provenance="capture", project="/elsewhere", name="fastapi", ecosystem="pypi",
                     library_id="/facebook/react", origin="capture", matched="first",
                     ttl_s=86400, now=time.time())
    conn.close()
    ctx = session_context(project)
    assert "fastapi" not in ctx
    data = json.loads(run([*MEMHOOKS, "warm", "--json", project]).stdout)
    entry = next(e for e in data["entries"] if e["name"] == "fastapi")
    assert entry["how"] == "rejected" and entry["library_id"] is None


def test_a_git_dependency_agrees_through_its_repository(store, tmp_path, httpserver, monkeypatch):
    """A manifest that names the repository (a git dependency) vouches for an ID of that repo,
    whatever the package is called; another repo's ID is still rejected."""
    from memhooks.warm.rank import rank
    from memhooks.warm.scan import scan_project

    monkeypatch.setenv("CONTEXT7_API_URL", httpserver.url_for("/api"))
    monkeypatch.delenv("MEMHOOKS_OFFLINE", raising=False)
    answers = {"house-widgets": [("/acme/widget", "Widget toolkit")],
               "house-charts": [("/facebook/react", "React")]}

    def handler(request):
        name = request.args.get("libraryName", "")
        return Response(json.dumps({"results": [{"id": i, "title": t} for i, t in answers.get(name, [])]}),
                        content_type="application/json")

    httpserver.expect_request("/api/v2/libs/search").respond_with_handler(handler)
    proj = tmp_path / "gitdeps"
    proj.mkdir()
    (proj / "package.json").write_text(json.dumps({"name": "app", "dependencies": {
        "house-widgets": "git+https://github.com/Acme/widget.git#v2",
        "house-charts": "github:acme/charts"}}))
    ranked = {d.name: d.repository for d in rank(scan_project(str(proj)).deps)}
    assert ranked == {"house-widgets": "acme/widget", "house-charts": "acme/charts"}
    data = json.loads(run([*MEMHOOKS, "warm", "--json", proj]).stdout)
    by = {e["name"]: e for e in data["entries"]}
    assert by["house-widgets"]["library_id"] == "/acme/widget" and by["house-widgets"]["how"] == "warm-api"
    assert by["house-charts"]["how"] == "rejected" and data["rejected"] == 1
