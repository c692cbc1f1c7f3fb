"""Version pinning: an unversioned Context7 docs call (query-docs, legacy get-library-docs,
`ctx7 docs` through Bash) asks for the version the project's lockfile pins, when Context7
lists that version. Real lockfiles warmed by the real SessionStart hook against a loopback
Context7 API (pytest-httpserver), real stores, the PreToolUse hook as a subprocess."""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing

import pytest
from werkzeug import Response

from conftest import ingest, run_hook
from memhooks.names import matching_version, versioned_id

LIB = "/facebook/react"
QUERY = "useEffect cleanup function"
V18 = ("### useEffect cleanup (React 18.2)\n\nSource: https://18.react.dev/reference/react/useEffect\n\n"
       "Return a cleanup function from your Effect.\n\n```js\nreturn () => conn.disconnect();\n```\n")
NEWEST = ("### useEffect cleanup (React 19)\n\nSource: https://react.dev/reference/react/useEffect\n\n"
          "Return a cleanup function from your Effect.\n\n```js\nreturn () => conn.close();\n```\n")


@pytest.fixture
def world(store, tmp_path, httpserver, monkeypatch):
    """A project whose package-lock.json pins react 18.2.0 and a Context7 API whose react
    versions the test sets (the warm asks it once per lockfile change)."""
    monkeypatch.setenv("CONTEXT7_API_URL", httpserver.url_for("/api"))
    monkeypatch.delenv("MEMHOOKS_OFFLINE", raising=False)
    monkeypatch.delenv("MEMHOOKS_PIN_VERSIONS", raising=False)
    project = tmp_path / "project"
    listed = {"react": ["v17.0.2", "v18.2.0", "v19.0.0"], "fastapi": ["v0.110.0"]}
    ids = {"react": LIB, "fastapi": "/fastapi/fastapi"}

    def search(request):
        name = request.args.get("libraryName", "")
        results = [] if name not in ids else [
            {"id": ids[name], "title": name.capitalize(), "description": f"{name} docs", "trustScore": 10,
             "benchmarkScore": 90, "versions": list(listed[name]), "totalSnippets": 1000}]
        return Response(json.dumps({"results": results}), content_type="application/json")

    httpserver.expect_request("/api/v2/libs/search").respond_with_handler(search)
    npm_lock(project, "18.2.0")
    return project, store, listed


def npm_lock(project, react: str | None, *, lockfile: bool = True) -> None:
    deps = {"react": f"^{react or '18.2.0'}"}
    (project / "package.json").write_text(json.dumps({"name": "app", "dependencies": deps}))
    lock = project / "package-lock.json"
    if not lockfile:
        lock.unlink(missing_ok=True)
        return
    lock.write_text(json.dumps({
        "name": "app", "lockfileVersion": 3, "requires": True,
        "packages": {"": {"name": "app", "dependencies": deps},
                     "node_modules/react": {
                         "version": react,
                         "resolved": f"https://registry.invalid/react/-/react-{react}.tgz"}}}))


def session_start(project) -> str:
    r = run_hook("session-start", {"session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": str(project),
                                   "hook_event_name": "SessionStart", "source": "startup"})
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    return json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]


def capture(db, project, library_id: str, text: str, query: str = QUERY) -> None:
    payload = {"session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": str(project),
               "hook_event_name": "PostToolUse", "tool_name": "mcp__context7__query-docs",
               "tool_input": {"libraryId": library_id, "query": query},
               "tool_response": [{"type": "text", "text": text}], "tool_use_id": f"t-{library_id}"}
    assert run_hook("post-tool-use", payload).returncode == 0
    ingest(db)


def pre(project, tool_input: dict, *, session: str = "s1", tool: str = "mcp__context7__query-docs",
        env: dict | None = None) -> dict:
    """PreToolUse's hookSpecificOutput for one call ({} when it says nothing)."""
    r = run_hook("pre-tool-use", {"session_id": session, "cwd": str(project), "hook_event_name": "PreToolUse",
                                  "tool_name": tool, "tool_input": tool_input, "tool_use_id": "u1"}, env=env)
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    return json.loads(r.stdout)["hookSpecificOutput"] if r.stdout.strip() else {}


