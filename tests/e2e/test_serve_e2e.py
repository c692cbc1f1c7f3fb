"""End-to-end: the real Claude Code CLI answers repeated doc and page fetches from the store.

Session 1 fetches Context7 docs (stub MCP server), an HTTPS page (WebFetch) and a page
through the EXA stub's web_fetch_exa, and
memhooks captures them. Session 2, a new claude process, asks:

* step 1: the same resolve-library-id, the same query-docs, a paraphrase of it, a
  query-docs on another topic, the same WebFetch, the same EXA web_fetch_exa;
* step 2: the identical query-docs call again (the agent insists).

The stub's request log must show no request for the served calls, one for the other
topic and one for the insisted repeat; the TLS page must not be fetched again; and
the Messages API bodies must carry the cached text, fenced, as the served calls'
tool results. Run: ``pytest -m e2e tests/e2e/test_serve_e2e.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness
from stub_context7 import DOCS_PHRASE

from fences import bodies

pytestmark = pytest.mark.e2e
claude_bin = harness.claude_bin  # the shared fixture: the pinned CLI, installed once

C7 = "mcp__context7__"
LIB = "/facebook/react"
SAME = "useEffect cleanup"
PARAPHRASE = "how do I abort a fetch request in the effect cleanup"
OTHER = "useState lazy initializer function"
PROMPT_PAGE = "How do I pin the flux capacitor?"
EXA_FETCH = {"name": "mcp__exa__web_fetch_exa", "input": {"urls": ["https://exa-stub.invalid/zod-guide"]}}

SESSION1 = [[
    {"name": C7 + "resolve-library-id", "input": {"libraryName": "react", "query": "effects"}},
    {"name": C7 + "query-docs", "input": {"libraryId": LIB, "query": SAME}},
    {"name": "WebFetch", "input": {"url": "{{TLS_BASE}}/page", "prompt": PROMPT_PAGE}},
    EXA_FETCH,
]]
SESSION2 = [
    [
        {"name": C7 + "resolve-library-id", "input": {"libraryName": "react", "query": "effects"}},
        {"name": C7 + "query-docs", "input": {"libraryId": LIB, "query": SAME}},
        {"name": C7 + "query-docs", "input": {"libraryId": LIB, "query": PARAPHRASE}},
        {"name": C7 + "query-docs", "input": {"libraryId": LIB, "query": OTHER}},
        {"name": "WebFetch", "input": {"url": "{{TLS_BASE}}/page", "prompt": PROMPT_PAGE}},
        EXA_FETCH,
    ],
    [{"name": C7 + "query-docs", "input": {"libraryId": LIB, "query": SAME}}],
]
ID_RESOLVE, ID_SAME, ID_PARA, ID_OTHER, ID_FETCH, ID_EXA = (f"toolu_e2e_s0_{i}" for i in range(6))
ID_REPEAT = "toolu_e2e_s1_0"


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory, claude_bin):
    env = harness.E2EEnv(tmp_path_factory.mktemp("e2e-serve"), claude_bin)
    first = env.run("Look up React effect cleanup and read the page.", SESSION1)
    env.wait_ingested(timeout=30)
    second = env.run("Look it up again, then something else.", SESSION2)
    return env, first, second


def _docs_calls(r: harness.SessionResult) -> list[dict]:
    """query-docs / resolve requests the Context7 stub received (tools/call arguments)."""
    out = []
    for m in r.mcp_log:
        params = m["msg"].get("params") or {}
        if m["server"] == "context7-stub" and m["msg"].get("method") == "tools/call":
            out.append({"tool": params.get("name"), **(params.get("arguments") or {})})
    return out


def _exa_calls(r: harness.SessionResult) -> list[dict]:
    return [(m["msg"].get("params") or {}) for m in r.mcp_log
            if m["server"] == "exa-stub" and m["msg"].get("method") == "tools/call"]


def _result_block(r: harness.SessionResult, tool_use_id: str) -> dict | None:
    for body in reversed(r.message_bodies()):
        for m in body.get("messages") or []:
            for b in m.get("content") if isinstance(m.get("content"), list) else []:
                if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") == tool_use_id:
                    return b
    return None


def _fenced(text: str) -> str:
    """The text between the fence lines (the note above the fence names them too)."""
    found = bodies(text)
    assert len(found) == 1, text[:2000]
    return found[0]


def _text(block: dict | None) -> str:
    from fake_api import _text_of

    return _text_of(block.get("content")) if block else ""


def test_session1_fetched_live(sessions) -> None:
    env, first, _ = sessions
    assert first.rc == 0 and not first.timed_out, first.describe()
    calls = _docs_calls(first)
    assert [c for c in calls if c["tool"] == "query-docs" and c.get("query") == SAME], first.describe()
    assert "/page" in first.tls_requests, first.describe()
    assert [c for c in _exa_calls(first) if c.get("name") == "web_fetch_exa"], first.describe()
    assert env.query("SELECT count(*) FROM documents WHERE library_id = ?", (LIB,))[0][0] >= 1


def test_session1_resolve_served_from_the_warmed_lockfile_entry(sessions) -> None:
    """SessionStart warmed react from package-lock.json, so resolve-library-id is served at
    once, with the installed version."""
    _, first, _ = sessions
    assert not [c for c in _docs_calls(first) if c["tool"] == "resolve-library-id"], first.describe()
    text = _text(_result_block(first, ID_RESOLVE))
    assert "[memhooks cache]" in text and f"Context7-compatible library ID: {LIB}" in text, text[:2000]
    assert "Installed version (project lockfile): 18.3.1" in text, text[:2000]


def test_session2_served_calls_never_reach_the_tools(sessions) -> None:
    _, _, second = sessions
    assert second.rc == 0 and not second.timed_out, second.describe()
    calls = _docs_calls(second)
    docs = [c.get("query") for c in calls if c["tool"] == "query-docs"]
    print(f"[e2e serve] session 2 Context7 stub calls: {calls}; TLS page: {second.tls_requests}")
    assert not [c for c in calls if c["tool"] == "resolve-library-id"], calls
    assert docs.count(PARAPHRASE) == 0, docs
    assert docs.count(OTHER) == 1, docs
    # SAME: served in step 1, then the identical repeat in step 2 reaches the live tool.
    assert docs.count(SAME) == 1, docs
    assert "/page" not in second.tls_requests, second.tls_requests
    assert not _exa_calls(second), _exa_calls(second)


def test_served_text_reached_the_model_fenced(sessions) -> None:
    _, _, second = sessions
    for tid in (ID_SAME, ID_PARA):
        block = _result_block(second, tid)
        assert block is not None, f"{tid}: no tool result"
        text = _text(block)
        # The CLI prefixes the reason with "PreToolUse:<tool> hook error: ".
        assert "[memhooks cache] Answered from the local memhooks cache" in text.splitlines()[0], text[:500]
        inside = _fenced(text)
        assert DOCS_PHRASE in inside or "AbortController" in inside, text[:2000]
        assert "repeat this identical call" in text
        print(f"[e2e serve] {tid} is_error={block.get('is_error')!r} first line: {text.splitlines()[0][:200]}")
    page = _text(_result_block(second, ID_FETCH))
    assert "[memhooks cache]" in page.splitlines()[0] and "flux capacitor" in _fenced(page), page[:2000]
    exa = _text(_result_block(second, ID_EXA))
    assert "[memhooks cache]" in exa.splitlines()[0] and "pelican throughput" in _fenced(exa), exa[:2000]
    resolve = _text(_result_block(second, ID_RESOLVE))
    assert "[memhooks cache]" in resolve and LIB in resolve, resolve[:2000]


def test_other_topic_and_repeat_got_live_answers(sessions) -> None:
    _, _, second = sessions
    for tid in (ID_OTHER, ID_REPEAT):
        text = _text(_result_block(second, tid))
        assert DOCS_PHRASE in text and "[memhooks cache]" not in text, f"{tid}: {text[:1000]}"


def test_cli_reports_served_calls_as_permission_denials(sessions) -> None:
    """How the pinned CLI treats a PreToolUse deny (documented in docs/serving.md)."""
    _, _, second = sessions
    out = second.output_json() or {}
    denials = out.get("permission_denials") or []
    names = sorted(d.get("tool_name", "") for d in denials)
    print(f"[e2e serve] permission_denials: {json.dumps(denials)[:1500]}")
    assert {C7 + "query-docs", C7 + "resolve-library-id", "WebFetch", EXA_FETCH["name"]} <= set(names), out
    # No PostToolUse for a served call: the tool never ran.
    served_ids = {ID_RESOLVE, ID_SAME, ID_PARA, ID_FETCH, ID_EXA}
    post_ids = {p.get("tool_use_id") for p in second.payloads("PostToolUse")}
    assert not served_ids & post_ids, post_ids


def test_serve_log_and_access_counts(sessions) -> None:
    env, _, _ = sessions
    rows = env.query("SELECT outcome, tool, count(*) FROM serve_log GROUP BY outcome, tool ORDER BY 1, 2")
    got = {(o, t): n for o, t, n in rows}
    assert got.get(("served", "context7-docs")) == 2, rows
    assert got.get(("served", "webfetch")) == 1, rows
    assert got.get(("served", "exa-fetch")) == 1, rows
    assert got.get(("served", "context7-resolve"), 0) >= 1, rows
    assert got.get(("insisted", "context7-docs")) == 1, rows
    assert env.query("SELECT max(access_count) FROM documents WHERE library_id = ?", (LIB,))[0][0] >= 2


def test_pre_tool_use_hook_ran_and_exited_zero(sessions) -> None:
    _, first, second = sessions
    for r in (first, second):
        assert r.hook_errors() == [], r.describe()
        if not r.hook_runs_logged():
            continue  # an older CLI logs no successful run: the denials show it ran
        runs = [h for h in r.hook_runs() if h["event"] == "PreToolUse"]
        print("[e2e serve] PreToolUse hook runs: " + ", ".join(f"{h['matcher']}={h['status']}/{h['ms']}ms"
                                                             for h in runs))
        assert runs and all(h["status"] == 0 for h in runs), r.describe()
