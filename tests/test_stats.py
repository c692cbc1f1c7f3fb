"""memhooks.recall.stats (gather/render) and `memhooks stats`, on real stores filled
through `memhooks replay` (the capture path)."""

from __future__ import annotations

import io
import json
import os
import typing
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import fold_reads
from memhooks.cli.main import main as cli_main
from memhooks.recall import search, stats, stats_render
from memhooks.recall.lc_cache import lookup, lookup_docs
from memhooks.store.connect import connect

ROOT = Path(__file__).resolve().parent.parent
PAYLOADS = ROOT / "tests" / "fixtures" / "payloads"

TOP_KEYS = {"schema", "generated_at", "project", "db", "documents", "captures", "access",
            "tier1", "tier2", "events", "serving", "fallbacks", "daily", "providers", "budget"}


def gathered(conn, *args, **kwargs) -> dict:
    """stats.gather after the reads log is folded, as `memhooks stats` has it (it ingests first)."""
    fold_reads(conn)
    return stats.gather(conn, *args, **kwargs)


def jsonl(tmp_path: Path, names: list[str], fname: str = "events.jsonl") -> str:
    path = tmp_path / fname
    lines = [json.dumps(json.loads((PAYLOADS / f"{n}.json").read_text())) for n in names]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture
def env(tmp_path, monkeypatch):
    db = tmp_path / "store" / "memhooks.db"
    proj_a = tmp_path / "proj-a"
    proj_b = tmp_path / "proj-b"
    proj_a.mkdir()
    proj_b.mkdir()
    monkeypatch.setenv("MEMHOOKS_DB", str(db))
    monkeypatch.delenv("CLAUDE_PLUGIN_DATA", raising=False)
    return {"db": str(db), "a": os.path.realpath(proj_a), "b": os.path.realpath(proj_b),
            "tmp": tmp_path}


def replay(env, project: str, names: list[str], fname: str) -> None:
    os.environ["CLAUDE_PROJECT_DIR"] = project
    try:
        res = CliRunner().invoke(cli_main, ["replay", jsonl(env["tmp"], names, fname)])
    finally:
        del os.environ["CLAUDE_PROJECT_DIR"]
    assert res.exit_code == 0, res.output


@pytest.fixture
def filled(env):
    # project a: react docs twice (dedup), a resolve, a rate-limit error (skipped), a failure
    replay(env, env["a"], ["c7_query_docs", "c7_query_docs", "c7_resolve_react",
                           "c7_error_rate_limited", "c7_failure", "webfetch"], "a.jsonl")
    # project b: the same react docs again (dedup across projects), exa pages, a no-results resolve
    replay(env, env["b"], ["c7_query_docs", "exa_web_fetch", "c7_resolve_no_results"], "b.jsonl")
    return env


def test_empty_store(env):
    conn = connect(env["db"])
    try:
        data = gathered(conn, env["db"])
    finally:
        conn.close()
    assert set(data) == TOP_KEYS
    assert data["documents"]["count"] == 0 and data["captures"]["dedup_saved_bytes"] == 0
    assert data["tier1"]["hit_rate"] is None
    assert data["events"]["by_state"] == {"pending": 0, "done": 0, "failed": 0, "skipped": 0}
    assert data["db"]["file_bytes"] > 0
    stats_render.render(data)  # no crash on empty tables