def test_an_unversioned_call_runs_with_the_lockfile_version(world):
    project, _, _ = world
    ctx = session_start(project)
    assert f"react@18.2.0 → {LIB} (this version: {LIB}/v18.2.0)" in ctx, ctx
    out = pre(project, {"libraryId": LIB, "query": QUERY, "tokens": 5000})
    assert out["permissionDecision"] == "allow", out
    # the whole input, only the ID changed
    assert out["updatedInput"] == {"libraryId": f"{LIB}/v18.2.0", "query": QUERY, "tokens": 5000}
    told = out["additionalContext"]
    assert f"asked for {LIB};" in told and f"sent it as {LIB}/v18.2.0" in told, told
    assert '"react" 18.2.0 in "package-lock.json"' in told and "MEMHOOKS_PIN_VERSIONS=0" in told, told
    # the plugin's tool name and a trailing slash: the same pin
    plugin = pre(project, {"libraryId": LIB + "/", "query": QUERY},
                 tool="mcp__plugin_context7_context7__query-docs")
    assert plugin["updatedInput"]["libraryId"] == f"{LIB}/v18.2.0"


def test_served_from_the_pinned_versions_docs_with_the_pin_in_the_label(world):
    project, db, _ = world
    session_start(project)
    capture(db, project, LIB, NEWEST)  # the newest docs, fetched unversioned before
    capture(db, project, f"{LIB}/v18.2.0", V18)
    out = pre(project, {"libraryId": LIB, "query": QUERY})
    assert out["permissionDecision"] == "deny", out
    text = out["permissionDecisionReason"]
    head = text.splitlines()[0]
    assert f"Context7 docs for {LIB}/v18.2.0" in head, head
    assert f"version pinned: {LIB} was asked, {LIB}/v18.2.0 is served" in head, head
    assert '("react" 18.2.0 in "package-lock.json")' in head, head
    assert "React 18.2" in text and "React 19" not in text
    with closing(sqlite3.connect(db)) as c:
        assert c.execute("SELECT library_id FROM serve_log WHERE outcome = 'served'").fetchall() == [
            (f"{LIB}/v18.2.0",)]
    # the agent insists: the call runs live, still pinned
    again = pre(project, {"libraryId": LIB, "query": QUERY})
    assert again["permissionDecision"] == "allow" and again["updatedInput"]["libraryId"] == f"{LIB}/v18.2.0"
    # pinning off: the unversioned ID is answered as before (by its own docs or the
    # lockfile version's), with no pin in the label
    off = pre(project, {"libraryId": LIB, "query": QUERY}, session="s2", env=_env(MEMHOOKS_PIN_VERSIONS="0"))
    assert off["permissionDecision"] == "deny" and "updatedInput" not in off
    assert f"Context7 docs for {LIB} (" in off["permissionDecisionReason"].splitlines()[0]
    assert "version pinned" not in off["permissionDecisionReason"]


def _env(**extra) -> dict:
    return {**os.environ, **extra}


def test_the_switch_turns_pinning_off(world):
    project, _, _ = world
    session_start(project)
    for value in ("0", "false", "off"):
        assert pre(project, {"libraryId": LIB, "query": QUERY}, env=_env(MEMHOOKS_PIN_VERSIONS=value)) == {}
    # and serving's own switches leave it on: the pin is not an answer from the store
    out = pre(project, {"libraryId": LIB, "query": QUERY}, env=_env(MEMHOOKS_SERVE_CONTEXT7="0"))
    assert out["updatedInput"]["libraryId"] == f"{LIB}/v18.2.0"


