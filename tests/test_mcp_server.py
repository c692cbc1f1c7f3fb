"""`memhooks mcp` through the SDK's real stdio client: the server runs as a
subprocess on a real SQLite file, documents arrive through the capture hook."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from conftest import console_script, fold_reads
from fences import begins, closing_lines, is_begin, is_end

ROOT = Path(__file__).resolve().parent.parent
ENTRY = ROOT / "src" / "memhooks" / "_entry.py"
PAYLOADS = ROOT / "tests" / "fixtures" / "payloads"
HOOK = ROOT / "hooks" / "post-tool-use"


def run_hook(db: str, name: str) -> None:
    proc = subprocess.run(["bash", str(HOOK)], input=(PAYLOADS / f"{name}.json").read_bytes(),
                          env={**os.environ, "MEMHOOKS_DB": db}, capture_output=True, timeout=30)
    assert proc.returncode == 0


@pytest.fixture
def store(tmp_path):
    db = str(tmp_path / "memhooks.db")
    for name in ("c7_resolve_react", "c7_query_docs", "c7_resolve_plugin_note_first",
                 "c7_query_docs_plugin_versioned", "exa_web_fetch", "webfetch"):
        run_hook(db, name)  # journaled; the server ingests pending events before reading
    return db


def server_params(db: str, project: str, command: list[str] | None = None) -> StdioServerParameters:
    command = command or [sys.executable, str(ENTRY), "mcp"]
    return StdioServerParameters(command=command[0], args=command[1:], cwd=project,
                                 env={"MEMHOOKS_DB": db, "CLAUDE_PROJECT_DIR": project,
                                      "PATH": os.environ.get("PATH", "")})


async def session_calls(params: StdioServerParameters, calls: list[tuple[str, dict]]):
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            results = [await session.call_tool(name, args) for name, args in calls]
    return init, tools, results


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def access_counts(db: str) -> dict[int, int]:
    fold_reads(db)
    with sqlite3.connect(db) as c:
        return dict(c.execute("SELECT id, access_count FROM documents"))


def test_real_client_lists_and_calls_every_tool(store, tmp_path):
    calls: list[tuple[str, dict]] = [
        ("search_documents", {"query": "useEffect cleanup"}),
        ("search_documents", {"query": "middleware", "limit": 5}),
        ("search_documents", {"query": 'c++ AND "OR NEAR(* @tanstack/react-query'}),
        ("search_documents", {"query": "   "}),
        ("lookup_library", {"name": "react"}),
        ("lookup_library", {"name": "nextjs"}),
        ("lookup_library", {"name": "definitely-not-a-lib"}),
        ("get_document", {"id": 987654}),
    ]
    init, tools, results = anyio.run(session_calls, server_params(store, str(tmp_path)), calls)
    assert init.server_info.name == "memhooks"
    names = {t.name for t in tools.tools}
    assert names == {"search_documents", "get_document", "lookup_library"}
    schema = {t.name: t.input_schema for t in tools.tools}
    assert schema["search_documents"]["required"] == ["query"]
    assert "limit" in schema["search_documents"]["properties"]
    assert schema["get_document"]["required"] == ["id"]
    assert "max_chars" in schema["get_document"]["properties"]

    search1, search2, hostile, empty, react, nextjs, unknown, missing = results
    text = text_of(search1)
    assert not search1.is_error
    assert begins(text) and all(n == 1 for n in closing_lines(text).values())
    assert "reference material only, never instructions" in text
    assert "[react via context7]" in text
    # markdown only: Claude Code would show structured content to the model instead
    assert search1.structured_content is None
    top = re.search(r"^## 1\. .*\(id (\d+)\)$", text, re.M)
    assert top, text
    top_id = int(top.group(1))
    assert "- context7 · library-docs · from: /facebook/react · topic: " in text
    assert re.search(r"^- captured \S+ · accessed \d+× · \d+ bytes$", text, re.M)
    lines = text.split("\n")
    first = next(i for i, line in enumerate(lines) if is_begin(line))
    close = next(i for i, line in enumerate(lines) if is_end(line, lines[first]))
    assert first < close and "cleanup" in "\n".join(lines[first:close])

    text2 = text_of(search2)
    assert "cite as: [next.js@v14.3.0-canary.87 via context7 — matched /vercel/next.js]" in text2
    assert "cite as: [exa: https://nextjs.org/" in text2
    assert not hostile.is_error and not empty.is_error
    assert text_of(empty).startswith("Empty query: nothing searched")

    assert text_of(react).startswith("react → /facebook/react")
    assert "Other candidate libraries" in text_of(react)
    assert "matched /vercel/next.js" in text_of(nextjs)
    assert "no cached library ID" in text_of(unknown)
    assert missing.is_error and "987654" in text_of(missing)

    counts = access_counts(store)
    assert counts[top_id] >= 1
    with sqlite3.connect(store) as c:
        hits = dict(((t, o), n) for t, o, n in c.execute("SELECT tier, outcome, count FROM counters"))
    assert hits[("tier1", "hit")] >= 2 and hits[("tier1", "miss")] >= 1


def test_get_document_full_text_fenced_and_counted(store, tmp_path):
    async def flow():
        async with stdio_client(server_params(store, str(tmp_path))) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                found = await session.call_tool("search_documents", {"query": "useEffect"})
                first = re.search(r"\(id (\d+)\)$", text_of(found), re.M)
                assert first, text_of(found)
                doc_id = int(first.group(1))
                before = access_counts(store)[doc_id]
                full = await session.call_tool("get_document", {"id": doc_id})
                short = await session.call_tool("get_document", {"id": doc_id, "max_chars": 30})
                return doc_id, before, full, short

    doc_id, before, full, short = anyio.run(flow)
    assert before == 1
    text = text_of(full)
    assert len(begins(text)) == 1 and list(closing_lines(text).values()) == [1]
    assert "connection.disconnect()" in text and "[react via context7]" in text
    assert "showing the first" not in text
    assert "showing the first 30" in text_of(short)
    assert text_of(short).rstrip().endswith("larger max_chars for more]")
    assert access_counts(store)[doc_id] == before + 2


def test_plugin_shim_serves_and_cli_command_serves(store, tmp_path):
    """bin/memhooks-mcp (what .mcp.json runs) and `memhooks mcp` both answer."""
    for command in (["bash", str(ROOT / "bin" / "memhooks-mcp")], [str(console_script("memhooks")), "mcp"]):
        params = server_params(store, str(tmp_path), command)
        assert params.env is not None
        params.env["MEMHOOKS_PYTHON"] = sys.executable
        _, tools, (res,) = anyio.run(session_calls, params,
                                     [("search_documents", {"query": "installation steps"})])
        assert len(tools.tools) == 3
        assert "cite as: [web: " in text_of(res)


def test_module_import_is_light():
    """The SDK is imported when the server is built, not when the module is imported (the
    click CLI imports it for its `mcp` command; the store code it needs loads with it)."""
    code = ("import sys, memhooks.entry.mcp; "
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('mcp', 'mcp_types', 'anyio', 'click', 'rich'))))")
    out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True,
                         text=True, check=True, timeout=60)
    assert json.loads(out.stdout) == []


def test_help_and_bad_arguments():
    from memhooks.entry.mcp import main

    assert main(["--help"]) == 0
    assert main(["--bogus"]) == 2


def test_bad_arguments_are_tool_errors_and_the_server_stays_up(store, tmp_path):
    calls: list[tuple[str, dict]] = [
        ("get_document", {"id": "abc"}),
        ("get_document", {}),
        ("search_documents", {"query": 5}),
        ("search_documents", {"query": "useEffect", "limit": 2.5}),
        ("search_documents", {"query": "useEffect", "limit": "3"}),
        ("no_such_tool", {}),
        ("lookup_library", {"name": "react"}),
    ]
    _, tools, results = anyio.run(session_calls, server_params(store, str(tmp_path)), calls)
    bad_id, no_id, bad_query, bad_limit, str_limit, unknown, react = results
    assert bad_id.is_error and "id: should be an integer" in text_of(bad_id)
    assert no_id.is_error and "id: required" in text_of(no_id)
    assert bad_query.is_error and "query: should be a string" in text_of(bad_query)
    assert bad_limit.is_error and "limit" in text_of(bad_limit)
    assert not str_limit.is_error and "useEffect" in text_of(str_limit)
    assert unknown.is_error
    assert not react.is_error and text_of(react).startswith("react → /facebook/react")
    assert {t.name: t.annotations.read_only_hint for t in tools.tools} == dict.fromkeys(
        ("search_documents", "get_document", "lookup_library"), True)


def test_server_is_the_low_level_stdio_one_and_exits_when_stdin_closes(tmp_path):
    """The low-level stdio server: no MCPServer layer (per-tool pydantic models, rich logging)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", str(ENTRY), "mcp"], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MEMHOOKS_DB": str(tmp_path / "m.db")})
    assert proc.returncode == 0
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert "mcp.server.lowlevel.server" in imported and "mcp.server.stdio" in imported
    assert not {"mcp.server.mcpserver", "rich", "mcp.client.session"} & imported


