"""One error verdict at every door: the markdown and HTML error pages (a heading or a
`<title>` naming an HTTP error, a sign-in wall) are refused, and the genuine short snippets
kept, at the capture hook, `memhooks replay`, `memhooks import`, `lc-cache-write` and
`memhooks add`/`refresh`, one store per door (the team pull's door is in
tests/test_team_hostile.py). Real stores, the real hook, CLI and shims as subprocesses, a
real HTTP site on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from _verdict import C7_NOT_FINALIZED, ERROR_PAGES, ERROR_PAGES_HTML, ERROR_PAGES_MD, SNIPPETS
from conftest import BIN, db_rows, ingest, run, run_hook
from helpers_site import Site
from memhooks.store.admission import content_hash

CLI = [sys.executable, "-m", "memhooks.cli.main"]
LIB = "/facebook/react"
EXA_URL = "https://docs.example.org/page{}"


def _stored(db) -> list[str]:
    return [r[0] for r in db_rows(db, "SELECT document_text(body) FROM documents")]


def _check(db, door: str) -> None:
    """No error page is stored, every snippet is (its text whole, or its words for a page
    turned into text)."""
    stored = _stored(db)
    leaked = [page[:40] for page in ERROR_PAGES if any(page.strip() in s for s in stored)]
    for page in ERROR_PAGES_MD:  # and not under an EXA header either
        body = page.split("\n", 1)[1].strip()
        leaked += [page[:40] for s in stored if body in s]
    missing = [snip[:40] for snip in SNIPPETS if not any(snip.splitlines()[-1] in s for s in stored)]
    assert (leaked, missing) == ([], []), door


def _c7(text: str, n: int) -> dict:
    return {"session_id": "s-doors", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
            "hook_event_name": "PostToolUse", "tool_name": "mcp__context7__query-docs",
            "tool_input": {"libraryId": LIB, "query": f"topic number {n}"},
            "tool_response": [{"type": "text", "text": text}], "tool_use_id": f"toolu_door_{n}"}


def _exa(text: str, n: int) -> dict:
    url = EXA_URL.format(n)
    return {"session_id": "s-doors", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
            "hook_event_name": "PostToolUse", "tool_name": "mcp__exa__web_fetch_exa",
            "tool_input": {"urls": [url]},
            "tool_response": [{"type": "text", "text": f"# Page {n}\nURL: {url}\n\n{text}"}],
            "tool_use_id": f"toolu_door_exa_{n}"}


def _events() -> list[dict]:
    texts = ERROR_PAGES + SNIPPETS + [C7_NOT_FINALIZED]
    return [_c7(t, i) for i, t in enumerate(texts)] + [_exa(t, i) for i, t in enumerate(ERROR_PAGES)]


def test_capture_hook(store):
    env = dict(os.environ, MEMHOOKS_NO_SPAWN="1")
    for event in _events():
        r = run_hook("post-tool-use", json.dumps(event), env=env)
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    ingest(store)
    _check(store, "capture")
    # Context7's own "not finalized" answer: not a document, and not an HTTP error
    assert not [s for s in _stored(store) if "not finalized" in s]
    reasons = " ".join(r[0] or "" for r in db_rows(store, "SELECT error FROM events WHERE state = 'skipped'"))
    assert "documentation not found" in reasons or "not found" in reasons


def test_replay(store, tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in _events()))
    r = run(["memhooks", "replay", path])
    assert r.returncode == 0, r.stderr
    _check(store, "replay")


def test_import(store, tmp_path):
    path = tmp_path / "docs.jsonl"
    rows = [{"table": "documents", "row": {
        "project": "/p", "source": LIB, "source_tool": "context7", "title": f"T{i}", "content": text,
        "content_hash": content_hash(text), "type": "library-docs"}}
        for i, text in enumerate(ERROR_PAGES + SNIPPETS)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = run([*CLI, "import", "--json", path], timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["rejected"] == len(ERROR_PAGES)
    _check(store, "import")


def test_lc_cache_write(store, tmp_path):
    shim = {n: ["bash", str(BIN / n)] for n in ("lc-cache-lookup-docs", "lc-cache-write")}
    for i, text in enumerate(ERROR_PAGES + SNIPPETS):
        body = tmp_path / f"body{i}.md"
        body.write_text(text)
        r = run(shim["lc-cache-write"] + ["tier2", LIB, f"topic {i}", str(body)])
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    _check(store, "lc-cache-write")
    for i, text in enumerate(ERROR_PAGES + SNIPPETS):
        out = run(shim["lc-cache-lookup-docs"] + [LIB, f"topic {i}"]).stdout.decode()
        assert (out == "") == (i < len(ERROR_PAGES)), (text[:40], out[:80])


def _cli(*args):
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    proc = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_add_and_refresh(store):
    with Site() as site:
        paths = []
        for i, text in enumerate(ERROR_PAGES + SNIPPETS):
            html = text in ERROR_PAGES_HTML
            path = f"/docs/p{i}.{'html' if html else 'md'}"
            site.page(path, text, "text/html; charset=utf-8" if html else "text/markdown; charset=utf-8")
            paths.append(path)
        site.page("/docs/good.md", "# Widgets\n\nThe widget frobnicates gizmos quickly and safely.\n")
        listing = "# Docs\n\n## Pages\n\n" + "".join(f"- [Page {i}]({p})\n" for i, p in enumerate(paths))
        site.page("/llms.txt", listing + "- [Good](/docs/good.md)\n", "text/plain; charset=utf-8")
        _cli("add", site.url("/llms.txt"))
        _check(store, "add")
        refused = db_rows(store, "SELECT url FROM sources WHERE status = 'refused'")
        assert sorted(u for (u,) in refused) == sorted(site.url(p) for p in paths[:len(ERROR_PAGES)])
        # refresh: the genuine page now answers with an error page (status 200): its text stays
        for page in (ERROR_PAGES_HTML[1], ERROR_PAGES_MD[0]):
            site.page("/docs/good.md", page, "text/html" if page.startswith("<") else "text/markdown")
            _cli("refresh", "--all")
            [(text,)] = db_rows(store, "SELECT document_text(body) FROM documents WHERE url = ?",
                                (site.url("/docs/good.md"),))
            assert "frobnicates gizmos" in text
            assert db_rows(store, "SELECT status FROM sources WHERE url = ?",
                           (site.url("/docs/good.md"),)) == [("refused",)]
        _check(store, "refresh")
