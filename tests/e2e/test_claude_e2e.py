"""End-to-end: the real Claude Code CLI (offline, loopback fakes) with memhooks loaded.

Two ways of loading memhooks, each a module-scoped pair of identical sessions:

* ``plugin-dir``: ``claude --plugin-dir <repo root>`` (hooks.json, .mcp.json,
  ``${CLAUDE_PLUGIN_ROOT}``); memhooks' MCP tools are ``mcp__plugin_memhooks_memhooks__*``.
* ``install``: ``memhooks install --scope project`` writes the hooks and the MCP server
  into the project's ``.claude/settings.json`` / ``.mcp.json``; tools are ``mcp__memhooks__*``.

Scripted turns (fake Messages API): (1) Context7 resolve-library-id + query-docs,
WebFetch of an HTTPS page on 127.0.0.1, EXA web_search_exa, WebSearch (the fake API
plays the server-side web_search); (2) memhooks' ``search_documents`` for a phrase that
only the query-docs stub text contains; (3) end.  A third session (``error_run``) sends
Context7 error texts and an EXA ``isError`` result, which must not become documents.
``test_harness_selftest_throwaway_plugin`` checks the harness itself with a throw-away
plugin, so a red product test can be told apart from a broken harness.

Run: ``pytest -m e2e tests/e2e`` (the first run npm-installs the pinned CLI into
``~/.cache/memhooks-e2e`` or ``$MEMHOOKS_E2E_CACHE``).  Set
``MEMHOOKS_E2E_SAVE_PAYLOADS=1`` to (re)write the recorded hook payloads into
``tests/fixtures/payloads/real-cli/``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness
from fake_api import WEB_SEARCH_RESULTS
from stub_context7 import DOCS_PHRASE
from stub_exa import EXA_PHRASE, FAIL_WORD

from fences import bodies

pytestmark = pytest.mark.e2e
claude_bin = harness.claude_bin  # the shared fixture: the pinned CLI, installed once


# No conftest.py in tests/e2e on purpose: other test modules do `from conftest import …`,
# and a second conftest module on sys.path would shadow tests/conftest.py.


REPO = harness.REPO_ROOT
# The throw-away plugin's fake MCP server wraps its answer in these fixed lines.
FAKE_BEGIN = "--- begin (reference only) ---"
FAKE_END = "--- end (reference only) ---"
PAYLOAD_DIR = REPO / "tests" / "fixtures" / "payloads" / "real-cli"


def _script(search_tool: str) -> list[list[dict]]:
    return [
        [
            {"name": "mcp__context7__resolve-library-id", "input": {"libraryName": "react", "query": "hooks"}},
            {"name": "mcp__context7__query-docs",
             "input": {"libraryId": "/facebook/react", "query": "useEffect cleanup"}},
            {"name": "WebFetch", "input": {"url": "{{TLS_BASE}}/page", "prompt": "How do I pin the flux capacitor?"}},
            {"name": "mcp__exa__web_search_exa", "input": {"query": "zod performance benchmarks"}},
            {"name": "WebSearch", "input": {"query": "zod performance"}},
        ],
        [{"name": search_tool, "input": {"query": DOCS_PHRASE}}],
    ]


ID_RESOLVE, ID_DOCS, ID_FETCH, ID_EXA, ID_WEBSEARCH = (f"toolu_e2e_s0_{i}" for i in range(5))
ID_SEARCH = "toolu_e2e_s1_0"
PROMPT = "How do I clean up a React effect? Check the docs and the web."


def _memhooks_cli() -> list[str]:
    exe = Path(sys.executable).parent / "memhooks"  # this environment's, never PATH's
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-m", "memhooks.cli.main"]


def _cli_env(env: harness.E2EEnv) -> dict[str, str]:
    e = env.tool_env()
    src = str(REPO / "src")
    e["PYTHONPATH"] = src + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return e


def _product_missing() -> str | None:
    need = ["hooks.json", ".claude-plugin/plugin.json", ".mcp.json", "hooks/post-tool-use",
            "src/memhooks/_entry.py", "bin/lc-cache-lookup", "bin/lc-cache-lookup-docs"]
    missing = [p for p in need if not (REPO / p).exists()]
    return ", ".join(missing) if missing else None


class Scenario:
    def __init__(self, mode: str, env: harness.E2EEnv, search_tool: str) -> None:
        self.mode = mode
        self.env = env
        self.search_tool = search_tool
        self.runs: list[harness.SessionResult] = []
        self.counts: list[tuple[int, int]] = []  # (documents, captures) after each run
        self.install_output = ""
        self.installed_settings = ""  # files as `memhooks install` left them
        self.installed_mcp = ""


def _counts(env: harness.E2EEnv) -> tuple[int, int]:
    env.wait_ingested()
    try:
        docs = env.query("SELECT count(*) FROM documents")[0][0]
    except Exception:  # no DB / table yet
        docs = -1
    try:
        caps = env.query("SELECT count(*) FROM captures")[0][0]
    except Exception:
        caps = -1
    return docs, caps


@pytest.fixture(scope="module", params=["plugin-dir", "install"])
def scenario(request: pytest.FixtureRequest, claude_bin: Path, tmp_path_factory: pytest.TempPathFactory):
    missing = _product_missing()
    if missing:
        pytest.skip(f"memhooks product files not there yet: {missing}")
    mode = request.param
    root = tmp_path_factory.mktemp(f"e2e-{mode}")
    env = harness.E2EEnv(root, claude_bin)
    # These sessions test capture: serving from the store (test_serve_e2e.py) would answer
    # the warmed resolve-library-id and the repeated calls before they are captured.
    env.extra_env["MEMHOOKS_SERVE"] = "0"
    if mode == "plugin-dir":
        sc = Scenario(mode, env, "mcp__plugin_memhooks_memhooks__search_documents")
        plugin_dir: Path | None = REPO
    else:
        sc = Scenario(mode, env, "mcp__memhooks__search_documents")
        plugin_dir = None
        proc = subprocess.run([*_memhooks_cli(), "install", "--scope", "project"], cwd=env.project,
                              env=_cli_env(env), capture_output=True, text=True, timeout=120)
        sc.install_output = f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        assert proc.returncode == 0, f"memhooks install --scope project failed: {sc.install_output}"
        sc.installed_settings = env.settings_path().read_text()
        sc.installed_mcp = (env.project / ".mcp.json").read_text()
        # Put back our recorder hooks / permissions / stub servers if install replaced them.
        _merge_back(env)
    for _ in range(2):
        r = env.run(PROMPT, _script(sc.search_tool), plugin_dir=plugin_dir)
        print(f"[e2e {mode}] session {len(sc.runs) + 1}: claude {r.elapsed:.1f}s, wall {r.wall:.1f}s")
        sc.runs.append(r)
        sc.counts.append(_counts(env))
    if os.environ.get("MEMHOOKS_E2E_SAVE_PAYLOADS") == "1" and mode == "plugin-dir":
        harness.save_payload_fixtures(env, sc.runs[0], PAYLOAD_DIR)
    yield sc


def _merge_back(env: harness.E2EEnv) -> None:
    """After ``memhooks install``: keep its entries, re-add ours that are missing."""
    path = env.settings_path()
    current = json.loads(path.read_text()) if path.exists() else {}
    allow = current.setdefault("permissions", {}).setdefault("allow", [])
    for rule in harness.ALLOW:
        if rule not in allow:
            allow.append(rule)
    for key in ("enableAllProjectMcpServers", "skipWebFetchPreflight"):
        current.setdefault(key, env.settings[key])
    hooks = current.setdefault("hooks", {})
    for ev, groups in env.settings["hooks"].items():
        have = json.dumps(hooks.get(ev, []))
        if "_record_hook.py" not in have:
            hooks.setdefault(ev, []).extend(groups)
    env.settings = current
    env.write_settings()
    env.write_mcp_json()


def _ok(sc: Scenario, i: int = 0) -> harness.SessionResult:
    r = sc.runs[i]
    assert r.rc == 0 and not r.timed_out, r.describe()
    out = r.output_json()
    assert out and not out.get("is_error"), r.describe()
    return r


# ---------------------------------------------------------------------------


def test_session_completes_and_tools_ran(scenario: Scenario) -> None:
    r = _ok(scenario)
    calls = [(m["server"], (m["msg"].get("params") or {}).get("name"))
             for m in r.mcp_log if m["msg"].get("method") == "tools/call"]
    assert ("context7-stub", "resolve-library-id") in calls, r.describe()
    assert ("context7-stub", "query-docs") in calls, r.describe()
    assert ("exa-stub", "web_search_exa") in calls, r.describe()
    assert "/page" in r.tls_requests, r.describe()
    for tid in (ID_RESOLVE, ID_DOCS, ID_FETCH, ID_EXA, ID_WEBSEARCH, ID_SEARCH):
        assert r.tool_result_text(tid) is not None, f"no tool_result for {tid}\n{r.describe()}"


def test_sessionstart_context_reaches_model(scenario: Scenario) -> None:
    r = _ok(scenario)
    texts = []
    for body in r.main_bodies():
        for m in body.get("messages") or []:
            blob = json.dumps(m.get("content"), ensure_ascii=False)
            if "SessionStart hook additional context" in blob:
                texts.append(blob)
    assert texts, "no SessionStart additionalContext reached the model\n" + r.describe()
    ctx = texts[0]
    assert "/facebook/react" in ctx, ctx[:3000]
    assert "/colinhacks/zod" in ctx, ctx[:3000]


def test_memhooks_hooks_ran_and_exited_zero(scenario: Scenario) -> None:
    r = _ok(scenario)
    assert r.hook_errors() == [], r.describe()
    if not r.hook_runs_logged():  # an older CLI: what memhooks' hooks did shows they ran
        journaled = {t for (t,) in scenario.env.query("SELECT DISTINCT tool_name FROM journal.events"
                                                      " WHERE hook_event_name = 'PostToolUse'")}
        for tool in ("mcp__context7__resolve-library-id", "mcp__context7__query-docs", "WebFetch",
                     "mcp__exa__web_search_exa", "WebSearch"):
            assert tool in journaled, f"memhooks PostToolUse hook did not run for {tool}: {journaled}"
        assert scenario.env.query("SELECT count(*) FROM journal.events WHERE hook_event_name"
                                  " = 'SessionStart'")[0][0] >= 1
        assert r.any_request_contains("SessionStart hook additional context"), r.describe()
        return
    runs = r.hook_runs()
    print(f"[e2e {scenario.mode}] memhooks hooks: " + ", ".join(
        f"{h['event']}:{h['matcher']}={h['status']}/{h['ms']}ms" for h in runs))
    assert [h for h in runs if h["event"] == "SessionStart"], r.describe()
    post = {h["matcher"] for h in runs if h["event"] == "PostToolUse"}
    for tool in ("mcp__context7__resolve-library-id", "mcp__context7__query-docs", "WebFetch",
                 "mcp__exa__web_search_exa", "WebSearch"):
        assert tool in post, f"memhooks PostToolUse hook did not run for {tool}: {runs}"
    assert scenario.search_tool not in post, "memhooks must not capture its own search_documents output"
    assert all(h["status"] == 0 for h in runs), runs


def test_warm_used_context7_api_then_cache(scenario: Scenario) -> None:
    first = _ok(scenario, 0)
    second = _ok(scenario, 1)
    names = [r["body"].get("libraryName") for r in first.requests if r["kind"] == "context7-search"]
    assert "react" in names and "zod" in names, [(r["kind"], r["path"]) for r in first.requests]
    again = [r["path"] for r in second.requests if r["kind"] == "context7-search"]
    assert not again, f"second session (same lockfiles) asked the Context7 API again: {again}"
    assert second.any_request_contains("/facebook/react"), second.describe()


def test_hook_payloads_recorded(scenario: Scenario) -> None:
    r = _ok(scenario)
    ss = r.payloads("SessionStart")
    assert ss and ss[0].get("source") == "startup", r.describe()
    for tool in ("mcp__context7__resolve-library-id", "mcp__context7__query-docs", "WebFetch",
                 "mcp__exa__web_search_exa", "WebSearch"):
        got = r.payloads("PostToolUse", tool)
        assert got, f"no PostToolUse for {tool}\n{r.describe()}"
        p = got[0]
        assert p["tool_use_id"] and "tool_input" in p and "tool_response" in p
    mcp_resp = r.payloads("PostToolUse", "mcp__context7__query-docs")[0]["tool_response"]
    assert isinstance(mcp_resp, list) and DOCS_PHRASE in mcp_resp[0]["text"]
    wf = r.payloads("PostToolUse", "WebFetch")[0]["tool_response"]
    assert isinstance(wf, dict) and wf.get("code") == 200 and "result" in wf
    assert not r.payloads("PostToolUseFailure"), r.payloads("PostToolUseFailure")


def test_documents_captured(scenario: Scenario) -> None:
    _ok(scenario)
    env = scenario.env
    env.wait_ingested()
    rows = env.query("SELECT source_tool, type, source FROM documents")
    by_type = {(t, ty) for t, ty, _ in rows}
    sources = [s for _, _, s in rows]
    assert ("context7", "library-resolve") in by_type, rows
    assert ("context7", "library-docs") in by_type, rows
    assert any(t == "webfetch" for t, _ in by_type), rows
    assert any(t == "exa" for t, _ in by_type), rows
    assert any("/facebook/react" in (s or "") for s in sources), rows
    assert any("127.0.0.1" in (s or "") and "/page" in (s or "") for s in sources), rows
    assert any("exa-stub.invalid" in (s or "") for s in sources), rows
    docs = env.query("SELECT document_text(body) FROM documents WHERE type='library-docs'")
    assert any(DOCS_PHRASE in c for (c,) in docs), docs
    exa = env.query("SELECT document_text(body) FROM documents WHERE source_tool='exa'")
    assert any(EXA_PHRASE in c for (c,) in exa), exa


def test_websearch_captured(scenario: Scenario) -> None:
    _ok(scenario)
    env = scenario.env
    env.wait_ingested()
    rows = env.query("SELECT source_tool, type, source, document_text(body) FROM documents WHERE source_tool='websearch'")
    assert rows, env.query("SELECT source_tool, type, source FROM documents")
    blob = json.dumps(rows)
    assert any(url in blob for _, url in WEB_SEARCH_RESULTS), rows


def test_second_session_dedups(scenario: Scenario) -> None:
    _ok(scenario, 0)
    _ok(scenario, 1)
    (d1, c1), (d2, c2) = scenario.counts
    assert d1 > 0 and c1 > 0, scenario.counts
    assert d2 == d1, f"second identical session added documents: {scenario.counts}"
    assert c2 > c1, f"second session added no captures: {scenario.counts}"


def _strings(obj) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, list):
        return [x for v in obj for x in _strings(v)]
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in _strings(v)]
    return []


def test_search_documents_returns_fenced_capture(scenario: Scenario) -> None:
    r = _ok(scenario)
    raw = r.tool_result_text(ID_SEARCH)
    assert raw is not None, r.describe()
    # The tool may answer plain text or JSON; FTS highlighting may wrap terms in **…**.
    try:
        text = "\n".join(_strings(json.loads(raw)))
    except ValueError:
        text = raw
    text = text.replace("**", "")
    fenced = bodies(text)
    assert fenced, raw[:3000]
    assert any(DOCS_PHRASE in seg for seg in fenced), f"query-docs text is not inside a fence:\n{raw[:3000]}"


def _lookup(scenario: Scenario, *args: str) -> subprocess.CompletedProcess:
    env = scenario.env
    return subprocess.run(["bash", *args], cwd=env.project, env=_cli_env(env),
                          capture_output=True, text=True, timeout=60)


def test_lc_cache_lookup(scenario: Scenario) -> None:
    _ok(scenario)
    p = _lookup(scenario, str(REPO / "bin" / "lc-cache-lookup"), "react")
    assert p.returncode == 0 and "/facebook/react" in p.stdout, f"rc={p.returncode}\n{p.stdout}\n{p.stderr}"


def test_lc_cache_lookup_docs(scenario: Scenario) -> None:
    _ok(scenario)
    p = _lookup(scenario, str(REPO / "bin" / "lc-cache-lookup-docs"), "/facebook/react", "useEffect cleanup")
    assert p.returncode == 0 and DOCS_PHRASE in p.stdout, f"rc={p.returncode}\n{p.stdout}\n{p.stderr}"


def test_install_writes_absolute_entries_and_keeps_ours(scenario: Scenario) -> None:
    if scenario.mode != "install":
        pytest.skip("install mode only")
    settings = json.loads(scenario.installed_settings)
    mcp = json.loads(scenario.installed_mcp)
    # ours survived
    assert set(harness.ALLOW) <= set(settings.get("permissions", {}).get("allow", [])), settings
    assert settings.get("enableAllProjectMcpServers") is True, settings
    assert "_record_hook.py" in json.dumps(settings.get("hooks", {})), settings
    assert {"context7", "exa"} <= set(mcp.get("mcpServers", {})), mcp
    # theirs: hooks for SessionStart/PostToolUse and server `memhooks`, absolute paths
    hooks = settings.get("hooks", {})
    for ev in ("SessionStart", "PostToolUse"):
        cmds = [h.get("command", "") for g in hooks.get(ev, []) for h in g.get("hooks", [])]
        mine = [c for c in cmds if "memhooks" in c and "_record_hook" not in c]
        assert mine, f"no memhooks {ev} hook: {cmds}"
        assert all("${" not in c for c in mine), mine
    server = mcp["mcpServers"].get("memhooks")
    assert server and os.path.isabs(server.get("command", "")), mcp


def test_session_wall_time(scenario: Scenario) -> None:
    for r in scenario.runs:
        assert r.elapsed < 60, r.describe()


# ---------------------------------------------------------------------------
# Harness self-test: a throw-away plugin (hooks that echo a fixed SessionStart
# context, an MCP server named memhooks), so harness problems are told apart from
# product problems.

_FAKE_MCP = """
import sys
sys.path.insert(0, %r)
from _mcp_stdio import serve
serve("memhooks-fake", "0", [{"name": "search_documents", "description": "search",
      "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}],
      {"search_documents": lambda a: "%s\\n" + a.get("query", "") + "\\n%s"})
"""


def _throwaway_plugin(root: Path) -> Path:
    plug = root / "plugin"
    (plug / ".claude-plugin").mkdir(parents=True)
    (plug / "hooks").mkdir()
    (plug / ".claude-plugin" / "plugin.json").write_text(json.dumps(
        {"name": "memhooks", "version": "0.0.0", "description": "e2e self-test", "hooks": "./hooks.json"}))
    ctx = json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                             "additionalContext": "selftest: react -> /facebook/react"}})
    (plug / "hooks" / "session-start").write_text(f"#!/bin/sh\ncat >/dev/null\necho '{ctx}'\n")
    (plug / "hooks" / "session-start").chmod(0o755)
    (plug / "hooks.json").write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": '"${CLAUDE_PLUGIN_ROOT}/hooks/session-start"', "timeout": 10}]}]}}))
    (plug / "fake_mcp.py").write_text(_FAKE_MCP % (str(harness.HERE), FAKE_BEGIN, FAKE_END))
    (plug / ".mcp.json").write_text(json.dumps({"mcpServers": {"memhooks": {
        "command": sys.executable, "args": ["${CLAUDE_PLUGIN_ROOT}/fake_mcp.py"]}}}))
    return plug


def test_harness_selftest_throwaway_plugin(claude_bin: Path, tmp_path: Path) -> None:
    plug = _throwaway_plugin(tmp_path)
    env = harness.E2EEnv(tmp_path / "w", claude_bin)
    r = env.run(PROMPT, _script("mcp__plugin_memhooks_memhooks__search_documents"), plugin_dir=plug)
    assert r.rc == 0 and not r.timed_out, r.describe()
    assert r.any_request_contains("SessionStart hook additional context: selftest"), r.describe()
    for tid in (ID_RESOLVE, ID_DOCS, ID_FETCH, ID_EXA, ID_WEBSEARCH):
        assert r.tool_result_text(tid), f"{tid}: {r.describe()}"
    assert WEB_SEARCH_RESULTS[0][1] in (r.tool_result_text(ID_WEBSEARCH) or "")
    assert "flux capacitor" in (r.tool_result_text(ID_FETCH) or "")
    assert DOCS_PHRASE in (r.tool_result_text(ID_DOCS) or "")
    assert EXA_PHRASE in (r.tool_result_text(ID_EXA) or "")
    search = r.tool_result_text(ID_SEARCH) or ""
    assert FAKE_BEGIN in search and DOCS_PHRASE in search, r.describe()
    assert len(r.payloads("PostToolUse")) == 6, r.describe()


# ---------------------------------------------------------------------------
# Error results: Context7's error texts arrive as normal PostToolUse text, an MCP
# isError as PostToolUseFailure.  memhooks must journal them and store no document.

ERROR_SCRIPT = [[
    {"name": "mcp__context7__resolve-library-id", "input": {"libraryName": "nosuchlib", "query": "anything"}},
    {"name": "mcp__context7__query-docs", "input": {"libraryId": "/nope/missing", "query": "anything"}},
    {"name": "mcp__exa__web_search_exa", "input": {"query": f"zod {FAIL_WORD}"}},
]]


@pytest.fixture(scope="module")
def error_run(claude_bin: Path, tmp_path_factory: pytest.TempPathFactory):
    missing = _product_missing()
    if missing:
        pytest.skip(f"memhooks product files not there yet: {missing}")
    env = harness.E2EEnv(tmp_path_factory.mktemp("e2e-errors"), claude_bin)
    env.extra_env["MEMHOOKS_SERVE"] = "0"
    r = env.run("Look up a library that does not exist.", ERROR_SCRIPT)
    if os.environ.get("MEMHOOKS_E2E_SAVE_PAYLOADS") == "1":
        harness.save_payload_fixtures(env, r, PAYLOAD_DIR, "error-")
    return env, r


def test_error_payload_shapes(error_run) -> None:
    env, r = error_run
    assert r.rc == 0, r.describe()
    assert r.payloads("PostToolUse", "mcp__context7__resolve-library-id"), r.describe()
    assert r.payloads("PostToolUse", "mcp__context7__query-docs"), r.describe()
    fail = r.payloads("PostToolUseFailure", "mcp__exa__web_search_exa")
    assert fail and isinstance(fail[0].get("error"), str) and "tool_response" not in fail[0], r.describe()


def test_error_results_not_stored(error_run) -> None:
    env, r = error_run
    assert r.rc == 0, r.describe()
    env.wait_ingested()
    rows = env.query("SELECT type, source, substr(document_text(body), 1, 200) FROM documents")
    bad = [row for row in rows if any(s in (row[2] or "") for s in (
        "No libraries found", "does not exist", "Unauthorized"))]
    assert not bad, f"error texts stored as documents: {bad}"
    cols = {c[1] for c in env.query("PRAGMA table_info(events)")}
    if "tool_use_id" in cols:
        ids = {row[0] for row in env.query("SELECT tool_use_id FROM events")}
        for tid in ("toolu_e2e_s0_0", "toolu_e2e_s0_1", "toolu_e2e_s0_2"):
            assert tid in ids, f"{tid} not journaled: {ids}"