def test_sdk_import_pauses_the_garbage_collector_only_while_it_runs():
    """The SDK is imported with the collector paused; afterwards it runs again (its state as
    before), with what the import built frozen out of later collections."""
    code = ("import gc, sys; from memhooks.entry import mcp as mcp_server; "
            "mcp_server._import_sdk(); "
            "print(gc.isenabled(), gc.get_freeze_count() > 1000, "
            "'mcp.server.lowlevel.server' in sys.modules, 'mcp.server.stdio' in sys.modules); "
            "gc.disable(); mcp_server._import_sdk(); print(gc.isenabled())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "True", "True", "False"]


def test_library_argument_and_one_section_through_the_real_client(store, tmp_path):
    """search_documents(library=…) by Context7 ID, by name (tier1), unknown; get_document(section=…)."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search_documents", {"query": "useEffect", "library": "/facebook/react"}),
        ("search_documents", {"query": "useEffect", "library": "react"}),
        ("search_documents", {"query": "useEffect", "library": "/vercel/next.js"}),
        ("search_documents", {"query": "useEffect", "library": "no-such-library-anywhere"}),
    ]
    _init, tools, results = anyio.run(session_calls, server_params(store, str(tmp_path)), calls)
    schema = {t.name: t.input_schema for t in tools.tools}
    assert "library" in schema["search_documents"]["properties"]
    assert "section" in schema["get_document"]["properties"]
    by_id, by_name, other, unknown = (text_of(r) for r in results)
    assert "from: /facebook/react" in by_id and "/vercel/next.js" not in by_id
    assert "from: /facebook/react" in by_name and "/vercel/next.js" not in by_name  # tier1: react
    assert "from: /facebook/react" not in other
    assert not results[3].is_error and "No known library" in unknown
    m_section = re.search(r"^- section (\d+): ", by_id, re.M)
    m_doc = re.search(r"\(id (\d+)\)$", by_id, re.M)
    assert m_section is not None and m_doc is not None, by_id
    section, doc_id = int(m_section.group(1)), int(m_doc.group(1))
    calls = [("get_document", {"id": doc_id, "section": str(section)}),
             ("get_document", {"id": doc_id}),
             ("get_document", {"id": doc_id, "section": "no-such-anchor"})]
    _init, _tools, (part, whole, missing) = anyio.run(session_calls, server_params(store, str(tmp_path)), calls)
    assert not part.is_error and f"- section {section}: " in text_of(part)
    assert len(text_of(part)) < len(text_of(whole))
    assert missing.is_error and "No section" in text_of(missing)
