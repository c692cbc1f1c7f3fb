"""Plugin mode with `python3` on PATH older than 3.11 and a real 3.11+ as `python3.1x`: the first
SessionStart answers with one JSON object (`systemMessage`), never a bare JSON string, and
the hooks run on the interpreter it found, so capture is on from the first session."""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from test_plugin_layout import base_env, bin_dir, payload, run_shim

pytestmark = pytest.mark.version  # runs on every supported Python in CI

PYENV = Path("/root/.pyenv/versions")


def _real(globs: list[str], want_old: bool) -> Path | None:
    for pattern in globs:
        for py in sorted(PYENV.glob(pattern)):
            if not py.is_file():
                continue
            v = subprocess.run([str(py), "-c", "import sys; print(sys.version_info[:2] >= (3, 11))"],
                               capture_output=True, text=True)
            if v.returncode == 0 and (v.stdout.strip() == "False") == want_old:
                return py
    return None


OLD = _real(["3.10*/bin/python3", "3.9*/bin/python3", "3.8*/bin/python3"], want_old=True)
NEW = _real(["3.12*/bin/python3", "3.13*/bin/python3", "3.11*/bin/python3"], want_old=False)


def _one_object(stdout: str) -> dict:
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, stdout
    out = json.loads(lines[0])
    assert isinstance(out, dict), f"not a JSON object: {lines[0]!r}"
    return out


@pytest.mark.skipif(OLD is None or NEW is None, reason="needs a Python older than 3.11 and a 3.11+ (pyenv)")
def test_old_python3_hands_over_to_a_found_311(tmp_path):
    minor = subprocess.run([str(NEW), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                           capture_output=True, text=True).stdout.strip()
    d = bin_dir(tmp_path, python3=str(OLD), **{f"python{minor}": str(NEW)}, bash="/bin/bash", cat="/bin/cat")
    env = base_env(tmp_path, d)
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    # The found 3.11+ lacks the dependencies, so a venv build would start: hold its lock so
    # that none really runs here (it needs the network), as a build in progress does.
    lock = os.open(data / "venv.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        first = run_shim("hooks/session-start", env, payload("SessionStart", cwd=str(tmp_path)))
        assert first.returncode == 0 and first.stderr == "", first.stderr
        message = _one_object(first.stdout)["systemMessage"]
        assert "setting up its Python environment" in message and "Capture already works" in message
        marker = dict(ln.split("=", 1) for ln in (data / "python.marker").read_text().splitlines())
        assert marker["hot"] == str(d / f"python{minor}") and marker["full"] == ""
        # The other hooks use the interpreter SessionStart found: capture is on.
        post = run_shim("hooks/post-tool-use", env, payload())
        assert (post.returncode, post.stdout, post.stderr) == (0, "", "")
        again = run_shim("hooks/session-start", env, payload("SessionStart", cwd=str(tmp_path)))
        assert again.returncode == 0
        if again.stdout.strip():
            assert "systemMessage" not in _one_object(again.stdout)  # said once
    finally:
        os.close(lock)
    with sqlite3.connect(data / "journal.db") as conn:
        rows = conn.execute("SELECT hook_event_name, payload FROM events ORDER BY id").fetchall()
    assert [r[0] for r in rows] == ["SessionStart", "PostToolUse", "SessionStart"]
    assert "toolu_plugin_1" in rows[1][1]


@pytest.mark.skipif(OLD is None, reason="needs a Python older than 3.11 (pyenv)")
def test_old_python3_alone_says_so_in_one_object(tmp_path):
    d = bin_dir(tmp_path, python3=str(OLD), bash="/bin/bash", cat="/bin/cat")
    env = base_env(tmp_path, d)
    first = run_shim("hooks/session-start", env, payload("SessionStart", cwd=str(tmp_path)))
    assert first.returncode == 0
    out = _one_object(first.stdout)
    assert list(out) == ["systemMessage"] and "no Python 3.11+" in out["systemMessage"]
    assert run_shim("hooks/session-start", env, payload("SessionStart")).stdout == ""
    post = run_shim("hooks/post-tool-use", env, payload())
    assert (post.returncode, post.stdout, post.stderr) == (0, "", "")


def test_bootstrap_ensure_prints_an_object(tmp_path):
    """`bootstrap.py ensure` (what an old interpreter runs): a notice is an object, always."""
    from conftest import ROOT

    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "MEMHOOKS_"))}
    env["PATH"] = str(bin_dir(tmp_path, bash="/bin/bash"))  # no python3 at all
    py = OLD or Path("/usr/bin/python3")
    proc = subprocess.run([str(py), "-I", "-S", str(ROOT / "src" / "memhooks" / "bootstrap.py"), "ensure",
                           str(tmp_path / "state"), str(ROOT)], capture_output=True, text=True, env=env)
    out = _one_object(proc.stdout)
    assert proc.returncode == 3 and isinstance(out.get("systemMessage"), str)
