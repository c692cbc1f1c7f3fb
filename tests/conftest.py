"""Shared test helpers: real SQLite files in temp dirs, hooks run as subprocesses."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / "hooks"
BIN = ROOT / "bin"
PAYLOADS = Path(__file__).resolve().parent / "fixtures" / "payloads"
CONSOLE_SCRIPTS = ("memhooks", "lc-cache-lookup", "lc-cache-lookup-docs", "lc-cache-write")


def console_script(name: str) -> Path:
    """A console script of the environment running the tests: beside the interpreter, never
    whatever `PATH` finds first (another install's `memhooks` would be tested instead)."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        pytest.skip(f"{name} is not installed beside {sys.executable} (pip install -e '.[test]')")
    return path


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A fresh store path, exported as MEMHOOKS_DB for this test and its subprocesses."""
    db = tmp_path / "data" / "memhooks.db"
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("MEMHOOKS_DB", str(db))
    monkeypatch.setenv("MEMHOOKS_PYTHON", sys.executable)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    monkeypatch.setenv("MEMHOOKS_OFFLINE", "1")
    monkeypatch.delenv("CLAUDE_PLUGIN_DATA", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the fallback spool
    monkeypatch.delenv("CONTEXT7_API_URL", raising=False)
    monkeypatch.delenv("CONTEXT7_API_KEY", raising=False)
    return db


def run(argv, *, stdin: bytes | str | None = None, env: dict | None = None, timeout: float = 60,
        **kw) -> subprocess.CompletedProcess:
    if isinstance(stdin, str):
        stdin = stdin.encode()
    if argv and str(argv[0]) in CONSOLE_SCRIPTS:  # a bare name: this environment's script
        argv = [console_script(str(argv[0])), *argv[1:]]
    return subprocess.run([str(a) for a in argv], input=stdin, capture_output=True,
                          env=env if env is not None else os.environ.copy(), timeout=timeout, **kw)


def run_hook(name: str, payload, *, env: dict | None = None, timeout: float = 60):
    data = payload if isinstance(payload, (bytes, str)) else json.dumps(payload)
    return run([HOOKS / name], stdin=data, env=env, timeout=timeout)


def load_payload(name: str) -> dict:
    return json.loads((PAYLOADS / f"{name}.json").read_text())


def journal_file(db) -> Path:
    """The raw journal beside the store (table `events`)."""
    db = Path(db)
    return db.parent / "journal.db" if db.name == "memhooks.db" else db.with_name(
        db.name.removesuffix(".db") + ".journal.db")


def db_rows(db, sql: str, params=()) -> list[tuple]:
    """Rows of a query on the store, with the journal attached (so `events` resolves)."""
    import sqlite_utils

    from memhooks.store.bodies import add_functions

    conn = sqlite3.connect(str(db), timeout=10)
    add_functions(conn)  # document_text(body): a document's text
    db_ = sqlite_utils.Database(conn, execute_plugins=False)
    try:
        if journal_file(db).exists():
            db_.attach("journal", journal_file(db))
        return db_.execute(sql, params).fetchall()
    finally:
        db_.close()


def ingest(db) -> None:
    """Run the real ingester in-process (what every reader does before reading)."""
    from memhooks.ingest.pipeline import ingest_pending
    from memhooks.store.connect import connect

    conn = connect(str(db))
    try:
        ingest_pending(conn, str(db))
    finally:
        conn.close()


def wait_idle(db, timeout: float = 20) -> None:
    """Wait for detached ingesters (they hold the ingest lock) to finish."""
    import fcntl
    import time

    lock = str(db) + ".ingest.lock"
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not os.path.exists(lock):
            return
        fd = os.open(lock, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError:
            time.sleep(0.05)
        finally:
            os.close(fd)


def plugin_env(tmp_path: Path) -> dict:
    """The environment of a plugin install in `tmp_path`: a project using react, the plugin's
    data folder, offline, this python for children, hot-path imports traced to `trace`."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text(json.dumps({"dependencies": {"react": "^18.3.1"}}))
    data = tmp_path / "data"
    data.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "MEMHOOKS_"))}
    env.update(CLAUDE_PLUGIN_DATA=str(data), CLAUDE_PROJECT_DIR=str(project), MEMHOOKS_OFFLINE="1",
               MEMHOOKS_PYTHON=sys.executable, MEMHOOKS_TRACE_IMPORTS=str(tmp_path / "trace"))
    return env


HEAVY_MODULES = ("pydantic", "sqlite_utils", "click", "httpx", "mcp", "rich", "anyio")


def run_hot_path_probe(body: str, *, env: dict | None = None) -> tuple[list[str], list[str]]:
    """Run `body` (code using memhooks' hot modules) in a fresh interpreter whose
    site-packages are importable, so a stray heavy import would succeed and show.
    Returns (lines the body printed, heavy modules loaded)."""
    marker = "--heavy-modules--"
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / 'src')!r})\n"
        + body
        + f"\nprint({marker!r})\n"
        + f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY_MODULES!r}))\n"
    )
    env = dict(env if env is not None else os.environ, MEMHOOKS_NO_SPAWN="1")
    r = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    lines = r.stdout.decode().splitlines()
    cut = lines.index(marker)
    assert lines[cut + 1].startswith("[")
    return lines[:cut], eval(lines[cut + 1])  # our own repr of a list of str


def pytest_collection_modifyitems(items):
    """The e2e tests (the real Claude Code CLI) are slow too: `-m "not slow"` leaves them out."""
    for item in items:
        if item.get_closest_marker("e2e") and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)


def fold_reads(conn_or_db) -> int:
    """Fold the reads log (the one way reads are counted, memhooks.store.reads) into the store,
    as the next ingest does: what a test reads of counters and access counts after a read."""
    from memhooks.ingest.pipeline import fold_reads_log
    from memhooks.store.connect import closing, connect
    from memhooks.store.queries import main_file

    if isinstance(conn_or_db, (str, Path)):
        with closing(connect(str(conn_or_db))) as conn:
            return fold_reads_log(conn, str(conn_or_db))
    return fold_reads_log(conn_or_db, main_file(conn_or_db))


@pytest.fixture
def api(httpserver, monkeypatch):
    """A loopback Context7 API (pytest-httpserver) that warm and the CLI talk to."""
    monkeypatch.setenv("CONTEXT7_API_URL", httpserver.url_for("/api"))
    monkeypatch.delenv("MEMHOOKS_OFFLINE", raising=False)
    return httpserver
