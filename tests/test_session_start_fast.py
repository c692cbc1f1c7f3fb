"""SessionStart with unchanged lockfiles: the answer comes from tier1 first; the event is
journaled by a forked child after the answer, and no ingester is started for it alone."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, plugin_env, wait_idle

pytestmark = pytest.mark.version  # runs on every supported Python in CI


@pytest.fixture
def plugin(tmp_path):
    env = plugin_env(tmp_path)
    return env, Path(env["CLAUDE_PLUGIN_DATA"]), Path(env["CLAUDE_PROJECT_DIR"])


def _run(env, rel, *args, stdin=""):
    proc = subprocess.run(["bash", str(ROOT / rel), *args], input=stdin, text=True, env=env,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _start(project) -> str:
    return json.dumps({"session_id": "s1", "transcript_path": "/tmp/t", "cwd": str(project),
                       "hook_event_name": "SessionStart", "source": "startup"})


def _events(data: Path) -> list[tuple]:
    conn = sqlite3.connect(str(data / "journal.db"), timeout=10)
    try:
        return conn.execute("SELECT id, hook_event_name, state FROM events ORDER BY id").fetchall()
    finally:
        conn.close()


def _poll(check, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def _ingest_runs(tmp_path) -> int:
    trace = tmp_path / "trace"
    lines = trace.read_text().splitlines() if trace.exists() else []
    return sum(1 for line in lines if line.split(" ", 1)[0] == "ingest")


def _warmed(env, data, project):
    """A store with react in tier1 and a first (warming) SessionStart behind it."""
    _run(env, "bin/lc-cache-write", "tier1", "react", "/facebook/react")
    out = _run(env, "hooks/session-start", stdin=_start(project))
    assert "/facebook/react" in out
    # the warming session started an ingester: let it finish (and trace itself)
    _poll(lambda: all(state != "pending" for _, _, state in _events(data)))
    wait_idle(data / "memhooks.db")
    time.sleep(0.5)
    wait_idle(data / "memhooks.db")


def test_an_answered_session_start_journals_its_event(plugin, tmp_path):
    env, data, project = plugin
    _warmed(env, data, project)
    before, runs = len(_events(data)), _ingest_runs(tmp_path)
    out = _run(env, "hooks/session-start", stdin=_start(project))
    # exactly one JSON object, from tier1
    assert out.endswith("\n") and out.count("\n") == 1
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "react → /facebook/react (cached)" in context
    # the hook journaled the event before it answered (raw, redacted like every event) ...
    rows = _events(data)
    assert len(rows) == before + 1 and rows[-1][1:] == ("SessionStart", "pending")
    # ... and started no ingester for an event that adds no answer (one it started would
    # hold the lock within a moment)
    time.sleep(2.0)
    wait_idle(data / "memhooks.db")
    assert _ingest_runs(tmp_path) == runs
    # a reader ingests it like any event
    proc = subprocess.run([sys.executable, "-m", "memhooks.cli.main", "stats", "--json"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert all(state != "pending" for _, _, state in _events(data))


def test_an_answered_session_start_still_starts_an_ingester_for_other_work(plugin, tmp_path):
    """A capture journaled while no ingester could start (MEMHOOKS_NO_SPAWN) is picked up by
    the next SessionStart's ingester, even though that session answered from tier1."""
    env, data, project = plugin
    _warmed(env, data, project)
    post = json.dumps({"session_id": "s1", "hook_event_name": "PostToolUse", "cwd": str(project),
                       "tool_name": "mcp__context7__query-docs", "tool_use_id": "t1",
                       "tool_input": {"libraryId": "/facebook/react", "query": "hooks"},
                       "tool_response": [{"type": "text", "text": "### Hooks\n\nuseState keeps state."}]})
    _run(dict(env, MEMHOOKS_NO_SPAWN="1"), "hooks/post-tool-use", stdin=post)
    assert [r[1:] for r in _events(data) if r[1] == "PostToolUse"] == [("PostToolUse", "pending")]
    out = _run(env, "hooks/session-start", stdin=_start(project))
    assert "/facebook/react" in out
    _poll(lambda: [r[2] for r in _events(data) if r[1] == "PostToolUse"] == ["done"])


def test_a_lookup_miss_does_not_wait_on_session_start_events(plugin, tmp_path):
    """Pending SessionStart events add no answer: a lookup miss does not run an ingester for them."""
    env, data, project = plugin
    _warmed(env, data, project)
    _run(env, "hooks/session-start", stdin=_start(project))
    _poll(lambda: sum(1 for r in _events(data) if r[1:] == ("SessionStart", "pending")) >= 1)
    wait_idle(data / "memhooks.db")
    runs = _ingest_runs(tmp_path)
    assert _run(env, "bin/lc-cache-lookup", "no-such-library") == ""
    assert _ingest_runs(tmp_path) == runs
