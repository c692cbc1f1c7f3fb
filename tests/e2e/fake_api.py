"""Loopback fakes for the end-to-end tests: Anthropic Messages API, Context7 HTTP API, TLS page.

Standard library only.  Everything binds to 127.0.0.1.

``FakeAnthropic`` answers what the real ``claude`` CLI sends:

* ``POST /v1/messages`` (Claude Code adds ``?beta=true``) with ``stream: true`` is
  answered by SSE: ``message_start``, ``content_block_start``,
  ``content_block_delta`` (``text_delta`` / ``input_json_delta``),
  ``content_block_stop``, ``message_delta`` (stop_reason) and ``message_stop``.
  Non-streaming requests get the same message as one JSON object.
* The conversation is scripted by turn.  ``script`` is a list of steps, each a
  list of ``{"name": tool_name, "input": {...}}`` tool_use blocks.  The step to
  answer is the number of user messages that already carry a ``tool_result``
  block (stateless, so retries and side calls cannot desynchronise it).  After
  the last step the model ends with ``final_text``.
* Requests whose ``tools`` list is empty or absent (WebFetch's page-summarising
  call, title generation and other small side calls) get a text answer.  The
  WebFetch summary quotes the page's ``<title>`` so the captured document is
  deterministic.
* ``POST /v1/messages/count_tokens`` answers ``{"input_tokens": n}``.
* ``GET …/v2/libs/search?libraryName=&query=`` and ``GET …/v2/context`` fake the
  Context7 HTTP API (for ``CONTEXT7_API_URL``), under any path prefix.
* Anything else: ``GET`` → 200 ``{}``, ``POST`` → 200 ``{}``.

Every request (method, path, parsed JSON body) is appended to ``requests`` so a
test can prove what reached the model.
"""

from __future__ import annotations

import json
import re
import ssl
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# WebSearch's server-side search results (title, url) and the model's summary.
WEB_SEARCH_RESULTS = [
    ("Zod performance deep dive", "https://websearch-stub.invalid/zod-perf"),
    ("Comparing schema validators", "https://websearch-stub.invalid/validators"),
]
WEB_SEARCH_SUMMARY = "Zod is fast enough for most forms; the osprey latency study measured 2 microseconds per parse."

# Library knowledge served by the fake Context7 HTTP API (/v2/libs/search).
CONTEXT7_LIBS: dict[str, dict[str, Any]] = {
    "react": {
        "id": "/facebook/react",
        "title": "React",
        "description": "The library for web and native user interfaces.",
        "trustScore": 9.2,
        "benchmarkScore": 91.5,
        "versions": ["v18.3.1", "v19.0.0"],
        "totalSnippets": 3200,
    },
    "react-dom": {
        "id": "/facebook/react",
        "title": "React",
        "description": "React DOM renderer (part of the React repository).",
        "trustScore": 9.2,
        "benchmarkScore": 91.5,
        "versions": ["v18.3.1", "v19.0.0"],
        "totalSnippets": 3200,
    },
    "zod": {
        "id": "/colinhacks/zod",
        "title": "Zod",
        "description": "TypeScript-first schema validation with static type inference.",
        "trustScore": 9.0,
        "benchmarkScore": 88.1,
        "versions": ["v3.23.8"],
        "totalSnippets": 620,
    },
}

