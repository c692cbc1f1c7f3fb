"""The launcher `memhooks install` writes (memhooks.setup.launcher): real interpreters, the
hook commands run through `sh -c` as Claude Code runs them, and what `memhooks doctor` says
when a hook cannot run."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT
from memhooks.setup import install as inst
from memhooks.setup import launcher

pytestmark = pytest.mark.version  # runs on every supported Python in CI

PAYLOAD = {
    "session_id": "s-launch", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
    "hook_event_name": "PostToolUse", "tool_name": "WebFetch",
    "tool_input": {"url": "https://example.org/launch", "prompt": "summarise"},
    "tool_response": {"bytes": 90, "code": 200, "codeText": "OK", "url": "https://example.org/launch",
                      "result": "How to pin the flux capacitor: three steps, each with a torque wrench."},
}
# A python without memhooks (and without its dependencies): pyenv's, else the system one.
OTHER_PYTHONS = sorted(Path("/root/.pyenv/versions").glob("3.1[2-9]*/bin/python3")) + [Path("/usr/bin/python3")]


def _python_without_memhooks() -> str:
    for py in OTHER_PYTHONS:
        if py.exists() and subprocess.run([str(py), "-E", "-P", "-c", "import memhooks"], cwd="/",
                                          capture_output=True).returncode != 0:
            return str(py)
    pytest.skip("no Python 3.11+ without memhooks on this machine")


@pytest.fixture
def world(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    project = tmp_path / "project"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "MEMHOOKS_"))}
    env.update(MEMHOOKS_DB=str(data / "memhooks.db"), MEMHOOKS_NO_SPAWN="1", MEMHOOKS_OFFLINE="1",
               CLAUDE_PROJECT_DIR=str(project), HOME=str(tmp_path))
    return {"tmp": tmp_path, "data": data, "project": project, "env": env}


def _write(world, python: str, package: str, site: str | None = None) -> Path:
    path = Path(launcher.launcher_path(python, str(world["data"])))
    path.write_bytes(launcher.render(python, package, site))
    return path


def _hook(world, entries: inst.Entries, tool_use_id: str, event: str = "PostToolUse"):
    payload = dict(PAYLOAD, tool_use_id=tool_use_id, hook_event_name=event)
    command = entries.post_tool_use if event.startswith("PostToolUse") else entries.pre_tool_use
    return subprocess.run(["sh", "-c", command], input=json.dumps(payload), text=True, env=world["env"],
                          cwd=world["project"], capture_output=True, timeout=60)


def _header(path) -> dict:
    """The values the launcher at `path` holds, which it must hold."""
    header = launcher.read_header(str(path))
    assert header is not None, path
    return header


def _journaled(world) -> list[str]:
    path = world["data"] / "journal.db"
    if not path.exists():
        return []
    with sqlite3.connect(path) as conn:
        return [json.loads(r[0]).get("tool_use_id") for r in conn.execute("SELECT payload FROM events ORDER BY id")]


def test_the_launcher_runs_the_recorded_package(world):
    path = _write(world, sys.executable, str(ROOT / "src" / "memhooks"))
    header = _header(path)
    assert header["PYTHON"] == sys.executable and header["PACKAGE"] == str(ROOT / "src" / "memhooks")
    assert header["STAMP"] == os.stat(header["SITE"]).st_mtime_ns and header["CHECKED"] == 0
    r = _hook(world, inst.Entries(python=sys.executable, entry=str(path)), "toolu_l1")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert _journaled(world) == ["toolu_l1"]
    assert launcher.read_header(str(path)) == header  # the hot path wrote nothing


def test_a_moved_package_is_found_through_the_interpreter_and_recorded(world):
    """The recorded folder is gone (a reinstall, `pip install -e`): the launcher asks the
    interpreter where memhooks is now, records it, and the hook captures."""
    moved = world["tmp"] / "old-site" / "memhooks"
    shutil.copytree(ROOT / "src" / "memhooks", moved, ignore=shutil.ignore_patterns("__pycache__"))
    path = _write(world, sys.executable, str(moved), str(moved.parent))
    shutil.rmtree(moved.parent)
    r = _hook(world, inst.Entries(python=sys.executable, entry=str(path)), "toolu_l2")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert _journaled(world) == ["toolu_l2"]
    import memhooks

    header = _header(path)
    assert header["PACKAGE"] == os.path.dirname(os.path.abspath(memhooks.__file__))
    assert header["STAMP"] == os.stat(header["SITE"]).st_mtime_ns and header["CHECKED"] > 0
    # The rewritten launcher is still one `memhooks install` recognises and runs as before.
    assert launcher.is_launcher(str(path))
    assert _hook(world, inst.Entries(python=sys.executable, entry=str(path)), "toolu_l3").returncode == 0
    assert _journaled(world) == ["toolu_l2", "toolu_l3"]


def test_an_install_into_the_environment_makes_it_look_again(world):
    """The folder holding the distribution changed (any pip install there): one probe, the
    new mtime recorded; the same folder unchanged costs no probe."""
    site = world["tmp"] / "site"
    site.mkdir()
    path = _write(world, sys.executable, str(ROOT / "src" / "memhooks"), str(site))
    entries = inst.Entries(python=sys.executable, entry=str(path))
    assert _hook(world, entries, "toolu_l4").returncode == 0
    assert _header(path)["CHECKED"] == 0
    (site / "new.dist-info").mkdir()  # what pip does
    time.sleep(0.01)
    assert _hook(world, entries, "toolu_l5").returncode == 0
    header = _header(path)
    assert header["CHECKED"] > 0 and header["STAMP"] == os.stat(header["SITE"]).st_mtime_ns
    assert _journaled(world) == ["toolu_l4", "toolu_l5"]


def test_an_interpreter_without_memhooks_is_quiet_for_hooks_and_loud_for_the_mcp_server(world):
    other = _python_without_memhooks()
    path = _write(world, other, str(world["tmp"] / "gone" / "memhooks"), str(world["tmp"] / "gone"))
    entries = inst.Entries(python=other, entry=str(path))
    for event in ("PostToolUse", "PreToolUse"):
        r = _hook(world, entries, "toolu_l6", event)
        assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert _journaled(world) == []
    header = _header(path)
    assert header["PACKAGE"] == "" and header["CHECKED"] > 0  # checked once, not on every call
    mcp = subprocess.run([other, str(path), "mcp"], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    assert mcp.returncode == 1 and "memhooks install" in mcp.stderr and "Traceback" not in mcp.stderr
    where = subprocess.run([other, "-I", "-S", str(path), "--where"], capture_output=True, timeout=60)
    assert where.returncode == 3 and where.stdout == b""
    assert launcher.problems([other, str(path)]) == [f"{other} no longer has memhooks (it was uninstalled "
                                                     "or its environment rebuilt without it)"]


def test_a_gone_interpreter_exits_zero_silently(world):
    gone = str(world["tmp"] / "venv-deleted" / "bin" / "python")
    path = _write(world, gone, str(ROOT / "src" / "memhooks"))
    entries = inst.Entries(python=gone, entry=str(path))
    for event in ("PostToolUse", "PreToolUse"):
        r = _hook(world, entries, "toolu_l7", event)
        assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    # ... and so does a launcher that was deleted with memhooks' data folder.
    entries = inst.Entries(python=sys.executable, entry=str(world["tmp"] / "nowhere" / path.name))
    r = _hook(world, entries, "toolu_l8")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


def test_doctor_names_the_fix(world, monkeypatch):
    from memhooks.setup.doctor import check_installed

    home = world["tmp"] / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("MEMHOOKS_DB", str(world["data"] / "memhooks.db"))
    ok = inst.default_entries()
    inst.run("install", "user", str(world["project"]), entries=ok)
    assert Path(ok.entry).parent == world["data"]
    check, pythons = check_installed("user", str(world["project"]))
    assert check.status == "ok", check.detail
    assert pythons == [os.path.abspath(sys.executable)]

    gone = inst.Entries(python=str(world["tmp"] / "deleted" / "python"), entry=ok.entry, package=ok.package)
    inst.run("install", "user", str(world["project"]), entries=gone)
    check, _ = check_installed("user", str(world["project"]))
    assert check.status == "fail" and "is gone" in check.detail
    assert "install` again" in check.detail and "the hooks do nothing" in check.detail

    other = _python_without_memhooks()
    bare = inst.Entries(python=other, entry=launcher.launcher_path(other, str(world["data"])),
                        package=str(world["tmp"] / "nowhere" / "memhooks"))
    inst.run("install", "user", str(world["project"]), entries=bare)
    check, _ = check_installed("user", str(world["project"]))
    assert check.status == "fail" and "no longer has memhooks" in check.detail and "install` again" in check.detail

    old = inst.Entries(python=sys.executable, entry=inst.entry_file())  # what older versions wrote
    inst.run("install", "user", str(world["project"]), entries=old)
    check, _ = check_installed("user", str(world["project"]))
    assert check.status == "warn" and "older memhooks" in check.detail and "install` again" in check.detail


def test_old_and_new_entries_are_recognised_for_reinstall_and_uninstall(world, monkeypatch):
    home = world["tmp"] / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("MEMHOOKS_DB", str(world["data"] / "memhooks.db"))
    old = inst.Entries(python="/opt/venv/bin/python", entry="/opt/venv/lib/python3.11/site-packages/memhooks/_entry.py")
    inst.run("install", "user", str(world["project"]), entries=old)
    settings = home / ".claude" / "settings.json"
    assert "_entry.py" in settings.read_text()
    inst.run("install", "user", str(world["project"]))  # the new form replaces the old in place
    data = json.loads(settings.read_text())
    commands = [h["command"] for groups in data["hooks"].values() for g in groups for h in g["hooks"]]
    assert len(commands) == 4 and all("memhooks-launch-" in c and "_entry.py" not in c for c in commands)
    server = json.loads((home / ".claude.json").read_text())["mcpServers"]["memhooks"]
    assert server["args"][0].startswith(str(world["data"])) and inst.is_our_server(server)
    inst.run("uninstall", "user", str(world["project"]))
    assert not settings.exists() and not (home / ".claude.json").exists()
    # Uninstalling an old-form install works too.
    inst.run("install", "user", str(world["project"]), entries=old)
    inst.run("uninstall", "user", str(world["project"]))
    assert not settings.exists()
