"""`memhooks stats --html FILE`: one self-contained page, opened in a real headless Chromium
(Debian's `chromium`), its rendered DOM checked for the charts, and a screenshot taken."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import db_rows, run

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "transcripts"
MEMHOOKS = [sys.executable, "-m", "memhooks.cli.main"]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
HOSTILE = '<script>alert("x")</script><img src=https://evil.invalid/x.png>'


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    assert CHROMIUM is not None
    profile = tmp_path / "chromium-profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=120)


@pytest.fixture
def page(store, tmp_path):
    """A store filled from the recorded transcripts, read by the agent (MCP tool code) and by
    the user (`memhooks search`), with calls served from the store and a hostile title; then
    `stats --html`."""
    assert run([*MEMHOOKS, "import-transcripts", "--json", FIXTURES]).returncode == 0
    # and one live capture today (the transcripts keep their recorded dates)
    from conftest import load_payload, run_hook

    assert run_hook("post-tool-use", load_payload("exa_web_search"),
                    env=dict(os.environ, MEMHOOKS_NO_SPAWN="1")).returncode == 0
    # a Context7 docs call captured, then repeated in two sessions: both answered from the store
    docs = load_payload("c7_query_docs")
    assert run_hook("post-tool-use", docs, env=dict(os.environ, MEMHOOKS_NO_SPAWN="1")).returncode == 0
    assert run([*MEMHOOKS, "stats", "--json"]).returncode == 0  # a reader ingests it
    call = {k: v for k, v in docs.items() if k not in ("tool_response", "duration_ms")}
    for session in ("served-1", "served-2"):
        served = run_hook("pre-tool-use", dict(call, hook_event_name="PreToolUse", session_id=session))
        assert b"permissionDecision" in served.stdout
    from memhooks.entry.mcp import tool_get, tool_search

    for _ in range(3):
        tool_search("flamingo teardown ritual")
    doc_id = db_rows(store, "SELECT id FROM documents WHERE source_tool = 'webfetch'")[0][0]
    tool_get(doc_id)
    assert run([*MEMHOOKS, "search", "pelican"]).returncode == 0
    import sqlite3

    from memhooks.store.bodies import add_functions

    with sqlite3.connect(str(store)) as conn:
        add_functions(conn)  # the FTS triggers read a document's text through document_text()
        conn.execute("UPDATE documents SET title = ? WHERE id = ?", (HOSTILE, doc_id))
    # Context7's budget as warm's last search saw it (memhooks.warm.context7_budget's figures)
    import time

    from memhooks.store.connect import connect, transaction
    from memhooks.store.warm_state import save_budget

    kept = connect(str(store))
    try:
        with transaction(kept):
            assert save_budget(kept, {"limit": 1000, "remaining": 640, "reset_at": time.time() + 7200,
                                      "policy": "1000;w=86400", "status": 200, "seen_at": time.time() - 60})
    finally:
        kept.close()
    out = tmp_path / "stats.html"
    p = run([*MEMHOOKS, "stats", "--html", out])
    assert p.returncode == 0, p.stderr.decode()
    assert f"wrote {out}" in p.stdout.decode()
    return out


def test_page_is_self_contained(page):
    html = page.read_text(encoding="utf-8")
    assert "<script" not in html.lower() and HOSTILE not in html
    assert "&lt;script&gt;" in html  # the hostile title is shown, escaped
    # nothing is fetched: no src/href attributes, no CSS url() or @import
    assert not re.search(r"<[^>]*\s(src|href)\s*=", html, re.I)
    assert "url(" not in html and "@import" not in html
    assert html.count("<svg") == 3 and "Content-Security-Policy" in html


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_page_renders_in_headless_chromium(page, tmp_path):
    url = page.resolve().as_uri()
    dom = _chromium(tmp_path, "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    rendered = dom.stdout
    for chart in ("captures", "agent-reads", "calls-avoided"):
        assert f'id="chart-{chart}"' in rendered and f'class="chart {chart}"' in rendered
    bars = re.findall(r'<rect class="bar"[^>]*data-value="(\d+)"', rendered)
    assert len(bars) == 90  # 30 days x 3 charts
    import time

    since = time.time() - 29 * 86400 - 86400
    recent = db_rows(page.parent / "data" / "memhooks.db",
                     "SELECT count(*) FROM captures WHERE captured_at >= ?", (since,))[0][0]
    got = sum(int(v) for v in bars[:30])
    assert got >= 1 and recent - 2 <= got <= recent  # window edges are whole UTC days
    assert sum(int(v) for v in bars[30:60]) >= 4  # agent reads (3 searches + 1 get)
    assert "Most read by the agent" in rendered and 'id="most-read"' in rendered
    served = rendered[rendered.index('<section id="served">'):]
    served = served[:served.index("</section>")]
    assert "Served from the store" in served and 'id="served-by-tool"' in served
    assert "context7-docs" in served and "/facebook/react" in served and 'class="hbar"' in served
    assert sum(int(v) for v in bars[60:90]) == 2  # calls avoided today
    providers = rendered[rendered.index('<section id="providers">'):]
    providers = providers[:providers.index("</section>")]
    c7 = re.search(r"<tr><td>context7</td>((?:<td[^>]*>[^<]*</td>)+)</tr>", providers)
    assert c7 is not None, providers
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", c7.group(1))
    assert cells[2] == "2" and cells[4] == "2"  # served twice: two calls avoided
    assert "640 of 1,000 requests left" in providers and 'id="budget"' in providers
    assert "1000;w=86400" in providers
    assert "<script" not in rendered.split("</style>", 1)[1].lower()
    shot = tmp_path / "stats.png"
    # tall enough to show the served-from-the-store and per-provider sections below the charts
    r = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1100,3600", url)
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    keep = Path(os.environ.get("MEMHOOKS_SCREENSHOT_DIR", tmp_path))
    keep.mkdir(parents=True, exist_ok=True)
    if keep != tmp_path:
        shutil.copy(shot, keep / shot.name)
        shot = keep / shot.name
    print(f"stats page screenshot: {shot}")