def test_gather_counts_everything(filled):
    db = filled["db"]
    conn = connect(db)
    try:
        docs = conn.execute("SELECT id, bytes, source_tool FROM documents").fetchall()
        react_id, react_bytes = conn.execute(
            "SELECT id, bytes FROM documents WHERE library_id = '/facebook/react'").fetchone()
        # usage: searches and gets count accesses; lookups count hits and misses
        search.search_documents(conn, "useEffect cleanup")
        search.get_document(conn, react_id)
        lookup(conn, "react", filled["a"])
        lookup(conn, "react", filled["a"])
        lookup(conn, "no-such-thing", filled["a"])
        lookup_docs(conn, "/facebook/react", "useEffect cleanup function", filled["a"])
        data = gathered(conn, db)
    finally:
        conn.close()

    d = data["documents"]
    assert d["count"] == len(docs) and d["bytes"] == sum(b for _, b, _ in docs)
    tools = {(r["source_tool"], r["type"]): r["count"] for r in d["by_source_tool"]}
    assert tools[("context7", "library-docs")] == 1
    assert tools[("context7", "library-resolve")] == 1
    assert tools[("webfetch", "web-page")] == 1
    assert tools[("exa", "web-page")] >= 1

    c = data["captures"]
    assert c["unique_documents"] == len(docs)
    assert c["count"] == len(docs) + 2  # the react docs body was captured three times
    assert c["dedup_saved_bytes"] == 2 * react_bytes
    assert c["captured_bytes"] - c["unique_bytes"] == c["dedup_saved_bytes"]
    assert c["oldest"] and c["newest"] and c["oldest_epoch"] <= c["newest_epoch"]

    a = data["access"]
    assert a["top"][0]["id"] == react_id and a["top"][0]["access_count"] >= 3  # search, get, tier2
    assert a["top"][0]["last_accessed"]

    t1 = data["tier1"]
    assert t1["total"] == 2 and t1["negative"] == 1 and t1["fresh"] == 2
    assert (t1["hits"], t1["misses"]) == (2, 1) and t1["hit_rate"] == pytest.approx(2 / 3, abs=1e-3)
    t2 = data["tier2"]
    assert t2["total"] == 1 and (t2["hits"], t2["misses"]) == (1, 0) and t2["hit_rate"] == 1.0

    e = data["events"]
    assert e["total"] == 9 and e["by_state"]["pending"] == 0
    assert e["by_state"]["skipped"] >= 2
    reasons = {r["reason"]: r["count"] for r in e["skip_reasons"]}
    assert any("rate limited" in r for r in reasons)
    assert data["db"]["total_bytes"] == data["db"]["file_bytes"] + data["db"]["wal_bytes"]


def test_project_filter(filled):
    conn = connect(filled["db"])
    try:
        lookup(conn, "react", filled["a"])
        lookup(conn, "react", filled["b"])
        lookup(conn, "react", filled["b"])
        a = gathered(conn, filled["db"], project=filled["a"])
        b = gathered(conn, filled["db"], project=filled["b"])
        everything = gathered(conn, filled["db"])
    finally:
        conn.close()
    assert a["project"] == filled["a"]
    assert a["captures"]["count"] == 4 and a["captures"]["dedup_saved_bytes"] > 0
    assert b["captures"]["dedup_saved_bytes"] == 0  # captured once in b
    assert {r["source_tool"] for r in b["documents"]["by_source_tool"]} >= {"exa", "context7"}
    assert "webfetch" not in {r["source_tool"] for r in b["documents"]["by_source_tool"]}
    assert a["tier1"]["hits"] == 1 and b["tier1"]["hits"] == 2
    assert a["tier1"]["negative"] == 0 and b["tier1"]["negative"] == 1
    assert a["events"]["total"] == 6 and b["events"]["total"] == 3
    assert everything["captures"]["count"] == a["captures"]["count"] + b["captures"]["count"]
    assert a["tier2"] == everything["tier2"]  # global