def test_never_pinned(world):
    project, _, listed = world
    session_start(project)
    # an ID that names a version (either form) is the agent's choice
    for lid in (f"{LIB}/v19.0.0", f"{LIB}@19.0.0", f"{LIB}/v17.0.2"):
        assert pre(project, {"libraryId": lid, "query": QUERY}) == {}, lid
    # not a docs lookup: resolve-library-id, another library, another server's tool
    out = pre(project, {"libraryName": "react", "query": "effects"}, tool="mcp__context7__resolve-library-id")
    assert "updatedInput" not in out
    assert pre(project, {"libraryId": "/vercel/next.js", "query": QUERY}) == {}
    assert pre(project, {"libraryId": LIB, "query": QUERY}, tool="mcp__acme__query-docs") == {}
    assert pre(project, {"libraryId": LIB}) == {}  # no query: no docs call the server would run
    # another project: its lockfile pins nothing
    other = project.parent / "other"
    other.mkdir()
    assert pre(other, {"libraryId": LIB, "query": QUERY}, env=_env(CLAUDE_PROJECT_DIR=str(other))) == {}


def test_no_pin_without_a_locked_version(world):
    project, _, _ = world
    npm_lock(project, None, lockfile=False)  # package.json only: a range, no version
    ctx = session_start(project)
    assert f"- react → {LIB}" in ctx, ctx
    assert pre(project, {"libraryId": LIB, "query": QUERY}) == {}


def test_no_pin_when_context7_lists_no_matching_version(world):
    project, _, listed = world
    listed["react"] = ["v17.0.2", "v18.2.1", "v19.0.0", "canary"]  # neither 18.2.0 nor its line
    ctx = session_start(project)
    assert f"- react@18.2.0 → {LIB}" in ctx and "this version" not in ctx, ctx
    assert pre(project, {"libraryId": LIB, "query": QUERY}) == {}


def test_the_most_specific_listed_release_line(world):
    project, _, listed = world
    listed["react"] = ["v17", "v18", "v18.2", "v18.2.1", "v19.0.0"]
    npm_lock(project, "18.2.5")
    ctx = session_start(project)
    assert f"(this version: {LIB}/v18.2)" in ctx, ctx
    out = pre(project, {"libraryId": LIB, "query": QUERY})
    assert out["updatedInput"]["libraryId"] == f"{LIB}/v18.2", out


def test_legacy_get_library_docs_and_argument_aliases(world):
    project, _, _ = world
    session_start(project)
    legacy = pre(project, {"context7CompatibleLibraryID": LIB, "topic": "effects", "tokens": 3000},
                 tool="mcp__context7__get-library-docs")
    assert legacy["updatedInput"] == {"context7CompatibleLibraryID": f"{LIB}/v18.2.0", "topic": "effects",
                                      "tokens": 3000}
    # query-docs with the spelling the server maps to libraryId: that key is rewritten
    alias = pre(project, {"libraryName": LIB, "query": QUERY}, session="s2")
    assert alias["updatedInput"] == {"libraryName": f"{LIB}/v18.2.0", "query": QUERY}


def test_ctx7_docs_through_bash_gets_the_pinned_id_in_its_command(world):
    project, db, _ = world
    session_start(project)
    cmd = f'ctx7 docs {LIB} "useEffect cleanup function" --json'
    out = pre(project, {"command": cmd, "description": "Context7 docs", "timeout": 60000}, tool="Bash")
    assert out["permissionDecision"] == "allow", out
    assert out["updatedInput"] == {
        "command": f"ctx7 docs {LIB}/v18.2.0 'useEffect cleanup function' --json",
        "description": "Context7 docs", "timeout": 60000}
    assert "package-lock.json" in out["additionalContext"]
    # a versioned ID, `ctx7 library`, a command that merely mentions ctx7, and the commands
    # the hook would approve along with the pin (a package runner fetches and runs a package;
    # an assignment can run code): untouched, the user's permissions decide them
    for other in (f'ctx7 docs {LIB}/v19.0.0 "hooks"', "ctx7 library react hooks",
                  f'echo ctx7 docs {LIB} "hooks"', f'ctx7 docs {LIB} "hooks" && rm -rf x',
                  f'npx -y ctx7@0.5.12 docs {LIB} "hooks"',
                  f'NODE_OPTIONS=--require=./x.js ctx7 docs {LIB} "hooks"'):
        assert pre(project, {"command": other}, tool="Bash", session="s2") == {}, other
    cmd = f'npx -y ctx7@0.5.12 docs {LIB} "useEffect cleanup function" --json'
    # with the pinned version's docs in the store, the command is served from them
    capture(db, project, f"{LIB}/v18.2.0", V18)
    served = pre(project, {"command": cmd}, tool="Bash", session="s3")
    assert served["permissionDecision"] == "deny" and "React 18.2" in served["permissionDecisionReason"]
    assert "version pinned" in served["permissionDecisionReason"].splitlines()[0]


