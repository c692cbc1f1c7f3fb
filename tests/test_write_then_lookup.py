"""The seed's contract: a write followed at once by a lookup hits, in every install mode — the
pip console scripts, the entry file under `python -I -S`, the plugin's shims with a python
that has the dependencies, and the plugin's first session while its venv is still being
built (no python here can create the projections: the write is judged by admission and
journaled, and the lookup answers from that pending write). Real processes, real files."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from _verdict import ERROR_PAGES, SNIPPETS
from conftest import ROOT, console_script
from fences import unfence
from test_plugin_layout import SYSTEM_PY, base_env, bin_dir

ENTRY = ROOT / "src" / "memhooks" / "_entry.py"
DOC = "# Effects\n\nReturn a cleanup function.\n\n```js\nuseEffect(() => () => sub.close(), [])\n```\n"
ERROR_PAGE = "# 503 Service Unavailable\n\nThe server is temporarily unable to service your request.\n"
MODES = ("pip", "entry", "plugin", "plugin-first-session")


def _system_python_lacks_dependencies() -> bool:
    if not os.path.exists(SYSTEM_PY):
        return False
    return subprocess.run([SYSTEM_PY, "-c", "import pydantic"], capture_output=True).returncode != 0


@pytest.fixture
def mode(request, tmp_path):
    """(command for a lc-cache-* name, env, store path) of one install mode, nothing stored yet."""
    name = request.param
    lock = None
    if name.startswith("plugin"):
        building = name == "plugin-first-session"
        if building and not _system_python_lacks_dependencies():
            pytest.skip("needs a system python3 without the dependencies")
        env = base_env(tmp_path, bin_dir(tmp_path, python3=SYSTEM_PY if building else sys.executable,
                                         bash="/bin/bash", cat="/bin/cat"))
        db = Path(env["CLAUDE_PLUGIN_DATA"]) / "memhooks.db"
        if building:  # a venv build "is running" (none really starts: the lock is held)
            lock = os.open(Path(env["CLAUDE_PLUGIN_DATA"]) / "venv.lock", os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(lock, fcntl.LOCK_EX)

        def cmd(n):
            return ["/bin/bash", str(ROOT / "bin" / n)]
    else:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "MEMHOOKS_"))}
        db = tmp_path / "store" / "memhooks.db"
        (tmp_path / "project").mkdir()
        env.update(MEMHOOKS_DB=str(db), CLAUDE_PROJECT_DIR=str(tmp_path / "project"), MEMHOOKS_OFFLINE="1",
                   XDG_STATE_HOME=str(tmp_path / "state"))
        if name == "pip":
            def cmd(n):
                return [str(console_script(n))]
        else:
            def cmd(n):
                return [sys.executable, "-I", "-S", str(ENTRY), n]
    try:
        yield name, cmd, env, db
    finally:
        if lock is not None:
            os.close(lock)


def _run(argv, env) -> subprocess.CompletedProcess:
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr == "", (argv, r.stderr)
    return r


@pytest.mark.parametrize("mode", MODES, indirect=True)
def test_a_write_then_a_lookup_hits(mode, tmp_path):
    name, cmd, env, db = mode
    doc, page = tmp_path / "doc.md", tmp_path / "page.md"
    doc.write_text(DOC)
    page.write_text(ERROR_PAGE)
    assert _run(cmd("lc-cache-write") + ["tier1", "React", "/facebook/react"], env).stdout == ""
    assert _run(cmd("lc-cache-lookup") + ["react"], env).stdout == "/facebook/react\n"
    assert _run(cmd("lc-cache-write") + ["tier2", "/facebook/react", "useEffect cleanup", str(doc)], env).stdout == ""
    out = _run(cmd("lc-cache-lookup-docs") + ["/Facebook/React", "useEffect  Cleanup"], env).stdout
    assert unfence(out) == DOC
    # What admission refuses is no answer, pending or not: an error page, an ID of no shape.
    _run(cmd("lc-cache-write") + ["tier2", "/acme/down", "setup", str(page)], env)
    _run(cmd("lc-cache-write") + ["tier1", "evil", "not an id; rm -rf"], env)
    assert _run(cmd("lc-cache-lookup-docs") + ["/acme/down", "setup"], env).stdout == ""
    assert _run(cmd("lc-cache-lookup") + ["evil"], env).stdout == ""
    assert _run(cmd("lc-cache-lookup") + ["vue"], env).stdout == ""
    with closing(sqlite3.connect(db.parent / "journal.db")) as conn:
        states = [r[0] for r in conn.execute("SELECT state FROM events WHERE hook_event_name = 'CacheWrite'"
                                             " ORDER BY id")]
    if name != "plugin-first-session":
        assert states == ["done", "done", "skipped", "skipped"]  # a current store takes a write at once
        return
    # The first session: the admitted writes wait for a python with the dependencies, the
    # refused ones were judged already. Once one ingests, the projections hold the same answers.
    assert states == ["pending", "pending", "skipped", "skipped"]
    full = dict(env, MEMHOOKS_PYTHON=sys.executable, MEMHOOKS_DB=str(db))
    assert subprocess.run([sys.executable, str(ENTRY), "ingest"], env=full, capture_output=True,
                          timeout=120).returncode == 0
    with closing(sqlite3.connect(db.parent / "journal.db")) as conn:
        assert [r[0] for r in conn.execute("SELECT state FROM events WHERE hook_event_name = 'CacheWrite'"
                                           " ORDER BY id")] == ["done", "done", "skipped", "skipped"]
    assert _run(cmd("lc-cache-lookup") + ["react"], env).stdout == "/facebook/react\n"
    assert unfence(_run(cmd("lc-cache-lookup-docs") + ["/facebook/react", "useEffect cleanup"], env).stdout) == DOC


@pytest.mark.parametrize("mode", ["plugin-first-session"], indirect=True)
def test_the_first_session_write_keeps_the_one_verdict(mode, tmp_path):
    """The pending answer is no looser a door: while the venv is built, the error pages are
    refused at the write (no lookup answers them) and the genuine short snippets answer."""
    _name, cmd, env, _db = mode
    texts = ERROR_PAGES + SNIPPETS
    for i, text in enumerate(texts):
        body = tmp_path / f"body{i}.md"
        body.write_text(text)
        _run(cmd("lc-cache-write") + ["tier2", "/facebook/react", f"topic {i}", str(body)], env)
    answered = [bool(_run(cmd("lc-cache-lookup-docs") + ["/facebook/react", f"topic {i}"], env).stdout)
                for i in range(len(texts))]
    assert answered == [False] * len(ERROR_PAGES) + [True] * len(SNIPPETS)
