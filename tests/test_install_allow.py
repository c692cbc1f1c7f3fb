"""`memhooks install --allow`: allow rules for memhooks' own read-only tools (its MCP tools, and
lc-cache-lookup / lc-cache-lookup-docs by exact path); uninstall removes exactly those."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memhooks.setup import install as inst

CLI = [sys.executable, "-m", "memhooks.cli.main"]
ROOT = Path(__file__).resolve().parent.parent
MINE = ["Bash(npm test *)", "mcp__context7__*", "Bash(bash /opt/x/bin/lc-cache-write *)",
        "mcp__memhooks__forget_everything", "WebFetch"]


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "home"
    project = tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    e = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "MEMHOOKS_"))}
    e.update(HOME=str(home), MEMHOOKS_OFFLINE="1", MEMHOOKS_DB=str(tmp_path / "data" / "memhooks.db"))
    return {"home": home, "project": project, "env": e}


def cli(env, *args):
    return subprocess.run([*CLI, *args], cwd=env["project"], env=env["env"], capture_output=True,
                          text=True, timeout=60)


def settings_file(env, scope):
    return {"user": env["home"] / ".claude" / "settings.json",
            "project": env["project"].resolve() / ".claude" / "settings.json",
            "local": env["project"].resolve() / ".claude" / "settings.local.json"}[scope]


def test_rules_name_the_mcp_tools_and_the_lookup_commands_by_exact_path():
    rules = inst.allow_rules(inst.default_entries())
    assert rules[:3] == ["mcp__memhooks__search_documents", "mcp__memhooks__get_document",
                         "mcp__memhooks__lookup_library"]
    shim = ROOT / "bin" / "lc-cache-lookup-docs"
    assert f'Bash(bash "{shim}" *)' in rules
    bash_rules = [r for r in rules if r.startswith("Bash(")]
    assert bash_rules and all("lc-cache-lookup" in r and "/" in r for r in bash_rules)
    assert not any("lc-cache-write" in r for r in rules)  # read-only tools only
    assert all(inst.is_our_rule(r) for r in rules)
    assert not any(inst.is_our_rule(r) for r in MINE)


@pytest.mark.parametrize("scope", ["user", "project", "local"])
def test_allow_adds_the_rules_and_uninstall_removes_exactly_those(env, scope):
    path = settings_file(env, scope)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": {"allow": list(MINE), "deny": ["Bash(rm *)"]}}, indent=2))
    p = cli(env, "install", "--scope", scope, "--allow")
    assert p.returncode == 0, p.stderr
    allow = json.loads(path.read_text())["permissions"]["allow"]
    rules = inst.allow_rules(inst.default_entries())
    assert allow[: len(MINE)] == MINE and allow[len(MINE):] == rules
    assert "To let the agent use" not in p.stderr  # nothing left to add
    assert "memhooks import-transcripts" in p.stderr  # offered, never run
    again = cli(env, "install", "--scope", scope, "--allow")
    assert again.returncode == 0 and "nothing changed" in again.stdout
    assert json.loads(path.read_text())["permissions"]["allow"] == allow
    u = cli(env, "uninstall", "--scope", scope)
    assert u.returncode == 0, u.stderr
    data = json.loads(path.read_text())
    assert data["permissions"] == {"allow": MINE, "deny": ["Bash(rm *)"]}
    assert "hooks" not in data


def test_without_allow_install_prints_the_rules_and_writes_none(env):
    p = cli(env, "install", "--scope", "project")
    assert p.returncode == 0, p.stderr
    data = json.loads(settings_file(env, "project").read_text())
    assert "permissions" not in data
    out = p.stderr
    start = out.index("[\n")
    printed = json.loads(out[start: out.index("\n]", start) + 2])
    assert printed == inst.allow_rules(inst.default_entries())
    assert str(settings_file(env, "project")) in out and "--allow" in out
    # uninstall of a file that held only ours removes it
    assert cli(env, "uninstall", "--scope", "project").returncode == 0
    assert not settings_file(env, "project").exists()


def test_plugin_rules_are_documented():
    doc = (ROOT / "docs" / "install.md").read_text()
    for tool in inst.MCP_READ_TOOLS:
        assert f"mcp__plugin_memhooks_memhooks__{tool}" in doc
        assert f"mcp__memhooks__{tool}" in doc
    assert "lc-cache-lookup-docs" in doc and "--allow" in doc