CONTEXT7_CONTEXT_TEXT = (
    "### Fake context (/{lib})\n\nSource: https://example.invalid/{lib}\n\n"
    "Served by the e2e fake Context7 HTTP API.\n"
)
# A phrase only the fake API's React docs hold (the ctx7 CLI tests look for it).
CONTEXT7_API_PHRASE = "heron cleanup ledger"
# The answer of GET /v2/context for a library (`type=json`: the JSON the ctx7 CLI asks for).
CONTEXT7_CONTEXT_JSON: dict[str, dict[str, Any]] = {
    "facebook/react": {
        "codeSnippets": [{
            "codeTitle": "useEffect cleanup function",
            "codeDescription": "Return a cleanup function from the Effect: React runs it before the "
                               "Effect runs again and on unmount, the " + CONTEXT7_API_PHRASE + ".",
            "codeLanguage": "js", "codeTokens": 60, "codeId": "https://react.dev/reference/react/useEffect",
            "pageTitle": "useEffect",
            "codeList": [{"language": "js", "code": "useEffect(() => {\n  const c = connect();\n"
                                                    "  return () => c.disconnect();\n}, []);"}],
        }],
        "infoSnippets": [{"pageId": "https://react.dev/learn/synchronizing-with-effects",
                          "breadcrumb": "Synchronizing with Effects > Cleanup",
                          "content": "Every useEffect cleanup undoes what its setup did.", "contentTokens": 12}],
    },
}


def context7_context_text(lib: str) -> str:
    """The `type=txt` answer: the API's text form of the JSON answer, else a short page."""
    ctx = CONTEXT7_CONTEXT_JSON.get(lib)
    if ctx is None:
        return CONTEXT7_CONTEXT_TEXT.format(lib=lib)
    parts = []
    for snip in ctx["codeSnippets"]:
        code = "\n".join(f"```{c['language']}\n{c['code']}\n```" for c in snip["codeList"])
        parts.append(f"### {snip['codeTitle']}\n\nSource: {snip['codeId']}\n\n{snip['codeDescription']}\n\n{code}\n")
    for snip in ctx["infoSnippets"]:
        parts.append(f"### {snip['breadcrumb']}\n\nSource: {snip['pageId']}\n\n{snip['content']}\n")
    return "\n--------------------------------\n\n".join(parts)


