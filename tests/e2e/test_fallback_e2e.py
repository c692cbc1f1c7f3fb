"""End-to-end: the real Claude Code CLI gets the store's answer when Context7 is rate-limited.

Session 1 fetches Context7 docs (stub MCP server) and memhooks captures them. Session 2, a
new claude process, runs with the stub answering every query-docs with Context7's
"Rate limited or quota exceeded…" text, and with a tier2 TTL of one second (so serving, the
PreToolUse hook, finds the capture stale and lets the calls run; the fallback accepts up to
30 days):

* the captured query, answered with the rate-limit text as ordinary text (PostToolUse):
  the tool_result the model receives is memhooks' fallback, the cached docs in the fence;
* a paraphrase of it, answered with ``isError: true`` (PostToolUseFailure): the model gets the
  live error and, appended, the fallback (``additionalContext``, the only output that event
  takes);
* a query on another topic (not covered): the live error, untouched.

The fake Messages API records what the CLI sends back, so the assertions read exactly what
the model received. Run: ``pytest -m e2e tests/e2e/test_fallback_e2e.py`` (both CLIs).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness
from stub_context7 import DOCS_PHRASE, RATE_LIMITED

from fences import bodies

pytestmark = pytest.mark.e2e
claude_bin = harness.claude_bin  # the shared fixture: the pinned and the newest CLI

C7 = "mcp__context7__"
LIB = "/facebook/react"
SAME = "useEffect cleanup"
PARAPHRASE = "how do I abort a fetch request in the effect cleanup"
OTHER = "useState lazy initializer function"

SESSION1 = [[{"name": C7 + "query-docs", "input": {"libraryId": LIB, "query": SAME}}]]
SESSION2 = [[
    {"name": C7 + "query-docs", "input": {"libraryId": LIB, "query": SAME}},
    {"name": C7 + "query-docs", "input": {"libraryId": LIB, "query": PARAPHRASE}},
    {"name": C7 + "query-docs", "input": {"libraryId": LIB, "query": OTHER}},
]]
ID_SAME, ID_PARA, ID_OTHER = (f"toolu_e2e_s0_{i}" for i in range(3))


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory, claude_bin):
    env = harness.E2EEnv(tmp_path_factory.mktemp("e2e-fallback"), claude_bin)
    first = env.run("Look up React effect cleanup.", SESSION1)
    # The capture must be in the store before the clock starts: a document's capture time
    # is when it was ingested, and a hook may still be journaling as the CLI exits.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _captured(env):
        time.sleep(0.2)
    env.wait_ingested(timeout=30)
    time.sleep(1.5)  # older than the one-second tier2 TTL of session 2
    env.extra_env.update(STUB_C7_FAIL="rate-limit", STUB_C7_ISERROR=PARAPHRASE,
                         MEMHOOKS_TIER2_TTL_S="1")
    second = env.run("Look it up again, and something else.", SESSION2)
    env.wait_ingested(timeout=30)
    return env, first, second


def _captured(env: harness.E2EEnv) -> bool:
    try:
        return env.query("SELECT count(*) FROM documents")[0][0] > 0
    except Exception:  # the store may not exist yet
        return False


def _result_block(r: harness.SessionResult, tool_use_id: str) -> dict | None:
    for body in reversed(r.message_bodies()):
        for m in body.get("messages") or []:
            for b in m.get("content") if isinstance(m.get("content"), list) else []:
                if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") == tool_use_id:
                    return b
    return None


def _after_result(r: harness.SessionResult, tool_use_id: str) -> str:
    """Everything the model was sent in the user turn that carries this tool_result (the
    tool_result and what the CLI appends to it: system reminders, hook context)."""
    for body in reversed(r.message_bodies()):
        for m in body.get("messages") or []:
            content = m.get("content") if isinstance(m.get("content"), list) else []
            if any(isinstance(b, dict) and b.get("tool_use_id") == tool_use_id for b in content):
                return json.dumps(body["messages"][body["messages"].index(m):], ensure_ascii=False)
    return ""


def _text(block: dict | None) -> str:
    from fake_api import _text_of

    return _text_of(block.get("content")) if block else ""


def _fenced(text: str) -> str:
    found = bodies(text)
    assert len(found) == 1, text[:2000]
    return found[0]


def _docs_calls(r: harness.SessionResult) -> list[str]:
    return [(m["msg"].get("params") or {}).get("arguments", {}).get("query") for m in r.mcp_log
            if m["server"] == "context7-stub" and m["msg"].get("method") == "tools/call"]


def test_session1_captured_the_docs(sessions) -> None:
    env, first, _ = sessions
    assert first.rc == 0 and not first.timed_out, first.describe()
    assert _docs_calls(first) == [SAME], first.describe()
    assert env.query("SELECT count(*) FROM documents WHERE library_id = ?", (LIB,))[0][0] >= 1


def test_every_call_of_session2_ran_live_and_was_rate_limited(sessions) -> None:
    env, _, second = sessions
    assert second.rc == 0 and not second.timed_out, second.describe()
    assert sorted(_docs_calls(second)) == sorted([SAME, PARAPHRASE, OTHER]), second.describe()
    # the journal still holds the live answers (nothing lost): the rate-limited events
    events = env.query("SELECT hook_event_name FROM journal.events WHERE tool_name = ? AND payload"
                       " LIKE '%Rate limited or quota exceeded%'", (C7 + "query-docs",))
    assert sorted(e for (e,) in events) == ["PostToolUse", "PostToolUse", "PostToolUseFailure"], events


def test_a_covered_rate_limited_call_gives_the_model_the_cached_docs(sessions) -> None:
    env, _, second = sessions
    block = _result_block(second, ID_SAME)
    text = _text(block)
    first = text.splitlines()[0] if text else ""
    print(f"[e2e fallback {env.cli_version}] {ID_SAME} is_error={block and block.get('is_error')!r}: {first[:300]}")
    assert first.startswith("[memhooks fallback] The live tool call failed (rate limited"), text[:2000]
    assert "Rate limited or quota exceeded" in first and "captured 20" in first and " ago) " in first
    assert "It may be out of date" in first
    inside = _fenced(text)
    assert DOCS_PHRASE in inside and "connection.disconnect()" in inside, text[:3000]
    assert RATE_LIMITED not in inside


def test_a_covered_failed_call_gets_the_cached_docs_beside_the_error(sessions) -> None:
    """PostToolUseFailure (isError) takes only additionalContext: the live error stays, the
    fallback follows it in the same turn."""
    env, _, second = sessions
    text = _text(_result_block(second, ID_PARA))
    assert "Rate limited or quota exceeded" in text and "[memhooks fallback]" not in text, text[:2000]
    turn = json.loads(_after_result(second, ID_PARA) or "[]")
    blob = json.dumps(turn, ensure_ascii=False)
    print(f"[e2e fallback {env.cli_version}] {ID_PARA}: additionalContext reached the model: "
          f"{'[memhooks fallback]' in blob}")
    assert "[memhooks fallback] The live tool call failed (tool error" in blob, blob[:3000]
    assert "AbortController" in blob


def test_an_uncovered_call_keeps_the_live_error(sessions) -> None:
    _, _, second = sessions
    text = _text(_result_block(second, ID_OTHER))
    assert text.strip() == RATE_LIMITED, text[:2000]
    # the turn that carries the three results holds two fallbacks, none of them for OTHER
    turn = _after_result(second, ID_OTHER)
    assert turn.count("[memhooks fallback]") == 2 and json.dumps(OTHER) not in turn.split(ID_OTHER, 1)[1]


def test_fallbacks_are_counted_with_the_cli_version_and_field(sessions) -> None:
    env, _, _ = sessions
    rows = env.query("SELECT tool, library_id, reason, field, cli_version FROM fallback_log ORDER BY id")
    print(f"[e2e fallback {env.cli_version}] fallback_log: {rows}")
    assert sorted(rows) == sorted([
        ("context7-docs", LIB, "rate limited", "updatedToolOutput", env.cli_version),
        ("context7-docs", LIB, "tool error", "additionalContext", env.cli_version),
    ]), rows
    out = subprocess.run([sys.executable, "-m", "memhooks.cli.main", "stats", "--json"],
                         capture_output=True, text=True, env=env.tool_env(), timeout=120)
    assert out.returncode == 0, out.stderr
    fb = json.loads(out.stdout)["fallbacks"]
    print(f"[e2e fallback {env.cli_version}] memhooks stats --json fallbacks: {json.dumps(fb)}")
    assert fb["fallbacks"] == 2 and fb["by_tool"][0]["tool"] == "context7-docs"
    assert fb["by_library"] == [{"library_id": LIB, "fallbacks": 2, "bytes": fb["bytes"]}]


def test_post_tool_use_hooks_exited_zero(sessions) -> None:
    _, first, second = sessions
    for r in (first, second):
        assert r.hook_errors() == [], r.describe()
