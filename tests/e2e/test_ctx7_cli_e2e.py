"""End-to-end: Context7's CLI mode. The real Claude Code CLI runs the real `ctx7` CLI (npm,
pinned in harness.CTX7_VERSION) through Bash against the loopback fake Context7 API
(`--base-url`), with memhooks' plugin hooks.

* Session 1: `ctx7 library react`, `ctx7 docs /facebook/react "useEffect cleanup"` (both
  reach the fake API, both are captured) and `echo ctx7 docs …` (a command that merely
  mentions ctx7: never journaled).
* Session 2: the same `ctx7 docs` (served from the store: the fake API sees no second
  context request) and the same `echo` (runs, not served).
* Session 3 (serving off): `ctx7 docs` against a closed port: the CLI exits 1 with
  `✖ fetch failed` (PostToolUseFailure) and memhooks gives the captured docs beside the error
  (`additionalContext`).

Run: ``pytest -m e2e tests/e2e/test_ctx7_cli_e2e.py``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness
from fake_api import CONTEXT7_API_PHRASE

from fences import bodies

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
claude_bin = harness.claude_bin

B = "{{API_BASE}}"
LIBRARY = f"ctx7 --base-url {B} library react"
DOCS = f'ctx7 --base-url {B} docs /facebook/react "useEffect cleanup"'
MENTION = 'echo ctx7 docs /facebook/react "useEffect cleanup"'
DEAD = 'CTX7_TELEMETRY_DISABLED=1 ctx7 --base-url http://127.0.0.1:9 docs /facebook/react "useEffect cleanup"'


def bash(command: str) -> dict:
    return {"name": "Bash", "input": {"command": command, "description": "Context7 lookup"}}


SESSION1 = [[bash(LIBRARY), bash(DOCS), bash(MENTION)]]
SESSION2 = [[bash(DOCS), bash(MENTION)]]
SESSION3 = [[bash(DEAD)]]
ID_LIBRARY, ID_DOCS, ID_MENTION = (f"toolu_e2e_s0_{i}" for i in range(3))


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory, claude_bin):
    env = harness.ctx7_env(tmp_path_factory.mktemp("e2e-ctx7"), claude_bin, "Bash")
    first = env.run("Look up React's effect cleanup with the ctx7 CLI.", SESSION1)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _docs(env):
        time.sleep(0.2)
    env.wait_ingested(timeout=30)
    second = env.run("Look it up again.", SESSION2)
    env.wait_ingested(timeout=30)
    env.extra_env["MEMHOOKS_SERVE"] = "0"
    third = env.run("Look it up once more.", SESSION3)
    env.wait_ingested(timeout=30)
    return env, first, second, third


def _docs(env: harness.E2EEnv) -> int:
    try:
        return env.query("SELECT count(*) FROM documents WHERE library_id = '/facebook/react'")[0][0]
    except Exception:  # the store may not exist yet
        return 0


def _api(r: harness.SessionResult, kind: str) -> list[str]:
    """The fake API's requests of the ctx7 CLI (SessionStart's warm asks too, with other
    arguments: a `query` for every lockfile name)."""
    if kind == "context7-search":
        return [q["path"] for q in r.requests if q["kind"] == kind and q["path"].endswith("?libraryName=react")]
    return [q["path"] for q in r.requests if q["kind"] == kind and "query=useEffect+cleanup" in q["path"]]


def _bash_events(env: harness.E2EEnv) -> list[tuple[str, str]]:
    rows = env.query("SELECT hook_event_name, payload FROM journal.events WHERE tool_name = 'Bash' ORDER BY id")
    return [(ev, json.loads(p)["tool_input"]["command"]) for ev, p in rows]


def _after_result(r: harness.SessionResult, tool_use_id: str) -> str:
    for body in reversed(r.message_bodies()):
        msgs = body.get("messages") or []
        for i, m in enumerate(msgs):
            content = m.get("content") if isinstance(m.get("content"), list) else []
            if any(isinstance(b, dict) and b.get("tool_use_id") == tool_use_id for b in content):
                return json.dumps(msgs[i:], ensure_ascii=False)
    return ""


def test_session1_ran_ctx7_live_and_captured_library_and_docs(sessions) -> None:
    env, first, _, _ = sessions
    assert first.rc == 0 and not first.timed_out, first.describe()
    assert len(_api(first, "context7-search")) == 1 and len(_api(first, "context7-context")) == 1, first.describe()
    [(lid, matched)] = env.query("SELECT library_id, matched FROM tier1 WHERE name_key = 'react' "
                                 "AND library_id IS NOT NULL")
    assert (lid, matched) == ("/facebook/react", "exact")
    rows = env.query("SELECT topic, tool, document_text(body) FROM documents WHERE library_id = '/facebook/react'")
    print(f"[e2e ctx7 {env.cli_version}] documents: {[(t, tool) for t, tool, _ in rows]}")
    assert [(t, tool) for t, tool, _ in rows] == [("useEffect cleanup", "ctx7 docs")], rows
    assert CONTEXT7_API_PHRASE in rows[0][2]
    assert env.query("SELECT count(*) FROM tier2 WHERE library_key = '/facebook/react'")[0][0] == 1


def test_a_command_that_mentions_ctx7_is_never_journaled(sessions) -> None:
    env, first, second, _ = sessions
    commands = [c for _, c in _bash_events(env)]
    assert not any(c.startswith("echo") for c in commands), commands
    assert first.tool_result_text(ID_MENTION).strip() == "ctx7 docs /facebook/react useEffect cleanup"
    assert second.tool_result_text("toolu_e2e_s0_1").strip() == "ctx7 docs /facebook/react useEffect cleanup"


def test_session2_repeat_is_served_and_the_api_sees_one_call_not_two(sessions) -> None:
    env, first, second, _ = sessions
    assert second.rc == 0 and not second.timed_out, second.describe()
    assert _api(second, "context7-context") == [], second.describe()
    text = second.tool_result_text("toolu_e2e_s0_0") or ""
    print(f"[e2e ctx7 {env.cli_version}] served: {text[:300]!r}")
    assert "[memhooks cache]" in text and "Context7 docs for /facebook/react" in text, text[:2000]
    found = bodies(text)
    assert len(found) == 1 and CONTEXT7_API_PHRASE in found[0], text[:2000]
    rows = env.query("SELECT outcome, tool, tool_name, library_id FROM serve_log")
    assert rows == [("served", "context7-docs", "Bash", "/facebook/react")], rows
    denials = (second.output_json() or {}).get("permission_denials") or []
    assert [d.get("tool_name") for d in denials] == ["Bash"], denials


def test_session3_failed_live_call_gets_the_cached_docs_beside_the_error(sessions) -> None:
    env, _, _, third = sessions
    assert third.rc == 0 and not third.timed_out, third.describe()
    failures = third.payloads("PostToolUseFailure", "Bash")
    assert failures and "fetch failed" in failures[0].get("error", ""), third.describe()
    blob = _after_result(third, "toolu_e2e_s0_0")
    print(f"[e2e ctx7 {env.cli_version}] fallback reached the model: {'[memhooks fallback]' in blob}")
    assert "fetch failed" in blob and "[memhooks fallback] The live tool call failed (tool error" in blob, blob[:3000]
    assert CONTEXT7_API_PHRASE in blob
    rows = env.query("SELECT tool, tool_name, library_id, field FROM fallback_log")
    assert rows == [("context7-docs", "Bash", "/facebook/react", "additionalContext")], rows


def test_only_ctx7_lookups_were_journaled_and_hooks_exited_zero(sessions) -> None:
    env, first, second, third = sessions
    events = _bash_events(env)
    print(f"[e2e ctx7 {env.cli_version}] Bash events: {events}")
    assert [ev for ev, _ in events] == ["PostToolUse", "PostToolUse", "PostToolUseFailure"], events
    assert all(" ctx7 " in f" {c}" for _, c in events)
    for r in (first, second, third):
        assert r.hook_errors() == [], r.describe()
