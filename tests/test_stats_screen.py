"""`memhooks stats` at a real terminal (a pty of 120×40): a headline that fits one screen,
every table with --full (through the pager); `stats --html` names no home folder and is
private (0600) like the store."""

from __future__ import annotations

import json
import os
import pty
import select
import stat
import subprocess
import sys

import pytest

from conftest import PAYLOADS, run

MEMHOOKS = [sys.executable, "-m", "memhooks.cli.main"]
NAMES = ["c7_resolve_react", "c7_query_docs", "webfetch", "exa_web_search", "c7_error_rate_limited"]


@pytest.fixture
def filled(store, tmp_path):
    lines = [json.dumps(json.loads((PAYLOADS / f"{n}.json").read_text())) for n in NAMES]
    (tmp_path / "events.jsonl").write_text("\n".join(lines) + "\n")
    res = run([*MEMHOOKS, "replay", tmp_path / "events.jsonl"])
    assert res.returncode == 0, res.stderr
    return store


def at_terminal(argv, env=None, cols=120, rows=40) -> tuple[int, str]:
    """Run argv with stdout on a pty of cols×rows; (exit code, what it printed)."""
    master, slave = pty.openpty()
    env = dict(env or os.environ, COLUMNS=str(cols), LINES=str(rows), PAGER="cat", TERM="dumb")
    proc = subprocess.Popen([str(a) for a in argv], stdout=slave, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(master)
    return proc.returncode, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def test_stats_at_a_terminal_fits_one_screen(filled):
    code, out = at_terminal([*MEMHOOKS, "stats"])
    assert code == 0, out
    lines = out.rstrip("\n").split("\n")
    assert len(lines) < 40, out
    assert lines[0].startswith("memhooks stats · all projects · ")
    head = "\n".join(lines[:10])
    for figure in ("Served from the store", "Agent reads:", "Documents:", "Cache:", "Events:"):
        assert figure in head
    assert "memhooks stats --full" in lines[-1]
    assert "┏" not in out  # no table: those are for --full


def test_stats_full_at_a_terminal_has_every_table(filled):
    code, out = at_terminal([*MEMHOOKS, "stats", "--full"])
    assert code == 0, out
    for title in ("Captures and dedup", "Cache", "On disk", "Events"):
        assert title in out
    assert len(out.splitlines()) > 40  # longer than the screen: it went through the pager ($PAGER=cat)


def test_stats_in_a_pipe_prints_every_table(filled):
    res = run([*MEMHOOKS, "stats"])
    assert res.returncode == 0
    assert "Captures and dedup" in res.stdout.decode()


def test_stats_html_is_private_and_names_no_home(filled, tmp_path, monkeypatch):
    home = tmp_path  # the store lives under it
    out = tmp_path / "page.html"
    out.write_text("old")
    os.chmod(out, 0o644)
    env = dict(os.environ, HOME=str(home))
    res = subprocess.run(["sh", "-c", 'umask 000; exec "$@"', "sh", *map(str, MEMHOOKS),
                          "stats", "--html", str(out)], capture_output=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    html = out.read_text(encoding="utf-8")
    assert str(home) not in html
    assert "~/data/memhooks.db" in html


def test_search_shows_the_agents_reads_apart_from_yours(filled):
    from conftest import db_rows
    from memhooks.entry.mcp import tool_get

    doc_id = db_rows(filled, "SELECT id FROM documents WHERE source_tool = 'webfetch'")[0][0]
    title = db_rows(filled, "SELECT title FROM documents WHERE id = ?", (doc_id,))[0][0]
    for _ in range(3):
        tool_get(doc_id)  # the agent's reads (the MCP tool)
    word = next(w for w in (title or "").split() if len(w) > 3)
    first = run([*MEMHOOKS, "search", word, "--snippets"])
    assert first.returncode == 0
    second = run([*MEMHOOKS, "search", word, "--snippets"])
    out = " ".join(second.stdout.decode().split())
    assert "read by the agent 3×, by you 1×" in out, out  # the first search was yours
