"""`memhooks install` / `uninstall` against temp HOME and project folders (real files, real CLI)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memhooks.setup import install as inst

SCOPES = ["user", "project", "local"]
CLI = [sys.executable, "-m", "memhooks.cli.main"]
TAIL = " 2>/dev/null || true"  # a hook whose interpreter is gone exits 0


def _key() -> str:
    import hashlib

    return hashlib.sha256(os.path.abspath(sys.executable).encode()).hexdigest()[:12]


@pytest.fixture
def env(tmp_path, monkeypatch):
    home = tmp_path / "home"
    project = tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    e = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "MEMHOOKS_"))}
    e.update(HOME=str(home), MEMHOOKS_OFFLINE="1", MEMHOOKS_DB=str(tmp_path / "data" / "memhooks.db"))
    for k in [k for k in os.environ if k.startswith(("CLAUDE_", "MEMHOOKS_"))]:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("HOME", str(home))
    return {"home": home, "project": project, "env": e, "tmp": tmp_path}


def cli(env, *args, cwd=None):
    return subprocess.run([*CLI, *args], cwd=cwd or env["project"], env=env["env"],
                          capture_output=True, text=True, timeout=60)


def files_for(env, scope):
    home, proj = env["home"], env["project"].resolve()
    return {
        "user": (home / ".claude" / "settings.json", home / ".claude.json"),
        "project": (proj / ".claude" / "settings.json", proj / ".mcp.json"),
        "local": (proj / ".claude" / "settings.local.json", home / ".claude.json"),
    }[scope]


def servers_in(data, scope, project):
    if scope == "local":
        return data["projects"][str(Path(project).resolve())]["mcpServers"]
    return data["mcpServers"]


def our_commands(settings: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for event, groups in settings.get("hooks", {}).items():
        for g in groups:
            for h in g["hooks"]:
                if inst.is_our_command(h.get("command")):
                    out.setdefault(event, []).append(h["command"])
    return out


def snapshot(paths):
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) if p.exists() else None for p in paths}


FOREIGN_SETTINGS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)", "WebFetch"], "deny": ["Read(.env)"]},
    "env": {"FOO": "bar", "UNICODE": "héllo ✓"},
    "hooks": {
        "PostToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo bash-done", "timeout": 5}]},
        ],
        "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "notify-send done"}]}],
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}],
    },
    "enableAllProjectMcpServers": True,
}


def foreign_claude_json(project) -> dict:
    return {
        "numStartups": 42,
        "theme": "dark",
        "mcpServers": {"github": {"type": "stdio", "command": "npx", "args": ["-y", "gh-mcp"], "env": {}}},
        "projects": {
            str(Path(project).resolve()): {"hasTrustDialogAccepted": True, "allowedTools": [],
                                           "mcpServers": {"other": {"command": "other-mcp", "args": []}}},
            "/somewhere/else": {"hasTrustDialogAccepted": False, "mcpServers": {}},
        },
        "oauthAccount": {"emailAddress": "me@example.org"},
    }


def write_json(path: Path, data, indent=2):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------- fresh installs

@pytest.mark.parametrize("scope", SCOPES)
def test_fresh_install_writes_the_right_files(env, scope):
    proc = cli(env, "install", "--scope", scope)
    assert proc.returncode == 0, proc.stderr
    hooks_file, mcp_file = files_for(env, scope)
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert len(lines) == 3 and all(ln.startswith("created ") for ln in lines), proc.stdout
    launcher = env["tmp"] / "data" / f"memhooks-launch-{_key()}.py"  # in memhooks' data folder
    assert lines[0] == f"created {launcher} (launcher for {os.path.abspath(sys.executable)})"

    settings = json.loads(hooks_file.read_text())
    cmds = our_commands(settings)
    assert set(cmds) == {"PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart"}
    assert all(len(v) == 1 for v in cmds.values())
    assert " -I -S " in cmds["PreToolUse"][0] and cmds["PreToolUse"][0].endswith(" pre-tool-use" + TAIL)
    assert settings["hooks"]["PreToolUse"][0]["matcher"] == inst.SERVE_MATCHER
    post, start = cmds["PostToolUse"][0], cmds["SessionStart"][0]
    assert post == cmds["PostToolUseFailure"][0]
    assert " -I -S " in post and post.endswith(" post-tool-use" + TAIL)
    assert start.endswith(" session-start" + TAIL) and " -I -S " in start
    for cmd in (post, start):
        paths = inst.command_paths(cmd)
        assert len(paths) == 2 and all(os.path.isabs(p) and os.path.exists(p) for p in paths)
        assert paths == [os.path.abspath(sys.executable), str(launcher)]
    for event in ("PostToolUse", "PostToolUseFailure"):
        (group,) = settings["hooks"][event]
        assert group["matcher"] == inst.TOOL_MATCHER
        assert group["hooks"][0]["timeout"] == 10
    assert settings["hooks"]["SessionStart"][0]["hooks"][0]["timeout"] <= 10

    server = servers_in(json.loads(mcp_file.read_text()), scope, env["project"])["memhooks"]
    assert os.path.isabs(server["command"]) and os.path.exists(server["command"])
    assert server["args"] == [str(launcher), "mcp"]


@pytest.mark.parametrize("scope", SCOPES)
def test_second_install_changes_nothing(env, scope):
    assert cli(env, "install", "--scope", scope).returncode == 0
    paths = files_for(env, scope)
    before = snapshot(paths)
    proc = cli(env, "install", "--scope", scope)
    assert proc.returncode == 0
    assert "nothing changed" in proc.stdout
    assert snapshot(paths) == before  # same bytes, and not even rewritten (same mtime)


# ----------------------------------------------------------------------------- foreign content

@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("indent", [2, 4, "\t"])
def test_foreign_settings_are_preserved_and_uninstall_restores_them(env, scope, indent):
    home, proj = env["home"], env["project"]
    user_settings = home / ".claude" / "settings.json"
    proj_settings = proj / ".claude" / "settings.json"
    local_settings = proj / ".claude" / "settings.local.json"
    claude_json = home / ".claude.json"
    mcp_json = proj / ".mcp.json"
    for p in (user_settings, proj_settings, local_settings):
        write_json(p, FOREIGN_SETTINGS, indent)
    write_json(claude_json, foreign_claude_json(proj), indent)
    write_json(mcp_json, {"mcpServers": {"context7": {"command": "npx", "args": ["-y", "@upstash/context7-mcp"]}}},
               indent)
    everything = [user_settings, proj_settings, local_settings, claude_json, mcp_json]
    original = snapshot(everything)
    hooks_file, mcp_file = files_for(env, scope)

    proc = cli(env, "install", "--scope", scope)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.strip().splitlines()) == 3  # the launcher and the two files

    # Files this scope does not use are not touched at all.
    for p in everything:
        if p.resolve() not in (hooks_file.resolve(), mcp_file.resolve()):
            assert snapshot([p]) == {p: original[p]}, p

    # Settings: everything foreign is still there, ours is added next to it.
    settings = json.loads(hooks_file.read_text())
    for key in ("model", "permissions", "env", "enableAllProjectMcpServers"):
        assert settings[key] == FOREIGN_SETTINGS[key]
    assert settings["hooks"]["Stop"] == FOREIGN_SETTINGS["hooks"]["Stop"]
    assert settings["hooks"]["PostToolUse"][0] == FOREIGN_SETTINGS["hooks"]["PostToolUse"][0]
    assert settings["hooks"]["SessionStart"][0] == FOREIGN_SETTINGS["hooks"]["SessionStart"][0]
    assert len(settings["hooks"]["PostToolUse"]) == 2
    # Written back with the file's own indentation.
    unit = indent if isinstance(indent, str) else " " * indent
    assert hooks_file.read_text().splitlines()[1].startswith(unit + '"model"')

    mcp_data = json.loads(mcp_file.read_text())
    servers = servers_in(mcp_data, scope, proj)
    assert "memhooks" in servers and len(servers) == 2
    if mcp_file == claude_json:
        want = foreign_claude_json(proj)
        for key in ("numStartups", "theme", "oauthAccount"):
            assert mcp_data[key] == want[key]
        assert mcp_data["projects"]["/somewhere/else"] == want["projects"]["/somewhere/else"]

    # Uninstall puts every byte back.
    proc = cli(env, "uninstall", "--scope", scope)
    assert proc.returncode == 0, proc.stderr
    assert {p: s[0] for p, s in snapshot(everything).items()} == {p: s[0] for p, s in original.items()}
    proc = cli(env, "uninstall", "--scope", scope)
    assert "nothing changed" in proc.stdout


@pytest.mark.parametrize("scope", SCOPES)
def test_uninstall_removes_files_and_folders_install_created(env, scope):
    assert cli(env, "install", "--scope", scope).returncode == 0
    assert cli(env, "uninstall", "--scope", scope).returncode == 0
    for p in files_for(env, scope):
        assert not p.exists(), p
    assert not (env["project"] / ".claude").exists()


def test_uninstall_keeps_foreign_server_containers(env):
    proj = env["project"]
    claude_json = env["home"] / ".claude.json"
    write_json(claude_json, {"projects": {str(proj.resolve()): {"hasTrustDialogAccepted": True}}})
    before = claude_json.read_bytes()
    assert cli(env, "install", "--scope", "local").returncode == 0
    data = json.loads(claude_json.read_text())
    assert data["projects"][str(proj.resolve())]["hasTrustDialogAccepted"] is True
    assert cli(env, "uninstall", "--scope", "local").returncode == 0
    assert claude_json.read_bytes() == before


# ----------------------------------------------------------------------------- bad input, dry run

@pytest.mark.parametrize("scope", SCOPES)
def test_invalid_json_is_left_alone(env, scope):
    hooks_file, mcp_file = files_for(env, scope)
    hooks_file.parent.mkdir(parents=True, exist_ok=True)
    bad = b'{\n  "model": "opus",\n  "hooks": {\n}\n'  # unterminated
    hooks_file.write_bytes(bad)
    proc = cli(env, "install", "--scope", scope)
    assert proc.returncode != 0
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and str(hooks_file) in err[0] and "not valid JSON" in err[0]
    assert hooks_file.read_bytes() == bad
    assert not mcp_file.exists()  # all-or-nothing: the other file is not written either
    proc = cli(env, "uninstall", "--scope", scope)
    assert proc.returncode != 0 and hooks_file.read_bytes() == bad


def test_wrong_shape_is_left_alone(env):
    hooks_file, _ = files_for(env, "project")
    write_json(hooks_file, {"hooks": {"PostToolUse": {"not": "a list"}}})
    before = hooks_file.read_bytes()
    proc = cli(env, "install", "--scope", "project")
    assert proc.returncode != 0 and "hooks.PostToolUse" in proc.stderr
    assert hooks_file.read_bytes() == before


@pytest.mark.parametrize("scope", SCOPES)
def test_dry_run_writes_nothing(env, scope):
    hooks_file, mcp_file = files_for(env, scope)
    write_json(hooks_file, FOREIGN_SETTINGS)
    before = snapshot([hooks_file, mcp_file])
    proc = cli(env, "install", "--scope", scope, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "would have updated" in proc.stdout and "would have created" in proc.stdout
    assert "+++" in proc.stdout and "post-tool-use" in proc.stdout
    assert snapshot([hooks_file, mcp_file]) == before
    # and a dry-run uninstall after a real install removes nothing
    assert cli(env, "install", "--scope", scope).returncode == 0
    after_install = snapshot([hooks_file, mcp_file])
    proc = cli(env, "uninstall", "--scope", scope, "--dry-run")
    assert proc.returncode == 0 and "would have" in proc.stdout
    assert snapshot([hooks_file, mcp_file]) == after_install


# ----------------------------------------------------------------------------- file handling

def test_mode_and_symlink_are_kept(env):
    real = env["tmp"] / "dotfiles" / "settings.json"
    write_json(real, FOREIGN_SETTINGS)
    os.chmod(real, 0o600)
    link = env["home"] / ".claude" / "settings.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    assert cli(env, "install", "--scope", "user").returncode == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert (real.stat().st_mode & 0o777) == 0o600
    assert "PostToolUse" in our_commands(json.loads(real.read_text()))
    assert (env["home"] / ".claude.json").stat().st_mode & 0o777 == 0o600
    leftovers = [p for p in real.parent.iterdir() if p.name.endswith(".tmp")]
    assert not leftovers


def test_reinstall_from_another_python_updates_in_place(env, tmp_path):
    old = inst.Entries(python="/opt/old venv/bin/python", entry="/opt/old venv/lib/memhooks/_entry.py")
    inst.run("install", "project", str(env["project"]), entries=old)
    hooks_file, mcp_file = files_for(env, "project")
    assert "/opt/old venv/bin/python" in hooks_file.read_text()
    p = inst.run("install", "project", str(env["project"]))
    assert p.changes
    settings = json.loads(hooks_file.read_text())
    cmds = our_commands(settings)
    assert all(len(v) == 1 for v in cmds.values()) and "old venv" not in json.dumps(cmds)
    assert all(len(groups) == 1 for groups in settings["hooks"].values())
    assert servers_in(json.loads(mcp_file.read_text()), "project", env["project"])["memhooks"]["command"] == \
        os.path.abspath(sys.executable)


def test_a_foreign_memhooks_server_is_left_alone(env):
    _, mcp_file = files_for(env, "project")
    write_json(mcp_file, {"mcpServers": {"memhooks": {"command": "/usr/local/bin/something-else"}}})
    before = mcp_file.read_bytes()
    proc = cli(env, "install", "--scope", "project")
    assert proc.returncode == 0
    assert "did not add" in proc.stderr
    assert mcp_file.read_bytes() == before
    assert cli(env, "uninstall", "--scope", "project").returncode == 0
    assert mcp_file.read_bytes() == before


def test_paths_with_spaces_and_quotes_are_quoted():
    e = inst.Entries(python="/a b/py$thon", entry="/c d/memhooks/_entry.py")
    import shlex

    tail = shlex.split(TAIL)
    assert shlex.split(e.post_tool_use) == ["/a b/py$thon", "-I", "-S", "/c d/memhooks/_entry.py", "post-tool-use",
                                            *tail]
    assert shlex.split(e.session_start) == ["/a b/py$thon", "-I", "-S", "/c d/memhooks/_entry.py", "session-start",
                                            *tail]
    assert inst.is_our_command(e.post_tool_use)
    launched = inst.Entries(python="/a b/py$thon", entry="/d e/memhooks-launch-0123456789ab.py")
    assert shlex.split(launched.pre_tool_use)[3] == "/d e/memhooks-launch-0123456789ab.py"
    assert inst.is_our_command(launched.pre_tool_use) and inst.is_our_server(launched.server("user"))
    assert not inst.is_our_command('"/x/python" /x/my-launch-0123456789ab.py post-tool-use')


# ----------------------------------------------------------------------------- the written commands run

PAYLOAD = {
    "session_id": "s-install", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
    "hook_event_name": "PostToolUse", "tool_name": "WebFetch",
    "tool_input": {"url": "https://example.org/page", "prompt": "summarise"},
    "tool_response": {"bytes": 166, "code": 200, "codeText": "OK", "url": "https://example.org/page",
                      "result": "The page explains how to pin the flux capacitor in three steps."},
    "tool_use_id": "toolu_install_1",
}


@pytest.mark.parametrize("scope", SCOPES)
def test_installed_hook_commands_work(env, scope):
    assert cli(env, "install", "--scope", scope).returncode == 0
    hooks_file, _ = files_for(env, scope)
    cmds = our_commands(json.loads(hooks_file.read_text()))
    db = env["tmp"] / "data" / "memhooks.db"
    run_env = dict(env["env"], MEMHOOKS_DB=str(db), MEMHOOKS_NO_SPAWN="1",
                   CLAUDE_PROJECT_DIR=str(env["project"]))
    for event in ("PostToolUse", "PostToolUseFailure"):
        payload = dict(PAYLOAD, hook_event_name=event)
        proc = subprocess.run(["bash", "-c", cmds[event][0]], input=json.dumps(payload), text=True,
                              env=run_env, cwd=env["project"], capture_output=True, timeout=30)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == ""
    start = {"session_id": "s-install", "cwd": str(env["project"]), "hook_event_name": "SessionStart",
             "source": "startup", "transcript_path": "/tmp/t.jsonl"}
    proc = subprocess.run(["bash", "-c", cmds["SessionStart"][0]], input=json.dumps(start), text=True,
                          env=run_env, cwd=env["project"], capture_output=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    if proc.stdout.strip():
        json.loads(proc.stdout)
    conn = sqlite3.connect(os.path.join(os.path.dirname(db), "journal.db"))  # the raw journal
    rows = conn.execute("SELECT hook_event_name, payload FROM events ORDER BY id").fetchall()
    conn.close()
    assert len(rows) == 3
    assert [json.loads(r[1])["hook_event_name"] for r in rows] == \
        ["PostToolUse", "PostToolUseFailure", "SessionStart"]
    assert "toolu_install_1" in rows[0][1] and rows[2][0] == "SessionStart"
