"""`memhooks doctor` against real stores, settings files and a local HTTP server.

The checks run in this process through click's CliRunner (each with exactly the environment
the test gives it); one smoke test runs the whole CLI as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from memhooks.cli.main import main as cli_main
from memhooks.store.connect import connect
from memhooks.store.journal import append

CLI = [sys.executable, "-m", "memhooks.cli.main"]
STATUSES = {"ok", "warn", "fail", "skip"}


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    data = tmp_path / "data"
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("CLAUDE_", "MEMHOOKS_", "CONTEXT7_"))}
    e.update(HOME=str(home), MEMHOOKS_DB=str(data / "memhooks.db"), MEMHOOKS_OFFLINE="1")
    return {"env": e, "db": data / "memhooks.db", "tmp": tmp_path, "home": home}


def invoke(env, *args, **extra) -> subprocess.CompletedProcess:
    """`memhooks ARGS` in this process, with env["env"] (+ extra) as the whole environment and
    the test's folder as the working directory; returns what a subprocess run would."""
    e = dict(env["env"], **extra)
    with pytest.MonkeyPatch.context() as mp:
        for name in list(os.environ):
            if name not in e:
                mp.delenv(name)
        for name, value in e.items():
            mp.setenv(name, value)
        mp.chdir(env["tmp"])
        result = CliRunner().invoke(cli_main, list(args), catch_exceptions=False)
    return subprocess.CompletedProcess(["memhooks", *args], result.exit_code, result.stdout, result.stderr)


def doctor(env, *args, **extra):
    return invoke(env, "doctor", *args, **extra)


def as_json(env, *args, **extra):
    proc = doctor(env, "--json", *args, **extra)
    return proc, {r["name"]: r for r in json.loads(proc.stdout)}


def healthy_store(db):
    conn = connect(str(db))
    append(conn, '{"hook_event_name":"SessionStart"}', size=34, project="/p", hook_event_name="SessionStart")
    conn.execute("UPDATE events SET state = 'done'")
    conn.close()


def test_healthy_store_exits_zero(env):
    """The smoke test: the whole CLI, as a subprocess."""
    healthy_store(env["db"])
    proc = subprocess.run([*CLI, "doctor"], env=env["env"], cwd=env["tmp"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert all(ln.split()[0] in STATUSES for ln in lines)
    assert any(ln.startswith("ok") and " store " in ln and "integrity ok" in ln for ln in lines)
    assert any(ln.startswith("ok") and " permissions " in ln for ln in lines)
    assert any(ln.startswith("ok") and " python " in ln for ln in lines)


def test_json_shape_and_offline_skip(env):
    healthy_store(env["db"])
    proc = doctor(env, "--json")
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    assert isinstance(data, list) and data
    for r in data:
        assert set(r) == {"name", "status", "detail"}
        assert r["status"] in STATUSES and isinstance(r["detail"], str)
    by = {r["name"]: r for r in data}
    assert by["context7-api"]["status"] == "skip"
    for name in ("store", "permissions", "events", "plugin", "install:user", "install:project",
                 "install:local", "registered", "python"):
        assert name in by


def test_corrupt_store_fails(env):
    env["db"].parent.mkdir(mode=0o700)
    env["db"].write_bytes(b"this is not a database at all\x00" * 200)
    os.chmod(env["db"], 0o600)
    proc, by = as_json(env)
    assert proc.returncode != 0
    assert by["store"]["status"] == "fail"
    text = doctor(env)
    assert text.returncode != 0 and text.stdout.splitlines()[0].startswith("fail")


def test_missing_store_is_a_warning(env):
    proc, by = as_json(env)
    assert by["store"]["status"] == "warn" and proc.returncode == 0
    assert not env["db"].exists()  # doctor does not create it


def test_permissions_and_events_warnings(env):
    healthy_store(env["db"])
    conn = connect(str(env["db"]))
    append(conn, "{}", size=2, project="/p", hook_event_name="PostToolUse", received_at=time.time() - 3600)
    append(conn, "{}", size=2, project="/p", hook_event_name="PostToolUse")  # fresh: fine
    append(conn, "{}", size=2, project="/p", hook_event_name="PostToolUse", error="too big")
    conn.close()
    os.chmod(env["db"], 0o644)
    os.chmod(env["db"].parent, 0o755)
    proc, by = as_json(env)
    assert proc.returncode == 0
    assert by["permissions"]["status"] == "warn"
    assert "0644" in by["permissions"]["detail"] and "0755" in by["permissions"]["detail"]
    ev = by["events"]
    assert ev["status"] == "warn"
    assert "1 pending for over a minute" in ev["detail"] and "1 failed" in ev["detail"]


def test_installed_entries_are_checked(env):
    healthy_store(env["db"])
    proc = invoke(env, "install", "--scope", "user")
    assert proc.returncode == 0, proc.stderr
    proc, by = as_json(env)
    assert proc.returncode == 0
    assert by["install:user"]["status"] == "ok"
    assert by["registered"]["status"] == "ok"
    assert by["python"]["status"] == "ok" and "installed hooks" in by["python"]["detail"]
    # Point the hooks at an entry file that is gone: a failure.
    settings = env["home"] / ".claude" / "settings.json"
    text = settings.read_text().replace("_entry.py", "gone/memhooks/_entry.py")
    settings.write_text(text)
    proc, by = as_json(env)
    assert by["install:user"]["status"] == "fail" and proc.returncode != 0
    assert "missing" in by["install:user"]["detail"]


def test_invalid_settings_file_is_a_warning(env):
    healthy_store(env["db"])
    settings = env["home"] / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{ nope")
    proc, by = as_json(env)
    assert by["install:user"]["status"] == "warn" and "not valid JSON" in by["install:user"]["detail"]


def test_plugin_root_is_checked(env):
    healthy_store(env["db"])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    data = env["tmp"] / "plugin-data"
    data.mkdir()
    proc, by = as_json(env, CLAUDE_PLUGIN_ROOT=root, CLAUDE_PLUGIN_DATA=str(data))
    assert by["plugin"]["status"] == "ok"
    proc, by = as_json(env, CLAUDE_PLUGIN_ROOT=str(env["tmp"]), CLAUDE_PLUGIN_DATA=str(data))
    assert by["plugin"]["status"] == "fail" and proc.returncode != 0


def test_context7_reachable_and_key_never_printed(env, httpserver):
    healthy_store(env["db"])
    secret = "ctx7sk-very-secret-value"
    httpserver.expect_request("/api/v2/libs/search", query_string={"libraryName": "react", "query": "react"},
                              headers={"Authorization": f"Bearer {secret}"}).respond_with_json(
        {"results": [{"id": "/facebook/react", "title": "React"}]})
    url = httpserver.url_for("/api")
    extra = dict(MEMHOOKS_OFFLINE="", CONTEXT7_API_URL=url, CONTEXT7_API_KEY=secret)
    proc, by = as_json(env, "--network", **extra)
    assert by["context7-api"]["status"] == "ok", by["context7-api"]
    assert secret not in proc.stdout + proc.stderr
    assert secret not in doctor(env, "--network", **extra).stdout


def test_context7_rate_limit_is_a_warning(env, httpserver):
    healthy_store(env["db"])
    httpserver.expect_request("/v2/libs/search").respond_with_data("slow down", status=429)
    proc, by = as_json(env, "--network", MEMHOOKS_OFFLINE="0", CONTEXT7_API_URL=httpserver.url_for(""))
    assert by["context7-api"]["status"] == "warn" and "429" in by["context7-api"]["detail"]
    assert proc.returncode == 0
