"""`memhooks stats`: the served-from-the-store section (terminal, --json, --html), charts with
one bar or none, tokens said honestly, and a store of only failed or skipped events. Run as
subprocesses at 80 and 120 columns, on real stores filled through the hooks."""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

import pytest

from conftest import load_payload, run, run_hook
from memhooks.recall import stats_render

MEMHOOKS = [sys.executable, "-m", "memhooks.cli.main"]
COLUMNS = (80, 120)


def cli(*args, cols: int = 120) -> str:
    p = run([*MEMHOOKS, *map(str, args)], env=dict(os.environ, COLUMNS=str(cols)))
    assert p.returncode == 0, p.stderr.decode()
    return p.stdout.decode()


def serve_twice(name: str) -> None:
    """Capture a real tool result, then repeat the call twice (two sessions): both served."""
    payload = load_payload(name)
    assert run_hook("post-tool-use", payload, env=dict(os.environ, MEMHOOKS_NO_SPAWN="1")).returncode == 0
    cli("stats", "--json")  # a reader: ingests the capture
    call = {k: v for k, v in payload.items() if k not in ("tool_response", "duration_ms")}
    for session in ("s-a", "s-b"):
        proc = run_hook("pre-tool-use", dict(call, hook_event_name="PreToolUse", session_id=session))
        assert proc.returncode == 0 and b"permissionDecision" in proc.stdout, proc.stdout


@pytest.fixture
def served(store):
    for name in ("c7_query_docs", "webfetch"):
        serve_twice(name)
    return store


@pytest.mark.parametrize("cols", COLUMNS)
def test_terminal_shows_what_was_served_by_tool_and_library(served, cols):
    out = cli("stats", cols=cols)
    lines = out.splitlines()
    assert all(len(ln) <= cols for ln in lines), [ln for ln in lines if len(ln) > cols]
    assert "Served from the store: 4 calls avoided" in out
    assert "Served by tool" in out and "Served by library" in out
    tool_rows = [ln for ln in lines if "context7-docs" in ln or "webfetch " in ln and "│" in ln]
    assert any("context7-docs" in ln and " 2 " in ln for ln in tool_rows)
    assert "/facebook/react" in out
    assert "~0" not in out and "< 1k" in out  # tokens said honestly
    assert re.search(r"\(< 1k tokens\)|\(~\d+k tokens\)", out)  # tokens served
    chart = [ln for ln in lines if ln.strip().startswith("calls avoided")]
    assert len(chart) == 1 and "█" in chart[0] and chart[0].rstrip().endswith("4")


def test_json_has_tokens_served_by_tool_and_library(served):
    sv = json.loads(cli("stats", "--json"))["serving"]
    assert sv["calls_avoided"] == 4 and sv["tokens_served_est"] == sv["bytes_served"] // 4
    tools = {r["tool"]: r for r in sv["by_tool"]}
    assert set(tools) == {"context7-docs", "webfetch"}
    for r in (*sv["by_tool"], *sv["by_library"], *sv["by_day"]):
        assert r["tokens_served_est"] == r["bytes_served"] // 4 and r["calls_avoided"] >= 1
    assert [r["library_id"] for r in sv["by_library"]] == ["/facebook/react"]


def test_html_page_has_the_served_section(served, tmp_path):
    page = tmp_path / "stats.html"
    cli("stats", "--html", page)
    html = page.read_text()
    section = html[html.index('<section id="served">'):html.index("</section>")]
    assert "Served from the store" in section and 'id="served-by-tool"' in section
    assert 'id="served-by-library"' in section and "/facebook/react" in section
    assert "context7-docs" in section and "webfetch" in section
    bars = re.findall(r'class="hbar" style="width:([0-9.]+)%"', section)
    assert bars and all(0 < float(b) <= 100 for b in bars) and "100.0" in bars
    assert "~0" not in section and "nan" not in html.lower() and "inf%" not in html


def test_a_store_of_one_rate_limited_call_gets_the_empty_next_steps(store, tmp_path):
    from memhooks.store.connect import connect

    connect(str(store)).close()
    empty = cli("stats", cols=80)
    assert run_hook("post-tool-use", load_payload("c7_error_rate_limited"),
                    env=dict(os.environ, MEMHOOKS_NO_SPAWN="1")).returncode == 0
    for cols in COLUMNS:
        out = cli("stats", cols=cols)
        assert "Nothing captured yet. Next:" in out
        steps, _, budget = out[out.index("Nothing captured yet. Next:"):].partition("\n\nContext7 budget:")
        assert steps == empty[empty.index("Nothing captured yet. Next:"):].rstrip("\n")  # the same next steps
        # and the rate-limit answer it captured: Context7's budget is spent, as far as is known
        assert "last rate-limited just now (captured failure)" in " ".join(budget.split())
        assert "The journal holds 1 event (1 skipped), none of them documentation yet" in out
        assert "┏" not in out and all(len(ln) <= cols for ln in out.splitlines())
    data = json.loads(cli("stats", "--json"))
    assert data["events"]["by_state"]["skipped"] == 1 and data["documents"]["count"] == 0
    page = tmp_path / "stats.html"
    cli("stats", "--html", page)
    html = page.read_text()
    assert 'id="next-steps"' in html and "memhooks import-transcripts" in html
    assert '<section id="served">' not in html


