"""End-to-end: transcripts the real CLI just wrote, imported with `memhooks import-transcripts`.

* A session without memhooks: the import captures its Context7, WebFetch, EXA and WebSearch
  results.
* A session with memhooks loaded (live capture): the import journals nothing again, since the
  live hooks already journaled the same session and tool_use ids.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness

pytestmark = pytest.mark.e2e
claude_bin = harness.claude_bin  # the shared fixture: the pinned CLI, installed once
REPO = harness.REPO_ROOT
SCRIPT = [[
    {"name": "mcp__context7__resolve-library-id", "input": {"libraryName": "react", "query": "hooks"}},
    {"name": "mcp__context7__query-docs", "input": {"libraryId": "/facebook/react", "query": "useEffect cleanup"}},
    {"name": "WebFetch", "input": {"url": "{{TLS_BASE}}/page", "prompt": "How do I pin the flux capacitor?"}},
    {"name": "mcp__exa__web_search_exa", "input": {"query": "zod performance benchmarks"}},
    {"name": "WebSearch", "input": {"query": "zod performance"}},
]]


def _import(env: harness.E2EEnv) -> dict:
    e = env.tool_env()
    e["PYTHONPATH"] = str(REPO / "src")
    p = subprocess.run([sys.executable, "-m", "memhooks.cli.main", "import-transcripts", "--json"],
                       cwd=env.project, env=e, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_import_a_session_recorded_without_memhooks(claude_bin, tmp_path):
    env = harness.E2EEnv(tmp_path, claude_bin)
    r = env.run("Check the docs.", SCRIPT, plugin_dir=None)
    assert r.rc == 0, r.describe()
    assert not env.db.exists()  # nothing captured live
    out = _import(env)
    assert out["files"] >= 1 and out["tool_calls"]["found"] == 5 and out["events"]["new"] == 5
    rows = env.query("SELECT DISTINCT source_tool FROM documents")
    assert {"context7", "webfetch", "exa", "websearch"} <= {t for (t,) in rows}
    assert _import(env)["events"]["new"] == 0


def test_import_after_live_capture_adds_nothing(claude_bin, tmp_path):
    env = harness.E2EEnv(tmp_path, claude_bin)
    env.extra_env["MEMHOOKS_SERVE"] = "0"
    r = env.run("Check the docs.", SCRIPT, plugin_dir=REPO)
    assert r.rc == 0, r.describe()
    env.wait_ingested()
    before = env.query("SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM documents),"
                       " (SELECT count(*) FROM captures)")[0]
    out = _import(env)
    assert out["tool_calls"]["found"] == 5
    assert out["events"]["new"] == 0 and out["events"]["already_journaled"] == 5, out
    after = env.query("SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM documents),"
                      " (SELECT count(*) FROM captures)")[0]
    assert after == before
