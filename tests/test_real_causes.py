"""Every message names the real cause, and a bad path exits non-zero with nothing before
the error: `memhooks add` offline (refused, DNS) and on a 404, a read-only store folder
(stats, doctor), another store's spool, missing paths, a garbage replay.

The read-only folder is a real read-only bind mount in a private mount namespace
(`unshare -m`, so nothing outside the test's process sees it): the tests run as root, and
root ignores permission bits but not a read-only mount. Where `unshare` cannot make one,
those tests skip; a file where the store's folder should be is tested everywhere. A file
readable but not writable (chmod 0400) is tested as `nobody` (setpriv), in a folder under /tmp
that user may enter."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import console_script, load_payload, run
from helpers_site import Site


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def memhooks(*args, **kw):
    return run(["memhooks", *args], **kw)


# ------------------------------------------------------------------ add: the network's words

def test_add_to_a_closed_port_says_connection_refused(store):
    res = memhooks("add", f"http://127.0.0.1:{closed_port()}/llms.txt")
    err = res.stderr.decode()
    assert res.returncode == 1, err
    assert "connection refused" in err
    assert "robots.txt" not in err
    assert res.stdout == b""


def test_add_to_an_unresolvable_host_says_dns(store):
    res = memhooks("add", "https://docs.example.invalid/llms.txt")
    err = res.stderr.decode()
    assert res.returncode == 1, err
    assert "DNS" in err and "does not resolve" in err
    assert "robots.txt" not in err


def test_add_of_a_missing_page_says_not_found(store):
    with Site() as site:
        site.page("/robots.txt", "User-agent: *\nAllow: /\n", "text/plain")
        res = memhooks("add", site.url("/nothing-here.md"))
    err = res.stderr.decode()
    assert res.returncode == 1, err
    assert "not found (HTTP 404)" in err


def test_add_names_robots_txt_only_when_it_said_no(store):
    with Site() as site:
        site.page("/robots.txt", "User-agent: *\nDisallow: /\n", "text/plain")
        site.page("/llms.txt", "# Docs\n")
        res = memhooks("add", site.url("/llms.txt"))
    err = res.stderr.decode()
    assert res.returncode == 1, err
    assert "robots.txt of" in err and "does not let memhooks fetch" in err


def test_add_when_robots_txt_fails_says_it_answered_5xx(store):
    def fail(site, h):
        h.send_response(503)
        h.send_header("Content-Length", "0")
        h.end_headers()

    with Site() as site:
        site.route("/robots.txt", fail)
        site.page("/llms.txt", "# Docs\n")
        res = memhooks("add", site.url("/llms.txt"))
    err = res.stderr.decode()
    assert res.returncode == 1, err
    assert "robots.txt" in err and "HTTP 503" in err


# ------------------------------------------------------------------ a store it cannot write

def _captured_store(store):
    res = run(["memhooks", "replay", "-"], stdin=json.dumps(load_payload("webfetch")) + "\n")
    assert res.returncode == 0, res.stderr
    assert store.exists()


def _read_only(folder, *argv) -> subprocess.CompletedProcess:
    """Run argv with `folder` bind-mounted read-only, in a mount namespace of its own."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare here: cannot make a read-only folder that root honours")
    script = ('mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 99; shift; exec "$@"')
    res = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", str(folder), *map(str, argv)],
                         capture_output=True, timeout=60)
    if res.returncode == 99 or b"unshare:" in res.stderr[:200]:
        pytest.skip(f"cannot bind-mount read-only here: {res.stderr[:200]!r}")
    return res


def test_stats_in_a_read_only_folder_says_read_only(store):
    _captured_store(store)
    res = _read_only(store.parent, console_script("memhooks"), "stats")
    err = res.stderr.decode()
    assert res.returncode == 1, err
    assert "is read-only" in err
    assert "Traceback" not in err and "damaged" not in err
    assert res.stdout == b""


def test_doctor_tells_a_read_only_folder_from_a_damaged_file(store):
    _captured_store(store)
    res = _read_only(store.parent, console_script("memhooks"), "doctor")
    out = res.stdout.decode()
    assert res.returncode == 1, out
    lines = {line.split()[1]: line for line in out.splitlines() if len(line.split()) > 1}
    assert lines["store"].startswith("fail") and "read-only" in lines["store"]
    assert lines["journal"].startswith("fail") and "read-only" in lines["journal"]
    assert lines["permissions"].startswith("fail") and "read-only" in lines["permissions"]
    for name in ("store", "journal"):
        assert "damaged" not in lines[name] and "moves it aside" not in lines[name]
    assert store.exists()  # nothing was moved aside