def test_a_python_lockfile_names_itself(world):
    project, _, _ = world
    (project / "package.json").unlink()
    (project / "package-lock.json").unlink()
    (project / "pyproject.toml").write_text('[project]\nname = "svc"\nversion = "0.1.0"\n'
                                            'dependencies = ["fastapi>=0.100"]\n')
    (project / "uv.lock").write_text(
        'version = 1\nrequires-python = ">=3.11"\n\n'
        '[[package]]\nname = "fastapi"\nversion = "0.110.0"\n'
        'source = { registry = "https://registry.invalid/simple" }\n\n'
        '[[package]]\nname = "svc"\nversion = "0.1.0"\nsource = { editable = "." }\n'
        'dependencies = [{ name = "fastapi" }]\n')
    ctx = session_start(project)
    assert "fastapi@0.110.0 → /fastapi/fastapi (this version: /fastapi/fastapi/v0.110.0)" in ctx, ctx
    out = pre(project, {"libraryId": "/fastapi/fastapi", "query": "dependency injection"})
    assert out["updatedInput"]["libraryId"] == "/fastapi/fastapi/v0.110.0"
    assert '"fastapi" 0.110.0 in "uv.lock"' in out["additionalContext"], out["additionalContext"]


def test_a_bump_moves_the_pin(world):
    project, _, _ = world
    session_start(project)
    assert pre(project, {"libraryId": LIB, "query": QUERY})["updatedInput"]["libraryId"] == f"{LIB}/v18.2.0"
    npm_lock(project, "19.0.0")
    session_start(project)
    out = pre(project, {"libraryId": LIB, "query": QUERY}, session="s2")
    assert out["updatedInput"]["libraryId"] == f"{LIB}/v19.0.0"
    assert "19.0.0" in out["additionalContext"] and "18.2.0" not in out["additionalContext"]


@pytest.mark.parametrize(("installed", "listed", "want"), [
    ("18.2.0", ["v18.2.0", "v19.0.0"], "v18.2.0"),
    ("v18.2.0", ["18.2.0"], "18.2.0"),            # Context7 lists some without the v
    ("18.2.0", ["V18.2.0"], "V18.2.0"),
    ("18.2.5", ["v18", "v18.2", "v18.2.1"], "v18.2"),  # the most specific release line
    ("18.2.5", ["v18.x", "v17"], "v18.x"),
    ("18.2.5", ["v18.2.x", "v18"], "v18.2.x"),
    ("18.2.0", ["v18.2.1", "v18.3.0"], None),     # as specific, another version
    ("18.2", ["v18.2.0"], None),                  # more specific than what is installed
    ("18.2.0", ["canary", "next", "latest"], None),
    ("18.3.0-canary-1", ["v18.3.0", "v18.3"], "v18.3"),  # a pre-release: its release line only
    ("18.3.0-canary-1", ["v18.3.0-canary-1"], "v18.3.0-canary-1"),
    ("2.0.0", ["v2", "v20"], "v2"),
    ("1.0.0", ["v10", "v1.0.0.1"], None),
    ("", ["v1"], None),
    ("1.2.3", [], None),
    ("18.02.0", ["v18.2"], "v18.2"),              # leading zeros aside
    ("1" * 5000 + ".0", ["v" + "1" * 5000, "v1"], "v" + "1" * 5000),  # no int(): never raises
    ("1.0.0", ["9" * 5000 + ".1"], None),
])
def test_matching_version_rule(installed, listed, want):
    assert matching_version(installed, listed) == want
    assert versioned_id(LIB, installed, listed) == (f"{LIB}/{want}" if want else None)
