"""What the newest Claude Code asks of the plugin: plugin.json declares the hosts its parts
reach (`network.hosts`), a LICENSE file beside it, a marketplace entry that installs the
plugin's tracked files only (a git source, never the checkout's venvs), and the recall tools
that return long texts declare `anthropic/maxResultSizeChars` in their `_meta` (tools/list,
read through the SDK's real stdio client), within the CLI's ceiling."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
CLI_CEILING = 500_000  # Claude Code's largest inline MCP result
CLI_DEFAULT = 50_000  # what it keeps inline for a tool that declares nothing


def manifest(name: str) -> dict:
    return json.loads((ROOT / ".claude-plugin" / name).read_text(encoding="utf-8"))


def test_plugin_json_declares_its_network_hosts():
    hosts = manifest("plugin.json")["network"]["hosts"]
    assert hosts == ["context7.com"]  # the Context7 API the SessionStart warm asks
    api = re.search(r'"(https://[^"/]+)/api"', (ROOT / "src" / "memhooks" / "config.py").read_text())
    assert api and api.group(1) == f"https://{hosts[0]}"


def test_license_file_is_beside_the_manifest():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert manifest("plugin.json")["license"] == "MIT" and "MIT License" in text


def test_marketplace_installs_the_tracked_files_not_the_checkout():
    (entry,) = manifest("marketplace.json")["plugins"]
    source = entry["source"]
    assert isinstance(source, dict) and source["source"] == "url"
    assert source["url"].endswith(".git")  # a clone: what git tracks, no venvs or build output
    assert entry["name"] == manifest("plugin.json")["name"]


def test_long_result_tools_declare_their_size_in_meta(tmp_path):
    params = StdioServerParameters(
        command=sys.executable, args=[str(ROOT / "src" / "memhooks" / "_entry.py"), "mcp"],
        cwd=str(tmp_path), env={"MEMHOOKS_DB": str(tmp_path / "memhooks.db"),
                                "CLAUDE_PROJECT_DIR": str(tmp_path), "PATH": os.environ.get("PATH", "")})

    async def listed():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return (await session.list_tools()).tools

    tools = {t.name: t for t in anyio.run(listed)}
    for name in ("get_document", "search_documents"):
        size = (tools[name].meta or {}).get("anthropic/maxResultSizeChars")
        assert isinstance(size, int) and CLI_DEFAULT < size <= CLI_CEILING, (name, tools[name].meta)
    assert "anthropic/maxResultSizeChars" not in (tools["lookup_library"].meta or {})
