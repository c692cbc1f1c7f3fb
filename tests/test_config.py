"""Store location (the platformdirs rule, without platformdirs), the dependency list, migrations
and the error log."""

from __future__ import annotations

import os
import pathlib
import sys
import tomllib

import pytest

from memhooks import bootstrap, config, deps, files, log
from memhooks.setup import doctor
from memhooks.store import connect as store_mod
from memhooks.store.migrations import MIGRATIONS

ROOT = pathlib.Path(__file__).resolve().parent.parent


def xdg_user_data_dir(app: str) -> str:
    """platformdirs.user_data_dir(app, appauthor=False) on Linux, written out for the tests."""
    base = os.environ.get("XDG_DATA_HOME", "")
    if not base.strip():
        base = os.path.expanduser("~/.local/share")
    return os.path.join(base, app)


def test_store_location_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("MEMHOOKS_DB", raising=False)
    monkeypatch.delenv("CLAUDE_PLUGIN_DATA", raising=False)
    assert config.db_path() == os.path.join(xdg_user_data_dir("memhooks"),
                                            "memhooks.db")
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "plugin"))
    assert config.db_path() == str(tmp_path / "plugin" / "memhooks.db")
    monkeypatch.setenv("MEMHOOKS_DB", str(tmp_path / "explicit.db"))
    assert config.db_path() == str(tmp_path / "explicit.db")


def test_user_data_dir_follows_xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert config.user_data_dir() == xdg_user_data_dir("memhooks")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG rule is Linux's")
def test_user_data_dir_matches_platformdirs_where_installed(tmp_path, monkeypatch):
    platformdirs = pytest.importorskip("platformdirs")  # not a dependency; pgserver brings it
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for xdg in ("", "  ", str(tmp_path / "xdg")):
        monkeypatch.setenv("XDG_DATA_HOME", xdg)
        assert config.user_data_dir() == platformdirs.user_data_dir("memhooks", appauthor=False)


def test_one_dependency_list():
    """pyproject.toml's dependencies are memhooks.deps' requirements; the bootstrap and doctor
    check the same modules."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["dependencies"] == [req for req, _module in deps.REQUIREMENTS]
    assert bootstrap.dependency_modules() == deps.MODULES == doctor.DEPS
    assert "platformdirs" not in " ".join(project["dependencies"])


def test_migrations_run_once_and_are_recorded(store):
    conn = store_mod.connect(str(store))
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM _memhooks_migrations ORDER BY name")]
        assert names == sorted(fn.__name__ for fn in MIGRATIONS)
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert store.parent.stat().st_mode & 0o777 == 0o700
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert store_mod.apply_migrations(conn) == []  # already applied: nothing runs again
    finally:
        conn.close()


def test_log_rotates_and_is_private(store, monkeypatch):
    monkeypatch.setattr(files, "MAX_LOG_BYTES", 1000)  # the writer moved to memhooks.files
    for i in range(100):
        log.log_error(f"line {i} " + "x" * 50)
    path = config.log_path()
    assert os.path.getsize(path) <= 1100
    assert os.path.exists(path + ".1")
    assert os.stat(path).st_mode & 0o777 == 0o600


def test_log_exception_redacts_secrets(store):
    try:
        raise RuntimeError("failed with token ghp_" + "a" * 36)
    except RuntimeError:
        log.log_exception("ctx")
    text = open(config.log_path()).read()
    assert "ghp_" + "a" * 36 not in text and "[REDACTED]" in text


def test_project_dir_is_canonical(tmp_path, monkeypatch):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(link))
    assert config.project_dir() == str(real)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    assert config.project_dir(str(link)) == str(real)


def test_connect_creates_private_files(tmp_path):
    db = tmp_path / "new" / "deeper" / "m.db"
    conn = store_mod.connect(str(db))
    conn.close()
    assert db.stat().st_mode & 0o777 == 0o600
    assert db.parent.stat().st_mode & 0o777 == 0o700


def test_the_marker_keeps_the_plugin_stamp_by_file_key(tmp_path, monkeypatch):
    """An unchanged pyproject.toml (same size and mtime) is not read and hashed again at each
    SessionStart; a changed one is, and a changed stamp re-checks the interpreters."""
    root, state = tmp_path / "plugin", tmp_path / "state"
    root.mkdir()
    pyproject = root / "pyproject.toml"
    pyproject.write_text('[project]\nname = "memhooks"\n')
    first = bootstrap.stamp(str(root))
    marked = f"hot={sys.executable}\nfull={sys.executable}\nstamp={first}\n"
    state.mkdir()
    (state / bootstrap.MARKER).write_text(marked)
    hot, full, status, _ = bootstrap.resolve(str(state), str(root))
    assert (full, status) == (sys.executable, "ok")
    key = bootstrap.pyproject_key(str(root))
    assert (state / bootstrap.MARKER).read_text() == marked + f"pyproject={key}\n"
    # Same size and mtime, other bytes: the key vouches for the file; it is not hashed again.
    before = pyproject.stat()
    pyproject.write_text('[project]\nname = "memhookz"\n')
    os.utime(pyproject, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert bootstrap.resolve(str(state), str(root))[2] == "ok"
    assert bootstrap.read_marker(str(state))["stamp"] == first != bootstrap.stamp(str(root))
    # A real change (a new mtime): the stamp is computed again, does not match, and the
    # interpreters are looked at afresh (here: only this python, which has the dependencies).
    monkeypatch.setattr(bootstrap, "candidates", lambda: [sys.executable])
    pyproject.write_text('[project]\nname = "memhooks"\nversion = "2"\n')
    assert bootstrap.resolve(str(state), str(root))[2] == "ok"
    marker = bootstrap.read_marker(str(state))
    assert marker["stamp"] == bootstrap.stamp(str(root)) != first
    assert marker["pyproject"] == bootstrap.pyproject_key(str(root)) != key
