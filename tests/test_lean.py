"""memhooks._lean, proven on the Python running the tests (CI runs this file on 3.11, 3.12
and 3.13): the C module loaded without functools is the sqlite3 memhooks needs, and it
leaves the interpreter as it found it."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

from conftest import ROOT

SRC = ROOT / "src"


def _fresh(code: str) -> str:
    """Run code in a fresh `python -I -S` (as the hot paths run) with memhooks importable."""
    prelude = f"import sys\nsys.path.insert(0, {str(SRC)!r})\n"
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", prelude + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_lean_module_is_what_the_sqlite3_package_wraps():
    import sqlite3 as package

    from memhooks._lean import sqlite3

    assert sqlite3.__name__ == "_sqlite3"
    for name in ("connect", "Connection", "Cursor", "Row", "Error", "DatabaseError", "OperationalError",
                 "IntegrityError", "ProgrammingError", "InterfaceError", "DataError", "sqlite_version"):
        assert getattr(sqlite3, name) is getattr(package, name), name


def test_a_fresh_hot_start_loads_neither_functools_nor_the_package_and_sqlite_works():
    out = _fresh("""
        from memhooks._lean import PROVEN, sqlite3
        lean = sys.version_info[:2] in PROVEN and sys.implementation.name == "cpython"
        loaded = sorted({"functools", "datetime", "collections", "sqlite3"} & set(sys.modules))
        assert not lean or loaded == [], loaded
        # connections, their statement cache (more distinct statements than it holds, each
        # run again), rows and errors
        conn = sqlite3.connect(":memory:", cached_statements=4)
        conn.row_factory = sqlite3.Row
        conn.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
        for round_ in range(3):
            for i in range(12):
                conn.execute(f"INSERT OR REPLACE INTO t VALUES (?, ?) -- {i}", (i, f"v{i}.{round_}"))
        rows = conn.execute("SELECT k, v FROM t ORDER BY k").fetchall()
        assert [r["v"] for r in rows] == [f"v{i}.2" for i in range(12)], [tuple(r) for r in rows]
        try:
            conn.execute("SELECT nope FROM t")
        except sqlite3.OperationalError as exc:
            assert "nope" in str(exc)
        else:
            raise AssertionError("no error")
        second = sqlite3.connect(":memory:")
        assert second.execute("SELECT 1").fetchone() == (1,)
        # gone after: the real functools, and the package gives the very same classes
        import functools
        assert hasattr(functools, "reduce") and hasattr(functools, "partial"), dir(functools)
        assert functools.lru_cache(2)(len)("abc") == 3
        import sqlite3 as package
        assert package.Error is sqlite3.Error and package.Row is sqlite3.Row
        print("ok", lean)
    """)
    assert out.startswith("ok"), out


def test_with_functools_loaded_first_nothing_is_stood_in():
    out = _fresh("""
        import functools
        from memhooks import _lean
        assert _lean._stand_in() is None
        assert sys.modules["functools"] is functools
        assert _lean.sqlite3.connect(":memory:").execute("SELECT 2").fetchone() == (2,)
        print("ok")
    """)
    assert out == "ok\n"


def test_a_python_without_the_c_lru_wrapper_loads_sqlite_the_ordinary_way():
    out = _fresh("""
        import _functools
        del _functools._lru_cache_wrapper  # as on a Python whose functools is other
        from memhooks import _lean
        assert "functools" in sys.modules  # _sqlite3 loaded it itself
        assert _lean.sqlite3.connect(":memory:").execute("SELECT 3").fetchone() == (3,)
        print("ok")
    """)
    assert out == "ok\n"


def test_only_the_pythons_ci_runs_get_the_stand_in():
    """PROVEN names no Python that .ci/run does not run this file on: the project's own
    (requires-python's floor, 3.11) and the versions its loop adds."""
    import re

    from memhooks import _lean

    ci = (ROOT / ".ci" / "run").read_text()
    loop = re.search(r"^for v in ([0-9. ]+); do$", ci, re.M)
    assert loop is not None and "not slow and not e2e" in ci
    floor = re.search(r'requires-python = ">=3\.(\d+)"', (ROOT / "pyproject.toml").read_text())
    assert floor is not None
    ran = {(3, int(floor.group(1)))} | {tuple(map(int, v.split("."))) for v in loop.group(1).split()}
    assert set(_lean.PROVEN) <= ran, (_lean.PROVEN, ran)


def test_every_module_takes_sqlite_through_lean():
    offenders = []
    for path in sorted((SRC / "memhooks").rglob("*.py")):
        if path.name == "_lean.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import) and any(a.name in ("sqlite3", "_sqlite3") for a in node.names):
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
            if isinstance(node, ast.ImportFrom) and node.module in ("sqlite3", "_sqlite3", "sqlite3.dbapi2"):
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert offenders == []
