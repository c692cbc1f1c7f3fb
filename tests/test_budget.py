"""Context7's budget and the per-provider tally: RateLimit-* / Retry-After headers on warm's
searches against a real loopback HTTP server, rate-limit answers captured through the real
PostToolUse hook (a subprocess), and what `memhooks stats` shows of both (terminal, --json,
HTML)."""

from __future__ import annotations

import json
import os
import sys
import time
from email.utils import formatdate
from pathlib import Path

import pytest
from werkzeug import Response

from conftest import db_rows, load_payload, run, run_hook
from memhooks.recall.stats_summary import summary_lines
from memhooks.store.connect import connect, transaction
from memhooks.store.stats_queries import context7_budget
from memhooks.store.warm_state import BUDGET_KEY, save_budget, set_api_state
from memhooks.warm import context7_budget as budget

MEMHOOKS = [sys.executable, "-m", "memhooks.cli.main"]
CTX7 = Path(__file__).resolve().parent / "fixtures" / "ctx7"
NOW = 1_800_000_000.0


@pytest.fixture
def project(store, tmp_path):
    proj = tmp_path / "project"
    (proj / "requirements.txt").write_text("fastapi==0.110.0\n")
    return proj


def serve(api, *, status=200, headers=None):
    def handler(request):
        body = {"results": [{"id": "/fastapi/fastapi", "title": "FastAPI", "description": "docs",
                             "trustScore": 10, "benchmarkScore": 90, "versions": [],
                             "totalSnippets": 100}]} if status == 200 else {"error": "Too many requests"}
        return Response(json.dumps(body), status=status, headers=headers or {},
                        content_type="application/json")
    api.expect_request("/api/v2/libs/search").respond_with_handler(handler)


def session_start(project) -> None:
    payload = {"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": str(project),
               "hook_event_name": "SessionStart", "source": "startup"}
    r = run_hook("session-start", payload)
    assert r.returncode == 0 and r.stderr == b"", r.stderr


def stats_json(*args: str) -> dict:
    r = run([*MEMHOOKS, "stats", "--json", *args])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def stats_text(*args: str) -> str:
    r = run([*MEMHOOKS, "stats", *args], env=dict(os.environ, COLUMNS="80"))
    assert r.returncode == 0, r.stderr
    return r.stdout.decode()


def summary(data: dict) -> str:
    """`memhooks stats` at a terminal (the one-screen summary) for these figures."""
    lines = summary_lines(data)
    ours = [ln for ln in lines if ln.startswith(("Providers:", "Context7 budget", "  "))]
    assert all(len(line) <= 80 for line in ours), ours
    return "\n".join(lines)


def row(data: dict, provider: str) -> dict:
    return next(r for r in data["providers"] if r["provider"] == provider)


# ----------------------------------------------------------------------------- warm's searches

def test_warm_records_the_ratelimit_headers_and_stats_shows_them(project, api, tmp_path):
    serve(api, headers={"RateLimit-Limit": "1000", "RateLimit-Remaining": "997",
                        "RateLimit-Reset": "3600", "RateLimit-Policy": "1000;w=86400"})
    before = time.time()
    session_start(project)
    after = time.time()
    assert len(api.log) >= 1
    data = stats_json()
    b = data["budget"]
    assert b["known"] is True and (b["limit"], b["remaining"], b["policy"]) == (1000, 997, "1000;w=86400")
    assert before <= b["seen_epoch"] <= after  # the local clock when the answer came
    assert before + 3600 <= b["reset_epoch"] <= after + 3600 and b["reset_passed"] is False
    assert b["status"] == 200 and b["retry_after_s"] is None and b["rate_limited_by"] is None
    assert "Context7 budget: 997 of 1,000 requests left, resets " in summary(data)
    full = stats_text("--full")
    assert "Calls per provider" in full and "997 of 1,000" in full
    page = tmp_path / "stats.html"
    assert run([*MEMHOOKS, "stats", "--html", page]).returncode == 0
    html = page.read_text()
    assert 'id="budget"' in html and "997 of 1,000 requests left" in html and "1000;w=86400" in html
    # the X-RateLimit-* spellings of a later warm (another project's library) replace the figures
    api.clear()
    serve(api, headers={"X-RateLimit-Limit": "1000", "X-RateLimit-Remaining": "996",
                        "X-RateLimit-Reset": str(int(time.time()) + 600)})
    other = tmp_path / "other"
    other.mkdir()
    (other / "requirements.txt").write_text("httpx==0.27.0\n")
    assert run([*MEMHOOKS, "warm", other]).returncode == 0
    assert len(api.log) == 1
    b = stats_json()["budget"]
    assert (b["limit"], b["remaining"], b["policy"]) == (1000, 996, None)
    assert time.time() + 500 < b["reset_epoch"] <= time.time() + 600


