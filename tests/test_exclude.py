"""Excluded projects and a paused memhooks: nothing journaled (checked at the journal), nothing
served, nothing warmed, nothing answered; `memhooks resume` brings it all back."""

from __future__ import annotations

import fnmatch
import json
import os
import sqlite3
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from conftest import BIN, HOOKS, ROOT, db_rows, journal_file, load_payload, run, run_hook

ENTRY = ROOT / "src" / "memhooks" / "_entry.py"


def cli(*args, env=None, check=True):
    r = run([sys.executable, "-m", "memhooks.cli.main", *args], env=env)
    if check:
        assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r


def journaled(db) -> int:
    """Events in the journal file itself (0 when it was never created)."""
    path = journal_file(db)
    if not path.exists():
        return 0
    with closing(sqlite3.connect(path)) as c:
        return c.execute("SELECT count(*) FROM events").fetchone()[0]


def ingest(env=None):
    r = run([sys.executable, ENTRY, "ingest"], env=env)
    assert r.returncode == 0, r.stderr


@pytest.fixture
def seeded(store, tmp_path, monkeypatch):
    """A store that can answer this project: docs captured, a resolve captured, a lockfile
    warmed. Returns what the checks repeat."""
    monkeypatch.setenv("MEMHOOKS_NO_SPAWN", "1")
    project = Path(os.environ["CLAUDE_PROJECT_DIR"])
    (project / "package.json").write_text(json.dumps({"dependencies": {"react": "^18.3.1"}}))
    docs = load_payload("c7_query_docs")
    for name in ("c7_resolve_react", "c7_query_docs"):
        assert run_hook("post-tool-use", load_payload(name)).returncode == 0
    ingest()
    pre = {k: v for k, v in docs.items() if k != "tool_response"} | {"hook_event_name": "PreToolUse"}
    start = {"session_id": "s", "hook_event_name": "SessionStart", "source": "startup", "cwd": str(project)}
    # Reachable before: a lookup answers, a repeat is served, SessionStart speaks.
    assert run([BIN / "lc-cache-lookup", "react"]).stdout == b"/facebook/react\n"
    assert b"permissionDecision" in run_hook("pre-tool-use", pre | {"session_id": "other"}).stdout
    assert b"additionalContext" in run_hook("session-start", start).stdout
    return {"db": store, "project": project, "docs": docs, "pre": pre, "start": start}


def assert_silent(s, env=None):
    """Capture journals nothing, serving, lookups and SessionStart say nothing, warm nothing."""
    env = env or os.environ.copy()
    before = journaled(s["db"])
    warm_rows = db_rows(s["db"], "SELECT count(*) FROM warm_state")
    for name in ("c7_query_docs", "webfetch", "c7_resolve_react"):
        r = run_hook("post-tool-use", load_payload(name), env=env)
        assert (r.returncode, r.stdout) == (0, b"")
    r = run_hook("session-start", s["start"], env=env)
    assert (r.returncode, r.stdout) == (0, b"")
    assert journaled(s["db"]) == before  # checked at the journal: not one event
    r = run_hook("pre-tool-use", s["pre"] | {"session_id": "third"}, env=env)
    assert (r.returncode, r.stdout) == (0, b"")
    assert run([BIN / "lc-cache-lookup", "react"], env=env).stdout == b""
    q = s["docs"]["tool_input"]
    assert run([BIN / "lc-cache-lookup-docs", q["libraryId"], q["query"]], env=env).stdout == b""
    assert run([BIN / "lc-cache-write", "tier1", "vue", "/vuejs/core"], env=env).returncode == 0
    assert journaled(s["db"]) == before
    assert db_rows(s["db"], "SELECT count(*) FROM warm_state") == warm_rows
    r = cli("warm", str(s["project"]), env=env)
    assert "not warming" in r.stderr.decode()


def test_memhooks_exclude_globs_stop_everything(seeded, tmp_path, monkeypatch):
    parent = seeded["project"].parent
    monkeypatch.setenv("MEMHOOKS_EXCLUDE", os.pathsep.join(["/nowhere/*", f"{parent}/proj*"]))
    assert_silent(seeded)
    monkeypatch.delenv("MEMHOOKS_EXCLUDE")
    assert run_hook("post-tool-use", load_payload("webfetch")).returncode == 0
    assert journaled(seeded["db"]) > 0