def _text_of(content: Any) -> str:
    """All text inside a message ``content`` (string or list of blocks), recursively."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(c) for c in content)
    if isinstance(content, dict):
        parts = []
        for key in ("text", "content"):
            if key in content:
                parts.append(_text_of(content[key]))
        return "\n".join(parts)
    return ""


def has_tool_result(message: dict) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def tool_results(body: dict) -> dict[str, str]:
    """tool_use_id → text of every tool_result in a request body."""
    out: dict[str, str] = {}
    for m in body.get("messages") or []:
        content = m.get("content")
        if not isinstance(content, list):
            continue
        for b in content:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                out[b.get("tool_use_id", "")] = _text_of(b.get("content"))
    return out


class FakeAnthropic:
    """Scripted Messages API + Context7 API on 127.0.0.1 (see module docstring)."""

    def __init__(
        self,
        script: list[list[dict]] | None = None,
        final_text: str = "All done.",
        port: int = 0,
        context7_libs: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.script = script or []
        self.final_text = final_text
        self.context7_libs = CONTEXT7_LIBS if context7_libs is None else context7_libs
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._counter = 0
        self.server = _bind(ThreadingHTTPServer, port, self._handler_class())
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # -- lifecycle -----------------------------------------------------------
    def start(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- helpers for tests ---------------------------------------------------
    def message_requests(self) -> list[dict]:
        return [r["body"] for r in self.requests if r["kind"] == "messages"]

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._counter += 1
            return f"{prefix}_e2e_{self._counter:04d}"

    # -- model behaviour -----------------------------------------------------
    def plan(self, body: dict) -> tuple[list[dict], str]:
        """Content blocks and stop_reason for one /v1/messages request."""
        messages = body.get("messages") or []
        tools = body.get("tools") or []
        if not tools:
            return [{"type": "text", "text": self._side_answer(body)}], "end_turn"
        if all(t.get("name") == "web_search" and str(t.get("type", "")).startswith("web_search") for t in tools):
            return self._web_search_answer(body), "end_turn"
        step = sum(1 for m in messages if m.get("role") == "user" and has_tool_result(m))
        if step < len(self.script):
            blocks = []
            for i, call in enumerate(self.script[step]):
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call.get("id") or f"toolu_e2e_s{step}_{i}",
                        "name": call["name"],
                        "input": call.get("input", {}),
                    }
                )
            return blocks, "tool_use"
        return [{"type": "text", "text": self.final_text}], "end_turn"

    def _web_search_answer(self, body: dict) -> list[dict]:
        """WebSearch's inner call: a server-side web_search with two results, then text."""
        text = "\n".join(_text_of(m.get("content")) for m in body.get("messages") or [])
        m = re.search(r"query:\s*(.+)", text)
        query = m.group(1).strip() if m else "query"
        sid = "srvtoolu_e2e_websearch"
        results = [
            {"type": "web_search_result", "title": t, "url": u, "encrypted_content": "ZTJl", "page_age": None}
            for t, u in WEB_SEARCH_RESULTS
        ]
        return [
            {"type": "server_tool_use", "id": sid, "name": "web_search", "input": {"query": query}},
            {"type": "web_search_tool_result", "tool_use_id": sid, "content": results},
            {"type": "text", "text": f"{WEB_SEARCH_SUMMARY} (query: {query})"},
        ]

    def _side_answer(self, body: dict) -> str:
        text = "\n".join(_text_of(m.get("content")) for m in body.get("messages") or [])
        m = re.search(r"<title>(.*?)</title>", text, re.S | re.I)
        if m or "Web page content" in text:
            title = m.group(1).strip() if m else "the page"
            marker = re.search(r"(E2E-PAGE-MARKER-[A-Za-z0-9-]+)", text)
            extra = f" Marker: {marker.group(1)}." if marker else ""
            return (
                f"Summary of {title}: the page explains how to pin the flux capacitor "
                f"with the bracket API.{extra}"
            )
        system = _text_of(body.get("system"))
        if "title" in system.lower():
            return '{"title": "E2E session"}'
        return "OK."

    # -- HTTP --------------------------------------------------------------
    def _handler_class(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: object) -> None:  # quiet
                pass

            def _read_body(self) -> Any:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    return json.loads(raw) if raw else None
                except ValueError:
                    return raw.decode("utf-8", "replace")

            def _send_json(self, obj: Any, status: int = 200) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("request-id", fake._next_id("req"))
                self.end_headers()
                self.wfile.write(data)

            def _record(self, kind: str, body: Any) -> None:
                with fake._lock:
                    fake.requests.append(
                        {
                            "t": time.time(),
                            "kind": kind,
                            "method": self.command,
                            "path": self.path,
                            "body": body,
                        }
                    )

            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                q = dict(urllib.parse.parse_qsl(url.query))
                if url.path.endswith("/v2/libs/search"):
                    self._record("context7-search", q)
                    name = (q.get("libraryName") or "").strip().lower()
                    lib = fake.context7_libs.get(name)
                    self._send_json({"results": [dict(lib)] if lib else []})
                    return
                if url.path.endswith("/v2/context"):
                    self._record("context7-context", q)
                    lib_id = (q.get("libraryId") or "").strip("/")
                    if q.get("type") == "json":
                        ctx = CONTEXT7_CONTEXT_JSON.get(lib_id) or {"codeSnippets": [], "infoSnippets": [
                            {"breadcrumb": lib_id, "content": CONTEXT7_CONTEXT_TEXT.format(lib=lib_id),
                             "contentTokens": 20}]}
                        self._send_json(ctx)
                        return
                    data = context7_context_text(lib_id).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain; charset=utf-8")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self._record("other", None)
                self._send_json({})

            def do_HEAD(self) -> None:
                self._record("other", None)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                body = self._read_body()
                path = urllib.parse.urlsplit(self.path).path
                if path.endswith("/count_tokens"):
                    self._record("count_tokens", body)
                    n = len(json.dumps(body)) // 4 if body else 1
                    self._send_json({"input_tokens": n})
                    return
                if path.endswith("/v1/messages") and isinstance(body, dict):
                    self._record("messages", body)
                    self._answer_messages(body)
                    return
                self._record("other", body)
                self._send_json({})

            def _answer_messages(self, body: dict) -> None:
                blocks, stop = fake.plan(body)
                model = body.get("model") or "claude-e2e"
                msg_id = fake._next_id("msg")
                usage = {
                    "input_tokens": 10,
                    "output_tokens": 5,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                }
                if not body.get("stream"):
                    self._send_json(
                        {
                            "id": msg_id,
                            "type": "message",
                            "role": "assistant",
                            "model": model,
                            "content": blocks,
                            "stop_reason": stop,
                            "stop_sequence": None,
                            "usage": usage,
                        }
                    )
                    return
                events: list[tuple[str, dict]] = [
                    (
                        "message_start",
                        {
                            "type": "message_start",
                            "message": {
                                "id": msg_id,
                                "type": "message",
                                "role": "assistant",
                                "model": model,
                                "content": [],
                                "stop_reason": None,
                                "stop_sequence": None,
                                "usage": {**usage, "output_tokens": 1},
                            },
                        },
                    )
                ]
                for i, b in enumerate(blocks):
                    start: dict[str, Any]
                    if b["type"] == "text":
                        start = {"type": "text", "text": ""}
                        deltas = [{"type": "text_delta", "text": b["text"]}]
                    elif b["type"] == "web_search_tool_result":
                        start, deltas = b, []
                    else:  # tool_use, server_tool_use
                        start = {"type": b["type"], "id": b["id"], "name": b["name"], "input": {}}
                        js = json.dumps(b["input"])
                        cut = len(js) // 2
                        deltas = [
                            {"type": "input_json_delta", "partial_json": js[:cut]},
                            {"type": "input_json_delta", "partial_json": js[cut:]},
                        ]
                    events.append(
                        ("content_block_start", {"type": "content_block_start", "index": i, "content_block": start})
                    )
                    for d in deltas:
                        events.append(
                            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d})
                        )
                    events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
                events.append(
                    (
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 5},
                        },
                    )
                )
                events.append(("message_stop", {"type": "message_stop"}))
                data = b"".join(
                    f"event: {name}\ndata: {json.dumps(obj)}\n\n".encode() for name, obj in events
                )
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("request-id", fake._next_id("req"))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

        return Handler