def test_a_file_where_the_folder_should_be_is_named(store, tmp_path, monkeypatch):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MEMHOOKS_DB", str(blocker / "memhooks.db"))
    res = memhooks("search", "anything")  # a reader: no store is there to open
    assert res.returncode in (0, 1)
    res = memhooks("ingest")
    err = res.stderr.decode()
    assert res.returncode == 1, err
    assert f"{blocker} is a file where the store's folder should be" in err
    assert "Traceback" not in err


# ------------------------------------------------------------------ doctor: only its own spool

def _spool_file(folder, db, n):
    folder.mkdir(parents=True, exist_ok=True)
    rec = {"received_at": 1.0, "db": str(db), "project": None, "size": 2, "error": None,
           "hook_event_name": "PostToolUse", "payload": "{}", "state": None}
    (folder / f"{n:020d}-1.json").write_text(json.dumps(rec))


def test_doctor_counts_only_its_own_stores_spool(store, tmp_path):
    _captured_store(store)
    shared = tmp_path / "state" / "memhooks" / "spool"  # the fallback folder (XDG_STATE_HOME)
    for n in range(3):
        _spool_file(shared, tmp_path / "other" / "memhooks.db", n)
    res = memhooks("doctor")
    healing = [line for line in res.stdout.decode().splitlines() if " healing " in f" {line} "]
    assert healing and healing[0].startswith("ok"), res.stdout
    assert "spooled" not in healing[0].replace("nothing spooled", "")

    _spool_file(shared, store, 10)
    res = memhooks("doctor")
    healing = [line for line in res.stdout.decode().splitlines() if " healing " in f" {line} "]
    assert healing[0].startswith("warn") and "1 spooled events" in healing[0], healing


# ------------------------------------------------------------------ missing paths, garbage

def test_stats_of_a_missing_project_fails(store):
    _captured_store(store)
    res = memhooks("stats", "--project", "/nonexistent/project")
    assert res.returncode == 1
    assert res.stdout == b""
    assert "/nonexistent/project: no such folder" in res.stderr.decode()


def test_import_transcripts_of_a_missing_path_prints_only_the_error(store):
    res = memhooks("import-transcripts", "/nonexistent/transcripts")
    assert res.returncode == 1
    assert res.stdout == b""
    assert res.stderr.decode().strip() == "memhooks: no such file or folder: /nonexistent/transcripts"


def test_replay_of_a_garbage_file_fails_and_journals_nothing(store, tmp_path):
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"this is not json\n\x00\xff\xfe binary\n[1, 2]\n")
    res = memhooks("replay", garbage)
    err = res.stderr.decode()
    assert res.returncode == 1, err
    assert "has no hook payloads" in err and "none of its 3 lines is a JSON object" in err
    assert res.stdout == b""
    assert not store.exists()  # nothing journaled, no store made for it

    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"\n\n")
    res = memhooks("replay", empty)
    assert res.returncode == 1 and "is empty" in res.stderr.decode()


def test_replay_from_stdin_of_only_failed_lines_exits_non_zero(store):
    res = memhooks("replay", "-", stdin="not json\nnor this\n")
    assert res.returncode == 1
    assert "none of the 2 lines of - is a hook payload" in res.stderr.decode()


def test_doctor_calls_a_readable_unwritable_file_read_only_not_damaged(store, tmp_path):
    """A store file its user may read but not write (chmod 0400), as a user root is not
    (setpriv to nobody: root writes any file whatever its mode)."""
    if shutil.which("setpriv") is None or os.geteuid() != 0:
        pytest.skip("needs root and setpriv to run doctor as another user")
    _captured_store(store)
    run(["memhooks", "ingest"])
    base = Path(tempfile.mkdtemp(prefix="memhooks-ro-", dir="/tmp"))  # pytest's tmp is root's alone
    try:
        home = base / "home"
        shutil.copytree(store.parent, home / "data", ignore=shutil.ignore_patterns("*.db-*", "spool"))
        for path in [base, *base.rglob("*")]:
            os.chown(path, 65534, 65534)
        for db in (home / "data").glob("*.db"):
            os.chmod(db, 0o400)
        env = dict(os.environ, HOME=str(home), MEMHOOKS_DB=str(home / "data" / "memhooks.db"),
                   XDG_STATE_HOME=str(home / "state"))
        res = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable,
                              "-m", "memhooks.cli.main", "doctor"], env=env, cwd=home, capture_output=True,
                             timeout=60)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    out = res.stdout.decode()
    if "Permission denied" in res.stderr.decode() or not out:
        pytest.skip(f"nobody cannot run this Python: {res.stderr[:200]!r}")
    lines = {line.split()[1]: line for line in out.splitlines() if len(line.split()) > 1}
    assert lines["store"].startswith("ok"), out  # readable and whole
    assert lines["permissions"].startswith("fail") and "is read-only" in lines["permissions"], out
    assert "not damaged" in lines["permissions"] and "damaged:" not in out and "moves it aside" not in out
    assert res.returncode == 1