def test_a_folder_above_the_project_excludes_it(seeded, monkeypatch):
    monkeypatch.setenv("MEMHOOKS_EXCLUDE", str(seeded["project"].parent))
    assert_silent(seeded)


def test_memhooks_ignore_file_excludes_the_project(seeded, tmp_path):
    ignore = seeded["project"] / ".memhooks-ignore"
    ignore.write_text("")
    assert_silent(seeded)
    # Only a regular file counts: a symlink (here to a file outside the project) is not followed.
    ignore.unlink()
    outside = tmp_path / "elsewhere"
    outside.write_text("")
    ignore.symlink_to(outside)
    before = journaled(seeded["db"])
    assert run_hook("post-tool-use", load_payload("webfetch")).returncode == 0
    assert journaled(seeded["db"]) == before + 1


def test_the_payload_cwd_decides_without_a_project_variable(seeded, monkeypatch, tmp_path):
    (seeded["project"] / ".memhooks-ignore").write_text("")
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    before = journaled(seeded["db"])
    payload = load_payload("webfetch") | {"cwd": str(seeded["project"])}
    assert run_hook("post-tool-use", payload, env=dict(env)).returncode == 0
    assert journaled(seeded["db"]) == before
    # Run elsewhere, for another folder: journaled.
    other = tmp_path / "other"
    other.mkdir()
    assert run_hook("post-tool-use", load_payload("webfetch") | {"cwd": str(other)}, env=env).returncode == 0
    assert journaled(seeded["db"]) == before + 1


def test_the_settings_file_excludes_too(seeded):
    cli("config", "set", "exclude", str(seeded["project"]))
    assert_silent(seeded)
    cli("config", "unset", "exclude")
    assert run([BIN / "lc-cache-lookup", "react"]).stdout == b"/facebook/react\n"


def test_pause_and_resume(seeded):
    out = cli("pause").stdout.decode()
    assert "paused until `memhooks resume`" in out
    assert_silent(seeded)
    assert cli("resume").stdout.decode().strip() == "memhooks resumed"
    assert run([BIN / "lc-cache-lookup", "react"]).stdout == b"/facebook/react\n"
    before = journaled(seeded["db"])
    assert run_hook("post-tool-use", load_payload("webfetch")).returncode == 0
    assert journaled(seeded["db"]) == before + 1
    # A pause with a duration says until when, and an expired one no longer holds.
    assert "paused until 2" in cli("pause", "2h").stdout.decode()
    assert run([BIN / "lc-cache-lookup", "react"]).stdout == b""
    from memhooks.gate import pause, paused_until

    pause(str(seeded["db"]), time.time() - 1)
    assert paused_until(str(seeded["db"])) is None
    assert run([BIN / "lc-cache-lookup", "react"]).stdout == b"/facebook/react\n"
    assert cli("pause", "soon", check=False).returncode == 2
    cli("resume")
    assert cli("resume").stdout.decode().strip() == "memhooks was not paused"


@pytest.mark.parametrize("pattern,path", [
    ("/home/u/*", "/home/u/p"), ("/home/u/*", "/home/u/a/b"), ("/home/*/secret", "/home/x/secret"),
    ("/home/*/secret", "/home/x/secret2"), ("/a/?", "/a/b"), ("/a/?", "/a/bc"), ("/a/[bc]x", "/a/cx"),
    ("/a/[!bc]x", "/a/cx"), ("/a/[a-c]", "/a/b"), ("/a/[", "/a/["), ("*", ""), ("/a/**/z", "/a/b/c/z"),
    ("/a*b*c*d", "/aXbYcZd"), ("/a*b*c*d", "/aXbYcZ"), ("/a/[]]", "/a/]"), ("/a/[!]]", "/a/x"),
])
def test_glob_match_agrees_with_fnmatch(pattern, path):
    from memhooks.gate import glob_match

    assert glob_match(pattern, path) == fnmatch.fnmatchcase(path, pattern)


def test_the_gate_reads_a_hostile_payload_in_linear_time():
    """Many `"cwd"` keys or a 2 MiB value: the scan stops at the second key or its limit."""
    from memhooks.gate import top_level_string

    many = b'{"a": [' + b'{"cwd": "x"},' * 200_000 + b'1]}'
    assert top_level_string(many, b"cwd") is None
    long = b'{"cwd": "' + b"a" * (2 * 1024 * 1024) + b'"}'
    assert top_level_string(long, b"cwd") is None
    inside = b'{"tool_response": "say \\"cwd\\": \\"/x\\"", "cwd": "/real"}'
    assert top_level_string(inside, b"cwd") == "/real"


