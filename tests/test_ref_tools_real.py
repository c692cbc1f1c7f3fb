"""The real Ref MCP server (`ref-tools-mcp` from npm, pinned) against a loopback Ref API
(`REF_URL`): its answers, read with the real MCP client, go through the real PostToolUse and
PreToolUse hooks: a page is captured, searchable and served on a repeat; its 503 error text
("Error reading URL: Request failed with status code 503") is refused by admission.

The npm install is cached outside git (`$MEMHOOKS_E2E_CACHE/ref-tools-mcp-<version>` or
`~/.cache/memhooks-e2e/…`, as tests/e2e/harness.py does for the Claude Code CLI); the test is
skipped, saying why, when npm or node cannot provide it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import uuid
from contextlib import closing
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest

from conftest import db_rows, ingest, run_hook
from fences import bodies
from memhooks.recall import search
from memhooks.store.connect import connect

pytestmark = pytest.mark.slow

REF_VERSION = "3.0.3"
PAGE_URL = "https://react.dev/reference/react/useEffect"
DOWN_URL = "https://react.dev/reference/react/useMemo"
PAGE = ("# useEffect\n\n`useEffect` is a React Hook that lets you synchronize a component with an external system.\n\n"
        "```js\nuseEffect(setup, dependencies?)\n```\n\n## Cleanup\n\nReact runs the cleanup function before the effect "
        "runs again, and once more after the component unmounts.")


def cache_dir() -> Path:
    base = os.environ.get("MEMHOOKS_E2E_CACHE", "").strip()
    root = Path(base) if base else Path.home() / ".cache" / "memhooks-e2e"
    return root / f"ref-tools-mcp-{REF_VERSION}"


def ref_server() -> Path:
    """The installed server's entry (npm install into the cache when it is not there yet)."""
    folder = cache_dir()
    entry = folder / "node_modules" / "ref-tools-mcp" / "dist" / "index.cjs"
    if entry.is_file():
        return entry
    npm = shutil.which("npm")
    if not npm or not shutil.which("node"):
        pytest.skip("npm or node is not on PATH: cannot install ref-tools-mcp")
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "package.json").exists():
        (folder / "package.json").write_text(json.dumps({"name": "memhooks-e2e-ref", "private": True}) + "\n")
    try:
        proc = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--no-save", "--fetch-retries=2",
                               "--fetch-retry-maxtimeout=10000", f"ref-tools-mcp@{REF_VERSION}"],
                              cwd=folder, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        pytest.skip("npm install ref-tools-mcp timed out (no registry?)")
    if not entry.is_file():
        pytest.skip(f"npm install ref-tools-mcp@{REF_VERSION} failed: {(proc.stderr or proc.stdout)[-400:]}")
    return entry


class RefApi(BaseHTTPRequestHandler):
    """What api.ref.tools answers: GET /read?url= -> {content, title}; GET
    /search_documentation?query= -> {docs: [{overview, url, moduleId}]}."""

    def do_GET(self):
        parts = urlsplit(self.path)
        q = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if not self.headers.get("X-Ref-Api-Key"):
            return self._send(401, {"error": "unauthorized"})
        if parts.path == "/read" and q.get("url") == PAGE_URL:
            return self._send(200, {"content": PAGE, "title": "useEffect – React"})
        if parts.path == "/read":
            return self._send(503, {"error": "upstream unavailable"})
        if parts.path == "/search_documentation":
            return self._send(200, {"docs": [{"overview": "useEffect – React reference: cleanup on unmount",
                                              "url": PAGE_URL, "moduleId": "react"}]})
        return self._send(404, {"error": "not found"})

    def _send(self, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def ref_api():
    server = ThreadingHTTPServer(("127.0.0.1", 0), RefApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def call_ref(entry: Path, api: str, calls: list[tuple[str, dict]]) -> list[list[dict]]:
    """Each call's content blocks from the real server over stdio (the real MCP client), as
    Claude Code hands an MCP tool's result to PostToolUse: a list of content blocks."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {k: v for k, v in os.environ.items() if not k.startswith("REF_")}
    env.update(REF_URL=api, REF_API_KEY="test-key")
    params = StdioServerParameters(command=shutil.which("node") or "node", args=[str(entry)], env=env)

    async def go():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                names = {t.name for t in (await session.list_tools()).tools}
                assert {"ref_search_documentation", "ref_read_url"} <= names
                out = []
                for tool, args in calls:
                    result = await session.call_tool(tool, args)
                    out.append([c.model_dump(exclude_none=True) for c in result.content])
                return out

    return anyio.run(go)


def hook_payload(event: str, tool: str, args: dict, blocks=None) -> dict:
    p = {"hook_event_name": event, "session_id": f"s-{uuid.uuid4().hex}", "tool_name": f"mcp__Ref__{tool}",
         "tool_input": args, "tool_use_id": f"toolu_{uuid.uuid4().hex[:12]}"}
    if blocks is not None:
        p["tool_response"] = blocks
    return p


def test_the_real_ref_server_is_captured_served_and_its_errors_refused(store, ref_api):
    entry = ref_server()
    read, down, found = call_ref(entry, ref_api, [("ref_read_url", {"url": PAGE_URL}),
                                                  ("ref_read_url", {"url": DOWN_URL}),
                                                  ("ref_search_documentation", {"query": "react useEffect cleanup"})])
    assert read[0]["text"] == PAGE
    assert down[0]["text"] == "Error reading URL: Request failed with status code 503"
    assert found[0]["text"].startswith("overview: useEffect")
    env = dict(os.environ, MEMHOOKS_NO_SPAWN="1")
    for tool, args, blocks in (("ref_read_url", {"url": PAGE_URL}, read), ("ref_read_url", {"url": DOWN_URL}, down),
                               ("ref_search_documentation", {"query": "react useEffect cleanup"}, found)):
        r = run_hook("post-tool-use", hook_payload("PostToolUse", tool, args, blocks), env=env)
        assert r.returncode == 0 and r.stdout == b""
    ingest(store)
    docs = db_rows(store, "SELECT tool, url FROM documents ORDER BY id")
    assert docs == [("ref_read_url", PAGE_URL), ("ref_search_documentation", None)]
    errors = [e for (e,) in db_rows(store, "SELECT error FROM events WHERE error IS NOT NULL")]
    assert any("not a document: http error" in e for e in errors)
    with closing(connect(str(store))) as conn:
        assert search.search_documents(conn, "cleanup unmounts")[0]["url"] == PAGE_URL

    r = run_hook("pre-tool-use", hook_payload("PreToolUse", "ref_read_url", {"url": PAGE_URL}), env=env)
    text = json.loads(r.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert bodies(text) == [PAGE]
    r = run_hook("pre-tool-use", hook_payload("PreToolUse", "ref_read_url", {"url": DOWN_URL}), env=env)
    assert r.returncode == 0 and r.stdout == b""
