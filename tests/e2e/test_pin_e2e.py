"""End-to-end: version pinning with the real Claude Code CLI. Does the CLI apply PreToolUse's
`updatedInput` to an MCP tool, and to Bash? The scratch project's package-lock.json pins
react 18.3.1 and the fake Context7 API lists `v18.3.1`, so SessionStart records the
versioned ID `/facebook/react/v18.3.1`.

* Session 1 (pinning on): an unversioned `query-docs` for `/facebook/react` (stub Context7 MCP
  server) and `ctx7 docs /facebook/react …` through Bash (the real `ctx7` CLI against the fake
  API). The stub must see `/facebook/react/v18.3.1`, and so must the fake API; the model is
  told about the pin (`additionalContext`).
* Session 2 (pinning on): the same unversioned `query-docs`: served from the pinned version's
  captured docs, the label saying so; the stub sees no call.
* Session 3 (`MEMHOOKS_PIN_VERSIONS=0`): an unversioned `query-docs` on another question
  reaches the stub unversioned.

Run: ``pytest -m e2e tests/e2e/test_pin_e2e.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness
from stub_context7 import PINNED_PHRASE

from fences import bodies

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
claude_bin = harness.claude_bin

C7 = "mcp__context7__"
LIB = "/facebook/react"
PINNED = "/facebook/react/v18.3.1"
B = "{{API_BASE}}"
ASK = {"name": C7 + "query-docs", "input": {"libraryId": LIB, "query": PINNED_PHRASE}}
CTX7 = {"name": "Bash", "input": {"command": f'ctx7 --base-url {B} docs {LIB} "useEffect cleanup"',
                                  "description": "Context7 docs"}}
OTHER_QUERY = "useState lazy initializer"
OTHER = {"name": C7 + "query-docs", "input": {"libraryId": LIB, "query": OTHER_QUERY}}
ID_ASK, ID_CTX7 = "toolu_e2e_s0_0", "toolu_e2e_s0_1"


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory, claude_bin):
    env = harness.ctx7_env(tmp_path_factory.mktemp("e2e-pin"), claude_bin, "Bash(ctx7:*)",
                           MEMHOOKS_PIN_VERSIONS="1")
    first = env.run("Look up React's docs for this project.", [[ASK, CTX7]])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _docs(env, PINNED):
        time.sleep(0.2)
    env.wait_ingested(timeout=30)
    second = env.run("Look it up again.", [[ASK]])
    env.extra_env["MEMHOOKS_PIN_VERSIONS"] = "0"
    third = env.run("Look up something else.", [[OTHER]])
    return env, first, second, third


def _docs(env: harness.E2EEnv, library_id: str) -> int:
    try:
        return env.query("SELECT count(*) FROM documents WHERE library_id = ?", (library_id,))[0][0]
    except Exception:  # the store may not exist yet
        return 0


def _stub_calls(r: harness.SessionResult) -> list[dict]:
    return [(m["msg"].get("params") or {}).get("arguments") or {} for m in r.mcp_log
            if m["server"] == "context7-stub" and m["msg"].get("method") == "tools/call"
            and (m["msg"].get("params") or {}).get("name") == "query-docs"]


def _api_context(r: harness.SessionResult) -> list[str]:
    """The libraryId of each docs request the ctx7 CLI made to the fake API."""
    return [q["body"].get("libraryId", "") for q in r.requests if q["kind"] == "context7-context"]


def test_session1_the_mcp_tool_got_the_pinned_id(sessions) -> None:
    env, first, _, _ = sessions
    assert first.rc == 0 and not first.timed_out, first.describe()
    calls = _stub_calls(first)
    print(f"[e2e pin {env.cli_version}] stub query-docs arguments: {calls}")
    assert calls == [{"libraryId": PINNED, "query": PINNED_PHRASE}], first.describe()
    assert PINNED_PHRASE in (first.tool_result_text(ID_ASK) or ""), first.tool_result_text(ID_ASK)
    # PostToolUse sees the call as it ran, so the docs are stored under the pinned ID (the
    # MCP tool's and the ctx7 command's)
    posts = first.payloads("PostToolUse", C7 + "query-docs")
    assert [p["tool_input"]["libraryId"] for p in posts] == [PINNED], posts
    tools = env.query("SELECT tool FROM documents WHERE library_id = ? ORDER BY tool", (PINNED,))
    assert tools == [("ctx7 docs",), ("query-docs",)], tools
    # (the unversioned ID's only docs are session 3's, fetched with pinning off)
    topics = env.query("SELECT topic FROM documents WHERE library_id = ?", (LIB,))
    assert topics == [(OTHER_QUERY,)], topics


def test_session1_bash_ran_the_rewritten_ctx7_command(sessions) -> None:
    env, first, _, _ = sessions
    asked = _api_context(first)
    print(f"[e2e pin {env.cli_version}] ctx7 asked the API for: {asked}")
    assert asked == [PINNED], first.describe()
    posts = first.payloads("PostToolUse", "Bash")
    assert len(posts) == 1 and f"docs {PINNED} " in posts[0]["tool_input"]["command"], posts


def test_session1_the_model_was_told_about_the_pin(sessions) -> None:
    env, first, _, _ = sessions
    told = "[memhooks] Version pinned: this Context7 docs call asked for /facebook/react"
    print(f"[e2e pin {env.cli_version}] additionalContext reached the model: {first.any_request_contains(told)}")
    assert first.any_request_contains(told), first.describe()
    assert first.any_request_contains("package-lock.json")


def test_session2_served_from_the_pinned_docs_with_the_pin_in_the_label(sessions) -> None:
    env, _, second, _ = sessions
    assert second.rc == 0 and not second.timed_out, second.describe()
    assert _stub_calls(second) == [], second.describe()
    text = second.tool_result_text(ID_ASK) or ""
    head = text.splitlines()[0] if text else ""
    print(f"[e2e pin {env.cli_version}] served: {head[:300]!r}")
    assert "[memhooks cache]" in head and f"Context7 docs for {PINNED}" in head, text[:2000]
    assert f"version pinned: {LIB} was asked, {PINNED} is served" in head, head
    found = bodies(text)
    assert len(found) == 1 and PINNED_PHRASE in found[0], text[:2000]
    rows = env.query("SELECT outcome, tool_name, library_id FROM serve_log")
    assert rows == [("served", C7 + "query-docs", PINNED)], rows


def test_session3_pinning_off_sends_the_id_as_asked(sessions) -> None:
    env, _, _, third = sessions
    assert third.rc == 0 and not third.timed_out, third.describe()
    assert _stub_calls(third) == [{"libraryId": LIB, "query": OTHER_QUERY}], third.describe()
    assert not third.any_request_contains("[memhooks] Version pinned")


def test_hooks_exited_zero(sessions) -> None:
    _, first, second, third = sessions
    for r in (first, second, third):
        assert r.hook_errors() == [], r.describe()
