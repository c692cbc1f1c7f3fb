"""`memhooks doctor` knows every way memhooks is registered with Claude Code: the settings
files `memhooks install` writes, the plugin installed from a marketplace (installed_plugins.json
and `enabledPlugins`, read as files: a slash command's shell has no CLAUDE_PLUGIN_ROOT), a
plugin session (`--plugin-dir` or a marketplace install: CLAUDE_PLUGIN_ROOT), and it warns
when two are on at once (every hook would run twice)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def home(tmp_path):
    h = tmp_path / "home"
    (h / ".claude" / "plugins").mkdir(parents=True)
    return h


def env_for(home: Path, tmp_path: Path, **extra) -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "MEMHOOKS_", "CONTEXT7_"))}
    e.update(HOME=str(home), MEMHOOKS_DB=str(tmp_path / "data" / "memhooks.db"), MEMHOOKS_OFFLINE="1", **extra)
    return e


def registered(home: Path, tmp_path: Path, **extra) -> dict:
    proc = subprocess.run([sys.executable, "-m", "memhooks.cli.main", "doctor", "--json"], cwd=tmp_path,
                          env=env_for(home, tmp_path, **extra), capture_output=True, text=True, timeout=60)
    assert proc.stdout, proc.stderr
    return {r["name"]: r for r in json.loads(proc.stdout)}["registered"]


def install_plugin(home: Path, enabled: bool | None = True) -> Path:
    """What `claude plugin install memhooks@memhooks` leaves: installed_plugins.json and the
    user settings' enabledPlugins."""
    path = home / ".claude" / "plugins" / "cache" / "memhooks" / "memhooks" / "0.1.0"
    path.mkdir(parents=True)
    record = {"version": 2, "plugins": {"memhooks@memhooks": [
        {"scope": "user", "installPath": str(path), "version": "0.1.0"}]}}
    (home / ".claude" / "plugins" / "installed_plugins.json").write_text(json.dumps(record))
    if enabled is not None:
        (home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"memhooks@memhooks": enabled}}))
    return path


def test_nothing_registered_says_so(home, tmp_path):
    r = registered(home, tmp_path)
    assert r["status"] == "warn" and "not registered" in r["detail"]


def test_a_marketplace_plugin_is_known_from_its_files(home, tmp_path):
    path = install_plugin(home)
    r = registered(home, tmp_path)
    assert r["status"] == "ok", r
    assert "plugin memhooks@memhooks" in r["detail"] and str(path) in r["detail"]
    assert "not registered" not in r["detail"]


def test_a_disabled_plugin_does_not_count(home, tmp_path):
    install_plugin(home, enabled=False)
    assert "not registered" in registered(home, tmp_path)["detail"]


def test_a_plugin_session_counts(home, tmp_path):
    r = registered(home, tmp_path, CLAUDE_PLUGIN_ROOT=str(ROOT))
    assert r["status"] == "ok" and f"runs the plugin from {ROOT}" in r["detail"]


def test_plugin_and_memhooks_install_warns_about_doubles(home, tmp_path):
    install_plugin(home)
    done = subprocess.run([sys.executable, "-m", "memhooks.cli.main", "install"], cwd=tmp_path,
                          env=env_for(home, tmp_path), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["enabledPlugins"] == {"memhooks@memhooks": True} and "hooks" in settings
    r = registered(home, tmp_path)
    assert r["status"] == "warn", r
    assert "every hook runs twice" in r["detail"] and "memhooks@memhooks" in r["detail"]