def test_cli_stats_json_keys_are_stable(filled):
    runner = CliRunner()
    res = runner.invoke(cli_main, ["stats", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert set(data) == TOP_KEYS
    assert set(data["db"]) == {"path", "file_bytes", "wal_bytes", "total_bytes", "files",
                               "store_bytes", "cap_bytes", "frees_pages", "cap_unmet"}
    assert set(data["documents"]) == {"count", "bytes", "by_source_tool"}
    assert set(data["captures"]) == {"count", "unique_documents", "captured_bytes", "unique_bytes",
                                     "dedup_saved_bytes", "oldest_epoch", "oldest", "newest_epoch",
                                     "newest"}
    assert set(data["access"]) == {"total", "documents_accessed", "top", "agent", "user"}
    assert set(data["daily"]) == {"days", "captures", "agent_reads", "user_reads", "calls_avoided"}
    for tier in ("tier1", "tier2"):
        assert set(data[tier]) == {"total", "fresh", "negative", "negative_fresh", "hits", "misses",
                                   "hit_rate"}
    assert set(data["events"]) == {"total", "by_state", "skip_reasons", "failure_reasons"}
    assert [r["provider"] for r in data["providers"]][:7] == [
        "context7", "exa", "web", "ref", "docfork", "deepwiki", "gitmcp"]
    for row in data["providers"]:
        assert set(row) == {"provider", "calls", "live", "served", "fallbacks", "avoided", "failed",
                            "rate_limited", "last_failure", "last_failed_epoch", "last_failed",
                            "last_rate_limited_epoch", "last_rate_limited"}
    assert set(data["budget"]) == {"provider", "known", "limit", "remaining", "reset_epoch", "reset",
                                   "reset_passed", "policy", "retry_after_s", "status", "seen_epoch",
                                   "seen", "rate_limited_epoch", "rate_limited", "rate_limited_by"}
    # the filled store: project a's Context7 calls (a rate-limit answer and a failure among
    # them), WebFetch, and project b's Exa fetch; no warm ran, so the budget is unknown
    c7 = data["providers"][0]
    assert (c7["live"], c7["served"], c7["calls"]) == (7, 0, 7)
    assert c7["rate_limited"] == 2 and c7["failed"] == 2 and c7["last_rate_limited"] is not None
    assert data["budget"]["known"] is False and data["budget"]["remaining"] is None
    assert data["budget"]["rate_limited_by"] == "captured failure"
    res = runner.invoke(cli_main, ["stats", "--json", "--project", filled["b"]])
    assert res.exit_code == 0 and json.loads(res.output)["project"] == filled["b"]


def test_every_json_key_is_documented(filled):
    doc = (ROOT / "docs" / "stats-json.md").read_text()
    data = json.loads(CliRunner().invoke(cli_main, ["stats", "--json"]).output)

    def keys(obj, prefix=""):
        for k, v in obj.items():
            yield prefix + k
            if isinstance(v, dict) and k != "by_state":
                yield from keys(v, prefix + k + ".")
            if isinstance(v, list) and v and isinstance(v[0], dict):
                yield from keys(v[0], prefix + k + "[].")

    for key in keys(data):
        assert f"`{key}`" in doc, key


def test_cli_stats_table(filled):
    res = CliRunner().invoke(cli_main, ["stats"], terminal_width=160)
    assert res.exit_code == 0, res.output
    for heading in ("Documents", "Captures and dedup", "saved by dedup", "Most read by the agent",
                    "Cache", "tier1", "tier2", "Events", "skipped", "Skip reasons"):
        assert heading in res.output


def test_render_to_console(filled):
    from rich.console import Console

    conn = connect(filled["db"])
    try:
        data = gathered(conn, filled["db"])
    finally:
        conn.close()
    buf = io.StringIO()
    stats_render.render(data, console=Console(file=buf, width=140))
    assert "context7" in buf.getvalue() and "hit rate" in buf.getvalue()


def test_reads_split_agent_from_user(filled):
    """The user's own `memhooks search`/`show` are counted apart; "most read" is the agent's."""
    db = filled["db"]
    conn = connect(db)
    try:
        react_id = conn.execute(
            "SELECT id FROM documents WHERE library_id = '/facebook/react'").fetchone()[0]
        web_id = conn.execute("SELECT id FROM documents WHERE source_tool = 'webfetch'").fetchone()[0]
    finally:
        conn.close()
    from memhooks.entry.mcp import tool_get, tool_search

    tool_search("useEffect cleanup")  # agent (MCP)
    tool_get(react_id)  # agent (MCP)
    runner = CliRunner()
    for _ in range(3):  # the user reads the web page a lot
        assert runner.invoke(cli_main, ["show", str(web_id)]).exit_code == 0
    assert runner.invoke(cli_main, ["search", "flux capacitor"]).exit_code == 0
    data = json.loads(runner.invoke(cli_main, ["stats", "--json"]).output)
    a = data["access"]
    assert a["agent"]["reads"] >= 2 and a["user"]["reads"] >= 3
    assert [r["id"] for r in a["top"]][0] == react_id
    assert web_id not in [r["id"] for r in a["top"] if r["agent_reads"] == 0]
    assert all(r["agent_reads"] > 0 for r in a["top"])
    row = [r for r in a["top"] if r["id"] == react_id][0]
    assert row["agent_reads"] >= 2 and row["access_count"] >= row["agent_reads"]
    today = data["daily"]["days"][-1]
    assert len(data["daily"]["days"]) == 30 and today == data["generated_at"][:10]
    assert data["daily"]["agent_reads"][-1] == a["agent"]["reads"]
    assert data["daily"]["user_reads"][-1] == a["user"]["reads"]
    assert data["daily"]["captures"][-1] == data["captures"]["count"]


def test_terminal_output_fits_80_columns_with_plurals_and_a_chart(filled):
    res = CliRunner().invoke(cli_main, ["stats"], terminal_width=80, env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert all(len(line) <= 80 for line in lines), [ln for ln in lines if len(ln) > 80]
    head = lines[0]
    assert head.startswith("memhooks stats · all projects · ") and " documents · " in head
    assert any(line.startswith("Last 30 days") for line in lines)
    chart = [ln for ln in lines if ln.strip().startswith(("captures ", "agent reads", "calls avoided"))]
    assert len(chart) == 3 and any(ch in chart[0] for ch in "▁▂▃▄▅▆▇█")
    assert "1 documents" not in res.output and "(0 reads of 0 documents)" not in res.output
    assert "Most read by the agent: no reads yet" in res.output


def test_plural():
    assert stats_render.plural(1, "document") == "1 document"
    assert stats_render.plural(0, "document") == "0 documents"
    assert stats_render.plural(2_000, "read") == "2,000 reads"


def test_empty_store_says_what_to_do_next(env):
    connect(env["db"]).close()
    res = CliRunner().invoke(cli_main, ["stats"], terminal_width=80)
    assert res.exit_code == 0, res.output
    for words in ("Nothing captured yet", "memhooks install", "memhooks import-transcripts",
                  "memhooks warm", "0 documents"):
        assert words in res.output
    assert "Documents:" not in res.output and "┏" not in res.output  # no empty tables


def test_the_json_shape_is_checked_and_documented(filled):
    """gather() is checked by the pydantic model of `stats --json`; a drifted key is an
    error, and every key the model knows is in docs/stats-json.md."""
    import pydantic

    from memhooks.recall.stats_model import StatsReport, check

    conn = connect(filled["db"])
    try:
        data = gathered(conn, filled["db"])
    finally:
        conn.close()
    assert check(data) is data
    broken = json.loads(json.dumps(data))
    broken["captures"]["dedup_saved"] = broken["captures"].pop("dedup_saved_bytes")
    with pytest.raises(pydantic.ValidationError):
        check(broken)
    broken = json.loads(json.dumps(data))
    broken["tier1"]["hits"] = "3"
    with pytest.raises(pydantic.ValidationError):
        check(broken)

    doc = (Path(__file__).resolve().parent.parent / "docs" / "stats-json.md").read_text()

    def keys(model, prefix=""):
        for name, field in model.model_fields.items():
            key = prefix + (field.alias or name)
            yield key
            many = typing.get_origin(field.annotation) is list
            for sub in _models(field.annotation):
                yield from keys(sub, key + ("[]." if many else "."))

    found = list(keys(StatsReport))
    assert len(found) > 80
    for key in found:
        bare = key.removeprefix("events.by_state.")  # listed as "exactly the keys `pending`, ..."
        assert f"`{key}`" in doc or (bare != key and f"`{bare}`" in doc), key


def _models(annotation) -> list:
    from pydantic import BaseModel

    out = []
    for a in (annotation, *typing.get_args(annotation)):
        if isinstance(a, type) and issubclass(a, BaseModel):
            out.append(a)
    return out