def _silent_from(s, cwd: Path, env: dict) -> None:
    """PostToolUse, PreToolUse and SessionStart run for `cwd` with `env`: each exits 0 and
    prints nothing, and not one event is journaled."""
    before = journaled(s["db"])
    for name in ("c7_query_docs", "webfetch"):
        r = run_hook("post-tool-use", load_payload(name) | {"cwd": str(cwd)}, env=dict(env))
        assert (r.returncode, r.stdout) == (0, b""), r.stderr
    r = run_hook("pre-tool-use", s["pre"] | {"session_id": "fourth", "cwd": str(cwd)}, env=dict(env))
    assert (r.returncode, r.stdout) == (0, b""), r.stderr
    r = run_hook("session-start", s["start"] | {"cwd": str(cwd)}, env=dict(env))
    assert (r.returncode, r.stdout) == (0, b""), r.stderr
    assert journaled(s["db"]) == before


@pytest.mark.parametrize("with_project_dir", [True, False], ids=["CLAUDE_PROJECT_DIR", "payload-cwd"])
def test_an_ignore_file_two_folders_up_excludes_a_subfolder(seeded, with_project_dir):
    sub = seeded["project"] / "packages" / "web"
    sub.mkdir(parents=True)
    (seeded["project"] / ".memhooks-ignore").write_text("")
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    if with_project_dir:
        env["CLAUDE_PROJECT_DIR"] = str(sub)
    _silent_from(seeded, sub, env)
    # The hooks' own working directory does not decide: the payload's cwd (or the variable) does.
    r = run([HOOKS / "session-start"], stdin=json.dumps(seeded["start"] | {"cwd": str(sub)}),
            env=dict(env), cwd=str(seeded["project"].parent))
    assert (r.returncode, r.stdout) == (0, b"")


def test_session_start_reads_the_payload_cwd(seeded, tmp_path):
    """Without CLAUDE_PROJECT_DIR, SessionStart excludes by the payload's cwd, not by the
    folder it was started in (and warms that folder when it is not excluded)."""
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    (seeded["project"] / ".memhooks-ignore").write_text("")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    before = journaled(seeded["db"])
    r = run([HOOKS / "session-start"], stdin=json.dumps(seeded["start"]), env=dict(env),
            cwd=str(elsewhere))
    assert (r.returncode, r.stdout) == (0, b"")
    assert journaled(seeded["db"]) == before
    # Started inside the excluded project for a payload of another folder: it speaks.
    r = run([HOOKS / "session-start"], stdin=json.dumps(seeded["start"] | {"cwd": str(elsewhere)}),
            env=dict(env), cwd=str(seeded["project"]))
    assert r.returncode == 0 and b"additionalContext" in r.stdout
    assert journaled(seeded["db"]) == before + 1


def test_an_ignore_file_above_home_does_not_count(seeded):
    """The walk up stops at $HOME for a project inside it: a file above it is not the user's."""
    home = seeded["project"] / "home"
    proj = home / "code" / "app"
    proj.mkdir(parents=True)
    (seeded["project"] / ".memhooks-ignore").write_text("")
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"} | {"HOME": str(home)}
    before = journaled(seeded["db"])
    assert run_hook("post-tool-use", load_payload("webfetch") | {"cwd": str(proj)}, env=dict(env)).returncode == 0
    assert journaled(seeded["db"]) == before + 1
    (home / ".memhooks-ignore").write_text("")  # in $HOME itself: it counts
    _silent_from(seeded, proj, env)


def test_the_gate_names_the_folder_of_the_ignore_file(tmp_path):
    from memhooks.gate import excluded

    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    assert excluded(str(deep)) is None
    (tmp_path / "a" / ".memhooks-ignore").mkdir()  # a folder of that name is no ignore file
    assert excluded(str(deep)) is None
    (tmp_path / ".memhooks-ignore").write_text("")
    assert excluded(str(deep)) == f".memhooks-ignore in {tmp_path}"
    assert excluded(str(tmp_path)) == ".memhooks-ignore in the project"
