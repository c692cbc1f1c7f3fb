"""The README's set-up, then its test command's install step, in ONE virtualenv (real venv,
real pip, a copy of this checkout): the hooks `memhooks install` wrote keep capturing after
`pip install -e .` removed the package they were installed from, and again after `pip install .`
over the editable install. When the environment is gone, the hooks exit 0 quietly and
`memhooks doctor` names the fix.

The dependencies and the build backend come from the package index (pip's cache makes a rerun
quick); memhooks itself is built from the checkout copy. Offline and not under CI=true, the test
skips and says why."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow

OFFLINE_SIGNS = ("Could not find a version that satisfies", "No matching distribution",
                 "NewConnectionError", "Temporary failure in name resolution", "Network is unreachable",
                 "ConnectionError", "ProxyError")


def checkout_copy(dest: Path) -> Path:
    """This checkout's files as git sees them (tracked and new, not ignored): no venvs, no caches."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def readme_commands() -> dict[str, str]:
    """The README's set-up lines (uv tool, venv + pip) and its test command, as written there."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)\n```", text, re.S)
    out = {}
    for block in blocks:
        for line in block.splitlines():
            if line.startswith('export PATH="$HOME/.local/bin:$PATH"; uv tool install . &&'):
                out["uv"] = line
            elif line.startswith("python3 -m venv .venv &&"):
                out["pip"] = line
            elif line.startswith("python3 -m venv .venv-test &&"):
                out["test"] = line
    return out


def _skip_if_offline(proc: subprocess.CompletedProcess, what: str) -> None:
    if proc.returncode == 0:
        return
    text = proc.stdout + proc.stderr
    if any(s in text for s in OFFLINE_SIGNS) and os.environ.get("CI", "").lower() != "true":
        pytest.skip(f"{what} needs the package index, which is not reachable here: {text[-300:]}")
    raise AssertionError(f"{what} failed (rc {proc.returncode}):\n{text[-3000:]}")


@pytest.fixture
def world(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text(json.dumps({"dependencies": {"react": "^18.3.1"}}))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CLAUDE_", "MEMHOOKS_", "CONTEXT7_", "VIRTUAL_ENV", "PYTHON", "XDG_"))}
    # An offline machine as the README promises it: the Context7 API does not answer.
    env.update(HOME=str(home), CONTEXT7_API_URL="http://127.0.0.1:9/api")
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                  if not p.startswith(str(Path(sys.executable).parent)))
    return {"tmp": tmp_path, "home": home, "project": project, "env": env,
            "checkout": checkout_copy(tmp_path / "memhooks"),
            "data": home / ".local" / "share" / "memhooks"}


def sh(world, command: str, *, cwd=None, timeout=900) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd or world["checkout"], env=world["env"],
                          capture_output=True, text=True, timeout=timeout)


def settings_command(world, event: str) -> str:
    data = json.loads((world["home"] / ".claude" / "settings.json").read_text())
    (command,) = [h["command"] for g in data["hooks"][event] for h in g["hooks"]]
    return command


def capture(world, tag: str) -> subprocess.CompletedProcess:
    """Run the installed PostToolUse command from the settings file, as Claude Code does
    (`sh -c`, the payload on stdin, in the project)."""
    payload = {"session_id": "s-reinstall", "transcript_path": "/tmp/t.jsonl", "cwd": str(world["project"]),
               "hook_event_name": "PostToolUse", "tool_name": "WebFetch", "tool_use_id": f"toolu_{tag}",
               "tool_input": {"url": f"https://example.org/{tag}", "prompt": "summarise"},
               "tool_response": {"bytes": 120, "code": 200, "codeText": "OK", "url": f"https://example.org/{tag}",
                                 "result": f"Pinning the flux capacitor, edition {tag}: three steps with a "
                                           "torque wrench, then a calibration run at 88 mph."}}
    env = dict(world["env"], CLAUDE_PROJECT_DIR=str(world["project"]))
    return subprocess.run(["sh", "-c", settings_command(world, "PostToolUse")], input=json.dumps(payload),
                          text=True, env=env, cwd=world["project"], capture_output=True, timeout=120)


def journaled(world) -> list[str]:
    path = world["data"] / "journal.db"
    if not path.exists():
        return []
    with sqlite3.connect(path) as conn:
        return [json.loads(p).get("tool_use_id") or "" for (p,) in
                conn.execute("SELECT payload FROM events WHERE hook_event_name = 'PostToolUse' ORDER BY id")]


def launcher_header(world) -> dict:
    from memhooks.setup.launcher import read_header

    (path,) = world["data"].glob("memhooks-launch-*.py")
    header = read_header(str(path))
    assert header is not None, path
    return header


def mcp_answers(world) -> bool:
    """The MCP server `memhooks install` registered answers `initialize` over stdio."""
    spec = json.loads((world["home"] / ".claude.json").read_text())["mcpServers"]["memhooks"]
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "t", "version": "0"}}}) + "\n"
    proc = subprocess.Popen([spec["command"], *spec["args"]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=world["env"], text=True, cwd=world["project"])
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(init)
        proc.stdin.flush()
        return '"result"' in proc.stdout.readline()
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_readme_setup_then_test_install_in_one_venv_keeps_the_hooks_capturing(world):
    cmds = readme_commands()
    assert set(cmds) == {"uv", "pip", "test"}, cmds
    assert cmds["test"] == ("python3 -m venv .venv-test && . .venv-test/bin/activate && "
                            "pip install -e '.[test]' && python -m pytest")
    # The README's venv set-up line, run by this interpreter's major.minor (python3 may be older
    # here). The venv's own setuptools builds memhooks when it has one (no build isolation).
    setup = cmds["pip"].replace("python3 -m venv", f"{sys.executable} -m venv", 1)
    venv = world["checkout"] / ".venv"
    flags = ""  # the README's commands as they are (a venv has no `wheel` for --no-build-isolation)
    proc = sh(world, setup)
    _skip_if_offline(proc, "the README's set-up line")
    assert "could not be reached" in proc.stdout + proc.stderr  # warm, offline, and still exit 0
    assert capture(world, "setup").returncode == 0
    assert journaled(world) == ["toolu_setup"]
    site = Path(launcher_header(world)["SITE"])
    assert (site / "memhooks" / "_entry.py").is_file()  # installed into the venv's site-packages

    # The test command's install step, in the same venv: an editable install of the checkout.
    proc = sh(world, f". .venv/bin/activate && pip install{flags} -e .")
    _skip_if_offline(proc, "pip install -e .")
    assert not (site / "memhooks").exists()  # what the hooks used to point at is gone
    assert mcp_answers(world)  # the first to run after the change: the MCP server (site enabled)
    assert launcher_header(world)["PACKAGE"] == str(world["checkout"] / "src" / "memhooks")
    r = capture(world, "editable")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert journaled(world) == ["toolu_setup", "toolu_editable"]

    # And back: `pip install .` over the editable install.
    proc = sh(world, f". .venv/bin/activate && pip install{flags} .")
    _skip_if_offline(proc, "pip install .")
    r = capture(world, "reinstalled")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert journaled(world) == ["toolu_setup", "toolu_editable", "toolu_reinstalled"]
    assert launcher_header(world)["PACKAGE"] == str(site / "memhooks")
    # The captured pages are documents a reader finds (it ingests what is pending first).
    found = sh(world, f"{venv}/bin/memhooks search 'flux capacitor' --json", cwd=world["project"])
    assert found.returncode == 0, found.stderr
    urls = {r.get("url") for r in json.loads(found.stdout)["results"]}
    assert {f"https://example.org/{t}" for t in ("setup", "editable", "reinstalled")} <= urls, urls
    doctor = sh(world, f"MEMHOOKS_OFFLINE=1 {venv}/bin/memhooks doctor --json", cwd=world["project"])
    checks = {c["name"]: c for c in json.loads(doctor.stdout)}
    assert checks["install:user"]["status"] == "ok", checks["install:user"]

    # memhooks uninstalled from the venv (as `pipx uninstall` leaves the hooks): quiet hooks.
    assert sh(world, f"{venv}/bin/pip uninstall -y memhooks").returncode == 0
    r = capture(world, "uninstalled")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    # The venv deleted: still exit 0 and silent; doctor (from another memhooks) names the fix.
    shutil.rmtree(venv)
    r = capture(world, "deleted")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    doctor = subprocess.run([sys.executable, "-m", "memhooks.cli.main", "doctor", "--json"],
                            env=dict(world["env"], MEMHOOKS_OFFLINE="1"), cwd=world["project"],
                            capture_output=True, text=True, timeout=120)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)}
    assert doctor.returncode != 0 and checks["install:user"]["status"] == "fail"
    assert "is gone" in checks["install:user"]["detail"] and "install` again" in checks["install:user"]["detail"]
