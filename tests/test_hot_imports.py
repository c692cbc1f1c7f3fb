"""The hot paths import only the standard library, run exactly as installed: through the
plugin's shims, through the commands `memhooks install` writes, and as console scripts."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, plugin_env

pytestmark = pytest.mark.version  # runs on every supported Python in CI

HOT = {"post-tool-use", "pre-tool-use", "session-start", "lc-cache-lookup", "lc-cache-lookup-docs", "lc-cache-write"}
# What the lookups do not need: enum (re, json, signal), hashing. Each costs a noticeable
# share of a run that should cost the interpreter.
NOT_ON_LOOKUPS = {"signal"}  # (json, re and enum may load: the stdlib json reader)
NOT_WITH_SQLITE: set[str] = set()
# Each process loads its own entry module and what its path needs, not another path's code
# (prefixes of memhooks modules; checked on the real shims' traces).
ENTRY_MODULES = {"post-tool-use": "post_tool_use", "pre-tool-use": "pre_tool_use",
                 "session-start": "session_start", "lc-cache-lookup": "lc_cache",
                 "lc-cache-lookup-docs": "lc_cache", "lc-cache-write": "lc_cache"}
NOT_ON_PATH = {
    "post-tool-use": ("memhooks.warm", "memhooks.recall.serve", "memhooks.recall.lc_cache", "memhooks.recall.lc_write",
                      "memhooks.ingest"),
    "pre-tool-use": ("memhooks.capture", "memhooks.warm", "memhooks.ingest", "memhooks.recall.lc_cache",
                     "memhooks.recall.lc_write"),
    "session-start": ("memhooks.recall", "memhooks.ingest", "memhooks.warm.resolve", "memhooks.warm.scan",
                      "memhooks.warm.session"),
    "lc-cache-lookup": ("memhooks.recall.lc_write", "memhooks.store.admission", "memhooks.capture"),
    "lc-cache-lookup-docs": ("memhooks.recall.lc_write", "memhooks.store.admission", "memhooks.capture"),
    "lc-cache-write": ("memhooks.capture", "memhooks.warm", "memhooks.ingest"),
}


def _off_path(cmd: str, mods: list[str]) -> list[str]:
    """The modules a hot path loaded that belong to another path."""
    own = {"memhooks.entry", "memhooks.entry._boundary", "memhooks.entry._input",
           f"memhooks.entry.{ENTRY_MODULES[cmd]}"}
    if cmd == "post-tool-use":
        own.add("memhooks.entry._capture")  # its capture path, past the Bash byte check
    return sorted(m for m in mods if (m.startswith("memhooks.entry") and m not in own)
                  or any(m == p or m.startswith(p + ".") for p in NOT_ON_PATH[cmd]))


def _foreign(modules: list[str], allowed: frozenset[str] = frozenset()) -> list[str]:
    std = set(sys.stdlib_module_names) | set(sys.builtin_module_names) | {"__main__"}
    return sorted(m for m in modules
                  if m.split(".")[0] not in std and m.split(".")[0] != "memhooks" and m not in allowed)


def _traces(path: Path) -> dict[str, list[list[str]]]:
    out: dict[str, list[list[str]]] = {}
    for line in path.read_text().splitlines():
        cmd, *mods = line.split(" ")
        out.setdefault(cmd, []).append(mods)
    return out


@pytest.fixture
def env(tmp_path):
    e = plugin_env(tmp_path)
    marker = Path(e["CLAUDE_PLUGIN_DATA"]) / "python.marker"
    marker.write_text(f"hot={sys.executable}\nfull={sys.executable}\nstamp=\n")
    return e


def _start(project: str) -> str:
    return json.dumps({"session_id": "s", "transcript_path": "/tmp/t", "cwd": project,
                       "hook_event_name": "SessionStart", "source": "startup"})


def _post() -> str:
    return json.dumps({"session_id": "s", "hook_event_name": "PostToolUse", "cwd": "/tmp",
                       "tool_name": "mcp__context7__query-docs", "tool_use_id": "t1",
                       "tool_input": {"libraryId": "/facebook/react", "query": "hooks"},
                       "tool_response": [{"type": "text", "text": "### Hooks\n\n```js\nuseState()\n```"}]})


def _pre() -> str:
    return json.dumps({"session_id": "s", "hook_event_name": "PreToolUse", "cwd": "/tmp",
                       "tool_name": "mcp__context7__query-docs", "tool_use_id": "t2",
                       "tool_input": {"libraryId": "/facebook/react", "query": "useState hooks"}})


def _check(trace: Path, expect: set[str]) -> None:
    traces = _traces(trace)
    assert expect <= set(traces), sorted(traces)
    for cmd in expect:
        for mods in traces[cmd]:
            assert _foreign(mods) == [], (cmd, _foreign(mods))
            if cmd in ENTRY_MODULES:
                assert f"memhooks.entry.{ENTRY_MODULES[cmd]}" in mods, (cmd, mods)
                assert _off_path(cmd, mods) == [], (cmd, _off_path(cmd, mods))
            if cmd in ("lc-cache-lookup", "lc-cache-lookup-docs"):
                unwanted = (NOT_ON_LOOKUPS | NOT_WITH_SQLITE) & set(mods)
                assert not unwanted, (cmd, sorted(unwanted))


def test_plugin_shims_stay_on_the_standard_library(env, tmp_path):
    def shim(rel, *args, stdin=""):
        proc = subprocess.run(["bash", str(ROOT / rel), *args], input=stdin, text=True, env=env,
                              capture_output=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    shim("bin/lc-cache-write", "tier1", "react", "/facebook/react")
    body = tmp_path / "body.md"
    body.write_text("### Hooks\n")
    shim("bin/lc-cache-write", "tier2", "/facebook/react", "hooks", str(body))
    assert shim("bin/lc-cache-lookup", "react").strip() == "/facebook/react"
    assert "Hooks" in shim("bin/lc-cache-lookup-docs", "/facebook/react", "hooks")
    shim("hooks/post-tool-use", stdin=_post())
    shim("hooks/pre-tool-use", stdin=_pre())
    first = shim("hooks/session-start", stdin=_start(env["CLAUDE_PROJECT_DIR"]))
    second = shim("hooks/session-start", stdin=_start(env["CLAUDE_PROJECT_DIR"]))
    assert "/facebook/react" in first and "/facebook/react" in second
    _check(tmp_path / "trace", HOT)
    # The second SessionStart (lockfiles unchanged) answered without handing over.
    traces = _traces(tmp_path / "trace")
    assert len(traces.get("session-warm", [])) == 1
    # ... and, like the capture hook, without signal or hashlib (the unchanged fast path), and
    # with SQLite's C module alone.
    for name, mods in (("session-start", traces["session-start"][-1]),
                       *(("post-tool-use", m) for m in traces["post-tool-use"])):
        unwanted = (NOT_ON_LOOKUPS | NOT_WITH_SQLITE) & set(mods)
        assert not unwanted, (name, sorted(unwanted))
        assert "_sqlite3" in mods, (name, mods)


def test_installed_commands_stay_on_the_standard_library(env, tmp_path):
    from memhooks.setup.install import Entries
    from memhooks.setup.launcher import launcher_path, render

    # What `memhooks install` writes: the commands run the launcher in memhooks' data folder.
    launcher = Path(launcher_path(sys.executable, str(tmp_path / "data")))
    launcher.write_bytes(render(sys.executable, str(ROOT / "src" / "memhooks")))
    entries = Entries(python=sys.executable, entry=str(launcher))
    for command, stdin in ((entries.post_tool_use, _post()), (entries.pre_tool_use, _pre()),
                           (entries.session_start, _start(env["CLAUDE_PROJECT_DIR"])),
                           (entries.session_start, _start(env["CLAUDE_PROJECT_DIR"]))):
        proc = subprocess.run(["bash", "-c", command], input=stdin, text=True, env=env,
                              capture_output=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
    _check(tmp_path / "trace", {"post-tool-use", "pre-tool-use", "session-start"})


def test_console_scripts_add_only_the_standard_library(env, tmp_path):
    """pip's wrappers, run as installed: they import memhooks._console, which traces itself."""
    scripts = {name: Path(sys.executable).with_name(name)
               for name in ("lc-cache-lookup", "lc-cache-lookup-docs", "lc-cache-write")}
    if not all(p.exists() for p in scripts.values()):
        pytest.skip("memhooks' console scripts are not installed beside this python")
    for name, path in scripts.items():
        assert "from memhooks._console import " in path.read_text(), (name, path.read_text())
    # What pip's wrapper imports itself is not memhooks' doing: older pips' wrappers begin
    # with `import re` (and so enum, functools...), newer ones import only sys.
    own = sorted({line.split()[1] for p in scripts.values() for line in p.read_text().splitlines()
                  if line.startswith("import ")})
    probe = "import sys; " + "".join(f"import {m}; " for m in own) + "print(' '.join(sorted(sys.modules)))"
    base = set(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              env=env).stdout.split())
    assert "sys" in base, probe
    for name, path in scripts.items():
        args = {"lc-cache-lookup": ["react"], "lc-cache-lookup-docs": ["/facebook/react", "x"],
                "lc-cache-write": ["tier1", "zod", "/colinhacks/zod"]}[name]
        proc = subprocess.run([str(path), *args], env=env, capture_output=True, text=True, timeout=60,
                              cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    traces = _traces(tmp_path / "trace")
    assert set(scripts) <= set(traces), sorted(traces)
    for name in scripts:
        for mods in traces[name]:
            added = sorted(set(mods) - base)
            assert _foreign(added) == [], (name, _foreign(added))
            if name != "lc-cache-write":
                assert not NOT_ON_LOOKUPS & set(added), (name, sorted(NOT_ON_LOOKUPS & set(added)))
    assert subprocess.run([str(scripts["lc-cache-lookup"]), "zod"], env=env, capture_output=True,
                          text=True, timeout=60).stdout.strip() == "/colinhacks/zod"


def test_the_trace_itself_sees_a_foreign_import(env, tmp_path):
    """The check is not vacuous: a run that imports a third-party module is caught."""
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    assert _foreign(["json", "memhooks.config", "pydantic", "pydantic.main"]) == ["pydantic", "pydantic.main"]
    # ... and so is a hot path that loads another path's code.
    assert _off_path("lc-cache-lookup", ["memhooks.entry.lc_cache", "memhooks.entry.pre_tool_use",
                                         "memhooks.recall.lc_cache", "memhooks.recall.lc_write"]) == [
        "memhooks.entry.pre_tool_use", "memhooks.recall.lc_write"]


def test_an_unrelated_bash_call_loads_neither_sqlite_nor_the_capture_path(env, tmp_path):
    """Every Bash call of a session reaches the hooks: one that runs no ctx7 lookup leaves at
    a byte check, before SQLite, the journal or serving load."""
    for rel, event in (("hooks/post-tool-use", "PostToolUse"), ("hooks/pre-tool-use", "PreToolUse")):
        payload = {"session_id": "s", "hook_event_name": event, "cwd": "/tmp", "tool_name": "Bash",
                   "tool_use_id": "b1", "tool_input": {"command": "git status"}}
        if event == "PostToolUse":
            payload["tool_response"] = {"stdout": "On branch main\n", "stderr": "", "interrupted": False}
        proc = subprocess.run(["bash", str(ROOT / rel)], input=json.dumps(payload), text=True, env=env,
                              capture_output=True, timeout=60)
        assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    traces = _traces(tmp_path / "trace")
    for cmd in ("post-tool-use", "pre-tool-use"):
        (mods,) = traces[cmd]
        loaded = [m for m in mods if m in ("sqlite3", "_sqlite3", "json", "re")
                  or m.startswith(("memhooks.capture", "memhooks.store", "memhooks.recall.serve"))]
        assert loaded == [], (cmd, loaded)
    assert not (Path(env["CLAUDE_PLUGIN_DATA"]) / "journal.db").exists()
