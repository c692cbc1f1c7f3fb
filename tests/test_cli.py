"""CLI errors: one line saying what is wrong, non-zero exit."""

from __future__ import annotations

import pytest

from conftest import run

CASES = [
    (["show"], 2, "Missing argument"),
    (["nosuch"], 2, "No such command"),
    (["search", "--limit", "x", "q"], 2, "--limit"),
    (["show", "123456"], 1, "no document with id 123456"),
    (["replay", "/no/such/file.jsonl"], 1, "cannot read"),
    (["cache", "write", "tier2", "/a/b", "t", "/no/such/file"], 1, "no such file"),
    (["cache", "write", "tier1", "onlyname"], 1, "takes NAME LIBRARY_ID"),
    (["scan", "/no/such/dir"], 2, "does not exist"),
]


@pytest.mark.parametrize("argv,code,words", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_errors_are_one_line(store, argv, code, words):
    from memhooks.store.connect import connect

    connect(str(store)).close()  # an empty store: without one, readers say so and exit 0
    r = run(["memhooks", *argv])
    assert r.returncode == code
    err = r.stderr.decode().strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("memhooks: ") and words in err
    assert "Traceback" not in err and r.stdout == b""


def test_version_and_help_exit_zero(store):
    assert run(["memhooks", "--version"]).returncode == 0
    r = run(["memhooks", "--help"])
    assert r.returncode == 0 and b"search" in r.stdout
