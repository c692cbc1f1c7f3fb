"""Keys that match the servers: a call is captured and served under what the live server acts
on. Context7 `query-docs` argument aliases resolve as the server resolves them; WebFetch's
`offset` is part of the key (a page read from one offset never answers another). Captures go
through the real capture hook and ingester, serving through the real PreToolUse hook."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from itertools import count

import pytest

from conftest import ingest, load_payload, run_hook
from memhooks.toolargs import context7_docs_args, exa_fetch_urls, webfetch_offset

_n = count(1)


def capture(db, name: str, result: str | None = None, **tool_input) -> dict:
    payload = load_payload(name)
    if result is not None:
        payload["tool_response"]["result"] = result
    if tool_input:
        payload["tool_input"] = tool_input
    payload["tool_use_id"] = f"toolu_keys_{next(_n)}"
    assert run_hook("post-tool-use", payload).returncode == 0
    ingest(db)
    return payload


def served(payload: dict, tool_input: dict) -> str | None:
    call = {k: v for k, v in payload.items() if k not in ("tool_response", "duration_ms")}
    call.update(hook_event_name="PreToolUse", tool_input=tool_input, session_id=f"s-keys-{next(_n)}")
    proc = run_hook("pre-tool-use", call)
    assert proc.returncode == 0 and proc.stderr == b""
    if not proc.stdout.strip():
        return None
    return json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecisionReason"]


# ----------------------------------------------------------------------------- Context7 aliases

def test_context7_aliases_resolve_as_the_server_does():
    q = "query-docs"
    assert context7_docs_args(q, {"libraryId": " /a/b ", "query": "x"}) == ("/a/b", "x")
    for alias in ("context7CompatibleLibraryID", "libraryID", "libraryName"):
        assert context7_docs_args(q, {alias: "/a/b", "query": "x"}) == ("/a/b", "x")
    # the server's order among aliases, and a canonical key present wins whatever its value
    assert context7_docs_args(q, {"libraryName": "/n/n", "libraryID": "/i/i", "query": "x"})[0] == "/i/i"
    assert context7_docs_args(q, {"libraryId": "", "libraryName": "/n/n", "query": "x"})[0] == ""
    assert context7_docs_args(q, {"libraryId": "/a/b", "context7CompatibleLibraryID": "/c/d"})[0] == "/a/b"
    for alias in ("userQuery", "question"):
        assert context7_docs_args(q, {"libraryId": "/a/b", alias: "hooks"}) == ("/a/b", "hooks")
    assert context7_docs_args(q, {"libraryId": "/a/b", "query": "q", "question": "other"})[1] == "q"
    # not the server's: `library_id` is no alias of query-docs (the live call fails validation)
    assert context7_docs_args(q, {"library_id": "/a/b", "query": "x"}) == ("", "x")
    # legacy 1.x get-library-docs: context7CompatibleLibraryID and topic
    legacy = "get-library-docs"
    assert context7_docs_args(legacy, {"context7CompatibleLibraryID": "/a/b", "topic": "t"}) == ("/a/b", "t")
    assert context7_docs_args(q, None) == ("", "")


@pytest.mark.parametrize("capture_key", ["libraryId", "context7CompatibleLibraryID", "libraryID",
                                         "libraryName"])
def test_any_alias_captures_under_the_id_and_every_alias_is_served(store, capture_key):
    p = capture(store, "c7_query_docs", **{capture_key: "/facebook/react", "query": "useEffect cleanup function"})
    with closing(sqlite3.connect(store)) as c:
        assert c.execute("SELECT library_id, topic FROM documents").fetchall() == [
            ("/facebook/react", "useEffect cleanup function")]
    for key in ("libraryId", "context7CompatibleLibraryID", "libraryID", "libraryName"):
        for qkey in ("query", "userQuery", "question"):
            text = served(p, {key: "/facebook/react", qkey: "useEffect cleanup function"})
            assert text is not None and "cleanup" in text, (key, qkey)
    # the canonical key names another library: the server fetches that one, so nothing is served
    assert served(p, {"libraryId": "/vuejs/core", "context7CompatibleLibraryID": "/facebook/react",
                      "query": "useEffect cleanup function"}) is None
    assert served(p, {"library_id": "/facebook/react", "query": "useEffect cleanup function"}) is None


# ----------------------------------------------------------------------------- WebFetch offset

def test_webfetch_offset_reading():
    assert webfetch_offset({}) == 0 and webfetch_offset({"offset": None}) == 0
    assert webfetch_offset({"offset": 2000}) == 2000 and webfetch_offset({"offset": 2000.0}) == 2000
    assert webfetch_offset({"offset": "300"}) == 300
    bad: object
    for bad in (-1, 1.5, True, "x", [], {"a": 1}, "١٢"):
        assert webfetch_offset({"offset": bad}) is None, bad


def test_webfetch_offset_is_part_of_the_key(store):
    url, prompt = "http://example.org/docs/guide/", "Summarise the installation steps"
    p = capture(store, "webfetch", url=url, prompt=prompt, offset=20000)
    with closing(sqlite3.connect(store)) as c:
        (meta,) = c.execute("SELECT metadata FROM documents").fetchone()
    assert json.loads(meta)["offset"] == 20000
    assert served(p, {"url": url, "prompt": prompt}) is None  # the page from its start: live
    assert served(p, {"url": url, "prompt": prompt, "offset": 0}) is None
    assert served(p, {"url": url, "prompt": prompt, "offset": 40000}) is None
    assert served(p, {"url": url, "prompt": prompt, "offset": "many"}) is None
    got = served(p, {"url": url, "prompt": prompt, "offset": 20000})
    assert got is not None and "Installation takes three steps" in got
    # a capture without an offset answers calls without one (or with 0), never another offset
    p2 = capture(store, "webfetch", "Another page: configure the client before the first request.",
                 url="https://example.org/other/", prompt=prompt)
    for call in ({}, {"offset": 0}, {"offset": None}):
        assert served(p2, {"url": "https://example.org/other/", "prompt": prompt, **call}) is not None
    assert served(p2, {"url": "https://example.org/other/", "prompt": prompt, "offset": 20000}) is None


def test_webfetch_page_without_an_offset_in_its_metadata_is_not_served(store):
    """Pages stored before the offset was recorded (or by another door) say nothing of their
    offset: they answer no call."""
    from memhooks.store.connect import connect, transaction
    from memhooks.store.projections import upsert_document

    p = capture(store, "webfetch")  # creates and migrates the store
    with closing(connect(str(store))) as conn, transaction(conn):
        upsert_document(conn, provenance="capture", project="/p", source="https://example.org/old/", source_tool="webfetch",
                        content="An old page summary, stored without its offset.", tool="WebFetch",
                        url="https://example.org/old/", type="web-page",
                        metadata={"prompt": "Summarise the installation steps"})
    assert served(p, {"url": "https://example.org/old/", "prompt": "Summarise the installation steps"}) is None


# ----------------------------------------------------------------------------- EXA URLs

def test_exa_fetch_urls_read_as_the_server_does():
    assert exa_fetch_urls({"urls": [" https://a/ ", "https://b/", "https://a/"]}) == ["https://a/", "https://b/"]
    assert exa_fetch_urls({"url": "https://a/"}) == ["https://a/"]
    assert exa_fetch_urls({"urls": '["https://a/", "https://b/"]'}) == ["https://a/", "https://b/"]
    assert exa_fetch_urls({"urls": "https://a/"}) == ["https://a/"]  # not JSON: the one URL
    bad: object
    for bad in ({}, {"urls": []}, {"urls": [1]}, {"urls": [""]}, {"urls": None}, {"urls": ["x"] * 51},
                {"urls": {"a": 1}}, None):
        assert exa_fetch_urls(bad) is None, bad
