"""CLI behaviour people see: bare `memhooks`, one-line usage errors, `warm` output and exit
codes, `search` advice, and the same `limit` bounds in the CLI and the MCP tool."""

from __future__ import annotations

import json
import os
import sys
import time

import anyio
import pytest
from werkzeug import Response

from conftest import ROOT, load_payload, run, run_hook

MEMHOOKS = [sys.executable, "-m", "memhooks.cli.main"]
ENTRY = ROOT / "src" / "memhooks" / "_entry.py"
STATUS_WORDS = {"cached", "known", "resolved", "not in Context7", "API error", "API timeout",
                "rate limited", "not asked"}


def cli(*args, env=None):
    return run([*MEMHOOKS, *map(str, args)], env=env)


def test_bare_memhooks_prints_short_usage_to_stdout(store):
    p = cli()
    assert p.returncode == 0 and p.stderr == b""
    out = p.stdout.decode()
    for cmd in ("install", "import-transcripts", "warm", "stats", "search", "show", "doctor"):
        assert f"  {cmd}" in out
    assert len(out.splitlines()) <= 20 and all(len(ln) <= 80 for ln in out.splitlines())
    assert "Usage:" not in out  # not click's whole help


@pytest.mark.parametrize("argv", [["nosuch"], ["search"], ["search", "--limit", "0", "q"],
                                  ["stats", "--bogus"], ["import-transcripts", "--since", "soon"]])
def test_usage_errors_are_one_clean_line(store, argv):
    p = cli(*argv)
    err = p.stderr.decode()
    assert p.returncode == 2 and p.stdout == b""
    assert err.count("\n") == 1 and err.startswith("memhooks: "), err
    assert "Usage:" not in err and "Traceback" not in err


# ----------------------------------------------------------------------------- warm

@pytest.fixture
def project(store, tmp_path):
    proj = tmp_path / "app"
    proj.mkdir()
    deps = {"react": "^18.3.1", "zod": "^3.23.0", "left-pad": "*"}
    (proj / "package.json").write_text(json.dumps({"name": "app", "dependencies": deps}))
    (proj / "package-lock.json").write_text(json.dumps({
        "name": "app", "lockfileVersion": 3, "requires": True,
        "packages": {"": {"name": "app", "dependencies": deps},
                     "node_modules/react": {"version": "18.3.1"},
                     "node_modules/zod": {"version": "3.23.8"}}}))
    return proj


LIBS = {"react": "/facebook/react", "zod": "/colinhacks/zod"}


def serve(api, status=200, delay=0.0):
    def handler(request):
        if delay:
            time.sleep(delay)
        name = request.args.get("libraryName", "")
        if status != 200:
            return Response("{}", status=status, content_type="application/json")
        lib = LIBS.get(name)
        body = {"results": [{"id": lib, "title": name.title(), "trustScore": 9}] if lib else []}
        return Response(json.dumps(body), content_type="application/json")
    api.expect_request("/api/v2/libs/search").respond_with_handler(handler)


def _rows(out: str) -> list[str]:
    return [ln for ln in out.splitlines() if "@" in ln]


def test_warm_prints_each_library_once_with_a_status_word(project, api):
    serve(api)
    p = cli("warm", project)
    assert p.returncode == 0, p.stderr.decode()
    rows = _rows(p.stdout.decode())
    names = [r.split("@", 1)[0] for r in rows]
    assert len(names) == len(set(names)) and {"react", "zod", "left-pad"} <= set(names)
    for r in rows:
        assert any(r.rstrip().endswith(w) for w in STATUS_WORDS), r
        assert "(" not in r and "[" not in r and "@-" not in r
    line = {r.split("@", 1)[0]: r for r in rows}
    assert "react@18.3.1" in line["react"] and "/facebook/react" in line["react"]
    assert line["react"].rstrip().endswith("resolved")
    assert "left-pad@unpinned" in line["left-pad"] and line["left-pad"].rstrip().endswith("not in Context7")
    again = cli("warm", project)  # now from tier1
    assert again.returncode == 0
    assert {r.split("@", 1)[0]: r for r in _rows(again.stdout.decode())}["react"].rstrip().endswith("cached")


@pytest.mark.parametrize("status", [500, 429])
def test_warm_exits_0_and_says_calmly_when_only_the_api_failed(project, api, status):
    serve(api, status=status)
    p = cli("warm", project)
    assert p.returncode == 0, p.stderr.decode()
    assert p.stderr.decode().strip() == ""
    last = p.stdout.decode().strip().splitlines()[-1]
    assert " not looked up yet: " in last and "already cached" in last and "next session start" in last
    assert "Traceback" not in p.stdout.decode() and "not asked" not in p.stdout.decode()
    p = cli("warm", "--json", project)
    assert p.returncode == 0 and json.loads(p.stdout)["api_needed"] is True


