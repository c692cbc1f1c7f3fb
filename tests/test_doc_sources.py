"""Docs sources by declaration (memhooks.doc_sources): Ref, Docfork (1.x and 2.x), DeepWiki and
GitMCP payloads as their servers answer, through the real PostToolUse / PreToolUse hooks
(subprocesses): captured, searchable, served on a repeat where the row says so, their error
texts and hostile pages refused by admission; a user's own row in config.toml; bad rows."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from contextlib import closing
from pathlib import Path

import pytest

from conftest import db_rows, ingest, run, run_hook
from fences import bodies
from memhooks import doc_sources, tools
from memhooks.config_file import dumps
from memhooks.recall import search
from memhooks.store.connect import connect

FIXTURES = json.loads((Path(__file__).resolve().parent / "fixtures" / "sources" / "payloads.json").read_text())
ACME_ROW = {"name": "acme", "tools": ["mcp__acme_docs__read_page"], "key": ["url"], "url": "url", "serve": True}

# fixture -> (source name, served on a repeat)
CAPTURED = {
    "ref_read_url": ("ref", True),
    "ref_search_documentation": ("ref", False),
    "docfork_read_url": ("docfork", True),
    "docfork_search_docs": ("docfork", False),
    "docfork_fetch_url": ("docfork", True),
    "docfork_query_docs": ("docfork", False),
    "deepwiki_read_wiki_structure": ("deepwiki", True),
    "deepwiki_read_wiki_contents": ("deepwiki", True),
    "deepwiki_ask_question": ("deepwiki", False),
    "gitmcp_fetch_documentation": ("gitmcp", True),
    "gitmcp_search_documentation": ("gitmcp", False),
    "gitmcp_search_code": ("gitmcp", False),
    "gitmcp_fetch_url": ("gitmcp", True),
}
REFUSED = ("ref_read_url_503", "ref_search_unverified", "ref_read_url_interstitial", "docfork_fetch_url_503",
           "deepwiki_not_found", "gitmcp_code_failed", "gitmcp_url_missing")


def env_for(store) -> dict:
    return dict(os.environ, MEMHOOKS_DB=str(store), MEMHOOKS_NO_SPAWN="1")


def capture(store, name: str) -> None:
    r = run_hook("post-tool-use", FIXTURES[name], env=env_for(store))
    assert r.returncode == 0 and r.stdout.strip() == b"", r.stderr


def pre(store, name: str) -> dict | None:
    """The PreToolUse hook on a repeat of the fixture's call (a session of its own: a call
    repeated soon after a served one in one session goes live)."""
    payload = {**FIXTURES[name], "hook_event_name": "PreToolUse", "session_id": f"s-{uuid.uuid4().hex}"}
    payload.pop("tool_response", None)
    r = run_hook("pre-tool-use", payload, env=env_for(store))
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode().strip()
    return json.loads(out) if out else None


def served_text(answer: dict | None) -> str:
    assert answer is not None, "not served"
    out = answer["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    return out["permissionDecisionReason"]


def write_config(store, rows: list) -> None:
    path = Path(store).parent / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps({"docs_source": rows}))


# ----------------------------------------------------------------------------- the table

def test_every_builtin_row_passes_its_own_check_and_the_payloads_route_to_it():
    for row in doc_sources.BUILTIN:
        raw = {k: getattr(row, k) for k in ("name", "server", "key", "split", "heading", "serve", "type")}
        raw.update(tools=list(row.tools), fields=row.fields, key=list(row.key))
        if row.url:
            raw["url"] = row.url
        assert doc_sources.check(raw, "built-in")[1] is None, row
    for name, (source, _) in CAPTURED.items():
        server, tool = tools.parse_tool_name(FIXTURES[name]["tool_name"])
        row = doc_sources.find(server, tool)
        assert row is not None and row.name == source, name
        assert tools.is_captured(FIXTURES[name]["tool_name"])


@pytest.mark.parametrize("name", [
    "mcp__Ref__ref_read_url", "mcp__plugin_ref_ref__ref_search_documentation", "mcp__docfork__query_docs",
    "mcp__docfork-mcp__fetch_url", "mcp__docfork__docfork_read_url", "mcp__deepwiki__read_wiki_contents",
    "mcp__react-docs__fetch_react_documentation", "mcp__gitmcp__fetch_generic_url_content",
    "mcp__three_docs__search_three_js_docs", "mcp__gitmcp__search_generic_code"])
def test_the_matchers_and_the_routing_agree(name):
    assert tools.is_captured(name)
    assert re.search(tools.TOOL_MATCHER, name)


@pytest.mark.parametrize("name", [
    "mcp__github__query_docs", "mcp__wiki__read_wiki_contents", "mcp__github__search_code", "mcp__fs__fetch_url",
    "mcp__github__ask_question", "Bash"])
def test_generic_names_on_another_server_are_not_a_docs_source(name):
    assert not tools.is_captured(name)


def test_serving_matcher_names_only_rows_that_may_be_served():
    assert re.search(tools.SERVE_MATCHER, "mcp__Ref__ref_read_url")
    assert re.search(tools.SERVE_MATCHER, "mcp__deepwiki__read_wiki_contents")
    assert not re.search(tools.SERVE_MATCHER, "mcp__Ref__ref_search_documentation")
    assert not re.search(tools.SERVE_MATCHER, "mcp__deepwiki__ask_question")


def test_hooks_json_carries_the_generated_matchers():
    r = run(["python", Path(__file__).resolve().parent.parent / "scripts" / "gen_hooks_json.py", "--check"],
            env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent / "src")))
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize(("raw", "why"), [
    ({"name": "Acme", "tools": ["read"], "server": "acme"}, "name"),
    ({"name": "context7", "tools": ["read"], "server": "acme"}, "own source"),
    ({"name": "acme", "tools": ["*"], "server": "*"}, "must name its tools"),
    ({"name": "acme", "tools": ["read page"], "server": "acme"}, "not a tool-name pattern"),
    ({"name": "acme", "tools": ["read"]}, "server"),
    ({"name": "acme", "tools": ["read"], "server": "acme", "split": "paragraphs"}, "split"),
    ({"name": "acme", "tools": ["read"], "server": "acme", "url": "link", "key": ["url"]}, "url"),
    ({"name": "acme", "tools": ["read"], "server": "acme", "serve": "yes"}, "serve"),
    ({"name": "acme", "tools": ["read"], "server": "acme", "colour": "red"}, "unknown keys"),
    ("acme", "table"),
])
def test_a_bad_row_is_named(raw, why):
    row, problem = doc_sources.check(raw)
    assert row is None and problem is not None and why in problem


def test_glob_is_plain_string_work():
    assert doc_sources.glob("fetch_*_documentation", "fetch_react_documentation")
    assert not doc_sources.glob("fetch_*_documentation", "fetch_documentation")
    assert not doc_sources.glob("fetch_*_docs", "fetch_docs")
    assert doc_sources.glob("search_*_code", "search_three_js_code")
    assert not doc_sources.glob("search_*_code", "search_code")


# ----------------------------------------------------------------------------- through the hooks

@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """One store with every fixture captured (the hooks as subprocesses, then the ingester),
    shared by the tests that only read it."""
    base = tmp_path_factory.mktemp("sources")
    db = base / "data" / "memhooks.db"
    (base / "project").mkdir()
    with pytest.MonkeyPatch.context() as mp:
        for key, value in (("MEMHOOKS_DB", str(db)), ("MEMHOOKS_PYTHON", sys.executable),
                           ("CLAUDE_PROJECT_DIR", str(base / "project")), ("MEMHOOKS_OFFLINE", "1"),
                           ("XDG_STATE_HOME", str(base / "state"))):
            mp.setenv(key, value)
        for key in ("CLAUDE_PLUGIN_DATA", "CONTEXT7_API_URL", "CONTEXT7_API_KEY", "MEMHOOKS_SERVE_SOURCES"):
            mp.delenv(key, raising=False)
        for name in (*CAPTURED, *REFUSED):
            capture(db, name)
        ingest(db)
        yield db


def test_each_source_is_captured_as_its_server_answers(captured):
    got = {}
    for source_tool, tool, source, n in db_rows(
            captured, "SELECT source_tool, tool, source, count(*) FROM documents GROUP BY source_tool, tool, source"):
        got[(source_tool, tool)] = (source, n)
    assert got[("ref", "ref_read_url")] == ("ref:ref/ref_read_url url=https://react.dev/reference/react/useEffect", 1)
    assert got[("deepwiki", "read_wiki_contents")][1] == 4  # one document per `# Page:`
    assert ("docfork", "docfork_read_url") in got and ("docfork", "fetch_url") in got  # 1.x and 2.x
    assert got[("gitmcp", "fetch_react_documentation")][0] == "gitmcp:react-docs/fetch_react_documentation"
    for name, (source, _) in CAPTURED.items():
        tool = tools.parse_tool_name(FIXTURES[name]["tool_name"])[1]
        assert (source, tool) in got, name
    # the structuredContent JSON string is unwrapped: the text is stored, not its JSON
    structure = db_rows(captured, "SELECT document_text(body) FROM documents WHERE tool = 'read_wiki_structure'")
    assert structure[0][0].startswith("Available pages for facebook/react:")


def test_error_texts_and_hostile_pages_are_refused_by_admission(captured):
    texts = [r[0] for r in db_rows(captured, "SELECT document_text(body) FROM documents")]
    for name in REFUSED:
        text = FIXTURES[name]["tool_response"]
        text = text if isinstance(text, str) else text[0]["text"]
        words = text[:40].replace('{"result": "', "")
        assert not any(words in t for t in texts), name
    urls = {r[0] for r in db_rows(captured, "SELECT url FROM documents WHERE url IS NOT NULL")}
    assert "https://react.dev/reference/react/useMemo" not in urls
    assert "https://docs.example.org/guide" not in urls
    states = dict(db_rows(captured, "SELECT tool_use_id, coalesce(error, state) FROM events"))
    assert "not a document" in states["toolu_ref_read_url_503"]
    assert "not a document" in states["toolu_deepwiki_not_found"]


def test_captured_sources_are_searchable(captured):
    with closing(connect(str(captured))) as conn:
        hits = search.search_documents(conn, "fiber reconciler commit phase")
        assert hits and hits[0]["source_tool"] == "deepwiki"
        assert hits[0]["citation"].startswith('[deepwiki: "deepwiki:deepwiki/read_wiki_contents')
        ref = [h for h in search.search_documents(conn, "synchronize component external system cleanup", limit=20)
               if h["source_tool"] == "ref" and h["url"]]
        assert ref and ref[0]["citation"] == "[ref: https://react.dev/reference/react/useEffect]"
        assert any(h["source_tool"] == "docfork" for h in search.search_documents(conn, "generateStaticParams"))
        assert any(h["source_tool"] == "gitmcp" for h in search.search_documents(conn, "commitHookEffectListUnmount"))


@pytest.mark.parametrize(("name", "serves"), sorted(CAPTURED.items()))
def test_a_repeat_is_served_where_the_row_says_so(captured, name, serves):
    answer = pre(captured, name)
    if not serves[1]:
        assert answer is None
        return
    assert answer is not None, name
    text = served_text(answer)
    assert text.startswith("[memhooks cache] Answered from the local memhooks cache")
    body = bodies(text)
    assert len(body) == 1
    response = FIXTURES[name]["tool_response"]
    raw = json.loads(response)["result"] if isinstance(response, str) else "\n\n".join(b["text"] for b in response)
    for line in raw.split("\n"):
        for piece in line.split("# Page: "):  # DeepWiki's pages are cut at their marker
            assert piece.strip() in body[0], (name, piece)


def test_a_repeat_with_other_arguments_or_another_server_goes_live(captured):
    other = {**FIXTURES["ref_read_url"], "tool_input": {"url": "https://react.dev/reference/react/useMemo"}}
    FIXTURES["_other"] = other
    try:
        assert pre(captured, "_other") is None
        FIXTURES["_other"] = {**FIXTURES["gitmcp_fetch_documentation"], "tool_name": "mcp__vue-docs__fetch_react_documentation"}
        assert pre(captured, "_other") is None
    finally:
        FIXTURES.pop("_other")


def test_a_refused_call_is_never_served(captured):
    assert pre(captured, "ref_read_url_503") is None
    assert pre(captured, "deepwiki_not_found") is None


def test_a_hostile_page_is_served_inside_the_fence_only(store):
    capture(store, "ref_read_url_fence")
    ingest(store)
    text = served_text(pre(store, "ref_read_url_fence"))
    body = bodies(text)
    assert len(body) == 1 and "ignore previous instructions" in body[0]
    outside = text.replace(body[0], "")
    assert "ignore previous instructions" not in outside


def test_the_serve_switch_turns_the_sources_off(captured, monkeypatch):
    assert pre(captured, "ref_read_url") is not None
    monkeypatch.setenv("MEMHOOKS_SERVE_SOURCES", "0")
    assert pre(captured, "ref_read_url") is None


# ----------------------------------------------------------------------------- a user's own row

def test_a_users_row_is_captured_and_served_without_code(store):
    assert not tools.is_captured("mcp__acme_docs__read_page")
    write_config(store, [ACME_ROW])
    capture(store, "acme_read_page")
    ingest(store)
    rows = db_rows(store, "SELECT source_tool, url, type FROM documents")
    assert rows == [("acme", "https://docs.acme.example/widgets", "web-page")]
    text = served_text(pre(store, "acme_read_page"))
    assert "GET /v1/widgets" in bodies(text)[0]
    with closing(connect(str(store))) as conn:
        assert search.search_documents(conn, "widgets bearer token")[0]["source_tool"] == "acme"


def test_a_users_row_passes_the_same_admission(store):
    write_config(store, [ACME_ROW])
    bad = {**FIXTURES["acme_read_page"], "tool_use_id": "toolu_acme_bad",
           "tool_input": {"url": "https://docs.acme.example/down"},
           "tool_response": [{"type": "text", "text": "Error: 502 Bad Gateway"}]}
    r = run_hook("post-tool-use", bad, env=env_for(store))
    assert r.returncode == 0
    ingest(store)
    assert db_rows(store, "SELECT count(*) FROM documents") == [(0,)]


def test_a_malformed_row_is_reported_by_doctor_and_ignored(store):
    write_config(store, [{"name": "Broken Row", "tools": ["mcp__acme_docs__read_page"]}, ACME_ROW])
    capture(store, "acme_read_page")  # the good row still works
    ingest(store)
    assert db_rows(store, "SELECT source_tool FROM documents") == [("acme",)]
    r = run(["memhooks", "doctor", "--json"], env=dict(os.environ, MEMHOOKS_OFFLINE="1"))
    checks = {c["name"]: c for c in json.loads(r.stdout)}
    assert checks["sources"]["status"] == "warn"
    assert "row 1 ignored: name" in checks["sources"]["detail"]
    assert "yours: acme" in checks["sources"]["detail"]


def test_a_broken_settings_file_costs_the_rows_only(store):
    path = Path(store).parent / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[[docs_source]]\nname = \"acme\"\ntools = [\n")  # not TOML
    r = run_hook("post-tool-use", FIXTURES["acme_read_page"], env=env_for(store))
    assert r.returncode == 0 and r.stdout == b""
    r = run_hook("post-tool-use", FIXTURES["ref_read_url"], env=env_for(store))
    ingest(store)
    assert db_rows(store, "SELECT source_tool FROM documents") == [("ref",)]


def test_config_set_keeps_the_rows(store):
    write_config(store, [ACME_ROW])
    r = run(["memhooks", "config", "set", "tier2_ttl_s", "600"])
    assert r.returncode == 0, r.stderr
    assert doc_sources.user_rows(__import__("tomllib").loads((Path(store).parent / "config.toml").read_text()))[0]


# ----------------------------------------------------------------------------- JavaScript, install

JS_NAMES = ["mcp__Ref__ref_read_url", "mcp__docfork__query_docs", "mcp__docfork-mcp__fetch_url",
            "mcp__deepwiki__read_wiki_contents", "mcp__react-docs__fetch_react_documentation",
            "mcp__gitmcp__fetch_generic_url_content", "mcp__acme_docs__read_page", "mcp__github__query_docs",
            "mcp__wiki__ask_question", "mcp__github__search_code", "Bash", "mcp__fs__fetch_url"]


def node_matches(pattern: str, names: list[str]) -> list[bool]:
    """The matcher as Claude Code runs it: a JavaScript RegExp."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    script = ("const [p, n] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "process.stdout.write(JSON.stringify(n.map(x => new RegExp(p).test(x))));")
    r = subprocess.run(["node", "-e", script], input=json.dumps([pattern, names]), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_matchers_in_javascript_agree_with_the_routing_and_install_covers_a_users_row(store):
    got = dict(zip(JS_NAMES, node_matches(tools.TOOL_MATCHER, JS_NAMES), strict=True))
    for name in JS_NAMES:
        assert got[name] == (tools.is_captured(name) or name in tools.BY_COMMAND), name
    assert not got["mcp__acme_docs__read_page"]  # not a known server: hooks.json leaves it out
    write_config(store, [ACME_ROW])
    from memhooks.setup.entries import Entries

    hooks = Entries(python=sys.executable, entry="/x/_entry.py").hooks()
    post, serve = hooks["PostToolUse"][0], hooks["PreToolUse"][0]
    assert node_matches(post, ["mcp__acme_docs__read_page", "mcp__plugin_acme_acme_docs__read_page"]) == [True, True]
    assert node_matches(serve, ["mcp__acme_docs__read_page", "mcp__acme_docs__list_pages"]) == [True, False]
    assert post.startswith(tools.CORE_TOOL_MATCHER) and tools.is_captured("mcp__acme_docs__read_page")


def test_a_failed_live_read_is_answered_by_the_fallback(captured):
    failed = {**FIXTURES["ref_read_url"], "tool_use_id": "toolu_ref_fallback",
              "tool_response": [{"type": "text", "text": "Error reading URL: Request failed with status code 503"}]}
    r = run_hook("post-tool-use", failed, env=env_for(captured))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)["hookSpecificOutput"]
    given = out.get("updatedToolOutput") or out.get("updatedMCPToolOutput") or out.get("additionalContext")
    text = given if isinstance(given, str) else given[0]["text"]
    assert text.startswith("[memhooks fallback] The live tool call failed (http error")
    assert "React calls your cleanup function" in bodies(text)[0]
    # a search (its row is not served) gets no fallback
    search_failed = {**FIXTURES["ref_search_documentation"], "tool_use_id": "toolu_ref_search_fallback",
                     "tool_response": [{"type": "text", "text": "Error during documentation search: Request failed with status code 503"}]}
    r = run_hook("post-tool-use", search_failed, env=env_for(captured))
    assert r.returncode == 0 and r.stdout == b""


