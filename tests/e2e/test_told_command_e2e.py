"""One rule, with the real CLI: in a pip venv (memhooks installed into it, not editable, the
venv activated), with `uv tool install`, and for the plugin from a marketplace, the lc-cache
command SessionStart tells the agent to run is one the rules of `memhooks install --allow`
cover: the agent's call runs without approval under `claude -p`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness
from test_permissions_e2e import _decisions
from test_plugin_install_e2e import checkout_copy, install_from_marketplace

pytestmark = pytest.mark.e2e
claude_bin = harness.claude_bin


def test_the_told_command_runs_without_approval_in_an_activated_venv(claude_bin, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(checkout_copy(tmp_path / "memhooks"))],
                         capture_output=True, text=True, timeout=900)
    if pip.returncode != 0:
        pytest.skip(f"pip cannot install memhooks here: {pip.stderr[-400:]}")
    env = harness.E2EEnv(tmp_path / "w", claude_bin)
    env.settings["permissions"]["allow"] = []  # nothing of memhooks but what install writes
    env.settings["hooks"] = {}
    env.write_settings()
    activated = f"{venv / 'bin'}:{os.environ.get('PATH', '')}"
    env.extra_env.update(PATH=activated, MEMHOOKS_PYTHON=str(venv / "bin" / "python"))
    tool_env = dict(env.tool_env(), PATH=activated)
    done = subprocess.run([str(venv / "bin" / "memhooks"), "install", "--scope", "project", "--allow"],
                          cwd=env.project, env=tool_env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    told = subprocess.run([str(venv / "bin" / "python"), "-c",
                           "from memhooks.warm.context import lookup_command; print(lookup_command('lc-cache-lookup-docs'))"],
                          env=tool_env, capture_output=True, text=True, timeout=60).stdout.strip()
    assert told == f'"{venv / "bin" / "lc-cache-lookup-docs"}"'  # activated, yet not the bare name
    script = [[{"name": "Bash", "input": {"command": f'{told} /facebook/react "useEffect cleanup"',
                                          "description": "cached docs"}}]]
    r = env.run("Look it up.", script, plugin_dir=None)
    assert r.rc == 0, r.describe()
    assert r.any_request_contains(json.dumps(told)[1:-1]), r.describe()  # SessionStart told it so
    decision, is_error = _decisions(env)["toolu_e2e_s0_0"]
    assert decision in ("accept", None) and not is_error, r.describe()


def _uv() -> str | None:
    import shutil

    found = shutil.which("uv")
    if found:
        return found
    tools = Path(os.environ.get("MEMHOOKS_E2E_CACHE") or Path.home() / ".cache" / "memhooks-e2e") / "uv-venv"
    if not (tools / "bin" / "uv").exists():
        subprocess.run([sys.executable, "-m", "venv", str(tools)], capture_output=True)
        subprocess.run([str(tools / "bin" / "pip"), "install", "-q", "uv"], capture_output=True, timeout=600)
    return str(tools / "bin" / "uv") if (tools / "bin" / "uv").exists() else None


def _told(python: Path, env: dict) -> str:
    return subprocess.run([str(python), "-I", "-c",
                           "from memhooks.warm.context import lookup_command; print(lookup_command('lc-cache-lookup-docs'))"],
                          env=env, capture_output=True, text=True, timeout=60).stdout.strip()


def _runs_without_approval(env: harness.E2EEnv, told: str) -> None:
    script = [[{"name": "Bash", "input": {"command": f'{told} /facebook/react "useEffect cleanup"',
                                          "description": "cached docs"}}]]
    r = env.run("Look it up.", script, plugin_dir=None)
    assert r.rc == 0, r.describe()
    assert r.any_request_contains(json.dumps(told)[1:-1]), r.describe()  # SessionStart told it so
    decision, is_error = _decisions(env)["toolu_e2e_s0_0"]
    assert decision in ("accept", None) and not is_error, r.describe()


def test_the_told_command_runs_without_approval_with_uv_tool(claude_bin, tmp_path):
    uv = _uv()
    if uv is None:
        pytest.skip("uv cannot be had here")
    env = harness.E2EEnv(tmp_path / "w", claude_bin)
    env.settings["permissions"]["allow"] = []
    env.settings["hooks"] = {}
    env.write_settings()
    local_bin = env.home / ".local" / "bin"
    path = f"{local_bin}:/usr/local/bin:/usr/bin:/bin"
    tool_env = dict(env.tool_env(), PATH=path)
    tool_env.pop("MEMHOOKS_PYTHON", None)
    got = subprocess.run([uv, "tool", "install", str(checkout_copy(tmp_path / "memhooks"))], env=tool_env,
                         capture_output=True, text=True, timeout=900)
    if got.returncode != 0:
        pytest.skip(f"uv cannot install memhooks here: {got.stderr[-400:]}")
    done = subprocess.run([str(local_bin / "memhooks"), "install", "--scope", "project", "--allow"],
                          cwd=env.project, env=tool_env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    python = env.home / ".local" / "share" / "uv" / "tools" / "memhooks" / "bin" / "python"
    env.extra_env.update(PATH=path, MEMHOOKS_PYTHON=str(python))
    told = _told(python, tool_env)
    assert told == f'"{python.parent / "lc-cache-lookup-docs"}"'
    _runs_without_approval(env, told)


def test_the_told_command_runs_without_approval_for_the_marketplace_plugin(claude_bin, tmp_path):
    env = harness.E2EEnv(tmp_path / "w", claude_bin)
    env.extra_env["MEMHOOKS_DB"] = ""  # the plugin's own store
    env.settings["permissions"]["allow"] = []
    env.settings["hooks"] = {}
    env.write_settings()
    cli = env.env()
    cli.pop("ANTHROPIC_BASE_URL")
    root = install_from_marketplace(claude_bin, cli, checkout_copy(tmp_path / "memhooks"))
    term = {k: v for k, v in env.tool_env().items() if not k.startswith(("MEMHOOKS_DB", "CLAUDE_PLUGIN"))}
    done = subprocess.run(["bash", str(root / "bin" / "memhooks"), "install", "--allow"], cwd=env.project,
                          env=term, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    told = f'bash "{root / "bin" / "lc-cache-lookup-docs"}"'
    _runs_without_approval(env, told)