def test_warm_offline_with_nothing_cached_exits_0_in_one_calm_line(project, monkeypatch):
    monkeypatch.setenv("MEMHOOKS_OFFLINE", "1")
    p = cli("warm", project)
    assert p.returncode == 0
    out = p.stdout.decode().strip().splitlines()
    assert _rows(p.stdout.decode()) == []  # no row per library that was never asked
    assert "the Context7 API is off (MEMHOOKS_OFFLINE)" in out[-1] and "No libraries are already cached" in out[-1]


def test_the_set_up_line_succeeds_on_a_machine_without_network(project, monkeypatch):
    """`memhooks warm` at the end of the README's set-up line: an unreachable API (a port
    nobody listens on) is not a failure of the line."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.delenv("MEMHOOKS_OFFLINE", raising=False)
    monkeypatch.setenv("CONTEXT7_API_URL", f"http://127.0.0.1:{port}/api")
    p = cli("warm", project)
    assert p.returncode == 0, p.stderr.decode()
    last = p.stdout.decode().strip().splitlines()[-1]
    assert "could not be reached" in last and f"127.0.0.1:{port}" in last


def test_warm_reports_live_api_progress(project, api):
    """The API phase reports each request as it starts and as its answer arrives (the CLI's
    spinner shows it), instead of the last ranked name."""
    serve(api, delay=0.2)
    from memhooks.store.connect import connect
    from memhooks.warm.resolve import warm

    events = []
    conn = connect(os.environ["MEMHOOKS_DB"])
    try:
        warm(conn, str(project), budget_s=5, api_progress=lambda n, s: events.append((n, s, time.monotonic())))
    finally:
        conn.close()
    started = [n for n, s, _ in events if s is None]
    answered = {n: s for n, s, _ in events if s is not None}
    assert "react" in started and answered.get("react") == "found"
    assert answered.get("left-pad") == "not-found"
    first_answer = min(t for _, s, t in events if s is not None)
    assert min(t for _, s, t in events if s is None) < first_answer  # reported before the answer


# ----------------------------------------------------------------------------- search and limit

def test_search_without_results_advises_a_person(store):
    run_hook("post-tool-use", load_payload("c7_query_docs"), env=dict(os.environ, MEMHOOKS_NO_SPAWN="1"))
    out = cli("search", "zebra quantum flux").stdout.decode()
    assert "No cached documents match" in out
    assert "look it up live" not in out and "memhooks stats" in out
    assert "memhooks import-transcripts" in out
    hit = cli("search", "useEffect").stdout.decode()
    assert "memhooks show ID" in hit and "get_document" not in hit


def test_limit_bounds_agree_between_cli_and_mcp(store):
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    run_hook("post-tool-use", load_payload("c7_query_docs"), env=dict(os.environ, MEMHOOKS_NO_SPAWN="1"))
    for bad in ("0", "101", "-1"):
        assert cli("search", "--limit", bad, "useEffect").returncode == 2
    assert cli("search", "--limit", "100", "useEffect").returncode == 0
    assert cli("search", "--limit", "1", "useEffect").returncode == 0
    params = StdioServerParameters(command=sys.executable, args=[str(ENTRY), "mcp"],
                                   env={**os.environ})

    async def go():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = {t.name: t for t in (await session.list_tools()).tools}
                calls = [await session.call_tool("search_documents", {"query": "useEffect", "limit": n})
                         for n in (0, 101, -1, 1, 100)]
                return tools, calls

    tools, calls = anyio.run(go)
    assert "1 to 100" in tools["search_documents"].description
    for r in calls[:3]:
        text = "\n".join(c.text for c in r.content if getattr(c, "type", "") == "text")
        assert r.is_error and "limit must be" in text
    assert not calls[3].is_error and not calls[4].is_error


@pytest.mark.parametrize("columns", [80, 120])
def test_help_is_grouped_like_bare_memhooks(store, columns):
    p = cli("--help", env=dict(os.environ, COLUMNS=str(columns)))
    assert p.returncode == 0
    out = p.stdout.decode()
    bare = cli().stdout.decode()
    for title in ("get started:", "look:", "plumbing:"):
        assert title in out
    assert bare.index("\nget started\n") < bare.index("\nlook\n")
    assert out.index("get started:") < out.index("look:") < out.index("plumbing:")
    look = out[out.index("look:"):out.index("\n\n", out.index("look:"))]
    assert [ln.split()[0] for ln in look.splitlines()[1:]] == ["stats", "search", "show", "doctor"]
    assert all(len(ln) <= columns for ln in out.splitlines())