def _data(**daily) -> dict:
    """A gathered report with one day's figures set (the rest of the 30 days zero)."""
    days = [f"2026-01-{d:02d}" for d in range(1, 31)]
    zero = [0] * 30
    sv = {"calls_avoided": 0, "bytes_served": 0, "tokens_served_est": 0, "tokens_saved_est": 0,
          "insisted": 0, "by_tool": [], "by_library": [], "by_day": []}
    tier = {"total": 0, "fresh": 0, "negative": 0, "negative_fresh": 0, "hits": 0, "misses": 0,
            "hit_rate": None}
    data: dict[str, Any] = {"schema": 1, "generated_at": "2026-01-30T00:00:00Z", "project": None,
            "db": {"path": "/x/memhooks.db", "file_bytes": 1, "wal_bytes": 0, "total_bytes": 1,
                   "files": [], "store_bytes": 1, "cap_bytes": 1 << 30, "frees_pages": True},
            "documents": {"count": 1, "bytes": 10, "by_source_tool": [
                {"source_tool": "context7", "type": "library-docs", "count": 1, "bytes": 10}]},
            "captures": {"count": 1, "unique_documents": 1, "captured_bytes": 10, "unique_bytes": 10,
                         "dedup_saved_bytes": 0, "oldest_epoch": 1, "oldest": "x", "newest_epoch": 1,
                         "newest": "x"},
            "access": {"total": 0, "documents_accessed": 0, "top": [],
                       "agent": {"reads": 0, "documents_read": 0}, "user": {"reads": 0, "documents_read": 0}},
            "tier1": dict(tier), "tier2": dict(tier),
            "events": {"total": 1, "by_state": {"pending": 0, "done": 1, "failed": 0, "skipped": 0},
                       "skip_reasons": [], "failure_reasons": []},
            "serving": sv,
            "fallbacks": {"fallbacks": 0, "bytes": 0, "by_tool": [], "by_library": [], "by_day": [],
                          "by_reason": [], "by_field": []},
            "daily": {"days": days, "captures": list(zero), "agent_reads": list(zero),
                      "user_reads": list(zero), "calls_avoided": list(zero)},
            "providers": [],
            "budget": {"provider": "context7", "known": False, "limit": None, "remaining": None,
                       "reset_epoch": None, "reset": None, "reset_passed": False, "policy": None,
                       "retry_after_s": None, "status": None, "seen_epoch": None, "seen": None,
                       "rate_limited_epoch": None, "rate_limited": None, "rate_limited_by": None}}
    for key, (i, v) in daily.items():
        data["daily"][key][i] = v
    return data


def test_one_bar_and_empty_charts_render_sensibly():
    from memhooks.recall.stats_model import check

    data = check(_data(captures=(29, 7)))
    html = stats_render.render_html(data)
    assert html.count("<svg") == 1  # only the chart with something in it
    assert "No agent reads in these 30 days." in html and "No calls avoided in these 30 days." in html
    rects = re.findall(r'<rect class="bar" x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" '
                       r'height="([0-9.]+)"[^>]*data-value="(\d+)"', html)
    drawn = [r for r in rects if float(r[3]) > 0]
    assert len(drawn) == 1 and drawn[0][4] == "7" and float(drawn[0][2]) <= stats_render.MAX_BAR_W
    assert "nan" not in html.lower() and "inf" not in html.lower()
    # a lone served tool: one full bar; the terminal bar helper never divides by zero
    data["serving"].update(calls_avoided=1, bytes_served=40, tokens_served_est=10, by_tool=[
        {"tool": "webfetch", "calls_avoided": 1, "bytes_served": 40, "tokens_served_est": 10,
         "tokens_saved_est": 0}])
    html = stats_render.render_html(check(data))
    assert re.findall(r'class="hbar" style="width:([0-9.]+)%"', html) == ["100.0"]
    assert "none yet" in html.split('id="served-by-library"', 1)[1].split("</table>", 1)[0]
    assert stats_render.hbar(0, 0) == "" and stats_render.hbar(3, 3, 6) == "██████"
    assert stats_render.hbar(1, 100, 6) == "█"
    assert stats_render.token_words(0) == "< 1k tokens" and stats_render.token_words(4_200, False) == "~4k"


def test_a_served_docs_call_and_a_lookup_docs_hit_count_alike(store):
    """Two served query-docs calls and one lc-cache-lookup-docs hit: tier2 counts three hits,
    so its hit rate agrees with the calls avoided."""
    from conftest import BIN

    serve_twice("c7_query_docs")
    lookup = run(["bash", str(BIN / "lc-cache-lookup-docs"), "/facebook/react", "useEffect cleanup"])
    assert lookup.returncode == 0 and lookup.stdout
    data = json.loads(cli("stats", "--json"))
    assert data["serving"]["calls_avoided"] == 2
    assert data["tier2"]["hits"] == 3 and data["tier2"]["misses"] == 0
    assert data["tier2"]["hit_rate"] == 1.0
