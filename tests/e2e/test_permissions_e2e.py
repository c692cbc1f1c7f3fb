"""End-to-end: the allow rules `memhooks install --allow` writes let a real `claude -p` session
run memhooks' read-only tools (lc-cache-lookup-docs through Bash, the memhooks MCP tools)
without a prompt; without them the same calls are denied."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

pytestmark = pytest.mark.e2e
claude_bin = harness.claude_bin  # the shared fixture: the pinned CLI, installed once
REPO = harness.REPO_ROOT
SHIM = REPO / "bin" / "lc-cache-lookup-docs"


SCRIPT = [[
    {"name": "Bash", "input": {"command": f'bash "{SHIM}" /facebook/react "useEffect cleanup"',
                               "description": "cached docs"}},
    {"name": "mcp__memhooks__search_documents", "input": {"query": "useEffect cleanup"}},
]]


def _decisions(env: harness.E2EEnv) -> dict[str, tuple[str | None, bool]]:
    """tool_use_id -> (permission decision, is_error) from the transcript the CLI wrote."""
    out = {}
    for f in (env.home / ".claude" / "projects").rglob("*.jsonl"):
        for line in f.read_text().splitlines():
            row = json.loads(line)
            content = (row.get("message") or {}).get("content")
            if row.get("type") != "user" or not isinstance(content, list):
                continue
            for b in content:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    out[b["tool_use_id"]] = ((row.get("permissionDecision") or {}).get("decision"),
                                             b.get("is_error") is True)
    return out


def _session(claude_bin, root: Path, allow: bool):
    env = harness.E2EEnv(root, claude_bin)
    env.settings["permissions"]["allow"] = ["mcp__context7__*"]  # nothing of memhooks
    env.write_settings()
    cli_env = env.tool_env()
    cli_env["PYTHONPATH"] = str(REPO / "src")
    args = [sys.executable, "-m", "memhooks.cli.main", "install", "--scope", "project"]
    proc = subprocess.run(args + (["--allow"] if allow else []), cwd=env.project, env=cli_env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    env.write_mcp_json()  # keep the stub servers beside memhooks' own
    r = env.run("Look it up.", SCRIPT, plugin_dir=None)
    assert r.rc == 0, r.describe()
    return env, r, proc


def test_allowed_with_the_rules_denied_without(claude_bin, tmp_path):
    env, r, proc = _session(claude_bin, tmp_path / "with", allow=True)
    got = _decisions(env)
    # (an older CLI, 2.1.197, records no permission decision in the transcript: None)
    assert got["toolu_e2e_s0_0"] in (("accept", False), (None, False)), (got, r.describe())
    assert got["toolu_e2e_s0_1"][0] in ("accept", None) and not got["toolu_e2e_s0_1"][1], (got, r.describe())
    env2, r2, proc2 = _session(claude_bin, tmp_path / "without", allow=False)
    got2 = _decisions(env2)
    assert got2["toolu_e2e_s0_0"][1] and got2["toolu_e2e_s0_1"][1], got2  # denied under -p
    assert json.dumps(f'Bash(bash "{SHIM}" *)') in proc2.stderr  # the rule was printed instead