@pytest.mark.parametrize("retry_after", ["120", "date"])
def test_a_429_with_retry_after_says_none_left_until_then(project, api, retry_after):
    value = formatdate(time.time() + 120, usegmt=True) if retry_after == "date" else retry_after
    serve(api, status=429, headers={"Retry-After": value, "X-RateLimit-Limit": "50"})
    session_start(project)
    b = stats_json()["budget"]
    assert (b["status"], b["remaining"], b["limit"]) == (429, 0, 50)
    assert 100 <= b["retry_after_s"] <= 120
    assert b["seen_epoch"] + 100 <= b["reset_epoch"] <= b["seen_epoch"] + 121
    assert b["rate_limited_by"] == "api" and b["rate_limited_epoch"] == b["seen_epoch"]
    assert "Context7 budget: 0 of 50 requests left" in summary(stats_json())
    assert "Context7 budget: 0 of 50 requests left" in stats_text()


def test_hostile_header_values_on_the_wire_are_ignored(project, api):
    serve(api, headers={"RateLimit-Limit": "9" * 40, "RateLimit-Remaining": "-5",
                        "RateLimit-Reset": "soon", "RateLimit-Policy": "x" * 500})
    session_start(project)
    b = stats_json()["budget"]
    assert b["known"] is False and b["limit"] is None and b["remaining"] is None
    assert "Context7 budget: unknown" in stats_text()
    assert "Context7 budget: unknown" in summary(stats_json())


@pytest.mark.parametrize(("headers", "expect"), [
    ({"RateLimit-Limit": "100", "RateLimit-Remaining": "40", "RateLimit-Reset": "60"},
     {"limit": 100, "remaining": 40, "reset_at": NOW + 60}),
    ({"RateLimit": "limit=100, remaining=7, reset=30"}, {"limit": 100, "remaining": 7, "reset_at": NOW + 30}),
    ({"RateLimit-Remaining": "5", "RateLimit-Reset": str(int(NOW) + 90)}, {"remaining": 5, "reset_at": NOW + 90}),
    ({"RateLimit-Limit": "10", "RateLimit-Remaining": "11"}, {"limit": 10, "remaining": None}),  # contradictory
    ({"RateLimit-Limit": "1" * 13}, None),  # huge
    ({"RateLimit-Limit": str(10**9 + 1)}, None),  # past the cap
    ({"RateLimit-Remaining": "-1"}, None),  # negative
    ({"RateLimit-Remaining": "+3"}, None),
    ({"RateLimit-Remaining": "3.5"}, None),
    ({"RateLimit-Remaining": "1e3"}, None),
    ({"RateLimit-Remaining": "\uff13"}, None),  # a full-width digit
    ({"RateLimit-Remaining": "3\x1b[31m"}, None),  # control codes
    ({"RateLimit-Remaining": "3\r\nSet-Cookie: x"}, None),
    ({"RateLimit-Remaining": "3\x00"}, None),
    ({"RateLimit-Reset": str(int(NOW) - 10)}, None),  # a Unix time in the past
    ({"RateLimit-Reset": str(40 * 86400)}, None),  # further than a month
    ({"RateLimit": "limit=100, remaining=-1"}, None),  # one bad item spoils the field
    ({"RateLimit-Policy": "100;w=60\x07"}, None),
    ({"RateLimit-Policy": "p" * 81}, None),
])
def test_header_values_are_parsed_strictly(headers, expect):
    got = budget.from_response(200, headers, now=NOW)
    if expect is None:
        assert got is None
        return
    assert got is not None and got["seen_at"] == NOW
    for key, value in expect.items():
        assert got[key] == value, key


@pytest.mark.parametrize(("value", "expect"), [
    ("120", 120.0), ("0", 0.0), (formatdate(NOW + 300, usegmt=True), 300.0),
    ("-5", None), ("nan", None), ("inf", None), ("1e3", None), ("9" * 30, None),
    (str(32 * 86400), None), (formatdate(NOW - 300, usegmt=True), None),
    ("Fri, 31 Dec 99999 23:59:59 GMT", None), ("soon", None), ("12\x1b", None),
])
def test_retry_after_in_seconds_or_an_http_date(value, expect):
    got = budget.from_response(429, {"Retry-After": value}, now=NOW)
    assert got is not None and got["remaining"] == 0 and got["status"] == 429
    assert got["retry_after_s"] == (pytest.approx(expect, abs=1.5) if expect is not None else None)


def test_the_store_keeps_only_checked_figures_never_from_the_future(store):
    conn = connect(str(store))
    try:
        with transaction(conn):
            assert not save_budget(conn, {"seen_at": time.time() + 3600, "remaining": 3})  # future
            assert not save_budget(conn, {"remaining": 3})  # no time seen
            assert save_budget(conn, {"seen_at": time.time() - 10, "remaining": 3, "limit": 9})
            assert not save_budget(conn, {"seen_at": time.time() - 20, "remaining": 8})  # older
        kept = context7_budget(conn, time.time())
        assert kept is not None and kept["remaining"] == 3
        # a row tampered with on disk is read through the same check
        with transaction(conn):
            set_api_state(conn, BUDGET_KEY, json.dumps({
                "seen_at": time.time() - 5, "remaining": -4, "limit": "9", "policy": "\x1b[2J",
                "reset_at": float("1e300"), "status": 429}), 0)
        b = context7_budget(conn, time.time())
        assert b is not None and (b["remaining"], b["limit"], b["policy"], b["reset_at"]) == (
            None, None, None, None)
        with transaction(conn):
            set_api_state(conn, BUDGET_KEY, "{" * 5000, 0)
        assert context7_budget(conn, time.time()) is None
    finally:
        conn.close()