# ---------------------------------------------------------------------------
# TLS page for WebFetch

PAGE_MARKER = "E2E-PAGE-MARKER-bracket-api"
PAGE_HTML = f"""<!doctype html>
<html><head><title>Flux Capacitor Pinning Guide</title></head>
<body>
<h1>Flux Capacitor Pinning Guide</h1>
<p>To pin the flux capacitor, call <code>bracket.pin(capacitor, depth=3)</code>.
This page exists only for the memhooks end-to-end tests. {PAGE_MARKER}</p>
</body></html>
"""


class TLSPageServer:
    """HTTPS server on 127.0.0.1 serving ``PAGE_HTML`` at every path (``/page``)."""

    def __init__(self, certfile: str, keyfile: str, port: int = 0, html: str = PAGE_HTML) -> None:
        self.requests: list[str] = []
        page = html.encode()
        srv = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: object) -> None:
                pass

            def do_GET(self) -> None:
                srv.requests.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def do_HEAD(self) -> None:
                srv.requests.append("HEAD " + self.path)
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()

        self.server = _bind(ThreadingHTTPServer, port, Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(certfile, keyfile)
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.base_url = f"https://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> TLSPageServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _bind(cls, port: int, handler):
    """Bind on 127.0.0.1:port, falling back to an ephemeral port when taken."""
    try:
        return cls(("127.0.0.1", port), handler)
    except OSError:
        if port == 0:
            raise
        return cls(("127.0.0.1", 0), handler)


def make_cert(dirpath: str) -> tuple[str, str]:
    """Throw-away self-signed certificate for IP 127.0.0.1 (openssl CLI)."""
    import os
    import subprocess

    cert = os.path.join(dirpath, "cert.pem")
    key = os.path.join(dirpath, "key.pem")
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
            "-keyout", key, "-out", cert, "-days", "2",
            "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key
