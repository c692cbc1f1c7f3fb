"""Plugin mode: the manifests, the matcher, and the shims under hostile PATHs (real processes)."""

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

from memhooks.setup import install as inst

pytestmark = pytest.mark.version  # runs on every supported Python in CI

ROOT = Path(__file__).resolve().parent.parent
SHIMS = ["hooks/pre-tool-use", "hooks/post-tool-use", "hooks/session-start", "bin/lc-cache-lookup", "bin/lc-cache-lookup-docs",
         "bin/lc-cache-write", "bin/memhooks-mcp"]
ADVISORY = [s for s in SHIMS if s != "bin/memhooks-mcp"]
SYSTEM_PY = "/usr/bin/python3"  # any python3 ≥ 3.11, dependencies or not


def load(rel):
    return json.loads((ROOT / rel).read_text())


def commands_of(hooks: dict) -> list[str]:
    return [h["command"] for groups in hooks["hooks"].values() for g in groups for h in g["hooks"]]


def plugin_paths(text: str) -> list[Path]:
    return [Path(w.replace("${CLAUDE_PLUGIN_ROOT}", str(ROOT)))
            for w in re.findall(r"\$\{CLAUDE_PLUGIN_ROOT\}[^\s\"']*", text)]


# ----------------------------------------------------------------------------- manifests

def test_manifests_parse_and_point_at_executables():
    manifest = load(".claude-plugin/plugin.json")
    assert manifest["name"] == "memhooks" and manifest["version"] and manifest["description"]
    hooks = load(manifest["hooks"])
    assert set(hooks["hooks"]) == {"PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart"}
    for groups in hooks["hooks"].values():
        for g in groups:
            for h in g["hooks"]:
                assert h["type"] == "command" and 0 < h["timeout"] <= 10
    cmds = commands_of(hooks)
    servers = load(".mcp.json")["mcpServers"]
    mcp = servers["memhooks"]
    cmds.append(" ".join([mcp["command"], *mcp["args"]]))
    paths = [p for c in cmds for p in plugin_paths(c)]
    assert len(paths) == len(cmds)
    for p in paths:
        assert p.is_file() and os.access(p, os.X_OK), p
    for rel in SHIMS:
        assert os.access(ROOT / rel, os.X_OK), rel
    for rel in ("src/memhooks/_entry.py", "src/memhooks/bootstrap.py", "lib/python.sh"):
        assert (ROOT / rel).is_file()


def test_hooks_json_matches_what_install_writes():
    hooks = load("hooks.json")["hooks"]
    assert hooks["PostToolUse"][0]["matcher"] == inst.TOOL_MATCHER
    assert hooks["PostToolUseFailure"][0]["matcher"] == inst.TOOL_MATCHER
    assert hooks["SessionStart"][0]["matcher"] == inst.SESSION_MATCHER
    assert hooks["PreToolUse"][0]["matcher"] == inst.SERVE_MATCHER


MATCHES = ["mcp__context7__query-docs", "mcp__context7__resolve-library-id",
           "mcp__plugin_context7_context7__resolve-library-id", "mcp__plugin_context7_context7__query-docs",
           "mcp__exa__web_search_exa", "mcp__plugin_exa_exa__crawling_exa", "mcp__upstash-context7__query-docs",
           "mcp__Context7__get-library-docs", "WebFetch", "WebSearch",
           "Bash"]  # every Bash call: the hooks take a ctx7 lookup by its command, nothing else
NON_MATCHES = ["Read", "Bashful", "xBash", "mcp__github__search", "Write", "WebFetcher", "mcp__plugin_memhooks_memhooks__search_documents",
               "mcp__filesystem__read_file"]


@pytest.mark.parametrize("name", MATCHES)
def test_matcher_matches(name):
    # Claude Code treats a matcher with regex characters as an unanchored JavaScript regex.
    assert re.search(inst.TOOL_MATCHER, name)


@pytest.mark.parametrize("name", NON_MATCHES)
def test_matcher_rejects(name):
    assert not re.search(inst.TOOL_MATCHER, name)


@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact", "fork"])
def test_session_matcher_lists_sources(source):
    assert source in inst.SESSION_MATCHER.split("|")


# ----------------------------------------------------------------------------- shims under odd PATHs

