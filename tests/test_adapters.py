"""Adapters: hook event -> typed records. Fixtures live in tests/fixtures/payloads/."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhooks.ingest.adapters import (
    MIN_DOC_CHARS,
    classify,
    parse_tool_name,
    response_text_blocks,
    route,
)
from memhooks.ingest.adapters.context7 import (
    choose_library,
    error_reason,
    parse_resolve,
    parse_version,
)
from memhooks.ingest.adapters.web import url_title
from memhooks.ingest.records import AdapterResult, DocumentRecord, LibraryRecord

PAYLOADS = Path(__file__).parent / "fixtures" / "payloads"


def load(name: str) -> dict:
    return json.loads((PAYLOADS / f"{name}.json").read_text(encoding="utf-8"))


def run(name: str) -> AdapterResult:
    return route(load(name))


# ------------------------------------------------------------------ tool names


@pytest.mark.parametrize(
    "name, expected",
    [
        ("mcp__context7__query-docs", ("context7", "query-docs")),
        ("mcp__context7__resolve-library-id", ("context7", "resolve-library-id")),
        ("mcp__plugin_context7_context7__query-docs", ("context7", "query-docs")),
        ("mcp__plugin_exa_exa__web_search_exa", ("exa", "web_search_exa")),
        ("mcp__upstash-context7__resolve-library-id", ("upstash-context7", "resolve-library-id")),
        ("mcp__Context7__get-library-docs", ("Context7", "get-library-docs")),
        ("mcp__plugin_yellow-research_context7__query-docs", ("context7", "query-docs")),
        ("mcp__plugin_my_tools_exa__crawling_exa", ("tools_exa", "crawling_exa")),
        ("mcp__plugin_docs-kit_upstash_context7__query-docs", ("upstash_context7", "query-docs")),
        ("mcp__plugin_foo_bar__x", ("bar", "x")),
        ("mcp__exa__web_search_advanced_exa", ("exa", "web_search_advanced_exa")),
        ("mcp__my_server__tool__with__underscores", ("my_server", "tool__with__underscores")),
        ("WebFetch", (None, "WebFetch")),
        ("WebSearch", (None, "WebSearch")),
        ("Bash", (None, "Bash")),
        (None, (None, "")),
        (42, (None, "")),
    ],
)
def test_parse_tool_name(name, expected):
    assert parse_tool_name(name) == expected


@pytest.mark.parametrize(
    "server, tool, kind",
    [
        ("context7", "query-docs", "context7"),
        ("Upstash-Context7", "whatever", "context7"),
        ("docs", "resolve-library-id", "context7"),
        ("docs", "get-library-docs", "context7"),
        ("exa", "web_search_exa", "exa"),
        ("exa-mcp", "company_research", "exa"),
        ("search", "web_fetch_exa", "exa"),
        ("example-server", "do_thing", None),  # "exa" only as a token of the name
        ("github", "search_code", None),
        (None, "WebFetch", "web"),
        (None, "WebSearch", "web"),
        (None, "Bash", None),
    ],
)
def test_classify(server, tool, kind):
    assert classify(server, tool) == kind


# ------------------------------------------------------------------ response shapes


@pytest.mark.parametrize(
    "response, expected",
    [
        ([{"type": "text", "text": "a"}, {"type": "image", "data": "x"}, {"type": "text", "text": "b"}], ["a", "b"]),
        ("plain text", ["plain text"]),
        (json.dumps([{"type": "text", "text": "from json"}]), ["from json"]),
        (json.dumps({"content": [{"type": "text", "text": "inner"}]}), ["inner"]),
        (json.dumps({"structuredContent": {"result": "structured"}}), ["structured"]),
        ('{"results": [{"url": "https://x"}]}', ['{"results": [{"url": "https://x"}]}']),
        ("[1, 2, 3]", ["[1, 2, 3]"]),
        ("{not json", ["{not json"]),
        ({"content": [{"type": "text", "text": "obj"}]}, ["obj"]),
        ({"content": "string content"}, ["string content"]),
        ({"stdout": "x"}, []),
        (None, []),
        (17, []),
        ([None, 3, {"type": "text", "text": 5}], []),
    ],
)
def test_response_text_blocks(response, expected):
    assert response_text_blocks(response) == expected


# ------------------------------------------------------------------ context7 resolve


def test_resolve_exact_match_prefers_title_over_first():
    r = run("c7_resolve_react")
    assert r.skip_reason is None
    assert [lib.library_id for lib in r.libraries] == [
        "/facebook/react-native",
        "/facebook/react",
        "/remix-run/react-router",
        "/streamich/react-use",
    ]
    react = r.libraries[1]
    assert react == LibraryRecord(
        library_id="/facebook/react",
        title="React",
        description="The library for web and native user interfaces.",
        code_snippets=3200,
        reputation="High",
        trust_score=None,
        benchmark_score=91.5,
        versions=["v18.3.1", "v19.0.0"],
        source="https://github.com/facebook/react",
    )
    assert r.libraries[3].reputation == "Medium"
    assert r.libraries[3].benchmark_score is None
    assert len(r.tier1) == 1
    t1 = r.tier1[0]
    assert (t1.name, t1.library_id, t1.matched, t1.versions) == (
        "react",
        "/facebook/react",
        "exact",
        ["v18.3.1", "v19.0.0"],
    )
    [doc] = r.documents
    assert doc.type == "library-resolve"
    assert doc.source == "resolve:react"
    assert doc.title == "Context7 libraries for react"
    assert doc.source_tool == "context7" and doc.tool == "resolve-library-id"
    assert doc.content.startswith("Available Libraries:")
    assert doc.metadata["query"] == "useEffect cleanup"
    assert r.server == "context7" and r.source_tool == "context7"


def test_resolve_plugin_form_with_note_falls_back_to_first():
    r = run("c7_resolve_plugin_note_first")
    assert r.skip_reason is None
    assert [lib.library_id for lib in r.libraries] == ["/vercel/next.js", "/websites/nextjs_org"]
    assert r.libraries[0].versions == ["v14.3.0-canary.87", "v15.1.8"]
    assert r.libraries[1].benchmark_score == 80.0
    [t1] = r.tier1
    assert (t1.name, t1.library_id, t1.matched) == ("nextjs", "/vercel/next.js", "first")
    assert "**Note:**" in r.documents[0].content


def test_resolve_legacy_trust_score_and_id_tail_match():
    r = run("c7_resolve_legacy_trust")
    assert [lib.library_id for lib in r.libraries] == [
        "/express-validator/express-validator",
        "/expressjs/express",
    ]
    express = r.libraries[1]
    assert express.title == "Express.js"
    assert express.trust_score == 9.2
    assert express.reputation is None
    assert express.code_snippets == 123
    assert express.versions == ["4.21.2", "5.1.0"]
    # "Express" == last segment of /expressjs/express (case-insensitive)
    [t1] = r.tier1
    assert (t1.name, t1.library_id, t1.matched) == ("Express", "/expressjs/express", "exact")
    assert r.documents[0].source == "resolve:Express"


@pytest.mark.parametrize("name", ["c7_resolve_no_results", "c7_resolve_no_results_legacy"])
def test_resolve_no_results_is_negative_tier1_without_document(name):
    r = run(name)
    assert r.skip_reason is None
    assert r.documents == [] and r.libraries == []
    [t1] = r.tier1
    assert (t1.name, t1.library_id, t1.matched) == ("left-pad-ultra", None, "none")


def test_resolve_no_results_without_name_is_skipped():
    event = load("c7_resolve_no_results")
    del event["tool_input"]["libraryName"]
    r = route(event)
    assert r.tier1 == [] and r.skip_reason == "context7: no libraries found"


def test_resolve_rate_limited_is_not_a_negative_entry():
    r = run("c7_resolve_rate_limited")
    assert r.skip_reason == "context7 error: rate limited"
    assert r.tier1 == [] and r.documents == []
    assert r.server == "Context7"


def test_resolve_description_mentioning_errors_is_still_parsed():
    text = (
        "Available Libraries:\n\n- Title: express-rate-limit\n"
        "- Context7-compatible library ID: /express-rate-limit/express-rate-limit\n"
        "- Description: Rate limited or quota exceeded? Basic rate-limiting middleware (429)\n"
        "- Source Reputation: Low"
    )
    event = load("c7_resolve_react")
    event["tool_response"] = [{"type": "text", "text": text}]
    event["tool_input"]["libraryName"] = "express-rate-limit"
    r = route(event)
    assert r.skip_reason is None
    assert r.tier1[0].library_id == "/express-rate-limit/express-rate-limit"
    assert r.tier1[0].matched == "exact"
    assert r.libraries[0].reputation == "Low"


def test_parse_resolve_ignores_legacy_header_and_placeholders():
    text = (
        "Available Libraries (top matches):\n\nEach result includes:\n"
        "- Library ID: Context7-compatible identifier (format: /org/project)\n"
        "- Name: Library or package name\n\n----------\n\n"
        "- Title: Zod\n- Context7-compatible library ID: /colinhacks/zod\n"
        "- Description: -1\n- Code Snippets: 1,234\n- Trust Score: -1\n"
    )
    [lib] = parse_resolve(text)
    assert lib.library_id == "/colinhacks/zod"
    assert lib.description is None
    assert lib.code_snippets == 1234
    assert lib.trust_score is None


def test_choose_library_rules():
    libs = [
        LibraryRecord(library_id="/a/zod-form", title="Zod Form"),
        LibraryRecord(library_id="/colinhacks/zod", title="Zod v4"),
    ]
    assert choose_library("zod", libs) == (libs[1], "exact")
    assert choose_library("ZOD FORM", libs) == (libs[0], "exact")
    assert choose_library("zodd", libs) == (libs[0], "first")
    assert choose_library("zod", []) is None


# ------------------------------------------------------------------ context7 docs


def test_query_docs_document_and_tier2():
    r = run("c7_query_docs")
    assert r.skip_reason is None
    [doc] = r.documents
    assert doc.type == "library-docs"
    assert doc.source == doc.library_id == "/facebook/react"
    assert doc.topic == "useEffect cleanup function"
    assert doc.title == "useEffect cleanup (/facebook/react)"
    assert doc.version is None
    assert doc.tool == "query-docs" and doc.source_tool == "context7"
    assert doc.metadata == {"query": "useEffect cleanup function"}
    assert "connection.disconnect()" in doc.content
    [t2] = r.tier2
    assert (t2.library_id, t2.topic, t2.document_index) == (
        "/facebook/react",
        "useEffect cleanup function",
        0,
    )


def test_query_docs_plugin_form_pinned_version():
    r = run("c7_query_docs_plugin_versioned")
    [doc] = r.documents
    assert doc.library_id == "/vercel/next.js/v14.3.0-canary.87"
    assert doc.version == "v14.3.0-canary.87"
    assert doc.title == "Middleware redirect"
    assert r.tier2[0].library_id == "/vercel/next.js/v14.3.0-canary.87"


@pytest.mark.parametrize(
    "name, library_id, version",
    [
        ("c7_query_docs_wrong_id_context7CompatibleLibraryID", "/pallets/flask@3.0.x", "3.0.x"),
        ("c7_query_docs_wrong_id_libraryID", "/pallets/flask", None),
        ("c7_query_docs_wrong_id_libraryName", "/pallets/flask", None),
    ],
)
def test_query_docs_accepts_wrong_id_names(name, library_id, version):
    r = run(name)
    [doc] = r.documents
    assert doc.library_id == doc.source == library_id
    assert doc.version == version
    assert doc.topic == "application factory"
    assert doc.title == "Application factory"
    assert r.tier2[0].library_id == library_id


def test_legacy_get_library_docs():
    r = run("c7_get_library_docs_legacy")
    [doc] = r.documents
    assert doc.tool == "get-library-docs"
    assert doc.library_id == "/openai/openai-node"
    assert doc.topic == "responses api function calling"
    assert doc.title == "Responses API function calling"  # legacy TITLE: line
    assert doc.metadata["tokens"] == 15000
    assert r.tier2[0].topic == "responses api function calling"


def test_legacy_get_library_docs_without_topic():
    r = run("c7_get_library_docs_no_topic")
    [doc] = r.documents
    assert doc.topic == ""
    assert r.tier2[0].topic == ""
    assert r.tier2[0].library_id == "/expressjs/express"


def test_docs_title_falls_back_to_id_and_topic():
    event = load("c7_query_docs")
    event["tool_response"] = [{"type": "text", "text": "Plain docs body without any heading at all, long enough.\n\n```js\nrun()\n```"}]
    [doc] = route(event).documents
    assert doc.title == "/facebook/react — useEffect cleanup function"


def test_large_docs_mentioning_rate_limit_is_a_document():
    r = run("c7_query_docs_large_mentions_rate_limit")
    assert r.skip_reason is None
    [doc] = r.documents
    assert len(doc.content) > 30_000
    assert "Rate limited or quota exceeded" in doc.content
    assert doc.title == "Rate limiting recipe 0"
    assert r.tier2[0].library_id == "/express-rate-limit/express-rate-limit"


@pytest.mark.parametrize(
    "name, reason",
    [
        ("c7_error_rate_limited", "context7 error: rate limited"),
        ("c7_error_rate_limited_with_key", "context7 error: rate limited"),
        ("c7_error_not_exist", "context7 error: library does not exist"),
        ("c7_error_invalid_key", "context7 error: unauthorized"),
        ("c7_error_not_finalized", "context7 error: documentation not found"),
        ("c7_error_request_failed", "context7 error: request failed"),
        ("c7_error_fetch_exception", "context7 error: request failed"),
    ],
)
def test_context7_error_texts_are_not_documents(name, reason):
    r = run(name)
    assert r.skip_reason == reason
    assert r.documents == [] and r.tier2 == [] and r.tier1 == []


@pytest.mark.parametrize(
    "text, reason",
    [
        ("Error: Rate limited or quota exceeded.", "rate limited"),
        ("**Error:** Too many requests, slow down", "rate limited"),
        ('{"error": "unauthorized", "message": "Unauthorized. Invalid API key."}', "unauthorized"),
        ('{"error": "too_many_requests", "message": "Rate limit exceeded"}', "rate limited"),
        ("Library /foo/bar not found", "library does not exist"),
        ("No code documentation available for this library. Try mode='info' for guides.", "no documentation"),
        ("Could not complete: HTTP 429 from upstream", "rate limited"),
        ("No libraries found matching the provided name.", "no libraries found"),
    ],
)
def test_error_reason_short_texts(text, reason):
    assert error_reason(text) == reason


@pytest.mark.parametrize(
    "text",
    [
        "### Rate limiting\n\nSource: https://x.dev\n\nUse a limiter.\n```js\nlimit(100)\n```",
        "### Not found handler\n\nSource: https://expressjs.com\n\nRespond 404 when nothing matched.",
        "Rate limiting middleware docs " + "x" * 2100,
    ],
)
def test_error_reason_spares_docs(text):
    assert error_reason(text) is None


@pytest.mark.parametrize(
    "library_id, version",
    [
        ("/vercel/next.js", None),
        ("/vercel/next.js/v14.3.0-canary.87", "v14.3.0-canary.87"),
        ("/pallets/flask@3.0.x", "3.0.x"),
        ("/websites/react_dev", None),
        ("/org/repo/v1.2.3/", "v1.2.3"),
        ("/a/b/c/d", None),
    ],
)
def test_parse_version(library_id, version):
    assert parse_version(library_id) == version


@pytest.mark.parametrize(
    "name",
    [
        "c7_shape_plain_string",
        "c7_shape_json_string_blocks",
        "c7_shape_json_string_content",
        "c7_shape_object_content",
        "c7_shape_json_string_structured",
    ],
)
def test_tool_response_shapes_give_the_same_document(name):
    reference = run("c7_query_docs").documents[0]
    [doc] = run(name).documents
    assert doc.content == reference.content
    assert doc.title == reference.title
    assert doc.library_id == "/facebook/react"


def test_tiny_and_empty_docs_are_skipped():
    event = load("c7_query_docs")
    event["tool_response"] = [{"type": "text", "text": "x" * (MIN_DOC_CHARS - 1)}]
    assert route(event).skip_reason == "empty content"
    event["tool_response"] = []
    assert route(event).skip_reason == "empty content"


def test_missing_library_id_is_skipped():
    event = load("c7_query_docs")
    event["tool_input"] = {"query": "x"}
    r = route(event)
    assert r.documents == [] and r.skip_reason == "context7: missing library id"


def test_persisted_output_note_is_skipped():
    event = load("c7_query_docs")
    event["tool_response"] = (
        "<persisted-output>\nOutput too large (52.1KB). Full output saved to: "
        "/home/dev/.claude/projects/x/tool-results/toolu_1.txt\n\nPreview (first 2KB):\n### useEffect\n"
        "</persisted-output>"
    )
    assert route(event).skip_reason == "output persisted to file"


# ------------------------------------------------------------------ failures / not captured


@pytest.mark.parametrize("name", ["c7_failure", "exa_failure"])
def test_post_tool_use_failure(name):
    r = run(name)
    assert r.skip_reason == "tool failure"
    assert r.empty


@pytest.mark.parametrize("name", ["bash_event", "other_mcp"])
def test_not_captured_tools(name):
    assert run(name).skip_reason == "not a captured tool"


def test_session_start_is_skipped():
    r = run("session_start")
    assert r.skip_reason is not None and r.skip_reason.startswith("not a PostToolUse event")


# ------------------------------------------------------------------ exa


def test_exa_web_search_one_document_per_result():
    r = run("exa_web_search")
    assert r.skip_reason is None and r.source_tool == "exa" and r.server == "exa"
    assert [d.url for d in r.documents] == [
        "https://legacy.reactjs.org/docs/hooks-effect.html",
        "https://react.dev/reference/react/useEffect",
    ]  # the third result has no text: too small
    first, second = r.documents
    assert first.source == first.url
    assert first.title == "Using the Effect Hook – React"
    assert first.type == "search-results" and first.tool == "web_search_exa"
    assert first.content.startswith("Effects may also optionally specify")
    assert "cleanup when the component unmounts" in first.content
    assert first.metadata == {
        "query": "react useEffect cleanup",
        "published": "2023-03-01T00:00:00.000Z",
        "author": "React Team",
        "rank": 0,
    }
    # a "---" rule inside a result's text is glued back, not a new result
    assert second.content.startswith("useEffect is a React Hook")
    assert second.content.endswith("Reference: useEffect(setup, dependencies?)")
    assert "published" not in second.metadata and "author" not in second.metadata


def test_exa_legacy_context_string_is_one_document():
    r = run("exa_web_search_legacy_context")
    [doc] = r.documents
    assert doc.source == doc.title == "react useEffect cleanup"
    assert doc.url is None
    assert doc.type == "search-results"
    assert doc.content.startswith("React useEffect cleanup:")
    assert doc.metadata["query"] == "react useEffect cleanup"


def test_exa_code_context():
    r = run("exa_code_context")
    assert [d.type for d in r.documents] == ["code-context", "code-context"]
    first, second = r.documents
    assert first.url == (
        "https://requests.readthedocs.io/en/latest/user/quickstart/#more-complicated-post-requests"
    )
    assert first.title == "requests – POST JSON"
    assert first.content.startswith(">>> payload = {'key1': 'value1'}")
    assert second.title is None  # "Title: N/A"
    assert second.content.startswith("Starting with Requests version 2.4.2")


def test_exa_web_fetch_pages_and_error_lines():
    r = run("exa_web_fetch")
    assert [d.url for d in r.documents] == [
        "https://nextjs.org/docs/app/building-your-application/routing/middleware",
        "https://example.org/plain",
    ]
    page, plain = r.documents
    assert page.type == "web-page" and page.tool == "web_fetch_exa"
    assert page.title == "Middleware | Next.js"
    assert page.metadata == {"published": "2025-01-14", "author": "Vercel", "keyed_by": "asked-url"}
    # a "# Heading" inside the page text (not followed by URL:) stays in the page
    assert page.content == (
        "Middleware allows you to run code before a request is completed.\n"
        "# Convention\nUse the file middleware.ts in the root of your project."
    )
    assert plain.title is None  # "(no title)"
    assert plain.content == "Plain page text without a title but long enough to keep."
    assert all("Error fetching" not in d.content for d in r.documents)


def test_exa_web_fetch_all_failed():
    r = run("exa_web_fetch_all_failed")
    assert r.documents == [] and r.skip_reason == "exa: fetch failed"


def test_exa_crawling_alias_text_format():
    [doc] = run("exa_crawling_alias").documents
    assert doc.tool == "crawling_exa" and doc.type == "web-page"
    assert doc.url == doc.source == "https://requests.readthedocs.io/en/latest/user/quickstart/"
    assert doc.title == "Quickstart - Requests"
    assert doc.content.startswith("Make a Request:")


def test_exa_crawling_legacy_json():
    [doc] = run("exa_crawling_legacy_json").documents
    assert doc.type == "web-page"
    assert doc.url == "https://docs.python.org/3/library/asyncio-task.html"
    assert doc.title == "Coroutines and Tasks — Python 3.13 documentation"
    assert doc.content.startswith("This section outlines high-level asyncio APIs")
    assert doc.metadata["published"] == "2024-10-07T00:00:00.000Z"
    assert "author" not in doc.metadata


def test_exa_search_advanced_json():
    r = run("exa_search_advanced")
    assert [d.url for d in r.documents] == [
        "https://arxiv.org/abs/2005.11401",
        "https://github.com/facebookresearch/rag",
    ]
    paper, repo = r.documents
    assert paper.type == "search-results" and paper.tool == "web_search_advanced_exa"
    assert paper.content.startswith("Large pre-trained language models")
    assert paper.metadata["author"] == "Patrick Lewis"
    assert paper.metadata["summary"] == "Introduces RAG models combining parametric and non-parametric memory."
    assert paper.metadata["highlights"] == [
        "We explore a general-purpose fine-tuning recipe for retrieval-augmented generation (RAG)."
    ]
    assert paper.metadata["query"] == "retrieval augmented generation"
    # no text: highlights become the content
    assert repo.content == "Code for the RAG paper, with retriever and generator checkpoints."


def test_exa_unknown_tool_is_generic():
    [doc] = run("exa_unknown_tool").documents
    assert doc.tool == "linkedin_search_exa"
    assert doc.url == "https://www.linkedin.com/company/exa-ai"
    assert doc.title == "Exa | LinkedIn"
    assert doc.type == "search-results"


def test_exa_no_results():
    assert run("exa_no_results").skip_reason == "exa: no results"


@pytest.mark.parametrize(
    "text",
    [
        "You've hit Exa's free MCP rate limit. To continue using without limits, create your own Exa API key.",
        "Search error (401): Invalid API key",
        "Error fetching URL(s): https://example.invalid/: CRAWL_NOT_FOUND",
    ],
)
def test_exa_error_text_without_is_error(text):
    event = load("exa_web_search")
    event["tool_response"] = [{"type": "text", "text": text}]
    r = route(event)
    assert r.documents == [] and r.skip_reason == "exa error"


# ------------------------------------------------------------------ web built-ins


def test_webfetch():
    r = run("webfetch")
    assert r.source_tool == "webfetch" and r.server is None
    [doc] = r.documents
    assert doc.source == doc.url == "http://example.org/docs/guide/"  # as the model wrote it
    assert doc.type == "web-page" and doc.tool == "WebFetch" and doc.source_tool == "webfetch"
    assert doc.title == "example.org/docs/guide"
    assert doc.content.startswith("Installation takes three steps")
    assert doc.metadata == {
        "prompt": "Summarise the installation steps",
        "offset": 0,  # no offset asked: the page from its start (part of the serving key)
        "code": 200,
        "bytes": 18342,
        "code_text": "OK",
        "final_url": "https://example.org/docs/guide/",
    }


def test_webfetch_url_falls_back_to_response():
    event = load("webfetch")
    del event["tool_input"]["url"]
    [doc] = route(event).documents
    assert doc.url == "https://example.org/docs/guide/"
    assert "final_url" not in doc.metadata


def test_webfetch_http_error_is_skipped():
    assert run("webfetch_404").skip_reason == "webfetch: http 404"


def test_websearch_mixed_results():
    r = run("websearch")
    [doc] = r.documents
    assert doc.source == "websearch:sqlite fts5 bm25 ranking"
    assert doc.title == "sqlite fts5 bm25 ranking"
    assert doc.type == "search-results" and doc.source_tool == "websearch" and doc.url is None
    assert doc.content == (
        "sqlite fts5 bm25 ranking\n\n"
        "- SQLite FTS5 Extension — https://www.sqlite.org/fts5.html\n"
        "- Full-text search ranking — https://www.sqlite.org/fts5.html#the_bm25_function\n\n"
        "FTS5 provides a built-in bm25() auxiliary function; lower scores are better matches."
    )
    assert doc.metadata["urls"] == [
        "https://www.sqlite.org/fts5.html",
        "https://www.sqlite.org/fts5.html#the_bm25_function",
    ]
    assert doc.metadata["allowed_domains"] == ["sqlite.org"]


def test_websearch_empty_is_skipped():
    r = run("websearch_empty")
    assert r.documents == [] and r.skip_reason == "websearch: no results"


def test_url_title():
    assert url_title("https://example.org/a/b/?q=1#x") == "example.org/a/b"
    assert url_title("https://example.org") == "example.org"
    assert url_title("not a url") == "not a url"


# ------------------------------------------------------------------ robustness


def test_every_fixture_routes_and_validates():
    files = sorted(PAYLOADS.glob("*.json"))
    assert len(files) >= 40
    for path in files:
        result = route(json.loads(path.read_text(encoding="utf-8")))
        assert isinstance(result, AdapterResult), path.name
        assert result.documents or result.tier1 or result.skip_reason, path.name
        for doc in result.documents:
            assert isinstance(doc, DocumentRecord)
            assert len(doc.content.strip()) >= MIN_DOC_CHARS, path.name
            assert doc.source, path.name
        for t2 in result.tier2:
            assert 0 <= t2.document_index < len(result.documents)
        # records round-trip through JSON (ingestion stores them)
        assert AdapterResult.model_validate_json(result.model_dump_json()) == result


@pytest.mark.parametrize(
    "event",
    [
        None,
        42,
        "PostToolUse",
        [],
        {},
        {"hook_event_name": None},
        {"hook_event_name": "PostToolUse"},
        {"hook_event_name": "PostToolUse", "tool_name": 5},
        {"hook_event_name": "PostToolUse", "tool_name": "mcp__context7__query-docs"},
        {"hook_event_name": "PostToolUse", "tool_name": "mcp__context7__query-docs", "tool_input": "x", "tool_response": 3},
        {"hook_event_name": "PostToolUse", "tool_name": "mcp__context7__resolve-library-id", "tool_input": {"libraryName": 7}, "tool_response": [{"type": "text", "text": None}]},
        {"hook_event_name": "PostToolUse", "tool_name": "WebFetch", "tool_input": None, "tool_response": {"result": 5, "code": "200"}},
        {"hook_event_name": "PostToolUse", "tool_name": "WebSearch", "tool_input": {}, "tool_response": {"results": [None, 1, {"content": [None, {"url": 3}]}]}},
        {"hook_event_name": "PostToolUse", "tool_name": "mcp__exa__web_search_advanced_exa", "tool_input": {}, "tool_response": '[{"type":"text","text":"{\\"results\\": [1, null, {\\"url\\": 5}]}"}]'},
        {"hook_event_name": "PostToolUse", "tool_name": "mcp__exa__web_fetch_exa", "tool_input": {"urls": None}, "tool_response": [{"type": "text", "text": "# \nURL: \n\n"}]},
        {"hook_event_name": "PostToolUse", "tool_name": "mcp__", "tool_response": []},
        {"hook_event_name": "PostToolUse", "tool_name": "mcp__plugin___x", "tool_response": []},
    ],
)
def test_route_never_raises_on_garbage(event):
    result = route(copy.deepcopy(event))
    assert isinstance(result, AdapterResult)
    assert result.empty and result.skip_reason


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=20,
)
_tool_names = st.sampled_from(
    [
        "mcp__context7__resolve-library-id",
        "mcp__plugin_context7_context7__query-docs",
        "mcp__context7__get-library-docs",
        "mcp__plugin_exa_exa__web_search_exa",
        "mcp__exa__web_fetch_exa",
        "mcp__exa__crawling_exa",
        "mcp__exa__web_search_advanced_exa",
        "mcp__exa__get_code_context_exa",
        "mcp__exa__foo_exa",
        "WebFetch",
        "WebSearch",
        "Bash",
    ]
)
_text_bits = st.sampled_from(
    [
        "Available Libraries:\n\n",
        "- Title: X\n",
        "- Context7-compatible library ID: /a/b\n",
        "- Versions: \n",
        "----------\n",
        "\n\n---\n\n",
        "Title: t\nURL: https://u\n",
        "# T\nURL: https://u\n\n",
        "Error fetching https://u: TAG\n",
        "Rate limited or quota exceeded.",
        "### Heading\n",
        '{"results": [',
        "x" * 30,
    ]
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(event=_json)
def test_route_never_raises_on_arbitrary_json(event):
    assert isinstance(route(event), AdapterResult)


@settings(max_examples=300, deadline=None)
@given(
    tool_name=_tool_names,
    tool_input=_json,
    tool_response=_json,
    hook=st.sampled_from(["PostToolUse", "PostToolUseFailure", "SessionStart", None]),
)
def test_route_never_raises_on_arbitrary_fields(tool_name, tool_input, tool_response, hook):
    event = {
        "hook_event_name": hook,
        "tool_name": tool_name,
        "tool_input": tool_input,
        "tool_response": tool_response,
    }
    result = route(event)
    assert isinstance(result, AdapterResult)
    assert not result.skip_reason or not result.skip_reason.startswith("adapter error")


@settings(max_examples=300, deadline=None)
@given(
    tool_name=_tool_names,
    pieces=st.lists(_text_bits | st.text(max_size=30), max_size=12),
    name=st.text(max_size=10),
)
def test_route_never_raises_on_format_like_text(tool_name, pieces, name):
    text = "".join(pieces)
    event = {
        "hook_event_name": "PostToolUse",
        "tool_name": tool_name,
        "tool_input": {"libraryName": name, "libraryId": "/a/b", "query": name, "url": "https://u", "prompt": name},
        "tool_response": [{"type": "text", "text": text}] if not tool_name[0].isupper() else {"result": text, "query": name, "results": [text]},
    }
    result = route(event)
    assert isinstance(result, AdapterResult)
    assert not result.skip_reason or not result.skip_reason.startswith("adapter error")
    for doc in result.documents:
        assert len(doc.content.strip()) >= MIN_DOC_CHARS


def test_webfetch_with_a_malformed_port_is_still_a_document():
    from memhooks.ingest.adapters import route

    event = {"hook_event_name": "PostToolUse", "tool_name": "WebFetch",
             "tool_input": {"url": "https://127.0.0.1:<PORT>/page", "prompt": "summarise"},
             "tool_response": {"code": 200, "result": "A summary of the page that is long enough."}}
    result = route(event)
    assert [d.title for d in result.documents] == ["127.0.0.1:<port>/page"]