# ----------------------------------------------------------------------------- captured failures

def ctx7_call(name: str) -> dict:
    o = json.loads((CTX7 / f"{name}.json").read_text())
    return {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "session_id": "s1",
            "cwd": "/tmp", "tool_use_id": f"toolu_{name}", "is_interrupt": False,
            "tool_input": {"command": o["command"], "description": "Context7 lookup"},
            "error": "Exit code 1\n" + o["stdout"]}


def test_captured_rate_limit_answers_are_counted_per_provider(store, tmp_path):
    env = dict(os.environ, MEMHOOKS_NO_SPAWN="1")
    exa_limited = load_payload("exa_web_fetch")
    exa_limited["tool_response"] = [{"type": "text", "text": "You've hit Exa's free MCP rate limit. "
                                     "Get an API key at https://dashboard.exa.ai for more."}]
    payloads = [
        load_payload("c7_query_docs"),  # an answer
        load_payload("c7_query_docs_large_mentions_rate_limit"),  # an answer that speaks of limits
        load_payload("c7_error_rate_limited"),  # Context7's rate-limit text as a normal result
        load_payload("c7_failure"),  # PostToolUseFailure: "MCP error -32603: Rate limited …"
        ctx7_call("docs_rate_limited"),  # the ctx7 CLI's ✖ message through Bash
        load_payload("c7_error_invalid_key"),  # a failure, not a rate limit
        load_payload("exa_web_fetch"), exa_limited,
        load_payload("webfetch"),
        {**load_payload("webfetch"), "tool_use_id": "toolu_429",
         "tool_response": {"bytes": 0, "code": 429, "codeText": "Too Many Requests", "result": "",
                           "durationMs": 5, "url": "https://example.com/"}},
    ]
    before = time.time()
    for payload in payloads:
        r = run_hook("post-tool-use", payload, env=env)
        assert r.returncode == 0 and r.stderr == b""
    data = stats_json()
    c7, exa, web = row(data, "context7"), row(data, "exa"), row(data, "web")
    assert (c7["live"], c7["failed"], c7["rate_limited"]) == (6, 4, 3)
    assert (exa["live"], exa["failed"], exa["rate_limited"]) == (2, 1, 1)
    assert (web["live"], web["failed"], web["rate_limited"]) == (2, 1, 1)
    assert before <= c7["last_rate_limited_epoch"] <= time.time()
    assert row(data, "ref")["calls"] == 0 and row(data, "gitmcp")["calls"] == 0
    assert data["budget"]["known"] is False and data["budget"]["rate_limited_by"] == "captured failure"
    text = summary(data)
    assert "Providers: context7 6 calls (3 rate-limited) · exa 2 calls (1 rate-limited)" in text
    assert "(captured failure)" in text and "Context7 budget: unknown" in text
    full = stats_text("--full")
    assert "Calls per provider" in full and "Last rate-limited: context7 " in full
    # derived from the journal: a reindex gives the same tally
    rows = db_rows(store, "SELECT provider, calls, failed, rate_limited FROM provider_calls ORDER BY 1")
    assert run([*MEMHOOKS, "reindex"]).returncode == 0
    assert db_rows(store, "SELECT provider, calls, failed, rate_limited FROM provider_calls ORDER BY 1") == rows
    # project scope: every call above came from /tmp; another project has none
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert row(stats_json("--project", str(other)), "context7")["calls"] == 0


def test_served_and_fallback_answers_count_as_avoided(store):
    """A captured docs call, then the same call served by PreToolUse and, failing live, answered
    by the fallback: context7 shows the calls seen, served, fallbacks and avoided."""
    env = dict(os.environ, MEMHOOKS_NO_SPAWN="1")
    docs = load_payload("c7_query_docs")
    assert run_hook("post-tool-use", docs, env=env).returncode == 0
    assert run([*MEMHOOKS, "stats", "--json"]).returncode == 0  # a reader ingests it
    call = {k: v for k, v in docs.items() if k not in ("tool_response", "duration_ms")}
    served = run_hook("pre-tool-use", dict(call, hook_event_name="PreToolUse", session_id="other"))
    assert b"permissionDecision" in served.stdout
    failed = dict(call, hook_event_name="PostToolUseFailure", session_id="third", tool_use_id="toolu_f",
                  error="MCP error -32603: Rate limited or quota exceeded.", is_interrupt=False)
    answered = run_hook("post-tool-use", failed, env=env)
    assert answered.returncode == 0 and answered.stdout.strip(), answered.stderr
    c7 = row(stats_json(), "context7")
    assert (c7["live"], c7["served"], c7["fallbacks"], c7["calls"], c7["avoided"]) == (2, 1, 1, 3, 2)
    assert (c7["failed"], c7["rate_limited"]) == (1, 1)
    assert "context7 3 calls (2 avoided, 1 rate-limited)" in summary(stats_json())
