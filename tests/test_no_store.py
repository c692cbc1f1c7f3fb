"""Read commands on a machine with no store: they say so, exit 0 (1 for --json), and leave
nothing on disk (no DB, no folder, no log)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from conftest import BIN, ROOT, run

ENTRY = ROOT / "src" / "memhooks" / "_entry.py"
MEMHOOKS = [sys.executable, "-m", "memhooks.cli.main"]


@pytest.fixture
def bare(tmp_path):
    """A HOME and data dir where nothing exists yet; the store would be data/memhooks.db."""
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MEMHOOKS_", "CLAUDE_", "XDG_", "CONTEXT7_"))}
    env.update(HOME=str(home), XDG_DATA_HOME=str(tmp_path / "data"), MEMHOOKS_OFFLINE="1",
               CLAUDE_PROJECT_DIR=str(project))
    return tmp_path, env


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("args,words", [
    (["stats"], "No memhooks store yet"),
    (["search", "react hooks"], "No memhooks store yet"),
    (["show", "1"], "No memhooks store yet"),
    (["cache", "lookup", "react"], "No memhooks store yet"),
    (["cache", "lookup-docs", "/facebook/react", "hooks"], "No memhooks store yet"),
])
def test_read_commands_say_so_and_create_nothing(bare, args, words):
    tmp, env = bare
    before = _files(tmp)
    p = run([*MEMHOOKS, *args], env=env, cwd=tmp / "project")
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr.decode()
    assert words in out and "memhooks import-transcripts" in out and "memhooks install" in out
    assert "Traceback" not in p.stderr.decode()
    assert _files(tmp) == before


@pytest.mark.parametrize("args", [["stats", "--json"], ["search", "--json", "react"],
                                  ["show", "--json", "1"], ["cache", "lookup", "--json", "react"]])
def test_json_readers_learn_there_is_no_store(bare, args):
    tmp, env = bare
    before = _files(tmp)
    p = run([*MEMHOOKS, *args], env=env, cwd=tmp / "project")
    assert p.returncode == 1
    data = json.loads(p.stdout)
    assert data["error"] == "no-store" and data["store"] is None
    assert _files(tmp) == before


def test_lc_cache_lookups_and_doctor_create_nothing(bare):
    tmp, env = bare
    before = _files(tmp)
    for argv in (["bash", BIN / "lc-cache-lookup", "react"],
                 ["bash", BIN / "lc-cache-lookup-docs", "/facebook/react", "hooks"],
                 [sys.executable, ENTRY, "lc-cache-lookup", "zod"]):
        p = run(argv, env=env, cwd=tmp / "project")
        assert p.returncode == 0 and p.stdout == b"", (argv, p.stdout, p.stderr)
    p = run([*MEMHOOKS, "doctor"], env=env, cwd=tmp / "project")
    assert "no store yet" in p.stdout.decode()
    assert _files(tmp) == before


def test_mcp_reads_say_so_and_create_nothing(bare):
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    tmp, env = bare
    before = _files(tmp)
    params = StdioServerParameters(command=sys.executable, args=[str(ENTRY), "mcp"],
                                   cwd=str(tmp / "project"), env=env)

    async def go():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return [await session.call_tool(n, a) for n, a in (
                    ("search_documents", {"query": "react"}), ("get_document", {"id": 1}),
                    ("lookup_library", {"name": "react"}))]

    results = anyio.run(go)
    for r in results:
        text = "\n".join(c.text for c in r.content if getattr(c, "type", "") == "text")
        assert "no store yet" in text
    assert _files(tmp) == before