def test_stats_count_served_calls_by_source(captured):
    assert pre(captured, "deepwiki_read_wiki_structure") is not None
    rows = dict(db_rows(captured, "SELECT tool, count(*) FROM serve_log WHERE outcome = 'served' GROUP BY tool"))
    assert rows.get("deepwiki", 0) >= 1 and "declared" not in rows


def test_the_shared_verdict_at_the_docs_sources_door(store):
    """tests/test_verdict_doors.py's error pages and snippets, as a Ref page read, a GitMCP
    URL fetch and a user's row answer them: the pages refused, the snippets kept."""
    from _verdict import ERROR_PAGES, ERROR_PAGES_MD, SNIPPETS

    write_config(store, [ACME_ROW])
    n = 0
    for tool_name in ("mcp__Ref__ref_read_url", "mcp__gitmcp__fetch_generic_url_content", "mcp__acme_docs__read_page"):
        for text in ERROR_PAGES + SNIPPETS:
            n += 1
            event = {"hook_event_name": "PostToolUse", "session_id": "s-door", "tool_name": tool_name,
                     "tool_input": {"url": f"https://docs.example.org/p{n}"}, "tool_use_id": f"toolu_door_{n}",
                     "tool_response": [{"type": "text", "text": text}]}
            assert run_hook("post-tool-use", event, env=env_for(store)).returncode == 0
    ingest(store)
    stored = [r[0] for r in db_rows(store, "SELECT document_text(body) FROM documents")]
    leaked = [p[:40] for p in ERROR_PAGES if any(p.strip() in s for s in stored)]
    leaked += [p[:40] for p in ERROR_PAGES_MD if any(p.split("\n", 1)[1].strip() in s for s in stored)]
    assert leaked == []
    kept = dict(db_rows(store, "SELECT tool_name, count(*) FROM captures GROUP BY tool_name"))
    assert kept == {"mcp__Ref__ref_read_url": len(SNIPPETS), "mcp__gitmcp__fetch_generic_url_content": len(SNIPPETS),
                    "mcp__acme_docs__read_page": len(SNIPPETS)}  # (one document per text: kept by content)
