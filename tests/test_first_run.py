"""The first plugin session explains itself, and no step that needs the dependencies runs on a
python that lacks them."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from test_plugin_layout import ROOT, SYSTEM_PY, base_env, bin_dir, payload, run_shim

pytestmark = pytest.mark.version  # runs on every supported Python in CI

ENTRY = ROOT / "src" / "memhooks" / "_entry.py"
TRANSCRIPTS = ROOT / "tests" / "fixtures" / "transcripts"


def _message(proc) -> str | None:
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert proc.returncode == 0 and len(lines) <= 1, proc.stdout
    return json.loads(lines[0]).get("systemMessage") if lines else None


@pytest.mark.skipif(not os.path.exists(SYSTEM_PY), reason="needs a system python3")
def test_first_session_while_building_says_so_and_offers_the_backfill_once(tmp_path):
    if subprocess.run([SYSTEM_PY, "-c", "import pydantic"], capture_output=True).returncode == 0:
        pytest.skip("the system python3 has the dependencies")
    env = base_env(tmp_path, bin_dir(tmp_path, python3=SYSTEM_PY, bash="/bin/bash", cat="/bin/cat"))
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    lock = os.open(data / "venv.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)  # a build "is running": none really starts (no network)
    try:
        first = _message(run_shim("hooks/session-start", env, payload("SessionStart", cwd=str(tmp_path))))
        second = _message(run_shim("hooks/session-start", env, payload("SessionStart", cwd=str(tmp_path))))
    finally:
        os.close(lock)
    assert first and second is None
    building, offer = first.split("\n")
    assert "background" in building and "Capture already works" in building
    assert "next session" in building and "search_documents" in building
    assert "import-transcripts" in offer and "once its setup is done" in offer
    assert f"MEMHOOKS_DB={data / 'memhooks.db'}" in offer and str(data / "venv" / "bin" / "memhooks") in offer
    # nothing that needs the dependencies ran on the system python3
    log = data / "memhooks.log"
    text = log.read_text() if log.exists() else ""
    assert "ModuleNotFoundError" not in text and "Traceback" not in text


def test_first_session_with_a_full_python_offers_a_command_that_runs(tmp_path):
    env = base_env(tmp_path, bin_dir(tmp_path, python3=sys.executable, bash="/bin/bash", cat="/bin/cat"))
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    first = _message(run_shim("hooks/session-start", env, payload("SessionStart", cwd=str(tmp_path))))
    again = _message(run_shim("hooks/session-start", env, payload("SessionStart", cwd=str(tmp_path))))
    assert first and "\n" not in first and again is None
    assert first.startswith("memhooks: to add the docs your past Claude Code sessions fetched")
    cmd = first.split("terminal: ", 1)[1].split("  (add --dry-run", 1)[0]
    home = tmp_path / "home" / ".claude" / "projects" / "-x"
    home.mkdir(parents=True)
    shutil.copy(TRANSCRIPTS / "capture.jsonl", home / "s.jsonl")
    term = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "MEMHOOKS_", "PYTHON"))}
    term["HOME"] = str(tmp_path / "home")
    p = subprocess.run(["bash", "-c", cmd + " --json"], capture_output=True, text=True, env=term, timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["files"] == 1 and out["events"]["new"] == 6
    with sqlite3.connect(data / "memhooks.db") as conn:  # the plugin's own store
        assert conn.execute("SELECT count(*) FROM documents").fetchone()[0] >= 5


def test_no_dependency_step_on_a_python_without_the_dependencies(tmp_path, store):
    """`python -I -S` has no site-packages: session-warm and the ingester do nothing (events
    stay pending for a python that has them) and log no ModuleNotFoundError."""
    project = tmp_path / "project"
    (project / "package.json").write_text(json.dumps({"dependencies": {"react": "^18.3.1"}}))
    env = dict(os.environ, CLAUDE_PROJECT_DIR=str(project), CONTEXT7_API_URL="http://127.0.0.1:9/api")
    env.pop("MEMHOOKS_OFFLINE", None)
    from conftest import load_payload, run_hook

    assert run_hook("post-tool-use", load_payload("c7_query_docs"),
                    env=dict(env, MEMHOOKS_NO_SPAWN="1")).returncode == 0
    warm = subprocess.run([sys.executable, "-I", "-S", str(ENTRY), "session-warm"], capture_output=True,
                          env=env, timeout=60)
    assert warm.returncode == 0 and warm.stdout == b""
    ing = subprocess.run([sys.executable, "-I", "-S", str(ENTRY), "ingest"], capture_output=True,
                         env=env, timeout=60)
    assert ing.returncode == 0
    from conftest import db_rows

    assert db_rows(store, "SELECT state FROM events") == [("pending",)]
    log = store.parent / "memhooks.log"
    text = log.read_text() if log.exists() else ""
    assert "ModuleNotFoundError" not in text and "context7 search failed" not in text
