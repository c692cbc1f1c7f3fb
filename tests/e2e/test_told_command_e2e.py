"""One rule, with the real CLI: in a pip venv (memhooks installed into it, not editable, the
venv activated), the lc-cache command SessionStart tells the agent to run is one the rules of
`memhooks install --allow` cover: the agent's call runs without approval under `claude -p`."""

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
from test_plugin_install_e2e import checkout_copy

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