def bin_dir(tmp_path: Path, **links: str) -> Path:
    d = tmp_path / "bin"
    d.mkdir()
    for name, target in links.items():
        if target == sys.executable and sys.prefix != sys.base_prefix:
            # A symlink to a venv's python outside the venv loses the venv (pyvenv.cfg is
            # looked up beside the link): stand in with a launcher, as a pyenv shim does.
            (d / name).write_text(f'#!/bin/sh\nexec "{target}" "$@"\n')
            (d / name).chmod(0o755)
        else:
            (d / name).symlink_to(target)
    return d


def base_env(tmp_path: Path, path: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CLAUDE_", "MEMHOOKS_", "PYTHON", "VIRTUAL_ENV"))}
    data = tmp_path / "plugin-data"
    data.mkdir(exist_ok=True)
    env.update(PATH=str(path), HOME=str(tmp_path / "home"), CLAUDE_PLUGIN_ROOT=str(ROOT),
               CLAUDE_PLUGIN_DATA=str(data), CLAUDE_PROJECT_DIR=str(tmp_path), MEMHOOKS_OFFLINE="1")
    return env


def payload(event="PostToolUse", **extra):
    base = {"session_id": "s-plugin", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "hook_event_name": event}
    if event.startswith("PostToolUse"):
        base.update(tool_name="mcp__context7__query-docs", tool_use_id="toolu_plugin_1",
                    tool_input={"libraryId": "/facebook/react", "query": "useEffect cleanup"},
                    tool_response=[{"type": "text", "text": "### useEffect cleanup\n\nReturn a function."}])
    else:
        base["source"] = "startup"
    base.update(extra)
    return json.dumps(base)


def run_shim(rel, env, stdin="", args=()):
    return subprocess.run(["/bin/bash", str(ROOT / rel), *args], input=stdin, text=True, env=env,
                          capture_output=True, timeout=60, cwd=env["CLAUDE_PROJECT_DIR"])


def events(db: Path) -> list[tuple]:
    conn = sqlite3.connect(Path(db).parent / "journal.db")  # the raw journal
    try:
        return conn.execute("SELECT hook_event_name, payload, state FROM events ORDER BY id").fetchall()
    finally:
        conn.close()


@pytest.mark.skipif(not os.path.exists(SYSTEM_PY), reason="needs a system python3")
def test_post_tool_use_with_only_a_python3_on_path(tmp_path):
    """No MEMHOOKS_PYTHON, no cached answer, PATH = {python3, bash}: the stdlib hot path journals."""
    d = bin_dir(tmp_path, python3=SYSTEM_PY, bash="/bin/bash")
    env = base_env(tmp_path, d)
    proc = subprocess.run([str(ROOT / "hooks/post-tool-use")], input=payload(), text=True, env=env,
                          capture_output=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""
    rows = events(Path(env["CLAUDE_PLUGIN_DATA"]) / "memhooks.db")
    assert len(rows) == 1 and "toolu_plugin_1" in rows[0][1]


def test_session_start_caches_a_python_with_the_dependencies(tmp_path):
    """PATH has a python3 that can import the dependencies: SessionStart caches it, the
    hot path and the MCP shim use it, and no venv is built."""
    d = bin_dir(tmp_path, python3=sys.executable, bash="/bin/bash", cat="/bin/cat")
    env = base_env(tmp_path, d)
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    env_file = tmp_path / "session-env.sh"
    env["CLAUDE_ENV_FILE"] = str(env_file)
    proc = run_shim("hooks/session-start", env, payload("SessionStart", cwd=str(tmp_path)))
    assert proc.returncode == 0, proc.stderr
    if proc.stdout.strip():
        out = json.loads(proc.stdout)
        # the first session only offers the backfill from past sessions (one line)
        assert "systemMessage" not in out or (
            "import-transcripts" in out["systemMessage"] and "\n" not in out["systemMessage"])
    marker = dict(line.split("=", 1) for line in (data / "python.marker").read_text().splitlines())
    assert marker["full"] and os.path.realpath(marker["full"]) == os.path.realpath(sys.executable)
    assert not (data / "venv").exists()
    assert f"export MEMHOOKS_DB='{data}/memhooks.db'" in env_file.read_text()
    proc = run_shim("hooks/post-tool-use", env, payload())
    assert proc.returncode == 0 and proc.stdout == ""
    rows = events(data / "memhooks.db")
    assert [r[0] for r in rows] == ["SessionStart", "PostToolUse"]
    # The MCP shim finds the same python (answers `initialize` over stdio).
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "t", "version": "0"}}}) + "\n"
    mcp_server = ROOT / "src" / "memhooks" / "mcp_server.py"
    if mcp_server.exists():
        proc = subprocess.Popen(["/bin/bash", str(ROOT / "bin/memhooks-mcp")], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(init)
            proc.stdin.flush()
            line = proc.stdout.readline()
            assert '"result"' in line and '"id":1' in line.replace(" ", "")
        finally:
            proc.kill()
            proc.wait(timeout=10)


def test_no_python_at_all(tmp_path):
    """PATH without any python: every hook exits 0; SessionStart says so once, then never again."""
    d = bin_dir(tmp_path, bash="/bin/bash", cat="/bin/cat", dirname="/usr/bin/dirname")
    env = base_env(tmp_path, d)
    for rel in ADVISORY:
        stdin = payload("SessionStart" if "session" in rel else "PostToolUse")
        args = ("tier1", "react", "/facebook/react") if rel.endswith("write") else ("react",)
        proc = run_shim(rel, env, stdin, args if rel.startswith("bin/") else ())
        assert proc.returncode == 0, (rel, proc.stderr)
        if rel != "hooks/session-start":
            assert proc.stdout == "", rel
        else:
            lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
            assert len(lines) == 1
            out = json.loads(lines[0])
            assert list(out) == ["systemMessage"]
            assert "MEMHOOKS_PYTHON" in out["systemMessage"] and "pip install /path/to/memhooks" in out["systemMessage"]
    again = run_shim("hooks/session-start", env, payload("SessionStart"))
    assert again.returncode == 0 and again.stdout == ""
    mcp = run_shim("bin/memhooks-mcp", env)
    assert mcp.returncode != 0 and "MEMHOOKS_PYTHON" in mcp.stderr


@pytest.mark.skipif(not os.path.exists(SYSTEM_PY), reason="needs a system python3")
def test_venv_failure_is_reported_once(tmp_path):
    """A python3 without the dependencies and a venv build that failed for this plugin version:
    SessionStart still works (stdlib paths) and tells the user once."""
    d = bin_dir(tmp_path, python3=SYSTEM_PY, bash="/bin/bash", cat="/bin/cat")
    env = base_env(tmp_path, d)
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    probe = subprocess.run([SYSTEM_PY, "-c", "import pydantic"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip("the system python3 has the dependencies")
    # Pretend a build already failed for this plugin version (no network needed).
    stamp = subprocess.run([SYSTEM_PY, "-I", "-S", "-c",
                            "import sys; sys.path.insert(0, %r); import bootstrap; print(bootstrap.stamp(%r))"
                            % (str(ROOT / "src" / "memhooks"), str(ROOT))],
                           capture_output=True, text=True).stdout.strip()
    (data / "venv.failed").write_text(stamp + "\n")
    proc = run_shim("hooks/session-start", env, payload("SessionStart", cwd=str(tmp_path)))
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1
    out = json.loads(lines[0])
    assert "failed" in out["systemMessage"] and "MEMHOOKS_PYTHON" in out["systemMessage"]
    marker = (data / "python.marker").read_text()
    assert "full=\n" in marker and "hot=/" in marker
    # The hot path still journals with the dependency-less python, and spawns no doomed ingester.
    proc = run_shim("hooks/post-tool-use", env, payload())
    assert proc.returncode == 0
    rows = events(data / "memhooks.db")
    assert [r[0] for r in rows] == ["SessionStart", "PostToolUse"]
    assert rows[1][2] == "pending"
    # Next session: a retry is due; hold the build lock so that none really starts here
    # (it would need the network). The notice is not repeated.
    import fcntl

    lock = os.open(data / "venv.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        again = run_shim("hooks/session-start", env, payload("SessionStart", cwd=str(tmp_path)))
        assert again.returncode == 0
        assert "systemMessage" not in again.stdout
    finally:
        os.close(lock)


def test_shims_tolerate_a_missing_state_folder(tmp_path):
    d = bin_dir(tmp_path, bash="/bin/bash", cat="/bin/cat")
    env = base_env(tmp_path, d)
    shutil.rmtree(env["CLAUDE_PLUGIN_DATA"])
    env["CLAUDE_PLUGIN_DATA"] = str(tmp_path / "does" / "not" / "exist")
    for rel in ADVISORY:
        assert run_shim(rel, env, payload()).returncode == 0


def test_a_shell_shim_python3_is_resolved_once(tmp_path):
    """python3 on PATH is a shell script (as pyenv's shims are): the first shim run records the
    real interpreter in hot.python, later runs exec it without going through the script."""
    d = tmp_path / "bin"
    d.mkdir()
    calls = tmp_path / "calls"
    (d / "python3").write_text(f'#!/bin/sh\necho x >>"{calls}"\nexec "{sys.executable}" "$@"\n')
    (d / "python3").chmod(0o755)
    env = base_env(tmp_path, d)
    env["PATH"] = f"{d}:/usr/bin:/bin"
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    db = data / "memhooks.db"
    env["MEMHOOKS_DB"] = str(db)
    write = run_shim("bin/lc-cache-write", env, "", ("tier1", "react", "/facebook/react"))
    assert write.returncode == 0, write.stderr
    for _ in range(3):
        proc = run_shim("bin/lc-cache-lookup", env, "", ("react",))
        assert proc.returncode == 0 and proc.stdout.strip() == "/facebook/react"
    assert calls.read_text().count("x") == 1
    recorded = (data / "hot.python").read_text().strip()
    assert recorded == os.path.realpath(sys.executable)
    # A stale record (the interpreter is gone) falls back to PATH and is rewritten.
    (data / "hot.python").write_text(str(tmp_path / "gone" / "python3") + "\n")
    proc = run_shim("bin/lc-cache-lookup", env, "", ("react",))
    assert proc.stdout.strip() == "/facebook/react"
    assert calls.read_text().count("x") == 2
    assert (data / "hot.python").read_text().strip() == os.path.realpath(sys.executable)


def _stamp() -> str:
    sys.path.insert(0, str(ROOT / "src"))
    from memhooks import bootstrap

    return bootstrap.stamp(str(ROOT))


def test_session_start_hands_over_to_the_full_python_only_when_the_project_changed(tmp_path):
    """The hook runs under -I -S (no dependencies); a changed project is warmed by the python
    that has them, an unchanged one is answered from tier1 in the hook's own process."""
    d = tmp_path / "bin"
    d.mkdir()
    calls = tmp_path / "calls"
    full = d / "python3"
    full.write_text(f'#!/bin/sh\necho "$*" >>"{calls}"\nexec "{sys.executable}" "$@"\n')
    full.chmod(0o755)
    for tool in ("bash", "cat"):
        (d / tool).symlink_to(shutil.which(tool))
    env = base_env(tmp_path, d)
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text(json.dumps({"dependencies": {"react": "^18.3.1"}}))
    env["CLAUDE_PROJECT_DIR"] = str(project)
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    (data / "python.marker").write_text(f"hot={full}\nfull={full}\nstamp={_stamp()}\n")
    write = run_shim("bin/lc-cache-write", env, "", ("tier1", "react", "/facebook/react"))
    assert write.returncode == 0, write.stderr

    outputs = []
    for _ in range(2):
        proc = run_shim("hooks/session-start", env, payload("SessionStart", cwd=str(project)))
        assert proc.returncode == 0, proc.stderr
        lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
        assert len(lines) == 1, proc.stdout
        outputs.append(json.loads(lines[0])["hookSpecificOutput"]["additionalContext"])
    assert "/facebook/react" in outputs[0] and "/facebook/react" in outputs[1]
    runs = calls.read_text().splitlines()
    assert sum("session-warm" in r for r in runs) == 1, runs
    # Every hook process ran the stdlib-only entry under -I -S.
    assert all("-I -S" in r for r in runs if "session-start" in r)


def test_first_plugin_session_says_once_that_the_environment_is_being_built(tmp_path):
    d = bin_dir(tmp_path, python3=SYSTEM_PY, bash="/bin/bash", cat="/bin/cat")
    probe = subprocess.run([SYSTEM_PY, "-c", "import pydantic"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip("the system python3 has the dependencies")
    env = base_env(tmp_path, d)
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    import fcntl

    # A build "is running" (the lock is held), so none really starts here (it needs the network).
    lock = os.open(data / "venv.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        first = run_shim("hooks/session-start", env, payload("SessionStart", cwd=str(tmp_path)))
        again = run_shim("hooks/session-start", env, payload("SessionStart", cwd=str(tmp_path)))
    finally:
        os.close(lock)
    lines = [ln for ln in first.stdout.splitlines() if ln.strip()]
    assert first.returncode == 0 and len(lines) == 1
    message = json.loads(lines[0])["systemMessage"]
    assert "background" in message and "Capture already works" in message and "next session" in message
    assert "systemMessage" not in again.stdout
    # Capture works meanwhile: both SessionStart events are journaled.
    assert [r[0] for r in events(data / "memhooks.db")] == ["SessionStart", "SessionStart"]
